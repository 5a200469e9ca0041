/**
 * The one failure after which any request, even a non-idempotent POST, may be sent again: the
 * failure proves that no byte of the request reached the server, because there never was a
 * connection to carry it.
 */
import { MAX_CAUSE_DEPTH, systemCodeOf, underlying } from './errors.js';

/**
 * Codes that mean the connection was never established:
 * - `ECONNREFUSED`: nothing listens on the port (the server answered the SYN with a reset);
 * - `ENOTFOUND`, `EAI_AGAIN`: the name did not resolve (for good, or for now), so no
 *   connection was even attempted;
 * - `UND_ERR_CONNECT_TIMEOUT`: undici's connect timeout, the handshake never completed.
 *
 * Not `ETIMEDOUT`: Node uses it for sockets that stalled after connecting too, when a request
 * may well have been delivered. Not `ECONNRESET`/`EPIPE`/`UND_ERR_SOCKET`: the connection
 * existed, and the server may have read and acted on the request before it died.
 *
 * @example
 * NOT_SENT_CODES.has(systemCodeOf(error) ?? ''); // the first code on the chain; notSent() also checks what lies above it
 */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * True when the error proves the request never left the client: connection refused, DNS
 * failure (`ENOTFOUND`, `EAI_AGAIN`) or connect timeout (`UND_ERR_CONNECT_TIMEOUT`), found on
 * the error or down its `cause` chain (fetch's `TypeError('fetch failed')` carries it in
 * `cause`). Such a request is safe to resend whatever its method: nothing can have been
 * applied twice.
 *
 * A timeout or abort met on the way down the chain makes the answer `false`: giving up on an
 * attempt says nothing about what the server received, and a code below it belongs to an
 * earlier failure (retry()'s deadline `TimeoutError` keeps the previous attempt's error as
 * its cause). So does a `RetryError` after more than one attempt: its cause tells only how the
 * last attempt ended, not whether an earlier one arrived.
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
  const code = systemCodeOf(error);
  if (code === undefined || !NOT_SENT_CODES.has(code)) return false;
  // Walk down to the level that carries the code; a give-up on the way makes it history.
  let current: unknown = error;
  // Stryker disable next-line LogicalOperator,UpdateOperator: equivalent. systemCodeOf found the code within MAX_CAUSE_DEPTH levels, through objects only, so the walk returns at that level or above before its bound could end it.
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && isObject(current); depth++) {
    if (current.code === code) return true;
    if (isGiveUp(current)) return false;
    current = underlying(current);
  }
  // Stryker disable next-line BooleanLiteral: unreachable, for the reason above.
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null;
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
