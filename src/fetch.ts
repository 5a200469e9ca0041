/**
 * `retryFetch`: `fetch` with `retry()` around it. The loop, the deadline, the backoff and the
 * abort handling are retry()'s; this module only says how HTTP maps onto them: which responses
 * count as failures, which requests are safe to send again, how a body is replayed, and what
 * becomes of the responses that are not returned.
 */
import { describe } from './describe.js';
import { retryAfterMsOf } from './errors.js';
import { type HedgeOptions, hedge } from './hedge.js';
import { readHedgeOptions } from './hedge-options.js';
import { notSent } from './not-sent.js';
import { type RetryPredicate, isTransient } from './predicates.js';
import { type AttemptContext, RetryError, type RetryOptions, retry } from './retry.js';
import { brand, isInstance } from './util/brand.js';

/**
 * The fetch that `retryFetch` calls: the global one, or any function shaped like it.
 *
 * @example
 * // Log every attempt that goes out.
 * const logged: FetchFunction = (input, init) => {
 *   console.log(init?.method ?? 'GET', String(input));
 *   return fetch(input, init);
 * };
 * await retryFetch(url, undefined, { fetch: logged });
 */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * Options of {@link retryFetch}: every `RetryOptions` field, plus three of its own.
 *
 * @example
 * const options: RetryFetchOptions = {
 *   ...gcs({ operation: 'objects.get' }),
 *   attemptTimeoutMs: 10_000, // give up on a hung attempt after 10 s, and retry
 *   maxRetryAfterMs: 30_000, // a server asking for more than 30 s gets its response returned
 *   bufferBody: true, // a download cut mid-way is retried, not handed over broken
 * };
 * const res = await retryFetch(objectUrl, { headers }, options);
 */
export interface RetryFetchOptions extends RetryOptions {
  /**
   * The fetch implementation to call. Default: `globalThis.fetch`, looked up when
   * `retryFetch` is called (so a polyfill or instrumentation installed later is used).
   */
  fetch?: FetchFunction;
  /**
   * The longest `Retry-After` worth waiting for, in milliseconds. A response asking for a
   * longer wait is returned at once instead. Default: no limit but the deadline (a hint that
   * would end past the deadline always returns the response at once).
   */
  maxRetryAfterMs?: number;
  /**
   * Read each response's whole body inside its attempt. Then a connection that drops in the
   * middle of the body fails the attempt (and is retried when the request is safe to resend),
   * and `attemptTimeoutMs` covers the download too; the `Response` you get has its body in
   * memory. Default `false`: the response is returned as soon as its headers arrive, as
   * fetch does, and a body that breaks later fails when you read it.
   */
  bufferBody?: boolean;
  /**
   * Hedge GET and HEAD requests (see `hedge()`): within each attempt, when the response has
   * not arrived after the hedging delay, the same request is sent again; the first response
   * is used and the other requests are aborted, their bodies cancelled. Other methods are never
   * hedged. The deadline, signal and retry policy are the call's. Default: no hedging.
   */
  hedge?: Pick<HedgeOptions, 'delayMs' | 'hedger' | 'maxAttempts' | 'onHedge' | 'budget'>;
}

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

