/**
 * The options of `attachRetry` and of one request (`config.tenacious`): their types, the field
 * `tenacious` added to axios's request config (types only: axios is not loaded by it), and the
 * checks, which name the field and the value they got.
 */
import type { AxiosResponse } from 'axios';
import { RETRY_RULES } from '../core/options.js';
import type { RetryOptions } from '../types.js';
import { type FieldRules, checkOptions, leftOut, mustError, MAX_RETRY_AFTER_RULE } from '../util/check.js';

/**
 * Options of {@link attachRetry}: `retry()`'s, but those a request says itself (its `signal`
 * or `cancelToken`) or that need a value to judge (`retryOnResult`: axios's `validateStatus`
 * says which statuses fail), plus `maxRetryAfterMs`.
 *
 * @example
 * const options: AxiosRetryOptions = {
 *   maxAttempts: 4,
 *   deadlineMs: 20_000,
 *   maxRetryAfterMs: 30_000, // a server asking for more than 30 s: its error is the answer, at once
 *   onGiveUp: ({ reason, attempts }) => console.warn(`gave up (${reason}) after ${attempts} attempts`),
 * };
 */
export interface AxiosRetryOptions extends Omit<RetryOptions<AxiosResponse>, 'retryOnResult' | 'signal' | 'hedge'> {
  /**
   * The longest server-asked wait worth waiting for, in milliseconds (`Retry-After`, or a 429's
   * or 503's RateLimit reset): an error whose response asks for a longer wait is not retried.
   * Default: no limit but the deadline.
   */
  maxRetryAfterMs?: number;
}

/**
 * What a request may say in `config.tenacious`: options that replace the attached ones field by
 * field (a `backoff` replaces the whole `backoff`), or `false` to send the request once.
 *
 * @example
 * await api.post('/orders', order, { tenacious: false }); // this one is never resent
 * await api.get('/report', { tenacious: { deadlineMs: 60_000 } });
 */
export type AxiosRequestRetry = AxiosRetryOptions | false;

declare module 'axios' {
  // biome-ignore lint/suspicious/noExplicitAny: the parameters must be axios's own, defaults included, to merge with its declaration
  interface AxiosRequestConfig<D = any, P = any> {
    /**
     * tenacious's options for this request, over those given to `attachRetry` (field by field),
     * or `false` to send it once. Read only on an instance that `attachRetry` was given.
     */
    tenacious?: AxiosRequestRetry;
  }
}

/** The rules of both places: retry()'s, less what a request states itself, plus maxRetryAfterMs. */
const RULES: FieldRules = {
  ...RETRY_RULES,
  retryOnResult: leftOut("axios's validateStatus says which responses fail; those are judged by retryable"),
  signal: leftOut("pass the request's own signal or cancelToken: it aborts the whole call"),
  hedge: leftOut('not offered for axios'),
  maxRetryAfterMs: MAX_RETRY_AFTER_RULE,
};

/**
 * Checks the options of `attachRetry` and returns the caller's own fields on a null prototype,
 * so nothing inherited from `Object.prototype` is read as an option.
 */
export function readAttachOptions(options: AxiosRetryOptions | undefined): AxiosRetryOptions {
  if (options === undefined) return Object.create(null) as AxiosRetryOptions;
  const own = Object.create(null) as Record<string, unknown>;
  checkOptions('attachRetry', options, RULES, own);
  return own as AxiosRetryOptions;
}

/**
 * The options of one request: the attached ones, replaced field by field by the request's
 * `config.tenacious`, checked (`axios request: config.tenacious.<field> must …`); `false` when
 * the request asks to be sent once.
 */
export function requestOptions(attached: AxiosRetryOptions, own: unknown): AxiosRetryOptions | false {
  if (own === undefined) return attached;
  if (own === false) return false;
  if (typeof own !== 'object' || own === null) {
    throw mustError('axios request: config.tenacious', 'be an options object or false', own);
  }
  const merged = Object.assign(Object.create(null) as Record<string, unknown>, attached);
  checkOptions('axios request', own, RULES, merged, 'config.tenacious');
  return merged as AxiosRetryOptions;
}
