/**
 * `tenaciousInterceptor`: retryFetch's rules for everything that goes through an undici
 * dispatcher. Each request becomes one retryFetch call whose attempts are dispatches down the
 * chain (bridge.ts), so every rule, hook, deadline and event is the engine's; the call's answer
 * is then played to the caller's handler as one response (deliver.ts).
 */
import type { Dispatcher } from 'undici';
import { retryFetchAs } from '../fetch/retry-fetch.js';
import { bridgeFetch } from './bridge.js';
import { callController, deliver, fail } from './deliver.js';
import { readInterceptorOptions, type TenaciousInterceptorOptions, WHERE } from './options.js';
import { headersRecord, urlOf } from './request.js';

/**
 * An undici interceptor (`dispatcher.compose(…)`) that retries as `retryFetch` does, for
 * `request()`, `fetch()` and whatever else dispatches through it:
 *
 * - **Resends** only what is safe: GET, HEAD, OPTIONS, PUT, DELETE, TRACE, a request with an
 *   `Idempotency-Key`, or any request whose failure proves it never left (`notSent`: connection
 *   refused, DNS failure, connect timeout). A string, Buffer or Uint8Array body is sent again; a
 *   stream or iterable body (and every body of undici's `fetch`, which hands it over as a stream)
 *   is sent once.
 * - **Retries** 408, 429, 500, 502, 503, 504 and network errors, waiting at least what
 *   `Retry-After` or a 429's or 503's RateLimit reset asks (up to `maxRetryAfterMs` and the deadline).
 * - **Answers** with the last response when it is an HTTP response, whatever its status, its body
 *   intact (undici's `RetryAgent` throws it away, nodejs/undici#4222, #4080); else the handler's
 *   `onResponseError` gets undici's error, a `RetryError` (its `cause` undici's error), or the
 *   abort reason.
 * - **Resumes** a GET whose body breaks with `Range` and a validator: the bytes you get are one
 *   version's, exactly, or the body fails with a `ResumeError` (never a spliced or doubled body,
 *   nodejs/undici#3356).
 * - **Discards** the body of every response it does not answer with: read to its end when short
 *   (64 KiB at most), so its connection serves the next attempt, cut otherwise.
 *
 * Compose it once, and without `interceptors.retry()` or a `RetryAgent`: two retry layers
 * multiply their attempts. Upgrades (WebSocket, CONNECT) pass through untouched.
 *
 * @example
 * import { Agent, request, setGlobalDispatcher } from 'undici';
 * import { tenaciousInterceptor } from 'tenacious/undici';
 *
 * setGlobalDispatcher(new Agent().compose(tenaciousInterceptor({ deadlineMs: 10_000 })));
 * const { statusCode, body } = await request('https://example.com/items/42');
 */
export function tenaciousInterceptor(options?: TenaciousInterceptorOptions): Dispatcher.DispatcherComposeInterceptor {
  const checked = readInterceptorOptions(options);
  return (dispatch) =>
    function tenaciousDispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      // An upgrade hands over a socket, not a response: nothing to judge or retry.
      if (opts.upgrade || opts.method === 'CONNECT') return dispatch(opts, handler);
      runCall(dispatch, opts, handler, checked);
      return true;
    };
}

/** One intercepted request: a retryFetch call over the chain, its outcome played to `handler`. */
function runCall(
  dispatch: Dispatcher['dispatch'],
  opts: Dispatcher.DispatchOptions,
  handler: Dispatcher.DispatchHandler,
  options: TenaciousInterceptorOptions,
): void {
  const controller = callController();
  // At once, not at the first attempt's connection: the caller may abort during a backoff too.
  handler.onRequestStart?.(controller, {});
  let call: Promise<Response>;
  try {
    const sent = urlOf(opts);
    const headers = headersRecord(opts.headers);
    // The body is given to retryFetch only to be judged (can it be sent again?); the bridge sends the caller's.
    const init = { method: opts.method, headers, body: opts.body as BodyInit | null, signal: controller.signal };
    call = retryFetchAs(WHERE, sent, init, { ...options, fetch: bridgeFetch(dispatch, opts, sent, headers) });
  } catch (error) {
    call = Promise.reject(error);
  }
  call.then(
    (response) => deliver(response, handler, controller),
    (error: unknown) => fail(handler, controller, error),
  );
}
