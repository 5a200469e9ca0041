/**
 * `retryFetch`: `fetch` as a call of the engine, wired from named stages: the request plan
 * (request-plan.ts: what is sent, and whether it may be sent again), one attempt (attempt.ts:
 * send, fill, status), the fetch policy (fetch-policy.ts: what is retried, resent, hedged), the
 * held response (held-response.ts), the signals (either-signal.ts, responses.ts) and the
 * download's resumes (resume-driver.ts, resume.ts). This module only connects them.
 */
import { configOfChecked } from '../core/options.js';
import { startCall } from '../core/retry.js';
import { describe } from '../util/check.js';
import { attemptOf, sender } from './attempt.js';
import { eitherSignal } from './either-signal.js';
import { type RetryFetchOptions, readFetchOptions } from './fetch-options.js';
import { fetchPolicy } from './fetch-policy.js';
import { heldResponse } from './held-response.js';
import { CLOUD_STORAGE } from './invocation-headers.js';
import { type RequestPlan, planRequest } from './request-plan.js';
import { handOver } from './responses.js';
import { bodyBuffer, canResume, resumingResponse } from './resume.js';
import { resumeDriver, resumeMode } from './resume-driver.js';

/**
 * `fetch`, retried. Resolves with a `Response` and rejects with an error exactly where fetch
 * would, after retrying what is worth retrying and safe to resend:
 *
 * - **Resolves** with the last response when the final outcome is an HTTP response, whatever
 *   its status: a success, an error status that is not retried (404), or a retryable one
 *   (503) when attempts, time or budget ran out, or the request is not safe to resend. Its body
 *   is intact.
 * - **Rejects** with the network error (`TypeError: fetch failed`…) when it is not retried,
 *   with a `RetryError` when the loop gave up on a network error or on an attempt still
 *   running at the deadline, and with the abort reason when your signal aborts.
 * - **Retries** 408, 429, 500, 502, 503, 504 and network failures (retry()'s default
 *   classification), or what `options.retryable` says, asked with an {@link HttpStatusError}
 *   for responses of status 400 and more.
 * - **Resends** only what is safe: GET, HEAD, OPTIONS, PUT, DELETE, TRACE, or any request with
 *   an `Idempotency-Key` header. `options.idempotent` (which a preset such as `gcs()` sets),
 *   when given, replaces that rule. Any request, even a POST, is resent when the failure proves
 *   it never left the client (`notSent` (from `tenacious`): connection refused, DNS failure, connect timeout).
 * - **Waits** at least as long as a `Retry-After` (seconds or HTTP-date) asks; a response whose
 *   hint ends past the deadline, or exceeds `maxRetryAfterMs`, is returned at once.
 * - **Replays** string, `ArrayBuffer`, typed array, `Blob`, `URLSearchParams` and `FormData`
 *   bodies of `init` on every attempt. A `ReadableStream` body can be read only once, and so can
 *   a `Request`'s (a stream, whatever it was made from; never cloned, since a clone's tee would
 *   hold it all in memory): such a request is sent once and never retried. A `Request` of
 *   another realm (undici's package) is read by its fields and sent as its URL and init.
 * - **Resumes** a GET whose body breaks mid-way: the rest is asked for with a `Range` and a
 *   validator, and the body you read continues (see `RetryFetchOptions.resume`).
 * - **Discards** every response it does not return by cancelling its body, which frees its
 *   connection: a retried response when the next attempt starts, a late response of an
 *   abandoned attempt when it arrives.
 * - Each attempt's fetch gets a signal that aborts with the attempt's (at `attemptTimeoutMs`,
 *   at the deadline, when your signal aborts). `init.signal` (or the `Request`'s signal) also
 *   keeps aborting the returned response's body, as with fetch.
 *
 * Options are retry()'s (defaults: deadline 120 s, backoff 1 s × 2 up to 32 s with full
 * jitter) plus `fetch`, `maxRetryAfterMs`, `bufferBody`, `hedge` and `resume`; bad options reject the
 * returned promise before any request, naming the field (never a synchronous throw, as from fetch itself).
 *
 * @example
 * const res = await retryFetch('https://storage.googleapis.com/storage/v1/b/my-bucket/o/report.csv?alt=media', {
 *   headers: { authorization: `Bearer ${token}` },
 * }, gcs({ operation: 'objects.get', deadlineMs: 30_000 }));
 * if (!res.ok) throw new Error(`download failed: ${res.status}`);
 * const csv = await res.text();
 */
