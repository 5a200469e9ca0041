/**
 * The error that stands for an HTTP error response while retryFetch's retry policy judges it.
 * (The library's own error; it moves to src/errors.ts with the re-layout.)
 */
import { retryAfterMsOf } from '../errors.js';
import { brand, isInstance } from '../util/brand.js';

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
    this.retryAfterMs = retryAfterMsOf({ response });
    brand(this, 'HttpStatusError');
  }

  /** True for a HttpStatusError from any copy of this library (its ESM and CommonJS builds, or two versions). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return isInstance(this, HttpStatusError, 'HttpStatusError', value);
  }
}
