/**
 * `retryFetch`: `fetch` with `retry()` around it. The loop, the deadline, the backoff and the
 * abort handling are retry()'s; this module wires HTTP onto them: which responses count as
 * failures, which requests are safe to send again (request-plan.ts), and what becomes of the
 * responses that are not returned (responses.ts).
 */
import { describe } from '../util/check.js';
import { notSent } from '../classify/not-sent.js';
import type { RetryPredicate } from '../types.js';
import { isTransient } from '../classify/predicates.js';
import type { AttemptContext } from '../types.js';
import { ResumeError, RetryError } from '../errors.js';
import { startCall } from '../core/retry.js';
import { type RetryFetchOptions, readFetchOptions } from './fetch-options.js';
import { HttpStatusError } from '../errors.js';
import { type RequestPlan, planRequest } from './request-plan.js';
import { eitherSignal } from './either-signal.js';
import { cancelBody, discarded, followLate, handOver, readWholeBody, trackResponse } from './responses.js';
import { type ResumeDriver, bodyBuffer, canResume, resumingResponse } from './resume.js';

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
 *   it never left the client ({@link notSent}: connection refused, DNS failure, connect timeout).
 * - **Waits** at least as long as a `Retry-After` (seconds or HTTP-date) asks; a response whose
 *   hint ends past the deadline, or exceeds `maxRetryAfterMs`, is returned at once.
 * - **Replays** string, `ArrayBuffer`, typed array, `Blob`, `URLSearchParams` and `FormData`
 *   bodies on every attempt and clones a `Request` per attempt; a `ReadableStream` body can be
 *   read only once, so such a request is sent once and never retried.
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
 * jitter) plus `fetch`, `maxRetryAfterMs`, `bufferBody`, `hedge` and `resume`; bad options throw synchronously,
 * naming the field.
 *
 * @example
 * const res = await retryFetch('https://storage.googleapis.com/storage/v1/b/my-bucket/o/report.csv?alt=media', {
 *   headers: { authorization: `Bearer ${token}` },
 * }, gcs({ operation: 'objects.get', deadlineMs: 30_000 }));
 * if (!res.ok) throw new Error(`download failed: ${res.status}`);
 * const csv = await res.text();
 */
