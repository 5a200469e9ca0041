/**
 * The options of `queryRetry`: the part of `retry()`'s that TanStack Query's `retry` and
 * `retryDelay` can honour, checked once, naming the field and the value they got.
 */
import { DEFAULT_BACKOFF, readBackoffPolicy } from '../core/backoff.js';
import { DEFAULT_DEADLINE_MS, RETRY_RULES } from '../core/options.js';
import type { BackoffPolicy, RetryPredicate } from '../types.js';
import { BOOLEAN, FUNCTION, type FieldRules, leftOut, readChecked, wholeAtLeast, MAX_RETRY_AFTER_RULE } from '../util/check.js';

/**
 * Options of {@link queryRetry}.
 *
 * @example
 * const options: QueryRetryOptions = {
 *   maxAttempts: 5,
 *   backoff: { initialDelayMs: 500, maxDelayMs: 8_000 },
 *   retryable: httpStatus(429, 503),
 * };
 */
export interface QueryRetryOptions {
  /**
   * Is this error transient? Asked with the error alone (TanStack gives no attempt context).
   * Default `isTransient`: 408, 429, 500, 502, 503, 504, network failures and timeouts.
   */
  retryable?: RetryPredicate;
  /** Total attempts, the first included: TanStack's `retry: n` is `maxAttempts: n + 1`. Default 4 (TanStack's 3 retries). */
  maxAttempts?: number;
  /** The waits; missing fields come from `DEFAULT_BACKOFF` (1 s × 2 up to 32 s, full jitter). Not `'decorrelated'`. */
  backoff?: Partial<BackoffPolicy>;
  /**
   * The longest server hint worth waiting for (`Retry-After`, a RateLimit reset, gRPC pushback),
   * in milliseconds: an error asking for a longer wait is not retried. Default 120 000 (retry()'s
   * default deadline: a longer hint makes retry() give up too). Whatever it is, a hint longer
   * than 2^31 − 1 ms (about 24.8 days) is not retried: TanStack's `setTimeout` cannot hold it.
   */
  maxRetryAfterMs?: number;
  /**
   * Is the query (or mutation) safe to run again? Default `true`. With `false`, only a failure
   * that proves the request never left (`notSent`: connection refused, DNS failure) is retried.
   */
  idempotent?: boolean;
  /** Source of randomness in [0, 1] for jitter. Default `Math.random`. */
  rng?: () => number;
}

/** queryRetry's options, read: every default filled in. */
export interface QueryRetryConfig {
  readonly retryable: RetryPredicate | undefined;
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
  readonly maxRetryAfterMs: number;
  readonly idempotent: boolean;
  readonly rng: () => number;
}

const RULES: FieldRules = {
  retryable: FUNCTION,
  maxAttempts: wholeAtLeast(1),
  backoff: RETRY_RULES.backoff,
  maxRetryAfterMs: MAX_RETRY_AFTER_RULE,
  idempotent: BOOLEAN,
  rng: FUNCTION,
  deadlineMs: leftOut("TanStack Query's retries have no overall deadline: bound them with maxAttempts and the backoff's maxDelayMs"),
  signal: leftOut("TanStack Query hands the query's own signal to your queryFn, and stops retrying when it is cancelled"),
};

/** Checks `options` (`queryRetry: options.<field> must …`) and fills in the defaults. */
export function readQueryRetryOptions(options: QueryRetryOptions | undefined): QueryRetryConfig {
  const given = readChecked('queryRetry', options ?? {}, RULES);
  const backoff =
    given.backoff === undefined ? DEFAULT_BACKOFF : readBackoffPolicy(given.backoff, 'queryRetry', 'options.backoff', DEFAULT_BACKOFF);
  if (backoff.jitter === 'decorrelated') {
    throw new RangeError(
      "queryRetry: options.backoff.jitter must not be 'decorrelated' (it draws from the previous wait, which TanStack's retryDelay(failureCount, error) does not give), got \"decorrelated\"",
    );
  }
  return {
    retryable: given.retryable as RetryPredicate | undefined,
    maxAttempts: (given.maxAttempts as number | undefined) ?? 4,
    backoff,
    maxRetryAfterMs: (given.maxRetryAfterMs as number | undefined) ?? DEFAULT_DEADLINE_MS,
    idempotent: (given.idempotent as boolean | undefined) ?? true,
    rng: (given.rng as (() => number) | undefined) ?? Math.random,
  };
}
