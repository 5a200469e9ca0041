/**
 * tenacious/fetch: `retryFetch`, fetch with the retry rules of HTTP (which methods are safe to
 * resend, which statuses are worth a retry, `Retry-After`), downloads that resume where they
 * broke, and hedged GETs. Imported apart from `tenacious`, so an application that only calls
 * `retry()` does not bundle it.
 *
 * @example
 * import { retry } from 'tenacious';
 * import { retryFetch } from 'tenacious/fetch';
 *
 * @module tenacious/fetch
 */
export type { FetchFunction, RetryFetchOptions } from './fetch-options.js';
export { retryFetch } from './retry-fetch.js';
// The errors retryFetch rejects with, here too so that a fetch-only module needs one import.
export { HttpStatusError, ResumeError, type ResumeErrorReason } from '../errors.js';
