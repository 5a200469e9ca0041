/**
 * The one failure after which any request, even a non-idempotent POST, may be sent again: the
 * failure proves that no byte of the request reached the server, because there never was a
 * connection to carry it.
 */
import { firstInChain, isBag } from '../util/cause-chain.js';
import { isSystemCode } from './error-shape.js';

/**
 * Codes that mean the connection was never established:
 * - `ECONNREFUSED`: nothing listens on the port (the server answered the SYN with a reset);
 * - `ENOTFOUND`, `EAI_AGAIN`: the name did not resolve (for good, or for now), so no
 *   connection was even attempted;
 * - `UND_ERR_CONNECT_TIMEOUT`: undici's connect timeout, the handshake never completed;
 * - the codes of Bun's fetch before it took Node's (Bun 1.4 reports `ECONNREFUSED` and
 *   `ENOTFOUND` on its TypeError): `ConnectionRefused`, `FailedToOpenSocket`, `DNSLookupFailed`.
 *
 * Not `ETIMEDOUT` alone: Node uses it for sockets that stalled after connecting too, when a
 * request may well have been delivered (one that says `syscall: 'connect'` is recognised by
 * `notSent`). Not `ECONNRESET`/`EPIPE`/`UND_ERR_SOCKET`: the connection existed, and the server
 * may have read and acted on the request before it died.
 *
 * @example
 * NOT_SENT_CODES.has(systemCodeOf(error) ?? ''); // the first code on the chain; notSent() also checks what lies above it
 */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'ConnectionRefused',
  'FailedToOpenSocket',
  'DNSLookupFailed',
]);

/*
 * Node names the system call that failed: an error of `connect` (refused, unreachable, timed
 * out before the handshake completed) or of the name lookup happened before any byte of the
 * request could be written.
 */
const NOT_SENT_SYSCALLS: ReadonlySet<unknown> = new Set(['connect', 'getaddrinfo']);

/*
 * Deno names the stage of hyper's client that failed. "client error (Connect)" (Deno 2) or
 * "error trying to connect" (Deno 1): the connector failed (a refused TCP connect, a name that
 * did not resolve, a TLS handshake), so no request was written. Deno 2.9.6 puts it on the plain
 * Error under `TypeError('fetch failed')`: "error sending request for url (http://127.0.0.1:…/x):
 * client error (Connect): tcp connect error: Connection refused (os error 111)"; Deno 1 on the
 * TypeError itself. "client error (SendRequest)" is a connection that broke after connecting.
 */
const DENO_CONNECT_FAILURE = /^error sending request .*: (?:client error \(Connect\)|error trying to connect): /;

/**
 * True when the error proves the request never left the client, found on the error or down
 * the chain under it (fetch's `TypeError('fetch failed')` carries it in `cause`, gaxios 6 in
 * `error`):
 * - Node: connection refused, DNS failure (`ENOTFOUND`, `EAI_AGAIN`), undici's connect timeout
 *   (`UND_ERR_CONNECT_TIMEOUT`), or any system error of the `connect` or `getaddrinfo` call
 *   (`EHOSTUNREACH`, or `ETIMEDOUT` while connecting); a happy-eyeballs `AggregateError`
 *   when every address it tried failed that way;
 * - Deno: fetch's error whose message says the connector failed ("error sending request … client
 *   error (Connect): …", Deno 2, on the `Error` under `TypeError('fetch failed')`; "… error
 *   trying to connect: …", Deno 1, on the TypeError);
 * - Bun: Node's codes on the TypeError itself (`ECONNREFUSED`, `ENOTFOUND` with `syscall:
 *   'getaddrinfo'`, Bun 1.4), or its older ones, `ConnectionRefused`, `FailedToOpenSocket`,
 *   `DNSLookupFailed`.
 * Such a request is safe to resend whatever its method: nothing can have been applied twice.
 *
 * It cannot be known in browsers: their fetch rejects with a bare `TypeError("Failed to
 * fetch")` (Chromium; Firefox and Safari alike) for a refused connection and for one dropped
 * after the request was sent, so `notSent` is `false` there. Nor in workerd (Cloudflare
 * Workers): a refused connection, a reset and a cut body are all a plain `Error("Network
 * connection lost.")`, and a name that does not resolve an "internal error"; `false` there too.
 *
 * The first level that carries a system code decides: a code that proves nothing (a reset, a
 * socket error) is the failure, whatever lies under it. A timeout or abort met on the way down
 * makes the answer `false`: giving up on an attempt says nothing about what the server
 * received, and a code below it belongs to an earlier failure (retry()'s deadline
 * `TimeoutError` keeps the previous attempt's error as its cause). So does a `RetryError`
 * after more than one attempt: its cause tells only how the last attempt ended, not whether an
 * earlier one arrived.
 *
 * `retryFetch` uses it for POST and PATCH; with `retry()`, combine it with your own test:
 *
 * @example
 * // Send an order once, but do resend it when the connection was refused.
 * await retry(({ signal }) => placeOrder(order, { signal }), {
 *   retryable: (error) => notSent(error),
 *   maxAttempts: 5,
 * });
 */
export function notSent(error: unknown): boolean {
  // A give-up makes what lies under it history; a system code that proves nothing is the failure.
  return firstInChain(error, (e) => (provesNotSent(e) ? true : isGiveUp(e) || isSystemCode(e.code) ? false : undefined)) === true;
}

function provesNotSent(level: Record<string, unknown>, nested = 0): boolean {
  const { code } = level;
  if (NOT_SENT_CODES.has(code as string)) return true;
  if (isSystemCode(code) && NOT_SENT_SYSCALLS.has(level.syscall)) return true;
  // Node's happy eyeballs (autoSelectFamily) tries each address and reports them all.
  const { errors } = level;
  // Nested once at most: the attempts of one connect, never errors of errors (nor a cycle).
  if (nested === 0 && Array.isArray(errors) && errors.length > 0 && errors.every((e) => isBag(e) && provesNotSent(e, 1))) {
    return true;
  }
  const { name } = level;
  return (name === 'Error' || name === 'TypeError') && typeof level.message === 'string' && DENO_CONNECT_FAILURE.test(level.message);
}

/**
 * Errors whose cause does not describe the request's fate: a timeout or an abort (the request
 * may have arrived), and retry()'s RetryError after several attempts (its cause describes only
 * the last one). DOMException is not an Error subclass in every runtime: names are read.
 */
function isGiveUp(value: Record<string, unknown>): boolean {
  if (value.name === 'TimeoutError' || value.name === 'AbortError') return true;
  return value.name === 'RetryError' && value.attempts !== 1;
}