export function retryFetch(input: string | URL | Request, init?: RequestInit, options?: RetryFetchOptions): Promise<Response> {
  try {
    return retryFetchAs('retryFetch', input, init, options);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * {@link retryFetch} for an entry point built on it (the undici interceptor): `where` names that
 * entry point in every error its options cause, when they are read and when the engine asks them.
 * @internal
 */
export function retryFetchAs(
  where: string,
  input: string | URL | Request,
  init: RequestInit | undefined,
  options: RetryFetchOptions | undefined,
): Promise<Response> {
  // Destructured from an own-property copy: nothing is read through the prototype chain (an
  // `Object.prototype.idempotent = true` planted by another package must not make a POST
  // retried), and the rest holds only what the caller wrote.
  const {
    fetch: fetchOption,
    maxRetryAfterMs = Infinity,
    bufferBody,
    retryable,
    idempotent,
    signal: userSignal,
    hedge,
    resume,
    ...retryOptions
  } = readFetchOptions(options, where);
  const fetchFn = fetchOption ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') {
    throw new TypeError(`${where}: globalThis.fetch is ${describe(fetchFn)}; pass options.fetch`);
  }
  let plan: RequestPlan;
  try {
    plan = planRequest(input, init, where);
  } catch (error) {
    // What fetch itself would reject with (bad headers), or an input taken for a Request with no method: reject, as fetch does.
    return Promise.reject(error);
  }
  const { callerSignal } = plan;
  const held = heldResponse();
  const mode = resumeMode(plan, { resume, bufferBody, hedge });
  // The caller's abort reaches the fetch at once, not a macrotask later as a deadline's does (followLate).
  const callerAborted = () => callerSignal?.aborted === true || userSignal?.aborted === true;
  const send = sender(input, init, plan, fetchFn, retryOptions.service === CLOUD_STORAGE, callerAborted);
  const attempt = attemptOf(send, plan.method, held, {
    buffer: mode === 'buffer' ? bodyBuffer() : undefined,
    readWhole: bufferBody === true,
  });
  const policy = fetchPolicy(plan, { maxRetryAfterMs, retryable, idempotent, hedge, maxAttempts: retryOptions.maxAttempts });

  const callSignal = eitherSignal(callerSignal, userSignal);
  let call: ReturnType<typeof startCall<Response>>;
  try {
    const { signal } = callSignal;
    // FETCH_RULES checked every option once (readFetchOptions); the policy and the signal are retryFetch's own.
    call = startCall(attempt, configOfChecked({ ...retryOptions, ...policy, ...(signal && { signal }) }, where));
  } catch (error) {
    // Bad options: the engine threw before the call began, so nothing will dispose of the listeners.
    callSignal.dispose();
    throw error;
  }
  return call.settled.then(
    (response) => {
      callSignal.dispose();
      // A hedged copy that failed while another won may still hold its response.
      held.release();
      const handed = handOver(response, callerSignal);
      if (mode !== 'stream' || !canResume(handed)) return handed;
      return resumingResponse(handed, resumeDriver(call.call, send, { caller: callerSignal, user: userSignal }), plan.method);
    },
    (error: unknown) => {
      callSignal.dispose();
      // The held response is the answer when the call gave up on it; else it is freed and the error stands.
      return handOver(held.settle(error), callerSignal);
    },
  );
}
