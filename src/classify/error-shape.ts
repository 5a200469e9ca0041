/**
 * Error-shape readers: pull an HTTP status, a gRPC code, a system error code, a status string
 * or a server's retry hint out of whatever a client library threw. Each reader looks at the
 * error and then down its `cause` chain, so wrapped errors classify like the original.
 */
import { isFiniteNumber, isInteger } from '../util/check.js';
import { type Bag, firstInChain, isBag } from '../util/cause-chain.js';
import { headerValue, retryAfterIn } from '../util/http-headers.js';

function httpStatusIn(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 100 && value <= 599 ? value : undefined;
  // Some clients (gaxios among them) put the status in `code` as a string: "503".
  if (typeof value === 'string' && /^[1-5]\d\d$/.test(value)) return Number(value);
  return undefined;
}

/**
 * The HTTP status an error carries, if any: `status`, `statusCode`, `response.status`,
 * `response.statusCode`, or a numeric `code` between 100 and 599 (Cloud Storage's `ApiError`).
 *
 * @example
 * httpStatusOf(gaxiosError); // 503
 * httpStatusOf(new Error('x', { cause: { statusCode: 429 } })); // 429
 */
export function httpStatusOf(error: unknown): number | undefined {
  return firstInChain(error, (e) => {
    const response = isBag(e.response) ? e.response : undefined;
    return (
      httpStatusIn(e.status) ??
      httpStatusIn(e.statusCode) ??
      httpStatusIn(response?.status) ??
      httpStatusIn(response?.statusCode) ??
      httpStatusIn(e.code)
    );
  });
}

/**
 * The canonical gRPC status codes (google.rpc.Code), by name.
 *
 * @example
 * if (grpcCodeOf(error) === GrpcStatus.UNAVAILABLE) reconnect();
 */
