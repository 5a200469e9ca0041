/**
 * The library's own errors: what `retry()`, the throttle and `retryFetch` fail with or hand to
 * a predicate, and the `permanent()` wrapper that stops a retry from inside `fn`. They depend
 * on nothing but utilities (the brand, the cause chain, the response header reader), so every
 * layer can throw or recognise them. Each class states its name once, in its `name` getter;
 * `BrandedError` turns that into the brand `instanceof` reads across copies of the library.
 */
import { BrandedError, hasBrand } from './util/brand.js';
import { causeText } from './util/cause-text.js';
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
 * refused by the retry budget. `cause` is the last error; when the last attempt returned a
 * value that `retryOnResult` rejected, `value` is that value and there is no `cause`. The
 * message ends with the last error's message and, when the chain of causes under it says more,
 * its root cause: `gave up after 3 attempts in 2104 ms (out of attempts): fetch failed
 * (ECONNREFUSED 127.0.0.1:39999)`. `instanceof` (and {@link isRetryError}) recognise one from
 * any copy of the library.
 *
 * @example
 * try { await retry(call, { maxAttempts: 3 }); }
 * catch (e) { if (e instanceof RetryError && e.reason === 'attempts') console.log(e.cause); }
 */
export class RetryError extends BrandedError {
  /** `'RetryError'`, also in a minified bundle that renamed the class. */
  override get name(): 'RetryError' {
    return 'RetryError';
  }
  /** Why the loop stopped. */
  declare readonly reason: RetryErrorReason;
  /** Attempts made, the first included. */
  declare readonly attempts: number;
  /** Whole milliseconds from the moment `retry()` was called to giving up. */
  declare readonly elapsedMs: number;
  /** The last attempt's error (undefined, and no own property, when it returned a value to retry). */
  declare readonly cause: unknown;
  /** The last attempt's value that `retryOnResult` rejected; an own property only then. */
  declare readonly value?: unknown;

  constructor(reason: RetryErrorReason, attempts: number, elapsedMs: number, cause: unknown, value?: unknown) {
    const why = reason === 'deadline' ? 'deadline reached' : reason === 'budget' ? 'retry budget exhausted' : 'out of attempts';
    const ms = Math.round(elapsedMs);
    super(
      `gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} in ${ms} ms (${why})${cause === undefined && value !== undefined ? ': retryOnResult rejected the last value' : causeText(cause)}`,
      cause,
    );
    this.reason = reason;
    this.attempts = attempts;
    this.elapsedMs = ms;
    // `declare`d, not fields: those would be emitted too, and `value` own (undefined) on every RetryError.
    if (value !== undefined) this.value = value;
  }
}

/**
 * True for a {@link RetryError} from any copy of this library: the ESM and the CommonJS build
 * loaded side by side, or two versions. `error instanceof RetryError` answers the same; this
 * one reads better in a filter and narrows the type.
 *
 * @example
 * try { await retry(call); }
 * catch (e) { if (isRetryError(e)) metrics.count(`gave_up_${e.reason}`); else throw e; }
 */
export function isRetryError(error: unknown): error is RetryError {
  return error instanceof RetryError;
}

/**
 * What {@link permanent} wraps an error in: thrown from `fn`, it tells `retry()` to stop at
 * once and reject with `cause`, the error itself. Neither `retryable` nor `idempotent` is
 * asked, `onRetry` is not called, `onGiveUp` hears `'not-retryable'`, and the default
 * classification ({@link isTransient}) calls it permanent wherever else it is met.
 *
 * @example
 * try { await retry(async () => { throw permanent(new Error('quota exceeded')); }); }
 * catch (e) { console.log(e instanceof PermanentError); } // false: retry() rejects with the error inside
 */
export class PermanentError extends BrandedError {
  /** `'PermanentError'`, also in a minified bundle that renamed the class. */
  override get name(): 'PermanentError' {
    return 'PermanentError';
  }
  /** The error `retry()` rejects with (no own property when it is undefined). */
  declare readonly cause: unknown;

  constructor(cause: unknown) {
    super(`permanent failure${causeText(cause)}`, cause);
  }
}

/**
 * Marks `error` as one that no retry will cure, from inside `fn`: `throw permanent(error)`
 * makes `retry()` reject at once with `error` itself, without asking `retryable` (see
 * {@link PermanentError}). An error marked already is returned as it is.
 *
 * @example
 * await retry(async () => {
 *   const res = await fetch(url);
 *   if (res.status === 403) throw permanent(new Error('forbidden: check the token'));
 *   if (!res.ok) throw new Error(`HTTP ${res.status}`);
 *   return res.json();
 * });
 */
export function permanent(error: unknown): PermanentError {
  return isPermanent(error) ? error : new PermanentError(error);
}

/**
 * True for what {@link permanent} returns, from any copy of this library. Read by the brand
 * alone, so the engine can ask it without keeping the class in a bundle that never makes one.
 *
 * @example
 * const retryable = (error: unknown) => !isPermanent(error) && isTransient(error);
 */
