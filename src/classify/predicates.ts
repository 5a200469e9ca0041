/**
 * The retry policy's question, "is this error transient?", as small predicates that compose
 * (`anyOf`, `allOf`, `not`), and the default classification built from them.
 */
import { isPermanent } from '../errors.js';
import type { RetryPredicate } from '../types.js';
import { isInteger, mustError } from '../util/check.js';
import { firstInChain, objectField } from '../util/cause-chain.js';
import { GrpcStatus, type GrpcStatusName, errorReasonsOf, grpcCodeOf, httpStatusOf, statusStringOf } from './error-shape.js';
import { socketFailure, timedOut } from './network.js';

/**
 * A whole class of HTTP statuses, e.g. `'5xx'` for 500–599.
 *
 * @example
 * const serverErrors: HttpStatusClass = '5xx';
 * retry(call, { retryable: httpStatus(429, serverErrors) });
 */
export type HttpStatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx';

/**
 * True when the error carries one of the given HTTP statuses (see `httpStatusOf`). A class
 * such as `'5xx'` stands for all hundred statuses in it.
 *
 * @example
 * retry(call, { retryable: httpStatus(429, 503) });
 * retry(call, { retryable: httpStatus(408, 429, '5xx') }); // Cloud Storage's list
 */
export function httpStatus(...codes: Array<number | HttpStatusClass>): RetryPredicate {
  // Every status wanted, a class spelled out as its hundred; an error without a status reads as
  // undefined, which the set never holds.
  const wanted = new Set<number | undefined>();
  for (const code of codes) {
    if (typeof code === 'string' && /^[1-5]xx$/.test(code)) {
      const first = Number(code[0]) * 100;
      for (let status = first; status < first + 100; status++) wanted.add(status);
    } else if (isInteger(code) && code >= 100 && code <= 599) wanted.add(code);
    else {
      throw mustError('httpStatus: each code', "be an integer from 100 to 599 or a class such as '5xx'", code, true);
    }
  }
  return (error) => wanted.has(httpStatusOf(error));
}

/**
 * True when the error carries one of the given gRPC codes, by number or name.
 *
 * @example
 * retry(call, { retryable: grpcCode('UNAVAILABLE', 'DEADLINE_EXCEEDED') });
 */
export function grpcCode(...codes: Array<number | GrpcStatusName>): RetryPredicate {
  const wanted = new Set<number | undefined>(
    codes.map((code) => {
      if (typeof code === 'string' && Object.hasOwn(GrpcStatus, code)) return GrpcStatus[code];
      if (isInteger(code) && code >= 0 && code <= 16) return code;
      throw mustError('grpcCode: each code', 'be a gRPC code name or 0..16', code, true);
    }),
  );
  return (error) => wanted.has(grpcCodeOf(error));
}

/**
 * True when the error's Google JSON API `errors[].reason` (see `errorReasonsOf`) is one of
 * the given reasons, compared without regard to case (Google spells them `rateLimitExceeded`;
 * Cloud Storage's client lower-cases the socket codes it puts there, such as `econnreset`).
 *
 * @example
 * retry(call, { retryable: errorReason('rateLimitExceeded', 'backendError') });
 */
export function errorReason(...reasons: string[]): RetryPredicate {
  for (const reason of reasons) {
    if (typeof reason !== 'string' || reason.length === 0) {
      throw mustError('errorReason: each reason', 'be a non-empty string', reason);
    }
  }
  const wanted = new Set(reasons.map((reason) => reason.toLowerCase()));
  return (error) => errorReasonsOf(error).some((reason) => wanted.has(reason.toLowerCase()));
}

/**
 * True when any of the predicates is (evaluated left to right, stopping at the first true).
 *
 * @example
 * retry(call, { retryable: anyOf(httpStatus(429, '5xx'), networkError, timedOut) });
 */
export function anyOf(...predicates: RetryPredicate[]): RetryPredicate {
  assertPredicates('anyOf', predicates);
  return (error, ctx) => predicates.some((p) => p(error, ctx));
}

/**
 * True when every predicate is (evaluated left to right, stopping at the first false).
 *
 * @example
 * // The default classification, but never a 503 from this flaky proxy.
 * retry(call, { retryable: allOf(isTransient, not(httpStatus(503))) });
 */
export function allOf(...predicates: RetryPredicate[]): RetryPredicate {
  assertPredicates('allOf', predicates);
  return (error, ctx) => predicates.every((p) => p(error, ctx));
}

/**
 * The negation of a predicate.
 *
 * @example
 * retry(call, { retryable: allOf(networkError, not(timedOut)) }); // dropped connections, not timeouts
 */
export function not(predicate: RetryPredicate): RetryPredicate {
  assertPredicates('not', [predicate]);
  return (error, ctx) => !predicate(error, ctx);
}

function assertPredicates(name: string, predicates: unknown[]): void {
  predicates.forEach((p, i) => {
    if (typeof p !== 'function') throw mustError(`${name}: argument ${i}`, 'be a predicate function', p);
  });
}

/**
 * HTTP statuses that say "try again": timeout, rate limit, and the server-side transient 5xx.
 *
 * @example
 * TRANSIENT_HTTP_STATUSES.has(response.status); // true for 408, 429, 500, 502, 503, 504
 */
