/**
 * The backoff and deadline that `--preset` selects. The CLI only needs these two parts of a
 * preset: whether an exit code is worth retrying is the CLI's own rule (`--retry-on`).
 */
import type { BackoffPolicy } from '../index.js';

/** What `--preset` contributes: the delay schedule and the overall deadline. */
export interface CliPreset {
  readonly backoff: Readonly<BackoffPolicy>;
  readonly deadlineMs: number;
}

/** Names accepted by `--preset`. */
export type CliPresetName = 'iam' | 'gcs';

// TODO(presets): read these from iam() and gcs() once src/presets/iam.ts and gcs.ts exist,
// so the CLI cannot drift from the library. Until then: the values DESIGN.md documents.
const GOOGLE_JITTER = Object.freeze({ additiveMs: 1000 });

/**
 * Backoff and deadline of the Google Cloud presets: IAM waits 1 s doubling up to 32 s with up
 * to 1 s added at random, for at most 300 s; Cloud Storage the same up to 64 s, for 600 s.
 *
 * @example
 * CLI_PRESETS.gcs.backoff.maxDelayMs; // 64000
 */
export const CLI_PRESETS: Readonly<Record<CliPresetName, CliPreset>> = Object.freeze({
  iam: Object.freeze({
    backoff: Object.freeze({ initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: GOOGLE_JITTER }),
    deadlineMs: 300_000,
  }),
  gcs: Object.freeze({
    backoff: Object.freeze({ initialDelayMs: 1000, multiplier: 2, maxDelayMs: 64_000, jitter: GOOGLE_JITTER }),
    deadlineMs: 600_000,
  }),
});