export const GrpcStatus = Object.freeze({
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const);

/**
 * A gRPC status code name such as `'UNAVAILABLE'`.
 *
 * @example
 * const retryOn: GrpcStatusName[] = ['UNAVAILABLE', 'RESOURCE_EXHAUSTED'];
 * retry(call, { retryable: grpcCode(...retryOn) });
 */
export type GrpcStatusName = keyof typeof GrpcStatus;

/**
 * The gRPC status code an error carries: a numeric `code` from 1 to 16 (grpc-js
 * `ServiceError`, google-gax `GoogleError`), or a status name in `status`/`code` such as
 * `"UNAVAILABLE"`. HTTP errors are not translated; see {@link httpStatusOf}.
 *
 * @example
 * grpcCodeOf(serviceError); // 14 (UNAVAILABLE)
 */
export function grpcCodeOf(error: unknown): number | undefined {
  return firstInChain(error, (e) => {
    const { code } = e;
    // A DOMException's numeric `code` is a legacy DOM code (NotFoundError is 8, InvalidStateError
    // 11…), not a gRPC status; its name says what it is.
    if (isInteger(code) && code >= 1 && code <= 16 && !isDomException(e)) return code;
    const named = typeof code === 'string' ? code : typeof e.status === 'string' ? e.status : undefined;
    return Object.hasOwn(GrpcStatus, named as string) && named !== 'OK' ? GrpcStatus[named as GrpcStatusName] : undefined;
  });
}

function isDomException(value: object): boolean {
  return typeof DOMException === 'function' && value instanceof DOMException;
}

/**
 * The system or socket error code in a string `code`: an operating-system error name (Node's
 * `ECONNRESET`, `ETIMEDOUT`, `EPIPE`, `ECONNREFUSED`, `EAI_AGAIN`, `ENOTFOUND`…) or one of
 * undici's socket and connection codes (`UND_ERR_SOCKET`, `UND_ERR_CONNECT_TIMEOUT`,
 * `UND_ERR_HEADERS_TIMEOUT`, `UND_ERR_BODY_TIMEOUT`, `UND_ERR_CLOSED`), or Node's
 * `ERR_STREAM_PREMATURE_CLOSE` (a connection's stream closed early). Found through `cause`,
 * so fetch's `TypeError('fetch failed')` reports the socket error under it. Library codes that
 * are not about the socket are skipped: axios' `ERR_BAD_RESPONSE`, got's
 * `ERR_NON_2XX_3XX_RESPONSE`, undici's `UND_ERR_RESPONSE`, Node's `ERR_INVALID_URL`.
 *
 * @example
 * // Nothing listens on the port: the TypeError's cause carries the socket error.
 * systemCodeOf(await fetch('http://127.0.0.1:9999/').catch((e) => e)); // 'ECONNREFUSED'
 */
export function systemCodeOf(error: unknown): string | undefined {
  return firstInChain(error, (e) => (isSystemCode(e.code) ? e.code : undefined));
}

/**
 * Whether `code` is what `systemCodeOf` reports: an errno name (`E` and capitals, no
 * underscore, as `ECONNRESET`; or getaddrinfo's `EAI_…`), or a socket code of undici or Node's
 * streams. Shared with
 * `notSent` and the predicates; not part of the public API.
 *
 * @internal
 */
export function isSystemCode(code: unknown): code is string {
  // One pattern, not a Set: it is in every bundle that has retry(). undici's other codes
  // describe the request or the response (UND_ERR_RESPONSE, UND_ERR_INVALID_ARG…); Node's
  // ERR_STREAM_PREMATURE_CLOSE is a connection's stream that closed before its end (what got
  // and node-fetch report then).
  return (
    typeof code === 'string' &&
    /^(E[A-Z0-9]+|EAI_[A-Z]+|UND_ERR_(SOCKET|CLOSED|(CONNECT|HEADERS|BODY)_TIMEOUT)|ERR_STREAM_PREMATURE_CLOSE)$/.test(code)
  );
}

/**
 * The Google API status string of an error, such as `'ABORTED'` or `'ALREADY_EXISTS'`: from a
 * JSON error body (`response.data.error.status` as gaxios exposes it, or the JSON text in
 * `response.body` as Cloud Storage's `ApiError` keeps it), from `status` when it is a string,
 * or from `errors[0].status`. This is what tells HTTP 409 ABORTED (retry the
 * read-modify-write) from 409 ALREADY_EXISTS (do not).
 *
 * @example
 * statusStringOf(gaxios409); // 'ABORTED'
 */
export function statusStringOf(error: unknown): string | undefined {
  return firstInChain(error, (e) => {
    const fromBody = googleErrorOf(e)?.status;
    if (isStatusString(fromBody)) return fromBody;
    if (isStatusString(e.status)) return e.status;
    const first = Array.isArray(e.errors) ? e.errors[0] : undefined;
    return isBag(first) && isStatusString(first.status) ? first.status : undefined;
  });
}

function isStatusString(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Z][A-Z_]+$/.test(value);
}

/**
 * The `error` object of a Google JSON error body (`{ error: { code, status, errors: [...] } }`),
 * wherever the client keeps the body: parsed in `response.data` or `data` (gaxios), or as JSON
 * text in `response.body` (Cloud Storage's `ApiError`).
 */
function googleErrorOf(e: Bag): Bag | undefined {
  const response = isBag(e.response) ? e.response : undefined;
  const body = parsedBody(response?.data) ?? parsedBody(e.data) ?? parsedBody(response?.body);
  return isBag(body) && isBag(body.error) ? body.error : undefined;
}

function parsedBody(data: unknown): unknown {
  if (typeof data !== 'string') return data;
  try {
    return JSON.parse(data);
  } catch {
    // Not JSON: nothing to read in it (undefined).
  }
}

/**
 * The `reason` strings of a Google JSON API error (`errors[].reason`, as Cloud Storage's
 * `ApiError` has them, or `response.data.error.errors[].reason` / the JSON in
 * `response.body`), e.g. `['rateLimitExceeded']`. Empty when there are none.
 *
 * @example
 * errorReasonsOf(storageApiError); // ['rateLimitExceeded']
 */
export function errorReasonsOf(error: unknown): string[] {
  return (
    firstInChain(error, (e) => {
      const fromBody = Array.isArray(e.errors) ? undefined : googleErrorOf(e)?.errors;
      const list = Array.isArray(e.errors) ? e.errors : Array.isArray(fromBody) ? fromBody : undefined;
      const reasons = list?.flatMap((item: unknown) => (isBag(item) && typeof item.reason === 'string' ? [item.reason] : []));
      return reasons && reasons.length > 0 ? reasons : undefined;
    }) ?? []
  );
}

