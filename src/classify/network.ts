/**
 * Failures of the connection rather than of the request: dropped sockets, DNS, fetch's network
 * `TypeError` on each runtime, and requests that ran out of time.
 */
import type { RetryPredicate } from '../types.js';
import { firstInChain, objectField } from '../util/cause-chain.js';
import { isSystemCode } from './error-shape.js';

/**
 * Socket and DNS error codes that mean the connection failed or dropped, not that the
 * server refused the request on its merits.
 *
 * @example
 * NETWORK_ERROR_CODES.has(systemCodeOf(error) ?? ''); // true for ECONNRESET, EAI_AGAIN, …
 */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
  'ERR_STREAM_PREMATURE_CLOSE',
  // Bun's fetch rejects with a plain Error whose `code` names the failure in its own words.
  'ConnectionRefused',
  'ConnectionClosed',
  'FailedToOpenSocket',
  'DNSLookupFailed',
]);

// What browsers and runtimes put in the TypeError that fetch rejects with on a network failure.
const FETCH_NETWORK_MESSAGES = new Set([
  'fetch failed', // Node (undici)
  'Failed to fetch', // Chromium
  'NetworkError when attempting to fetch resource.', // Firefox
  'Load failed', // Safari
  'Network request failed', // React Native, polyfills
  'terminated', // undici: the body stream was cut
]);

// Deno's fetch (hyper underneath) says what failed in words: since Deno 2, on the plain `Error`
// under its `TypeError('fetch failed')` (Deno 1 put them on the TypeError itself). Recorded from
// Deno 2.9.6 on loopback (test/runtimes/): "error sending request for url (…): client error
// (Connect): tcp connect error: Connection refused (os error 111)", "… client error (Connect):
// dns error: failed to lookup address information: …", "error sending request from … for …
// (…): client error (SendRequest): connection closed before message completed", a bare io error
// ("Connection reset by peer (os error 104)"), and, when the body breaks, a TypeError of its own
// ("error reading a body from connection"). Only those reasons: not a TLS failure ("invalid peer
// certificate", "received corrupt message"), which would fail the same way every time, as
// Node's ERR_TLS_* and ERR_SSL_* causes are not retried either. "(os error N)" ends Rust's io
// errors, which only the runtime's own I/O puts in a message: any of them counts, as any errno
// code does on Node. One pattern for all, whatever the error's name: it is in every bundle that
// has retry() (bench/size.ts).
function isNetworkMessage({ name, message, cause }: Error): boolean {
  // Node's fetch rejects with the same `TypeError('fetch failed')` for a dropped connection and
  // for a request that will fail the same way every time: a redirect loop ("redirect count
  // exceeded"), a redirect to ftp: or data: ("URL scheme must be a HTTP(S) scheme"), a port fetch
  // refuses to use ("bad port"), `redirect: 'error'` meeting a redirect. Only the cause tells
  // them apart, so the cause must be a network failure: a socket or DNS code, a timeout. Without
  // a cause (browsers say nothing more than "Failed to fetch") it cannot be known; it is taken
  // for a network failure, as it most often is.
  if (name === 'TypeError' && FETCH_NETWORK_MESSAGES.has(message)) {
    return cause === undefined || cause === null || socketFailure(cause) || timedOut(cause);
  }
  // Node's socket messages; workerd's plain Error for a refused, reset or closed connection and a
  // body cut short alike (recorded on workerd 2026-11-17); Deno's, above.
  return /^socket hang up$|^Client network socket disconnected|^Network connection lost\.$|^error sending request.*: (?:tcp connect|dns|connection closed)|^error reading a body from connection|\(os error \d+\)$/i.test(
    message,
  );
}

/*
 * A system or socket code (see `systemCodeOf`) or a network failure's message, on the error or
 * under it: what the default classification asks of a TypeError. Not networkError's code list,
 * so that list stays out of a bundle that only has retry().
 */
export function socketFailure(error: unknown): boolean {
  const found = firstInChain(error, (e) => (isSystemCode(e.code) || (e instanceof Error && isNetworkMessage(e)) ? true : undefined));
  return found === true;
}

/**
 * True for dropped connections, socket timeouts, DNS failures and fetch's network `TypeError`
 * (Deno's "error sending request …" under it, workerd's "Network connection lost.", Bun's
 * codes too),
 * looking through `cause` chains. A fetch `TypeError` whose cause says the request itself is
 * at fault (a redirect loop, a redirect to another scheme, a port fetch blocks) is not a
 * network error: it would fail the same way every time.
 *
 * @example
 * retry(call, { retryable: anyOf(networkError, httpStatus(503)) });
 */
export const networkError: RetryPredicate = (error) => {
  const found = firstInChain(error, (e) =>
    NETWORK_ERROR_CODES.has(e.code as string) || (e instanceof Error && isNetworkMessage(e)) ? true : undefined,
  );
  return found === true;
};

/**
 * System and library codes of a connection or request that ran out of time.
 *
 * @example
 * TIMEOUT_ERROR_CODES.has('UND_ERR_HEADERS_TIMEOUT'); // true
 */
export const TIMEOUT_ERROR_CODES: ReadonlySet<string> = new Set([
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * True for a request that ran out of time, looking through `cause` chains:
 * - an error named `TimeoutError`: retry()'s own attempt timeout, `AbortSignal.timeout()` as
 *   fetch rejects with it, gaxios on native fetch (`code: 'TimeoutError'`);
 * - a socket or undici timeout code (`ETIMEDOUT`, `UND_ERR_HEADERS_TIMEOUT`, …);
 * - node-fetch v2's `FetchError` of type `request-timeout` / `body-timeout` (what Cloud
 *   Storage's client throws when its `timeout` passes);
 * - an abort whose request signal's reason is a `TimeoutError`: gaxios' `timeout` option on
 *   node-fetch rejects with a plain `AbortError`, and only `error.config.signal.reason`
 *   tells it from the caller's own abort, which stays unmatched.
 *
 * @example
 * retry(call, { retryable: anyOf(timedOut, httpStatus(503)) });
 */
export const timedOut: RetryPredicate = (error) =>
  firstInChain(error, (e) => {
    if (e.name === 'TimeoutError' || e.code === 'TimeoutError') return true;
    if (TIMEOUT_ERROR_CODES.has(e.code as string)) return true;
    if (e.type === 'request-timeout' || e.type === 'body-timeout') return true;
    return abortedByTimeout(e.config) ? true : undefined;
  }) === true;

function abortedByTimeout(config: unknown): boolean {
  const signal = objectField(config, 'signal');
  return objectField(signal, 'aborted') === true && objectField(objectField(signal, 'reason'), 'name') === 'TimeoutError';
}
