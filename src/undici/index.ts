/**
 * tenacious/undici: retryFetch's rules for undici, as a dispatcher interceptor. Compose it on an
 * `Agent` (or install it with `setGlobalDispatcher`) and `request()`, `fetch()` and everything
 * built on them retry safely, resume broken downloads and keep the last error response's body.
 *
 * @example
 * import { Agent, setGlobalDispatcher } from 'undici';
 * import { tenaciousInterceptor } from 'tenacious/undici';
 *
 * setGlobalDispatcher(new Agent().compose(tenaciousInterceptor()));
 *
 * @module tenacious/undici
 */
export { tenaciousInterceptor } from './interceptor.js';
export type { TenaciousInterceptorOptions } from './options.js';
// The errors a handler may be given, here too so that an undici-only module needs one import.
export { ResumeError, RetryError } from '../errors.js';