/** Methods that RFC 9110 defines as idempotent: sending one twice has the effect of sending it once. */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);

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
 * - **Discards** every response it does not return by cancelling its body, which frees its
 *   connection: a retried response when the next attempt starts, a late response of an
 *   abandoned attempt when it arrives.
 * - Each attempt's fetch gets a signal that aborts with the attempt's (at `attemptTimeoutMs`,
 *   at the deadline, when your signal aborts). `init.signal` (or the `Request`'s signal) also
 *   keeps aborting the returned response's body, as with fetch.
 *
 * Options are retry()'s (defaults: deadline 120 s, backoff 1 s × 2 up to 32 s with full
 * jitter) plus `fetch`, `maxRetryAfterMs`, `bufferBody` and `hedge`; bad options throw synchronously,
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

  const attempt = async (ctx: AttemptContext): Promise<Response> => {
    release();
    const attemptSignal = ctx.signal;
    // retry() reads the clock for a first attempt one microtask after it began. Yielding before
    // fetch's (synchronous, not free) setup makes that setup count against the deadline, even
    // when a caller starts fifty calls in one go and the clock would otherwise start after all.
    await undefined;
    // Aborted meanwhile (the caller's signal, in the same tick): nothing is sent.
    if (attemptSignal.aborted) throw attemptSignal.reason;
    const fetchController = followLate(attemptSignal);
    // The method is passed explicitly: fetch fills a missing one from its own dictionary, which
    // inherits from Object.prototype, and the method sent must be the one judged idempotent.
    const response = await send(plan.request === undefined ? input : plan.request.clone(), {
      ...init,
      method: plan.sentMethod,
      signal: fetchController.signal,
    });
    controllerOf.set(response, fetchController);
    // retry() has moved on (timeout, deadline, abort): nobody will read this response.
    if (attemptSignal.aborted) throw discarded(response, attemptSignal.reason);
    if (bufferBody === true) {
      await readWholeBody(response);
      if (attemptSignal.aborted) throw discarded(response, attemptSignal.reason);
    }
    if (response.status < 400) return response;
    const failure = new HttpStatusError(response, plan.method);
    held = failure;
    throw failure;
  };

  const transient: RetryPredicate = userRetryable ?? isTransient;
  // retry() asks `retryable(error, ctx)` and then, for a transient error, `idempotent(ctx)`
  // about that same failure; notSent needs the error, so the first call leaves it for the second.
  let judgedError: unknown;
  const retryable = (error: unknown, ctx?: AttemptContext): boolean => {
    judgedError = error;
    if (error instanceof HttpStatusError && (error.retryAfterMs ?? 0) > maxRetryAfterMs) {
      return false;
    }
    return transient(error, ctx);
  };
  const rule = userIdempotent ?? plan.idempotent;
  const idempotent = (ctx: AttemptContext): boolean =>
    plan.replayable &&
    ((typeof rule === 'function' ? rule(ctx) : rule) || notSent(judgedError));

  // A hedged attempt is a race of copies; when all of them fail, retry() judges the last failure
  // as it would a single attempt's (hedge() wraps it in a RetryError).
  const hedged = (ctx: AttemptContext): Promise<Response> =>
    hedge(attempt, { ...hedging, signal: ctx.signal, deadlineMs: Infinity, retryable }).catch((error: unknown) => {
      throw error instanceof RetryError ? error.cause : error;
    });
  const readOnly = plan.method === 'GET' || plan.method === 'HEAD';

  const callSignal = eitherSignal(plan.callerSignal, userSignal);
  let call: Promise<Response>;
  try {
    call = retry(hedging !== undefined && readOnly ? hedged : attempt, { ...retryOptions, retryable, idempotent, signal: callSignal.signal });
  } catch (error) {
    // Bad options: retry() threw before the call began, so nothing will dispose of the listeners.
    callSignal.dispose();
    throw asOwnError(error);
  }
  return call.then(
    (response) => {
      callSignal.dispose();
      // A hedged copy that failed while another won may still hold its response.
      release();
      return handOver(response, plan.callerSignal);
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

/** The controller of the signal each response's fetch was given. */
const controllerOf = new WeakMap<Response, AbortController>();

/**
 * For each caller signal that still guards returned responses: the controllers to abort when
 * it aborts, held weakly. One listener per signal, however many calls share it.
 */
const guardedBy = new WeakMap<AbortSignal, Set<WeakRef<AbortController>>>();

/** Drops a response's entry once the response is garbage. */
const unguard =
  typeof FinalizationRegistry === 'function' && typeof WeakRef === 'function'
    ? new FinalizationRegistry<{ guards: Set<WeakRef<AbortController>>; ref: WeakRef<AbortController> }>(
        ({ guards, ref }) => guards.delete(ref),
      )
    : undefined;

/**
 * Returns the response, wired so that the caller's signal keeps aborting it as fetch's would:
 * aborting it while the body downloads stops the download. During the call, retry() passes the
 * caller's abort on to the attempt; afterwards this does. Not AbortSignal.any, and not a
 * listener per call: a long-lived signal (a server's shutdown signal) shared by every call
 * would collect one per call, in Node even with AbortSignal.any (nodejs/node#55351).
 */
function handOver(response: Response, signal: AbortSignal | undefined): Response {
  // Every response handed over came from an attempt, which registered its controller.
  const controller = controllerOf.get(response) as AbortController;
  if (signal === undefined || response.body === null || unguard === undefined) {
    return response;
  }
  if (signal.aborted) {
    controller.abort(signal.reason);
    return response;
  }
  let guards = guardedBy.get(signal);
  if (guards === undefined) {
    const set = new Set<WeakRef<AbortController>>();
    guards = set;
    guardedBy.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        for (const ref of set) ref.deref()?.abort(signal.reason);
        set.clear();
      },
      { once: true },
    );
  }
  // The controller lives as long as its response (controllerOf); so does this entry.
  const ref = new WeakRef(controller);
  guards.add(ref);
  unguard.register(response, { guards, ref });
  return response;
}

