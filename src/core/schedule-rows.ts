/**
 * A backoff policy's waits as data: per retry, the shortest, median and longest wait over the
 * whole jitter range, and the time waited so far. Pure; the CLI's `schedule` table prints it
 * and `tenacious/testing`'s `scheduleOf` hands it to tests.
 */
import type { BackoffPolicy } from '../types.js';
import { computeDelay } from './backoff.js';

/**
 * The waits before one retry, over every value the jitter can take.
 *
 * @example
 * const [first]: ScheduleRow[] = scheduleOf(gcs({ operation: 'objects.get' }), 1); // first.minMs 1000, first.maxMs 2000
 */
export interface ScheduleRow {
  /** 1 for the first retry (before attempt 2). */
  readonly retry: number;
  readonly minMs: number;
  readonly medianMs: number;
  readonly maxMs: number;
  /** Sum of the waits up to and including this one, at their shortest and longest. */
  readonly waitedMinMs: number;
  readonly waitedMaxMs: number;
}

const LOWEST = (): number => 0;
const MIDDLE = (): number => 0.5;
const HIGHEST = (): number => 1;

/**
 * One row per retry, `retries` rows. Exact, not sampled: for every jitter mode
 * `computeDelay` never decreases as the rng's value grows, so with the rng uniform on [0, 1]
 * the shortest wait is the delay at 0, the longest at 1 and the median at 0.5. The running
 * sums of the shortest and longest waits bound the total time spent waiting (the median of
 * a sum is not the sum of medians, so no such column is given). A decorrelated jitter draws
 * each wait from the previous one: its shortest and longest waits are exact (every draw at 0,
 * every draw at 1), but its "median" is the wait when every draw is 0.5, not the median.
 *
 * @example
 * scheduleRows({ initialDelayMs: 1000, multiplier: 2, maxDelayMs: 64_000, jitter: { additiveMs: 1000 } }, 2);
 * // [{ retry: 1, minMs: 1000, medianMs: 1500, maxMs: 2000, waitedMinMs: 1000, waitedMaxMs: 2000 },
 * //  { retry: 2, minMs: 2000, medianMs: 2500, maxMs: 3000, waitedMinMs: 3000, waitedMaxMs: 5000 }]
 */
export function scheduleRows(policy: BackoffPolicy, retries: number): ScheduleRow[] {
  const rows: ScheduleRow[] = [];
  let waitedMinMs = 0;
  let waitedMaxMs = 0;
  let minMs: number | undefined;
  let medianMs: number | undefined;
  let maxMs: number | undefined;
  for (let n = 0; n < retries; n++) {
    // Each chain carries its own previous wait, which only a decorrelated jitter reads.
    minMs = computeDelay(n, policy, LOWEST, minMs);
    medianMs = computeDelay(n, policy, MIDDLE, medianMs);
    maxMs = computeDelay(n, policy, HIGHEST, maxMs);
    waitedMinMs += minMs;
    waitedMaxMs += maxMs;
    rows.push({ retry: n + 1, minMs, medianMs, maxMs, waitedMinMs, waitedMaxMs });
  }
  return rows;
}