/**
 * How long the server asked the client to wait, in milliseconds, if it said so: an HTTP
 * `Retry-After` header (delta-seconds or an HTTP-date, read from `response.headers` or
 * `headers` as a `Headers` object or a plain object), gRPC `grpc-retry-pushback-ms` trailing
 * metadata, a 429's or 503's `RateLimit-Reset` (or `RateLimit`'s `reset`/`t`) in seconds, or a
 * numeric `retryAfterMs` property set by user code. Malformed hints are ignored.
 * An HTTP-date is measured from the same headers' `Date` when they have a valid one (the
 * server's clock, as RFC 9110 §10.2.3 intends), else from `nowMs`.
 *
 * @param nowMs wall-clock time that an HTTP-date is measured from when the headers carry no
 * `Date` (default `Date.now()`).
 * @example
 * retryAfterMsOf({ response: { headers: new Headers({ 'retry-after': '3' }) } }); // 3000
 */
export function retryAfterMsOf(error: unknown, nowMs: number = Date.now()): number | undefined {
  return firstInChain(error, (e) => {
    if (isFiniteNumber(e.retryAfterMs) && e.retryAfterMs >= 0) {
      return e.retryAfterMs;
    }
    const fromResponse = isBag(e.response) ? e.response.headers : undefined;
    // The response's headers first; a Retry-After there, even a malformed one, is the answer.
    const headers = headerValue(fromResponse, 'retry-after') === undefined ? e.headers : fromResponse;
    if (headerValue(headers, 'retry-after') !== undefined) return retryAfterIn(headers, nowMs);
    return pushbackOf(e.metadata) ?? rateLimitResetOf(e, fromResponse ?? e.headers);
  });
}

/**
 * Whether the server's hint on `error` (what {@link retryAfterMsOf} reads: Retry-After, a
 * RateLimit reset, gRPC pushback) asks for a longer wait than `limitMs`. The one test of
 * `maxRetryAfterMs` in every entry that takes it, so that the cap holds whatever field the hint
 * came in, and measures the very hint the engine would wait for. Not part of the public API.
 *
 * @internal
 * @example
 * hintExceeds(error, options.maxRetryAfterMs); // true: return the answer now rather than wait
 */
export function hintExceeds(error: unknown, limitMs: number): boolean {
  // No hint reads as 0, which no limit (>= 0) is below.
  return (retryAfterMsOf(error) ?? 0) > limitMs;
}

/**
 * A 429's or 503's quota reset, in milliseconds, as the IETF's RateLimit header fields draft
 * (https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/) has servers say it:
 * `RateLimit-Reset: 5`, or `reset=5` (its earlier drafts) or `t=5` (its later ones) in a
 * `RateLimit` field, each in seconds. Other statuses' quotas are informational, not a request to wait.
 */
function rateLimitResetOf(e: Bag, headers: unknown): number | undefined {
  const status = httpStatusOf(e);
  if (status !== 429 && status !== 503) return undefined;
  // An absent field reads as "undefined", which holds no number either.
  const field = `${headerValue(headers, 'ratelimit')}`;
  const reset = headerValue(headers, 'ratelimit-reset') ?? /(?:^|[,;\s])(?:reset|t)=(\d+)(?![\w.])/.exec(field)?.[1];
  return /^\s*\d+\s*$/.test(`${reset}`) ? Number(reset) * 1000 : undefined;
}

function pushbackOf(metadata: unknown): number | undefined {
  if (!isBag(metadata) || typeof metadata.get !== 'function') return undefined;
  const values: unknown = (metadata.get as (key: string) => unknown).call(metadata, 'grpc-retry-pushback-ms');
  const first: unknown = Array.isArray(values) ? values[0] : values;
  const text = typeof first === 'string' ? first : isBag(first) ? String(first) : undefined;
  // gRFC A6: a pushback that is not a non-negative integer means "do not use it".
  return text !== undefined && /^\d+$/.test(text.trim()) ? Number(text) : undefined;
}
