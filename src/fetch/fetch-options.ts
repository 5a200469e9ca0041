/**
 * retryFetch's options: their types, and the checks of the ones retry() does not know, which
 * throw at the call naming the field and the value it got.
 */
import { BOOLEAN, FUNCTION, type FieldRules, checkOptions, MAX_RETRY_AFTER_RULE } from '../util/check.js';
import { RETRY_RULES } from '../core/options.js';
import type { AttemptMode, RetryOptions } from '../types.js';

/**
 * The fetch that `retryFetch` calls: the global one, or any function shaped like it.
 *
 * @example
 * // Log every attempt that goes out.
 * const logged: FetchFunction = (input, init) => {
 *   console.log(init?.method ?? 'GET', String(input));
 *   return fetch(input, init);
 * };
 * await retryFetch(url, undefined, { fetch: logged });
 */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * Options of {@link retryFetch}: every `RetryOptions` field but `retryOnResult`, plus a few of
 * its own. (A response worth retrying is an HTTP status, which `retryable` judges as an
 * `HttpStatusError`; to poll a body until it says done, call `retry()` around fetch.)
 *
 * @example
 * const options: RetryFetchOptions = {
 *   ...gcs({ operation: 'objects.get' }),
 *   attemptTimeoutMs: 10_000, // give up on a hung attempt after 10 s, and retry
 *   maxRetryAfterMs: 30_000, // a server asking for more than 30 s gets its response returned
 *   bufferBody: true, // a download cut mid-way is retried, not handed over broken
 * };
 * const res = await retryFetch(objectUrl, { headers }, options);
 */
export interface RetryFetchOptions extends Omit<RetryOptions<Response>, 'retryOnResult'> {
  /**
   * The fetch implementation to call. Default: `globalThis.fetch`, looked up when
   * `retryFetch` is called (so a polyfill or instrumentation installed later is used).
   */
  fetch?: FetchFunction;
  /**
   * The longest server-asked wait worth waiting for, in milliseconds: a `Retry-After`, or a
   * 429's or 503's RateLimit reset. A response asking for a longer wait is returned at once instead. Default: no limit but the deadline (a hint that
   * would end past the deadline always returns the response at once).
   */
  maxRetryAfterMs?: number;
  /**
   * Read each response's whole body inside its attempt. Then a connection that drops in the
   * middle of the body fails the attempt (and is retried when the request is safe to resend),
   * and `attemptTimeoutMs` covers the download too; the `Response` you get has its body in
   * memory; for a GET, the next attempt asks only for the bytes still missing (see
   * `resume`). Default `false`: the response is returned as soon as its headers arrive, as
   * fetch does; a GET's body that breaks later is resumed as you read it, other bodies fail.
   */
  bufferBody?: boolean;
  /**
   * Hedge GET and HEAD requests (`hedging()`): within each attempt, when the response has not
   * arrived after the hedging delay, the same request is sent again; the first response is
   * used and the other requests are aborted, their bodies cancelled. Other methods are never
   * hedged, nor is a request the call may not resend (`idempotent` false, or a function of it
   * answering false for that attempt, asked before the first copy with no error), nor any with
   * `maxAttempts: 1`. Every copy is the call's: its deadline, signal, budget, throttle and retry
   * policy. Default: no hedging.
   */
  hedge?: AttemptMode;
  /**
   * Resume a GET whose body breaks mid-way (reset, "terminated", a body timeout): the body you
   * read does not fail; the rest is requested with `Range: bytes=<received>-` and a validator
   * (the strong `ETag`, else `Last-Modified`; Cloud Storage's `x-goog-generation`), so the bytes
   * cannot come from another version of the resource. The resumed requests are retries of the
   * call: same backoff, deadline, attempts, budget, signal and `onRetry`. Default `true` for
   * GET (no effect on other methods, on a request with its own `Range`, or on a response whose
   * body is content-encoded, whose byte offsets fetch hides); `false` hands a broken body over
   * as fetch does. What you read is the bytes of one version, exactly, or a `ResumeError`: a
   * body that pins no version (no validator) fails instead of continuing after bytes were read,
   * and a resumed Cloud Storage download is checked against `x-goog-hash`'s CRC32C.
   */
  resume?: boolean;
}

/**
 * retryFetch's options: retry()'s (but retryOnResult) and its own, checked by the one reader.
 * Exported for the entry points that take retryFetch's options under their own name.
 *
 * @example
 * checkOptions('myFetchAdapter', options, { ...FETCH_RULES, fetch: leftOut('the adapter sends the requests') });
 */
export const FETCH_RULES: FieldRules = {
  ...RETRY_RULES,
  retryOnResult: {
    ok: () => false,
    rule: 'be left out (judge the status with options.retryable, an HttpStatusError, or call retry() around fetch to poll a body)',
  },
  fetch: FUNCTION,
  maxRetryAfterMs: MAX_RETRY_AFTER_RULE,
  bufferBody: BOOLEAN,
  resume: BOOLEAN,
};

/**
 * Checks every option (a TypeError/RangeError naming `<where>: options.<field>` and the value it
 * got; `where` is the entry point the options were given to: `retryFetch`, or one built on it)
 * and returns the caller's own properties on a null prototype: whatever reads it sees only what
 * the caller wrote.
 */
export function readFetchOptions(options: RetryFetchOptions | undefined, where: string): RetryFetchOptions {
  if (options === undefined) return {};
  checkOptions(where, options, FETCH_RULES);
  return Object.assign(Object.create(null) as RetryFetchOptions, options);
}