export function retryFetch(input: string | URL | Request, init?: RequestInit, options?: RetryFetchOptions): Promise<Response> {
  // Destructured from an own-property copy: nothing is read through the prototype chain (an
  // `Object.prototype.idempotent = true` planted by another package must not make a POST
  // retried), and the rest holds only what the caller wrote.
  const {
    fetch: fetchOption,
    maxRetryAfterMs = Infinity,
    bufferBody,
    retryable: userRetryable,
    idempotent: userIdempotent,
    signal: userSignal,
    hedge: hedging,
    resume,
    ...retryOptions
  } = readFetchOptions(options);
  const send = fetchOption ?? globalThis.fetch;
  if (typeof send !== 'function') {
    throw new TypeError(`retryFetch: globalThis.fetch is ${describe(send)}; pass options.fetch`);
  }
  let plan: RequestPlan;
  try {
    plan = planRequest(input, init);
  } catch (error) {
    // What fetch itself would reject with (bad headers, a used Request): reject, as fetch does.
    return Promise.reject(error);
  }

  // The last response that failed with a retryable status. It is kept, body unread, until the
  // next attempt starts: if the deadline or the budget ends the call first, it is the answer.
  let held: HttpStatusError | undefined;
  const release = (): void => {
    if (held !== undefined) cancelBody(held.response);
    held = undefined;
  };

  const resumable = resume !== false && plan.method === 'GET' && plan.headers?.has('range') !== true;

  /** One request: the caller's, or (resuming) with `extra` headers and a generation in its query. */
  const sendOnce = async (ctx: AttemptContext, extra?: Record<string, string>, generation?: string): Promise<Response> => {
    const attemptSignal = ctx.signal;
    // retry() reads the clock for a first attempt one microtask after it began. Yielding before
    // fetch's (synchronous, not free) setup makes that setup count against the deadline, even
    // when a caller starts fifty calls in one go and the clock would otherwise start after all.
    await undefined;
    // Aborted meanwhile (the caller's signal, in the same tick): nothing is sent.
    if (attemptSignal.aborted) throw attemptSignal.reason;
    const fetchController = followLate(attemptSignal);
    let target: string | URL | Request = plan.request === undefined ? input : plan.request.clone();
    if (generation !== undefined) {
      // A relative URL (a browser page's fetch) is resolved as fetch resolves it: against the page.
      const url = new URL(plan.request?.url ?? String(input), (globalThis as { location?: { href: string } }).location?.href);
      if (!url.searchParams.has('generation')) url.searchParams.set('generation', generation);
      target = plan.request === undefined ? url : new Request(url, target as Request);
    }
    const headers = extra === undefined ? {} : { headers: { ...Object.fromEntries(plan.headers ?? []), ...extra } };
    // The method is passed explicitly: fetch fills a missing one from its own dictionary, which
    // inherits from Object.prototype, and the method sent must be the one judged idempotent.
    const response = await send(target, { ...init, ...headers, method: plan.sentMethod, signal: fetchController.signal });
    trackResponse(response, fetchController);
    // retry() has moved on (timeout, deadline, abort): nobody will read this response.
    if (attemptSignal.aborted) throw discarded(response, attemptSignal.reason);
    return response;
  };

  // Hedged copies race to the end of their bodies: they do not share one partial body.
  const buffer = bufferBody === true && resumable && hedging === undefined ? bodyBuffer() : undefined;
  const attempt = async (ctx: AttemptContext): Promise<Response> => {
    release();
    const rest = buffer?.next();
    let response = await (rest === undefined ? sendOnce(ctx) : sendOnce(ctx, rest.headers, rest.generation));
    if (buffer !== undefined && (rest !== undefined || canResume(response))) {
      // A break fails this attempt and leaves the bytes so far in the buffer, for the next one;
      // a part that ends short of the whole is continued within the attempt.
      for (;;) {
        const part = response;
        const whole = await buffer.fill(part, plan.method, ctx.signal).catch((error: unknown) => {
          throw discarded(part, error);
        });
        if (ctx.signal.aborted) throw ctx.signal.reason;
        if (whole !== undefined) {
          response = whole;
          break;
        }
        const more = buffer.next() as { headers: Record<string, string>; generation: string | undefined };
        response = await sendOnce(ctx, more.headers, more.generation);
      }
    } else if (bufferBody === true) {
      await readWholeBody(response);
      if (ctx.signal.aborted) throw discarded(response, ctx.signal.reason);
    }
    if (response.status < 400) return response;
    const failure = new HttpStatusError(response, plan.method);
    // Hedged copies fail side by side: the one held before this one will never be returned.
    release();
    held = failure;
    throw failure;
  };

  const transient: RetryPredicate = userRetryable ?? isTransient;
  const retryable = (error: unknown, ctx?: AttemptContext): boolean => {
    if (error instanceof ResumeError) return false;
    if (error instanceof HttpStatusError && (error.retryAfterMs ?? 0) > maxRetryAfterMs) {
      return false;
    }
    return transient(error, ctx);
  };
  const rule = userIdempotent ?? plan.idempotent;
  // retry() hands the failure it is judging: a request that provably never left is safe to resend.
  const idempotent = (ctx: AttemptContext, error: unknown): boolean =>
    plan.replayable && ((typeof rule === 'function' ? rule(ctx, error) : rule) || notSent(error));

  // A copy is a resend before any failure: only GET and HEAD are copied, and `maxAttempts: 1`
  // is one request, always. The engine asks the idempotency rule before the first copy.
  const hedgeMode =
    hedging !== undefined && (plan.method === 'GET' || plan.method === 'HEAD') && retryOptions.maxAttempts !== 1 ? hedging : undefined;

  /** Resumes are further runs of the call: its policies, attempt numbers and hooks; a signal of their own. */
  const resumeDriver = (): ResumeDriver => {
    const stop = new AbortController();
    return {
      run: async (broken, resumed, progressed) => {
        const caller = eitherSignal(plan.callerSignal, userSignal);
        const either = eitherSignal(caller.signal, stop.signal);
        try {
          // A continuation (nothing broke) sends at once; a break is judged as the run's failure.
          return handOver(await call.run.reopen(resumed, broken, either.signal, progressed), plan.callerSignal);
        } finally {
          either.dispose();
          caller.dispose();
        }
      },
      send: (headers, generation, ctx) => sendOnce(ctx, headers, generation),
      stopped: () => stop.signal.aborted || plan.callerSignal?.aborted === true || userSignal?.aborted === true,
      stop: (reason) => stop.abort(reason),
    };
  };

  const callSignal = eitherSignal(plan.callerSignal, userSignal);
  let call: ReturnType<typeof startCall<Response>>;
  try {
    const { signal } = callSignal;
    const options = { ...retryOptions, retryable, idempotent, ...(signal && { signal }), ...(hedgeMode && { hedge: hedgeMode }) };
    call = startCall(attempt, options, 'retryFetch');
  } catch (error) {
    // Bad options: the engine threw before the call began, so nothing will dispose of the listeners.
    callSignal.dispose();
    throw error;
  }
  return call.settled.then(
    (response) => {
      callSignal.dispose();
      // A hedged copy that failed while another won may still hold its response.
      release();
      const handed = handOver(response, plan.callerSignal);
      return resumable && bufferBody !== true && canResume(handed) ? resumingResponse(handed, resumeDriver(), plan.method) : handed;
    },
    (error: unknown) => {
      callSignal.dispose();
      const last = held;
      held = undefined;
      if (last !== undefined && (error === last || (error instanceof RetryError && error.cause === last))) {
        return handOver(last.response, plan.callerSignal);
      }
      if (last !== undefined) cancelBody(last.response);
      throw error;
    },
  );
}
