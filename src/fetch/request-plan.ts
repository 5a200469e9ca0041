/**
 * What retryFetch needs to know about a request before its first attempt: the method it sends
 * and judges, whether that method (or an `Idempotency-Key`) makes it safe to resend, whether its
 * body can be sent again, and whose signal guards it. Read once: init from own properties only,
 * a `Request` of another realm (undici's npm package) by its fields.
 */
import { isIdempotentRequest } from '../classify/idempotent-request.js';
import { describe } from '../util/check.js';

/** What retryFetch needs to know about the request, read once before the first attempt. */
export interface RequestPlan {
  /** The input when it is a `Request` of this realm: handed to fetch itself on every attempt, never a clone. */
  readonly request: Request | undefined;
  /**
   * The input when it is a `Request` of another realm, which fetch would not recognise (it
   * stringifies it into a bad URL): its fields, as init members sent with {@link url}.
   */
  readonly fields: RequestInit | undefined;
  /** The URL asked for, as given (a relative one stays relative). */
  readonly url: string;
  /** Upper-case method. */
  readonly method: string;
  /** The method as the caller spelled it (fetch upper-cases only the standard ones). */
  readonly sentMethod: string;
  /** The request's headers as fetch will send them (init's replace the Request's), if any. */
  readonly headers: Headers | undefined;
  /** Safe to resend by its method or an `Idempotency-Key` header. */
  readonly idempotent: boolean;
  /** False when the body can be read only once (a stream, and so any `Request`'s own body). */
  readonly replayable: boolean;
  /** The caller's signal: `init.signal`, else the `Request`'s. */
  readonly callerSignal: AbortSignal | undefined;
}

/** A `Request`, of this realm or another, as the plan reads it. */
interface ReadRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly body: unknown;
  readonly signal: AbortSignal | null | undefined;
  /** For a Request of another realm: the init members that send it as its URL. */
  readonly fields?: RequestInit;
}

/**
 * The members of RequestInit a Request carries, copied from one of another realm. `window` and
 * `priority` are left out: no Request exposes them.
 */
const COPIED = ['redirect', 'credentials', 'mode', 'cache', 'referrer', 'referrerPolicy', 'integrity', 'keepalive'] as const;

/**
 * Reads the plan; throws what fetch itself would throw for bad headers, and a TypeError naming
 * `where` for an input that has a `url` (so it is taken for a Request) but no string `method`.
 */
export function planRequest(input: string | URL | Request, init: RequestInit | undefined, where = 'retryFetch'): RequestPlan {
  const request = typeof Request === 'function' && input instanceof Request ? input : undefined;
  const read: ReadRequest | undefined = request ?? readForeign(input, where);
  // Own properties only: a member inherited from Object.prototype (planted by another package)
  // is not the caller's. The spread that hands init to fetch copies own properties only, too.
  const ownMethod = ownMember(init, 'method');
  const ownHeaders = ownMember(init, 'headers');
  const ownSignal = ownMember(init, 'signal');
  const ownBody = ownMember(init, 'body');
  const sentMethod = String(ownMethod ?? read?.method ?? 'GET');
  const method = sentMethod.toUpperCase();
  // fetch(request, init) takes init's headers instead of the request's when init has some.
  const headers = ownHeaders !== undefined ? new Headers(ownHeaders) : read?.headers;
  const callerSignal = ownSignal !== undefined ? (ownSignal ?? undefined) : (read?.signal ?? undefined);
  // A Request's body is a stream, whatever it was made from (no standard member says whether a
  // string or a stream is behind it): sent once, never teed. A body in init replaces it, as in fetch.
  const replayable = ownBody !== undefined && ownBody !== null ? isReplayable(ownBody) : (read?.body ?? null) === null;
  return {
    request,
    fields: request === undefined ? read?.fields : undefined,
    url: read?.url ?? String(input),
    method,
    sentMethod,
    headers,
    idempotent: isIdempotentRequest(method, headers?.get('idempotency-key')),
    replayable,
    callerSignal,
  };
}

/**
 * The input as a Request of another realm: an object with a string `url` is one (a URL has
 * `href`, not `url`), and must then say its method, or it would go out as a GET. Its headers are
 * copied into this realm's class (a foreign Headers is iterable like any).
 */
function readForeign(input: unknown, where: string): ReadRequest | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const url = memberOf(input, 'url');
  if (typeof url !== 'string') return undefined;
  const method = memberOf(input, 'method');
  if (typeof method !== 'string') {
    throw new TypeError(`${where}: input.method must be a string when input has a url (it is read as a Request), got ${describe(method)}`);
  }
  const fields: Record<string, unknown> = {};
  // A member it lacks is copied as undefined, which fetch reads as not given.
  for (const key of COPIED) fields[key] = memberOf(input, key);
  const body = memberOf(input, 'body');
  if (body !== undefined && body !== null) {
    // The stream itself, read by the one attempt that sends it.
    fields.body = body;
    fields.duplex = 'half';
  }
  const headers = new Headers((memberOf(input, 'headers') ?? undefined) as HeadersInit | undefined);
  return { url, method, headers, body, signal: memberOf(input, 'signal') as AbortSignal | null | undefined, fields };
}

/**
 * `object[key]`, read through the object's own getters or its class's, never from
 * Object.prototype: what another package planted there is not the caller's.
 */
function memberOf(object: object, key: string): unknown {
  for (let owner: object | null = object; owner !== null && owner !== Object.prototype; owner = Object.getPrototypeOf(owner)) {
    if (Object.hasOwn(owner, key)) return (object as Record<string, unknown>)[key];
  }
  return undefined;
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
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    (typeof Blob === 'function' && body instanceof Blob) ||
    (typeof URLSearchParams === 'function' && body instanceof URLSearchParams) ||
    (typeof FormData === 'function' && body instanceof FormData)
  );
}
