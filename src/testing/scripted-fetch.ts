/**
 * `scriptedFetch()`: a fetch that answers from a script, with real `Response` objects and the
 * network errors the runtime's own fetch throws, recording every request it was asked.
 */
import type { FetchFunction } from '../fetch/fetch-options.js';
import { type FetchRuntime, type NetworkFailure, detectRuntime, networkError } from './network-failures.js';
import { type ScriptStep, type StatusStep, checkRuntime, checkScript } from './script.js';

/**
 * A request `scriptedFetch` was asked, as it would have gone out.
 *
 * @example
 * const [first]: ScriptedRequest[] = fetch.requests; // first.method, first.headers['idempotency-key']
 */
export interface ScriptedRequest {
  /** 1 for the first request the fetch was asked. */
  readonly number: number;
  readonly method: string;
  readonly url: string;
  /** Every header, by its lower-case name. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as text; undefined when there was none. */
  readonly body: string | undefined;
}

/**
 * Options of {@link scriptedFetch}.
 *
 * @example
 * const fetch = scriptedFetch(['ECONNRESET', 200], { runtime: 'bun' });
 */
export interface ScriptedFetchOptions {
  /** Whose network errors to throw. Default: the runtime this runs on. */
  readonly runtime?: FetchRuntime;
}

/**
 * A fetch function that answers from a script, and what it was asked.
 *
 * @example
 * const fetch: ScriptedFetch = scriptedFetch([503, 200]);
 */
export interface ScriptedFetch extends FetchFunction {
  /** Every request made so far, in order, the ones the script had no answer for included. */
  readonly requests: readonly ScriptedRequest[];
  /** Script entries not used yet. */
  readonly remaining: number;
}

/**
 * A fetch (for `retryFetch`'s `fetch` option, or any code that takes one) that answers the nth
 * request with the nth entry of `script`:
 *
 * - a status (`503`): a real `Response` with that status and a short text body;
 * - `{ status, retryAfter?, headers?, body?, json?, breakAfter? }`: the same with a
 *   `Retry-After` (seconds, or a `Date`), headers, a body (any `BodyInit`, or `json`), or a body
 *   that breaks after `breakAfter` bytes as a dropped connection breaks it;
 * - a network failure (`'ECONNREFUSED'`, `'ECONNRESET'`, `'UND_ERR_SOCKET'`, `'ENOTFOUND'`): the
 *   error the runtime's fetch rejects with, shaped as it is (Node's `TypeError('fetch failed')`
 *   with a `cause` holding `code`, `errno`, `syscall`; Deno's, Bun's, workerd's, a browser's);
 * - `'hang'`: no answer until the request's signal aborts (an attempt timeout, a deadline);
 * - an `Error`: rejected as it is; a function: called with the request, its answer returned.
 *
 * Every request is recorded in `.requests` (its body read as text, as a real fetch reads it).
 * A request past the end of the script rejects with a `TypeError` naming its number, which the
 * default classification does not retry. A request whose signal is aborted rejects with the
 * signal's reason, as fetch does. The script is checked at once: a misspelled entry throws,
 * with the name it probably meant.
 *
 * @example
 * const fetch = scriptedFetch([503, 'ECONNRESET', { status: 429, retryAfter: 2 }, 200]);
 * const res = await retryFetch('https://api.example.com/items', undefined, { ...instant(), fetch });
 * res.status; // 200
 * fetch.requests.length; // 4
 */
export function scriptedFetch(script: readonly ScriptStep[], options: ScriptedFetchOptions = {}): ScriptedFetch {
  const steps = checkScript(script);
  const runtime = checkRuntime(options) ?? detectRuntime();
  const requests: ScriptedRequest[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    // A request aborted before it is sent is not sent: fetch rejects with the reason.
    request.signal.throwIfAborted();
    const number = requests.length + 1;
    const body = request.body === null ? undefined : await request.text();
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    requests.push(Object.freeze({ number, method: request.method, url: request.url, headers: Object.freeze(headers), body }));
    if (number > steps.length) {
      throw new TypeError(
        `scriptedFetch: request ${number} (${request.method} ${request.url}) has no answer: the script has ${steps.length} entries`,
      );
    }
    return answer(steps[number - 1] as ScriptStep, request, runtime);
  };
  Object.defineProperties(fetch, {
    requests: { value: requests },
    remaining: { get: () => Math.max(0, steps.length - requests.length) },
  });
  return fetch as ScriptedFetch;
}

function answer(step: ScriptStep, request: Request, runtime: FetchRuntime): Promise<Response> | Response {
  const url = new URL(request.url);
  if (typeof step === 'number') return respond({ status: step }, url, runtime);
  if (step === 'hang') return hang(request.signal);
  if (typeof step === 'string') throw networkError(runtime, step as NetworkFailure, url);
  if (step instanceof Error) throw step;
  if (typeof step === 'function') return step(request);
  return respond(step, url, runtime);
}

/** Never settles, unless the request's signal aborts: then rejects with its reason, as fetch does. */
function hang(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent: a promise settles once, whatever calls it again
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** No body for these statuses: the Response constructor refuses one. */
const NULL_BODY = new Set([204, 205, 304]);

function respond(step: StatusStep, url: URL, runtime: FetchRuntime): Response {
  const { status, retryAfter, breakAfter } = step;
  const headers = new Headers(step.headers);
  if (retryAfter !== undefined) headers.set('retry-after', retryAfter instanceof Date ? retryAfter.toUTCString() : String(retryAfter));
  let body: BodyInit | null = step.body ?? String(status);
  if (step.json !== undefined) {
    body = JSON.stringify(step.json);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  }
  if (breakAfter !== undefined) body = breaking(body, breakAfter, () => networkError(runtime, 'cut', url));
  const response = new Response(NULL_BODY.has(status) ? null : body, { status, headers });
  // A made Response has no URL; fetch's has the request's (redirects aside).
  Object.defineProperty(response, 'url', { value: url.href });
  return response;
}

/** A body stream that gives its first `bytes` bytes, then fails as a dropped connection does. */
function breaking(body: BodyInit, bytes: number, failure: () => Error): ReadableStream<Uint8Array> {
  const whole = new Response(body).arrayBuffer();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const head = new Uint8Array((await whole).slice(0, bytes));
      if (head.length > 0) controller.enqueue(head);
      controller.error(failure());
    },
  });
}