/** What retryFetch needs to know about the request, read once before the first attempt. */
interface RequestPlan {
  /** The input when it is a `Request`: cloned for every attempt, never sent itself. */
  readonly request: Request | undefined;
  /** Upper-case method. */
  readonly method: string;
  /** The method as the caller spelled it (fetch upper-cases only the standard ones). */
  readonly sentMethod: string;
  /** Safe to resend by its method or an `Idempotency-Key` header. */
  readonly idempotent: boolean;
  /** False when the body can be read only once (a stream). */
  readonly replayable: boolean;
  /** The caller's signal: `init.signal`, else the `Request`'s. */
  readonly callerSignal: AbortSignal | undefined;
}

function planRequest(input: string | URL | Request, init: RequestInit | undefined): RequestPlan {
  const request = typeof Request === 'function' && input instanceof Request ? input : undefined;
  // Own properties only (see retryFetch): a member inherited from Object.prototype is not the
  // caller's. The spread that hands init to fetch copies own properties only, too.
  const ownMethod = ownMember(init, 'method');
  const ownHeaders = ownMember(init, 'headers');
  const ownSignal = ownMember(init, 'signal');
  const sentMethod = String(ownMethod ?? request?.method ?? 'GET');
  const method = sentMethod.toUpperCase();
  // fetch(request, init) takes init's headers instead of the request's when init has some.
  const headers = ownHeaders !== undefined ? new Headers(ownHeaders) : request?.headers;
  const key = headers?.get('idempotency-key') ?? '';
  const callerSignal = ownSignal !== undefined ? (ownSignal ?? undefined) : request?.signal;
  return {
    request,
    method,
    sentMethod,
    idempotent: IDEMPOTENT_METHODS.has(method) || key.trim() !== '',
    replayable: isReplayable(ownMember(init, 'body')),
    callerSignal,
  };
}

function ownMember<K extends keyof RequestInit>(init: RequestInit | undefined, key: K): RequestInit[K] | undefined {
  return typeof init === 'object' && init !== null && Object.hasOwn(init, key) ? init[key] : undefined;
}

/**
 * Whether fetch can be given this body again: everything it copies on each call. A stream
 * (or an async iterable, which Node's fetch also takes) is consumed by the first attempt.
 */
function isReplayable(body: unknown): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    (typeof Blob === 'function' && body instanceof Blob) ||
    (typeof URLSearchParams === 'function' && body instanceof URLSearchParams) ||
    (typeof FormData === 'function' && body instanceof FormData)
  );
}

/**
 * Reads the body to its end through a clone, so a connection that breaks mid-body fails the
 * attempt; the response keeps every byte for its reader (a clone's chunks are queued on both).
 */
async function readWholeBody(response: Response): Promise<void> {
  try {
    await response.clone().arrayBuffer();
  } catch (error) {
    cancelBody(response);
    throw error;
  }
}

/** Cancels the body of a response nobody will read, and returns `reason` to throw. */
function discarded(response: Response, reason: unknown): unknown {
  cancelBody(response);
  return reason;
}

/**
 * Frees a response nobody will read: cancelling the body makes fetch drop or recycle its
 * connection; an unread body would hold the socket until garbage collection.
 */
function cancelBody(response: Response): void {
  try {
    const body = response.body;
    if (body !== null && !body.locked) body.cancel().catch(ignore);
  } catch {
    // A fetch double whose Response lacks a body stream: nothing to free.
  }
}

function ignore(): void {}

/**
 * A signal that aborts one macrotask after `signal` (not aborted yet), with its reason. retry()
 * aborts every attempt that reaches its deadline in the same timer callback, and aborting a
 * fetch costs fetch's own cleanup (undici: a fraction of a millisecond each, far more on a busy
 * machine); done at once, fifty calls sharing a deadline would each settle only after all fifty
 * cleanups. Deferred, every caller hears of the deadline first, and the sockets close right
 * after.
 */
function followLate(signal: AbortSignal): AbortController {
  const follower = new AbortController();
  // An attempt's signal aborts once, and lives no longer than its attempt: no need for `once`.
  // The braces matter: a listener that returns a value (setTimeout's) makes workerd warn.
  signal.addEventListener('abort', () => {
    setTimeout(() => follower.abort(signal.reason), 0);
  });
  return follower;
}

/**
 * The call's signal from the caller's two (`init.signal` or the Request's, and
 * `options.signal`): a controller that listens to both until `dispose()`, called when the call
 * settles. (Not AbortSignal.any: in Node, each signal it returns stays referenced from a
 * long-lived source, some 50 bytes a call, nodejs/node#55351.)
 */
