/**
 * The library's own errors: what `retry()`, the throttle and `retryFetch` fail with or hand to
 * a predicate. They depend on nothing but the response header reader, so every layer can
 * throw or recognise them.
 */
import { retryAfterIn } from './util/http-headers.js';

/**
 * Why `retry()` gave up on an error that was worth retrying.
 *
 * @example
 * const reason: RetryErrorReason = error instanceof RetryError ? error.reason : 'attempts';
 */
export type RetryErrorReason = 'deadline' | 'attempts' | 'budget';

/**
 * `retry()` gave up although the last error was transient: out of attempts, out of time, or
 * refused by the retry budget. `cause` is the last error.
 *
 * @example
 * try { await retry(call, { maxAttempts: 3 }); }
 * catch (e) { if (e instanceof RetryError && e.reason === 'attempts') console.log(e.cause); }
 */
export class RetryError extends Error {
  override readonly name = 'RetryError';
  /** Why the loop stopped. */
  readonly reason: RetryErrorReason;
  /** Attempts made, the first included. */
  readonly attempts: number;
  /** Whole milliseconds from the moment `retry()` was called to giving up. */
  readonly elapsedMs: number;
  /** The last attempt's error. */
  override readonly cause: unknown;

  constructor(reason: RetryErrorReason, attempts: number, elapsedMs: number, cause: unknown) {
    const why = reason === 'deadline' ? 'deadline reached' : reason === 'budget' ? 'retry budget exhausted' : 'out of attempts';
    const ms = Math.round(elapsedMs);
    // `cause` is this class's own field, set below (a field declared in a subclass replaces
    // whatever the Error constructor would have set from its options).
    super(`gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} in ${ms} ms (${why})${detailOf(cause)}`);
    this.reason = reason;
    this.attempts = attempts;
    this.elapsedMs = ms;
    this.cause = cause;
  }
}

/**
 * The cause's message for RetryError's own. The cause is whatever fn threw: a throwing
 * `message` getter or a hostile Proxy must not turn giving up into an exception of its own.
 */
function detailOf(cause: unknown): string {
  try {
    return cause instanceof Error ? `: ${cause.message}` : '';
  } catch {
    return '';
  }
}

/**
 * An attempt ran out of time: its `attemptTimeoutMs`, or the overall deadline. Transient, so
 * a timed-out attempt is retried while time remains.
 *
 * @example
 * retry(slowCall, {
 *   attemptTimeoutMs: 2_000,
 *   onRetry: ({ error }) => { if (error instanceof TimeoutError) metrics.count('attempt_timeout'); },
 * });
 */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * The error an attempt fails with when the adaptive throttle rejects it on the client. It is
 * not retried by the `retry()` call that got it.
 *
 * @example
 * try { await retry(call, { throttle }); }
 * catch (e) { if (e instanceof ThrottledError) serveFromCache(); }
 */
export class ThrottledError extends Error {
  override readonly name = 'ThrottledError';
  /** The rejection probability the attempt drew against. */
  readonly probability: number;
  /** Requests counted in the window when it was rejected. */
  readonly requests: number;
  /** Accepts counted in the window when it was rejected. */
  readonly accepts: number;

  constructor(probability: number, requests: number, accepts: number) {
    super(
      `attempt rejected on the client by adaptive throttling (rejection probability ${probability.toFixed(3)}: ` +
        `${accepts} of the last ${requests} requests accepted)`,
    );
    this.probability = probability;
    this.requests = requests;
    this.accepts = accepts;
  }
}

/**
 * A response with an error status (400 or more), as the retry policy sees it: an error that
 * carries `status`, the `response` (with its headers, so `httpStatusOf` and `retryAfterMsOf`
 * read it like any other HTTP error) and the server's `Retry-After` in milliseconds.
 * `retryFetch` hands it to `options.retryable`; it never rejects with it (the response itself
 * is returned).
 *
 * @example
 * // Also retry 404 (e.g. an eventually consistent read), the rest as by default.
 * const res = await retryFetch(url, undefined, {
 *   retryable: (error) => (error instanceof HttpStatusError && error.status === 404) || isTransient(error),
 * });
 */
export class HttpStatusError extends Error {
  override readonly name = 'HttpStatusError';
  /** The response's status code. */
  readonly status: number;
  /** The request method, upper case. */
  readonly method: string;
  /** The response; its body is still unread when a predicate sees it. */
  readonly response: Response;
  /** The response's `Retry-After` (seconds or HTTP-date) in milliseconds from its arrival, if valid. */
  readonly retryAfterMs: number | undefined;

  constructor(response: Response, method: string) {
    super(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} (${method})`);
    this.status = response.status;
    this.method = method;
    this.response = response;
    this.retryAfterMs = retryAfterIn(response.headers, Date.now());
  }
}
