/**
 * The backoff and deadline that `--preset` selects, read from the library's own presets so
 * the command cannot drift from them. The CLI only needs these two parts of a preset: whether
 * an exit code is worth retrying is the CLI's own rule (`--retry-on`).
 */
import { gcs, iam } from '../google/index.js';
import { type BackoffPolicy, DEFAULT_BACKOFF, DEFAULT_DEADLINE_MS, type RetryOptions } from '../index.js';

/**
 * What `--preset` contributes: the delay schedule and the overall deadline.
 *
 * @example
 * const { backoff, deadlineMs }: CliPreset = CLI_PRESETS.iam;
 */
export interface CliPreset {
  readonly backoff: Readonly<BackoffPolicy>;
  readonly deadlineMs: number;
}

/**
 * Names accepted by `--preset`.
 *
 * @example
 * const name: CliPresetName = 'gcs';
 */
export type CliPresetName = 'iam' | 'gcs';

function backoffAndDeadline(options: Readonly<RetryOptions>): CliPreset {
  return Object.freeze({
    backoff: Object.freeze({ ...DEFAULT_BACKOFF, ...options.backoff }),
    deadlineMs: options.deadlineMs ?? DEFAULT_DEADLINE_MS,
  });
}

/**
 * Backoff and deadline of `iam()` and `gcs()`: IAM waits 1 s doubling up to 32 s with up to
 * 1 s added at random, for at most 300 s; Cloud Storage the same up to 64 s, for 600 s.
 *
 * @example
 * CLI_PRESETS.gcs.backoff.maxDelayMs; // 64000
 */
export const CLI_PRESETS: Readonly<Record<CliPresetName, CliPreset>> = Object.freeze({
  iam: backoffAndDeadline(iam()),
  // gcs() wants to know the operation to judge idempotency; a command is not an API call, and
  // whoever wraps it in tenacious has decided that running it again is safe.
  gcs: backoffAndDeadline(gcs({ strategy: 'always' })),
});
