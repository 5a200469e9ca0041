/**
 * `scheduleOf()`: the waits an options object would make, as the rows of the CLI's
 * `tenacious schedule` table, for a test to assert on.
 */
import { type ScheduleRow, scheduleRows } from '../core/schedule-rows.js';
import { validateOptions } from '../core/options.js';
import type { RetryOptions } from '../types.js';
import { checkPlainObject, mustError } from '../util/check.js';

/** Rows given when the options set no `maxAttempts`: as many as `tenacious schedule` shows (10 attempts). */
const DEFAULT_RETRIES = 9;

/** The most rows asked for at once: more says a mistake, not a schedule anyone reads. */
const MAX_RETRIES = 10_000;

/**
 * The waits before each retry that `options` would make, exact over the whole jitter range:
 * per retry (1 before attempt 2) the shortest, median and longest wait and the sums so far, as
 * `tenacious schedule` prints them. `retries` rows, by default one per retry `maxAttempts`
 * allows, or 9 (ten attempts) without it. Reads the backoff, `maxAttempts` and `deadlineMs` of
 * any options object (`retry()`'s, `retryFetch()`'s, a preset's, `instant()`'s, whose waits are
 * the same), checked as `retry()` checks them; other fields are left alone. The rows say
 * nothing about the deadline, which may end a call before its last retry: compare
 * `waitedMinMs` with `deadlineMs`.
 *
 * @example
 * const rows = scheduleOf(gcs({ operation: 'objects.get' }), 3);
 * expect(rows.map((row) => [row.minMs, row.maxMs])).toEqual([[1000, 2000], [2000, 3000], [4000, 5000]]);
 */
export function scheduleOf(options: RetryOptions | object = {}, retries?: number): ScheduleRow[] {
  checkPlainObject('scheduleOf: options', options);
  const { backoff, maxAttempts, deadlineMs } = options as RetryOptions;
  // Only the fields a schedule reads, so that retryFetch's own options are no unknown ones here.
  const config = validateOptions({ backoff, maxAttempts, deadlineMs }, 'scheduleOf');
  const count = retries ?? (config.maxAttempts === Infinity ? DEFAULT_RETRIES : Math.min(config.maxAttempts - 1, MAX_RETRIES));
  if (!Number.isSafeInteger(count) || count < 0 || count > MAX_RETRIES) {
    throw mustError('scheduleOf: retries', `be a whole number from 0 to ${MAX_RETRIES}`, retries, typeof retries === 'number');
  }
  const { initialDelayMs, multiplier, maxDelayMs, jitter } = config;
  return scheduleRows({ initialDelayMs, multiplier, maxDelayMs, jitter }, count);
}
