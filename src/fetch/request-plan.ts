/**
 * What retryFetch needs to know about a request before its first attempt: the method it sends
 * and judges, whether that method (or an `Idempotency-Key`) makes it safe to resend, whether its
 * body can be sent again, and whose signal guards it. Read once, from own properties only.
 */
import { isIdempotentRequest } from '../classify/idempotent-request.js';

/** What retryFetch needs to know about the request, read once before the first attempt. */
export interface RequestPlan {
  /** The input when it is a `Request`: cloned for every attempt, never sent itself. */
  readonly request: Request | undefined;
  /** Upper-case method. */
  readonly method: string;
  /** The method as the caller spelled it (fetch upper-cases only the standard ones). */
  readonly sentMethod: string;
  /** The request's headers as fetch will send them (init's replace the Request's), if any. */
  readonly headers: Headers | undefined;
  /** Safe to resend by its method or an `Idempotency-Key` header. */
  readonly idempotent: boolean;
  /** False when the body can be read only once (a stream). */
  readonly replayable: boolean;
  /** The caller's signal: `init.signal`, else the `Request`'s. */
  readonly callerSignal: AbortSignal | undefined;
}

/** Reads the plan; throws what fetch itself would throw for bad headers. */
export function planRequest(input: string | URL | Request, init: RequestInit | undefined): RequestPlan {
  const request = typeof Request === 'function' && input instanceof Request ? input : undefined;
  // Own properties only: a member inherited from Object.prototype (planted by another package)
  // is not the caller's. The spread that hands init to fetch copies own properties only, too.
  const ownMethod = ownMember(init, 'method');
  const ownHeaders = ownMember(init, 'headers');
  const ownSignal = ownMember(init, 'signal');
  const sentMethod = String(ownMethod ?? request?.method ?? 'GET');
  const method = sentMethod.toUpperCase();
  // fetch(request, init) takes init's headers instead of the request's when init has some.
  const headers = ownHeaders !== undefined ? new Headers(ownHeaders) : request?.headers;
  const callerSignal = ownSignal !== undefined ? (ownSignal ?? undefined) : request?.signal;
  return {
    request,
    method,
    sentMethod,
    headers,
    idempotent: isIdempotentRequest(method, headers?.get('idempotency-key')),
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
