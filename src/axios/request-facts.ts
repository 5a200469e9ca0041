/**
 * What the engine needs to know about an axios request before its first attempt: whether its
 * method (or an `Idempotency-Key`) makes it safe to resend, whether its body can be sent again,
 * and the one signal that aborts the whole call (its `signal` and its `cancelToken`).
 */
import type { CancelToken, InternalAxiosRequestConfig } from 'axios';
import { isIdempotentRequest } from '../classify/idempotent-request.js';
import { eitherSignal } from '../fetch/either-signal.js';
import { headerValue } from '../util/http-headers.js';

/** The request's facts, read once. */
export interface RequestFacts {
  /** Safe to resend by its method or an `Idempotency-Key` header. */
  readonly idempotent: boolean;
  /** False when the body can be read only once (a stream). */
  readonly replayable: boolean;
}

/** Reads the facts of `config` as the adapter receives it (method lower case, data transformed). */
export function requestFacts(config: InternalAxiosRequestConfig): RequestFacts {
  // axios has lower-cased the method and filled in its default ('get') by now.
  const method = String(config.method).toUpperCase();
  const key = headerValue(config.headers, 'idempotency-key');
  return { idempotent: isIdempotentRequest(method, key), replayable: isReplayable(config.data) };
}

/**
 * Whether the adapter can be given this body again. After axios's transformRequest it is a
 * string, a buffer, a typed array, URLSearchParams, a FormData or a Blob, which each attempt
 * sends whole; or a stream (Node's, which has `pipe`, the form-data package's among them, or a
 * web ReadableStream), which the first attempt consumes.
 */
function isReplayable(data: unknown): boolean {
  if (typeof data !== 'object' || data === null) return true;
  const stream = data as { pipe?: unknown; getReader?: unknown };
  return typeof stream.pipe !== 'function' && typeof stream.getReader !== 'function';
}

/**
 * The one signal of the call from the request's `signal` and `cancelToken`, until `dispose()`.
 * A cancelled token aborts with its `CanceledError`, which axios hands the caller.
 */
export function callSignal(config: InternalAxiosRequestConfig): { signal: AbortSignal | undefined; dispose(): void } {
  const signal = config.signal as AbortSignal | undefined;
  const token = config.cancelToken;
  if (!token) return eitherSignal(signal, undefined);
  const fromToken = tokenSignal(token);
  const both = eitherSignal(signal, fromToken.signal);
  return {
    signal: both.signal,
    dispose: () => {
      both.dispose();
      fromToken.dispose();
    },
  };
}

function tokenSignal(token: CancelToken): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const listener = (reason: unknown): void => controller.abort(reason);
  // subscribe() calls the listener at once when the token was cancelled already.
  token.subscribe(listener);
  return { signal: controller.signal, dispose: () => token.unsubscribe(listener) };
}