function eitherSignal(a: AbortSignal | undefined, b: AbortSignal | undefined): { signal: AbortSignal | undefined; dispose(): void } {
  if (a === undefined || b === undefined) return { signal: a ?? b, dispose: ignore };
  const controller = new AbortController();
  const onA = (): void => controller.abort(a.reason);
  const onB = (): void => controller.abort(b.reason);
  if (a.aborted) onA();
  else if (b.aborted) onB();
  // Removed by dispose(), which retryFetch calls however the call ends.
  a.addEventListener('abort', onA);
  b.addEventListener('abort', onB);
  return {
    signal: controller.signal,
    dispose: () => {
      a.removeEventListener('abort', onA);
      b.removeEventListener('abort', onB);
    },
  };
}

/**
 * retry()'s option errors say `retry:`; the caller called retryFetch and should read that
 * name. Same class and message otherwise, with the original as `cause`.
 */
function asOwnError(error: unknown): unknown {
  if (!(error instanceof TypeError || error instanceof RangeError) || !error.message.startsWith('retry: ')) return error;
  const Kind = error instanceof RangeError ? RangeError : TypeError;
  // The list of known options names retry()'s; retryFetch knows three more.
  const message = error.message.slice('retry: '.length).replace(/\(known: ([^)]*)\)/, '(known: $1, fetch, maxRetryAfterMs, bufferBody, hedge)');
  return new Kind(`retryFetch: ${message}`, { cause: error });
}

/**
 * Checks retryFetch's own options (retry() checks the rest), throwing a TypeError/RangeError
 * naming the field, and returns a copy of the caller's own enumerable properties on a null
 * prototype: whatever reads it sees only what the caller wrote.
 */
function readFetchOptions(options: RetryFetchOptions | undefined): RetryFetchOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options) || options instanceof Map) {
    throw new TypeError(`retryFetch: options must be an object, got ${describe(options)}`);
  }
  const own: RetryFetchOptions = Object.assign(Object.create(null) as RetryFetchOptions, options);
  const { fetch, maxRetryAfterMs, bufferBody, retryable, idempotent, signal } = own;
  if (fetch !== undefined && typeof fetch !== 'function') {
    throw new TypeError(`retryFetch: options.fetch must be a function, got ${describe(fetch)}`);
  }
  // retryFetch wraps these two in functions of its own, so retry() would not see a bad value.
  if (retryable !== undefined && typeof retryable !== 'function') {
    throw new TypeError(`retryFetch: options.retryable must be a function, got ${describe(retryable)}`);
  }
  if (idempotent !== undefined && typeof idempotent !== 'boolean' && typeof idempotent !== 'function') {
    throw new TypeError(`retryFetch: options.idempotent must be a boolean or a function, got ${describe(idempotent)}`);
  }
  if (maxRetryAfterMs !== undefined && !(typeof maxRetryAfterMs === 'number' && maxRetryAfterMs >= 0)) {
    throw new RangeError(`retryFetch: options.maxRetryAfterMs must be a number >= 0 (Infinity for none), got ${describe(maxRetryAfterMs)}`);
  }
  // Everything retryFetch itself uses of a signal (it listens to it, and stops listening).
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new TypeError(`retryFetch: options.signal must be an AbortSignal, got ${describe(signal)}`);
  }
  if (bufferBody !== undefined && typeof bufferBody !== 'boolean') {
    throw new TypeError(`retryFetch: options.bufferBody must be a boolean, got ${describe(bufferBody)}`);
  }
  if (own.hedge !== undefined) readFetchHedge(own.hedge);
  return own;
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function' &&
    typeof (value as AbortSignal).removeEventListener === 'function'
  );
}

/** Checks `options.hedge` as hedge() would, naming the field as retryFetch's. */
function readFetchHedge(value: unknown): void {
  if (typeof value !== 'object' || value === null) {
    throw new TypeError(`retryFetch: options.hedge must be an object, got ${describe(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (!['delayMs', 'hedger', 'maxAttempts', 'onHedge', 'budget'].includes(key)) {
      throw new TypeError(`retryFetch: unknown option hedge.${key} (known: delayMs, hedger, maxAttempts, onHedge, budget)`);
    }
  }
  try {
    readHedgeOptions(value);
  } catch (error) {
    const e = error as Error;
    throw new (e.constructor as typeof Error)(e.message.replace(/^hedge: options\./, 'retryFetch: options.hedge.'));
  }
}
