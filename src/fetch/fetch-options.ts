/**
 * retryFetch's options: their types, and the checks of the ones retry() does not know, which
 * throw at the call naming the field and the value it got.
 */
import { describe } from '../util/check.js';
import type { HedgeOptions } from '../fleet/hedge-options.js';
import { readHedgeOptions } from '../fleet/hedge-options.js';
import type { RetryOptions } from '../types.js';

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
   * The longest `Retry-After` worth waiting for, in milliseconds. A response asking for a
   * longer wait is returned at once instead. Default: no limit but the deadline (a hint that
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
   * Hedge GET and HEAD requests (see `hedge()`): within each attempt, when the response has
   * not arrived after the hedging delay, the same request is sent again; the first response
   * is used and the other requests are aborted, their bodies cancelled. Other methods are never
   * hedged, nor is a request the call may not resend (`idempotent` false, or a function of it
   * answering false for that attempt, asked before the first copy with no error), nor any with
   * `maxAttempts: 1`. The deadline, signal and retry policy are the call's. Default: no hedging.
   */
  hedge?: Pick<HedgeOptions, 'delayMs' | 'hedger' | 'maxAttempts' | 'onHedge' | 'budget'>;
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
 * retry()'s option errors say `retry:`; the caller called retryFetch and should read that
 * name. Same class and message otherwise, with the original as `cause`.
 */
export function asOwnError(error: unknown): unknown {
  if (!(error instanceof TypeError || error instanceof RangeError) || !error.message.startsWith('retry: ')) return error;
  const Kind = error instanceof RangeError ? RangeError : TypeError;
  // The list of known options names retry()'s; retryFetch knows three more.
  const message = error.message
    .slice('retry: '.length)
    .replace(/\(known: ([^)]*)\)/, '(known: $1, fetch, maxRetryAfterMs, bufferBody, hedge, resume)');
  return new Kind(`retryFetch: ${message}`, { cause: error });
}

/**
 * Checks retryFetch's own options (retry() checks the rest), throwing a TypeError/RangeError
 * naming the field, and returns a copy of the caller's own enumerable properties on a null
 * prototype: whatever reads it sees only what the caller wrote.
 */
export function readFetchOptions(options: RetryFetchOptions | undefined): RetryFetchOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options) || options instanceof Map) {
    throw new TypeError(`retryFetch: options must be an object, got ${describe(options)}`);
  }
  const own: RetryFetchOptions = Object.assign(Object.create(null) as RetryFetchOptions, options);
  const { fetch, maxRetryAfterMs, bufferBody, retryable, idempotent, signal } = own;
  const { retryOnResult } = own as { retryOnResult?: unknown };
  if (retryOnResult !== undefined) {
    throw new TypeError(
      `retryFetch: options.retryOnResult is not supported, got ${describe(retryOnResult)}: judge the status with options.retryable (an HttpStatusError), or call retry() around fetch to poll a body`,
    );
  }
  if (fetch !== undefined && typeof fetch !== 'function') {
    throw new TypeError(`retryFetch: options.fetch must be a function, got ${describe(fetch)}`);
  }
  // retryFetch wraps these two in functions of its own, so retry() would not see a bad value.
  if (retryable !== undefined && typeof retryable !== 'function') {
    throw new TypeError(`retryFetch: options.retryable must be a function, got ${describe(retryable)}`);
  }
  if (idempotent !== undefined && typeof idempotent !== 'boolean' && typeof idempotent !== 'function') {
    throw new TypeError(`retryFetch: options.idempotent must be a boolean or a function, got ${describe(idempotent)}`);
  }
  if (maxRetryAfterMs !== undefined && !(typeof maxRetryAfterMs === 'number' && maxRetryAfterMs >= 0)) {
    throw new RangeError(`retryFetch: options.maxRetryAfterMs must be a number >= 0 (Infinity for none), got ${describe(maxRetryAfterMs)}`);
  }
  // Everything retryFetch itself uses of a signal (it listens to it, and stops listening).
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new TypeError(`retryFetch: options.signal must be an AbortSignal, got ${describe(signal)}`);
  }
  if (bufferBody !== undefined && typeof bufferBody !== 'boolean') {
    throw new TypeError(`retryFetch: options.bufferBody must be a boolean, got ${describe(bufferBody)}`);
  }
  if (own.resume !== undefined && typeof own.resume !== 'boolean') {
    throw new TypeError(`retryFetch: options.resume must be a boolean, got ${describe(own.resume)}`);
  }
  if (own.hedge !== undefined) readFetchHedge(own.hedge);
  return own;
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function' &&
    typeof (value as AbortSignal).removeEventListener === 'function'
  );
}

/** Checks `options.hedge` as hedge() would, naming the field as retryFetch's. */
function readFetchHedge(value: unknown): void {
  if (typeof value !== 'object' || value === null) {
    throw new TypeError(`retryFetch: options.hedge must be an object, got ${describe(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (!['delayMs', 'hedger', 'maxAttempts', 'onHedge', 'budget'].includes(key)) {
      throw new TypeError(`retryFetch: unknown option hedge.${key} (known: delayMs, hedger, maxAttempts, onHedge, budget)`);
    }
  }
  try {
    readHedgeOptions(value);
  } catch (error) {
    const e = error as Error;
    throw new (e.constructor as typeof Error)(e.message.replace(/^hedge: options\./, 'retryFetch: options.hedge.'));
  }
}
