/**
 * The interceptor's options: retryFetch's, but `fetch` (every attempt goes down the dispatcher
 * chain), checked once when the interceptor is made, with errors that name it.
 */
import { validateOptions } from '../core/options.js';
import { FETCH_RULES, type RetryFetchOptions } from '../fetch/fetch-options.js';
import type { RetryOptions } from '../types.js';
import { type FieldRules, leftOut, readChecked } from '../util/check.js';

/** The name the interceptor's errors begin with. */
export const WHERE = 'tenaciousInterceptor';

/**
 * Options of {@link tenaciousInterceptor}: those of `retryFetch` (deadline, attempts, backoff,
 * `retryable`, `idempotent`, hooks, budget, `maxRetryAfterMs`, `bufferBody`, `hedge`, `resume`…)
 * but `fetch`: every attempt is dispatched down the chain the interceptor is composed on.
 *
 * @example
 * const options: TenaciousInterceptorOptions = { maxAttempts: 4, deadlineMs: 10_000, maxRetryAfterMs: 30_000 };
 * const dispatcher = new Agent().compose(tenaciousInterceptor(options));
 */
export type TenaciousInterceptorOptions = Omit<RetryFetchOptions, 'fetch'>;

const RULES: FieldRules = {
  ...FETCH_RULES,
  fetch: leftOut('every attempt is dispatched down the chain the interceptor is composed on'),
};

/**
 * Checks `options` (each field, and how they fit together: what retry() checks at a call) and
 * returns the caller's own fields, so that a bad option fails when the dispatcher is composed,
 * not at its first request.
 */
export function readInterceptorOptions(options: unknown): TenaciousInterceptorOptions {
  if (options === undefined) return {};
  const own = readChecked(WHERE, options, RULES);
  const { maxRetryAfterMs: _a, bufferBody: _b, resume: _c, ...engine } = own;
  validateOptions(engine as RetryOptions, WHERE);
  return own as TenaciousInterceptorOptions;
}