export function isPermanent(error: unknown): error is PermanentError {
  return hasBrand(error, 'PermanentError');
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
export class TimeoutError extends BrandedError {
  /** `'TimeoutError'`, also in a minified bundle that renamed the class. */
  override get name(): 'TimeoutError' {
    return 'TimeoutError';
  }

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options?.cause);
  }
}

/**
 * The error an attempt fails with when the adaptive throttle rejects it on the client. It is
 * not retried by the `retry()` call that got it.
 *
 * @example
 * try { await retry(call, { throttle }); }
 * catch (e) { if (e instanceof ThrottledError) serveFromCache(); }
 */
export class ThrottledError extends BrandedError {
  /** `'ThrottledError'`, also in a minified bundle that renamed the class. */
  override get name(): 'ThrottledError' {
    return 'ThrottledError';
  }
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
export class HttpStatusError extends BrandedError {
  /** `'HttpStatusError'`, also in a minified bundle that renamed the class. */
  override get name(): 'HttpStatusError' {
    return 'HttpStatusError';
  }
  /** The response's status code. */
  readonly status: number;
  /** The request method, upper case. */
  readonly method: string;
  /** The response; its body is still unread when a predicate sees it. */
  readonly response: Response;
  /** The response's `Retry-After` (seconds or HTTP-date) in milliseconds from its arrival; an own property only when valid. */
  declare readonly retryAfterMs?: number;

  constructor(response: Response, method: string) {
    super(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} (${method})`);
    this.status = response.status;
    this.method = method;
    this.response = response;
    const retryAfterMs = retryAfterIn(response.headers, Date.now());
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

/**
 * Why a download could not be resumed (see {@link ResumeError}).
 *
 * @example
 * const startOver = (reason: ResumeErrorReason): boolean => reason === 'changed'; // fetch the new version whole
 */
export type ResumeErrorReason = 'changed' | 'range-ignored' | 'bad-range' | 'unpinned' | 'checksum';

/**
 * The error a resumed body fails with when the rest cannot be had exactly: the object changed
 * since the download began (`'changed'`: a 412, or another ETag, Last-Modified or generation),
 * the server sent the whole object again after part of it had been read (`'range-ignored'`),
 * its answer was not the range asked for (`'bad-range'`), nothing in the first response pins
 * its version (`'unpinned'`: no strong ETag, Last-Modified or `x-goog-generation`, so the rest
 * could be of another version), or the bytes of a resumed Cloud Storage download do not match
 * the object's CRC32C (`'checksum'`). Never retried: asking again would get the same answer.
 * `instanceof` recognises one from any copy of the library.
 *
 * @example
 * try {
 *   const text = await (await retryFetch(url)).text();
 * } catch (error) {
 *   if (error instanceof ResumeError && error.reason === 'changed') {
 *     // the object was overwritten mid-download: start over to get the new version whole
 *   }
 * }
 */
export class ResumeError extends BrandedError {
  /** `'ResumeError'`, also in a minified bundle that renamed the class. */
  override get name(): 'ResumeError' {
    return 'ResumeError';
  }
  /** Why the download could not continue. */
  readonly reason: ResumeErrorReason;
  /** Bytes received (and handed over) before the download failed. */
  readonly receivedBytes: number;

  constructor(reason: ResumeErrorReason, receivedBytes: number, detail: string, cause?: unknown) {
    super(`resume: cannot continue the download after ${receivedBytes} bytes: ${detail}`, cause);
    this.reason = reason;
    this.receivedBytes = receivedBytes;
  }
}

/**
 * Why a resumable upload stopped (see {@link GcsUploadError}).
 *
 * @example
 * const startAgain = (reason: GcsUploadErrorReason): boolean => reason === 'session-expired';
 */
export type GcsUploadErrorReason = 'session-expired' | 'protocol' | 'no-progress';

/**
 * An upload that cannot go on: the session expired or was cancelled (`'session-expired'`: HTTP
 * 404 or 410; start a new session and upload again), or the service answered what the
 * protocol does not allow (`'protocol'`). `'no-progress'` is a 308 that reports nothing
 * persisted beyond what the session had reported before: a failed attempt, retried like a 503,
 * so it reaches you as the `cause` of a `RetryError` once the attempts or the time run out.
 * `instanceof` recognises one from any copy of the library.
 *
 * @example
 * try {
 *   await gcsResumableUpload(sessionUri, data);
 * } catch (error) {
 *   if (error instanceof GcsUploadError && error.reason === 'session-expired') sessionUri = await gcsStartResumableUpload(target);
 * }
 */
export class GcsUploadError extends BrandedError {
  /** `'GcsUploadError'`, also in a minified bundle that renamed the class. */
  override get name(): 'GcsUploadError' {
    return 'GcsUploadError';
  }
  /** Why the upload stopped. */
  readonly reason: GcsUploadErrorReason;
  /** The status of the answer that stopped it. */
  readonly status: number;

  constructor(reason: GcsUploadErrorReason, status: number, detail: string) {
    super(`gcsResumableUpload: ${detail}`);
    this.reason = reason;
    this.status = status;
  }
}
