/**
 * `retry()`: reads the options, starts a Run (run.ts), and hands its outcome to the caller.
 */
import { steadyNow } from '../runtime/clock.js';
import type { AttemptContext, RetryOptions } from '../types.js';
import { DEFAULT_CONFIG, readOptions } from './options.js';
import { Run } from './run.js';

/**
 * Calls `fn` until it succeeds, retrying transient errors with truncated exponential backoff
 * and jitter, within a deadline.
 *
 * - Resolves with `fn`'s value. A synchronous throw counts as a failed attempt.
 * - Rejects with the error itself, unchanged and at once, when it is not retryable or the
 *   operation is not idempotent.
 * - Rejects with a {@link RetryError} when out of attempts, out of time or out of budget.
 * - Settles no later than the deadline: when the next sleep would end past it, gives up at
 *   once; an attempt still running at the deadline is abandoned (its signal aborts; its late
 *   result is ignored).
 * - Rejects with `signal.reason` as soon as the caller's signal aborts.
 * - A server's `Retry-After` or gRPC pushback lengthens the next delay, never shortens it.
 *
 * Invalid options throw a `TypeError`/`RangeError` naming the option, synchronously.
 *
 * @example
 * const user = await retry(({ signal }) => fetchJson(`/users/${id}`, { signal }), {
 *   maxAttempts: 5,
 *   deadlineMs: 10_000,
 * });
 */
export function retry<T>(fn: (ctx: AttemptContext) => T | PromiseLike<T>, options?: RetryOptions): Promise<T> {
  // The deadline is a promise made when the call is made: the clock starts here, before the
  // options are read and before fn's synchronous part runs.
  const startedAt = steadyNow();
  if (typeof fn !== 'function') throw new TypeError(`retry: fn must be a function, got ${typeof fn}`);
  const run = new Run<T>(fn, options === undefined ? DEFAULT_CONFIG : readOptions(options), startedAt);
  run.start();
  // The returned promise adopts the run, which is a thenable: the engine calls `run.then` one
  // microtask from now, handing over this promise's settle functions. That one job is both
  // how the call settles and how the loop notices a first attempt still running (see `then`).
  return Promise.resolve(run as unknown as PromiseLike<T>);
}
