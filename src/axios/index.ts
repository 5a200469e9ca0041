/**
 * tenacious/axios: tenacious's rules on an axios instance, one axios request being one call of
 * the engine. axios is an optional peer dependency; it has no retries of its own to turn off.
 *
 * @example
 * import axios from 'axios';
 * import { attachRetry } from 'tenacious/axios';
 *
 * attachRetry(axios, { deadlineMs: 30_000 });
 *
 * @module tenacious/axios
 */
export { attachRetry } from './attach.js';
export type { AxiosRequestRetry, AxiosRetryOptions } from './axios-options.js';
export { RetryError, isRetryError } from '../errors.js';
