/**
 * `attachRetry`: puts tenacious's rules on an axios instance, through one request interceptor
 * that gives each request the retrying adapter (retry-adapter.ts). An instance holds one at most.
 */
import type { AxiosInstance } from 'axios';
import { describe } from '../util/check.js';
import { type AxiosRetryOptions, readAttachOptions } from './axios-options.js';
import { retryingAdapter, unwrapped } from './retry-adapter.js';

/** The instances that have the interceptor now. */
const attached = new WeakSet<object>();

/**
 * Retries the requests of an axios `instance` by tenacious's rules, one axios request being one
 * call of the engine: axios's interceptors and transforms run once, and each attempt calls the
 * adapter the request would have used, with the attempt's signal. Returns the function that
 * takes the rules off again (requests already sent keep them).
 *
 * - **Retries** 408, 429, 500, 502, 503, 504, network failures and axios's own `timeout`
 *   (`ECONNABORTED`, or `ETIMEDOUT` with `transitional.clarifyTimeoutError`), each attempt
 *   getting the whole `timeout`; or what `options.retryable` says of the `AxiosError`.
 * - **Resends** only what is safe: GET, HEAD, OPTIONS, PUT, DELETE, TRACE or a request with an
 *   `Idempotency-Key` header (`options.idempotent` replaces that rule); any request, a POST
 *   too, whose failure proves it never left (`notSent`: connection refused, DNS failure); never
 *   a stream body, which the first attempt consumed.
 * - **Waits** at least as long as a `Retry-After` (or a 429's or 503's RateLimit reset) on the
 *   error's response asks; a wait past the deadline, or past `maxRetryAfterMs`, is not made: the
 *   error is the answer, at once.
 * - **Rejects** with the last `AxiosError` itself when it gives up (as axios would have, so
 *   `axios.isAxiosError`, `error.response` and `error.status` work as before); with a
 *   `RetryError` only when the deadline ended an attempt still running; with axios's
 *   `CanceledError` when the request's `signal` or `cancelToken` aborts, in an attempt or a wait.
 *   `onGiveUp` runs once after the last failure, with the reason and the attempt count.
 * - A request's `config.tenacious` replaces options field by field; `tenacious: false` sends it once.
 *
 * Attaching to an instance that has them already throws: call the returned function first.
 * Bad options throw a TypeError/RangeError naming the field.
 *
 * @example
 * import axios from 'axios';
 * import { attachRetry } from 'tenacious/axios';
 *
 * const api = axios.create({ baseURL: 'https://api.example.com', timeout: 5_000 });
 * const detach = attachRetry(api, { maxAttempts: 4, deadlineMs: 20_000 });
 * const { data } = await api.get('/items/42'); // retried on 5xx, 429, timeouts, resets
 * await api.post('/orders', { id: 7 }); // resent only when the connection was refused
 * detach();
 */
export function attachRetry(instance: AxiosInstance, options?: AxiosRetryOptions): () => void {
  if (typeof instance !== 'function' || typeof instance.interceptors?.request?.use !== 'function') {
    throw new TypeError(`attachRetry: instance must be an axios instance (axios, or one from axios.create()), got ${describe(instance)}`);
  }
  const rules = readAttachOptions(options);
  if (attached.has(instance)) {
    throw new Error(
      'attachRetry: this axios instance retries already (one retry layer); call the function attachRetry returned to detach it first',
    );
  }
  const id = instance.interceptors.request.use(
    (config) => {
      config.adapter = retryingAdapter(unwrapped(config.adapter), rules);
      return config;
    },
    undefined,
    // It adds no wait: the other interceptors run as they would without it.
    { synchronous: true },
  );
  attached.add(instance);
  let detached = false;
  return () => {
    if (detached) return;
    detached = true;
    instance.interceptors.request.eject(id);
    attached.delete(instance);
  };
}