export const TRANSIENT_HTTP_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/**
 * gRPC codes that say "try again"; the rest need a human or a different request.
 *
 * @example
 * TRANSIENT_GRPC_CODES.has(GrpcStatus.UNAVAILABLE); // true
 */
export const TRANSIENT_GRPC_CODES: ReadonlySet<number> = new Set([
  14, // UNAVAILABLE
  8, // RESOURCE_EXHAUSTED
  4, // DEADLINE_EXCEEDED
  10, // ABORTED
  13, // INTERNAL
  2, // UNKNOWN
]);

// Errors that say "do not try again": a bug in the caller's code, or a client-side throttle
// (`ThrottledError`) that refused the call on purpose — an outer retry() must not undo that.
// Typed for any value: a name that is not a string is simply not in them.
const PROGRAMMER_ERRORS: ReadonlySet<unknown> = new Set(['TypeError', 'RangeError', 'ReferenceError', 'SyntaxError']);

/**
 * True for an HTTP 409 whose Google status string is `ABORTED` (a concurrency conflict), or a
 * gRPC ABORTED. HTTP 409 alone also means ALREADY_EXISTS, which must not be retried.
 *
 * @example
 * aborted(gaxiosError); // true for 409 with { "error": { "status": "ABORTED" } }, false for ALREADY_EXISTS
 */
export const aborted: RetryPredicate = (error) => {
  const status = httpStatusOf(error);
  if (status !== undefined) return status === 409 && statusStringOf(error) === 'ABORTED';
  return grpcCodeOf(error) === GrpcStatus.ABORTED;
};

/**
 * The default classification of `retry()`: every error is transient **except** the ones known
 * to be permanent — an HTTP status other than 408/429/500/502/503/504 (a 409 ABORTED is
 * transient), a gRPC code other than UNAVAILABLE/RESOURCE_EXHAUSTED/DEADLINE_EXCEEDED/
 * ABORTED/INTERNAL/UNKNOWN, an abort (`AbortError`, axios' `CanceledError`; also under `cause`,
 * unless the abort was a timeout), a `ThrottledError` (the adaptive throttle refused the call
 * on purpose), a `RetryError` (an inner `retry()` gave up: one retry layer, not attempts multiplied), what
 * `permanent()` wrapped, and
 * programmer errors (`TypeError`, `RangeError`, `ReferenceError`, `SyntaxError`) other than
 * fetch's network `TypeError`.
 *
 * @example
 * isTransient(Object.assign(new Error('busy'), { status: 503 })); // true
 * isTransient(Object.assign(new Error('no'), { status: 403 })); // false
 */
export const isTransient: RetryPredicate = (error) => {
  if (gaveUp(error) || isPermanent(error)) return false;
  const status = httpStatusOf(error);
  if (status !== undefined) return TRANSIENT_HTTP_STATUSES.has(status) || aborted(error);
  const code = grpcCodeOf(error);
  if (code !== undefined) return TRANSIENT_GRPC_CODES.has(code);
  if (abortedByCaller(error)) return false;
  if (error instanceof Error || isErrorLike(error)) {
    const name = (error as { name?: unknown }).name;
    if (PROGRAMMER_ERRORS.has(name)) return socketFailure(error);
    if (name === 'ThrottledError') return false;
    // Bun's fetch names a redirect loop by its code; it repeats identically on every try.
    if ((error as { code?: unknown }).code === 'TooManyRedirects') return false;
  }
  return true;
};

/*
 * One retry layer: a `RetryError` (on the error or under it) is an inner retry() that has
 * already spent its attempts, time or budget on this failure. Retrying it from outside would
 * multiply the attempts (3 × 3 = 9) and stretch the inner deadline. Read by name, so a
 * RetryError from another copy of the library (ESM beside CommonJS) counts too.
 */
function gaveUp(error: unknown): boolean {
  return firstInChain(error, (e) => (e.name === 'RetryError' ? true : undefined)) === true;
}

/**
 * The predicate, except that a `RetryError` (an inner `retry()` that gave up) is never
 * transient: what the presets build their `retryable` with. Not part of the public API.
 *
 * @internal
 * @example
 * const retryable = oneRetryLayer(anyOf(httpStatus(503), networkError));
 */
export function oneRetryLayer(predicate: RetryPredicate): RetryPredicate {
  return (error, ctx) => !gaveUp(error) && predicate(error, ctx);
}

/*
 * An abort anywhere in the cause chain, unless it was a timeout (see `timedOut`): a timed-out
 * request is worth another try, a request its caller cancelled is not. Aborts are named
 * `AbortError` (fetch, node-fetch, which gaxios wraps) or, by axios, `CanceledError`.
 */
function abortedByCaller(error: unknown): boolean {
  return firstInChain(error, (e) => (ABORT_NAMES.has(e.name) ? true : undefined)) === true && !timedOut(error);
}
const ABORT_NAMES: ReadonlySet<unknown> = new Set(['AbortError', 'CanceledError']);

// DOMException is not an Error subclass in every runtime; read its name anyway.
function isErrorLike(value: unknown): boolean {
  return typeof objectField(value, 'name') === 'string';
}
