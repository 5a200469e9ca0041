/**
 * `queryRetry`: TanStack Query's `retry` and `retryDelay` options from tenacious's rules. TanStack
 * keeps its own retry loop (its retryer pauses while offline, and cancels with the query); these
 * two functions are the decisions it asks for, made by the policies the engine uses.
 */
import { hintExceeds, retryAfterMsOf } from '../classify/error-shape.js';
import { notSent } from '../classify/not-sent.js';
import { isTransient } from '../classify/predicates.js';
import { delayFor } from '../core/backoff.js';
import { MAX_TIMER_DELAY } from '../runtime/timer-queue.js';
import { answerOf } from '../util/check.js';
import { type QueryRetryOptions, readQueryRetryOptions } from './query-retry-options.js';

/**
 * The `retry` and `retryDelay` options of a TanStack Query query or mutation, or of a
 * `QueryClient`'s `defaultOptions`.
 *
 * @example
 * const { retry, retryDelay }: QueryRetry = queryRetry({ maxAttempts: 3 });
 * retry(0, new Error('socket hang up')); // true: the first failure, a network error
 */
export interface QueryRetry {
  /**
   * Whether to try again after a failure. `failureCount` is TanStack's count of failures
   * before this one (0 at the first), so the attempt that failed is number `failureCount + 1`.
   */
  readonly retry: (failureCount: number, error: unknown) => boolean;
  /** How long to wait before the next attempt, in milliseconds: the backoff's wait for retry `failureCount`, or a longer server hint; never above 2^31 − 1. */
  readonly retryDelay: (failureCount: number, error: unknown) => number;
}

/**
 * TanStack Query's `retry` and `retryDelay` made of tenacious's rules, for one query, a
 * mutation, or every query of a `QueryClient`:
 *
 * - `retry(failureCount, error)` is true while fewer than `maxAttempts` attempts have been made
 *   (TanStack passes the failures before this one: `failureCount + 1 < maxAttempts`), the
 *   error is transient (`isTransient`, or `options.retryable`), the server's hint it carries
 *   (`Retry-After`, a RateLimit reset, gRPC pushback) is no longer than `maxRetryAfterMs` nor
 *   than 2^31 − 1 ms (about 24.8 days, the longest wait a `setTimeout` holds), and the request
 *   may be sent again (`idempotent`, or the failure proves it never left: `notSent`).
 * - `retryDelay(failureCount, error)` is `computeDelay(failureCount, backoff)`: truncated
 *   exponential backoff with jitter, capped at `maxDelayMs`; a server's hint on the error
 *   lengthens it, never shortens it. It never exceeds 2^31 − 1 ms.
 *
 * Give both, and let the `queryFn` make one request per call: TanStack runs the loop, so a
 * `queryFn` that calls `retry()` or `retryFetch` as well would make two retry layers.
 * Bad options throw a TypeError/RangeError naming the field.
 *
 * @example
 * import { QueryClient } from '@tanstack/query-core';
 * import { queryRetry } from 'tenacious/tanstack-query';
 *
 * const client = new QueryClient({
 *   defaultOptions: { queries: { ...queryRetry({ maxAttempts: 4 }) } },
 * });
 */
export function queryRetry(options?: QueryRetryOptions): QueryRetry {
  const { retryable, maxAttempts, backoff, maxRetryAfterMs, idempotent, rng } = readQueryRetryOptions(options);
  const transient = retryable ?? isTransient;
  // TanStack sleeps with setTimeout, which takes a wait above MAX_TIMER_DELAY as 1 ms: a hint
  // longer than a timer holds is past what can be waited for, as one past maxRetryAfterMs.
  const longestHintMs = Math.min(maxRetryAfterMs, MAX_TIMER_DELAY);
  return Object.freeze({
    retry: (failureCount: number, error: unknown): boolean =>
      failureCount + 1 < maxAttempts &&
      answerOf('queryRetry', 'retryable', transient(error)) &&
      !hintExceeds(error, longestHintMs) &&
      (idempotent || notSent(error)),
    // TanStack asks for the wait before it asks retry(): a wait it is never given must still be one
    // its setTimeout holds. The backoff is capped there too (a maxDelayMs of weeks).
    retryDelay: (failureCount: number, error: unknown): number =>
      Math.min(Math.max(delayFor(failureCount, backoff, rng, 'queryRetry: options.rng'), retryAfterMsOf(error) ?? 0), MAX_TIMER_DELAY),
  });
}
