// What fetch really throws on each runtime for a refused connection, a reset, a closed
// connection, a body cut short and a name that does not resolve, and how the default
// classification must judge it. These are not typed by hand: the runtime suite
// (test/runtimes/smoke.js, case `networkFailures`) provokes each failure on loopback under Node,
// Deno, Bun, workerd and headless Chromium, and runtimes.test.ts checks that every runtime's
// shapes and classification are exactly these. The classify tests rebuild the errors from them.
//
// Recorded with Node 20, Deno 2.9.6, Bun 1.4.4, workerd 2026-11-17 and Debian's Chromium.
// Messages are normalised as smoke.js does: ports become PORT, `key=` values K, workerd's
// error reference REF.

/** One level of an error's `cause` chain: what the runtime put on it. */
export interface Level {
  name: string;
  message: string;
  code?: string;
  syscall?: string;
}

/** A failure as a runtime reports it, and its classification. */
export interface Recorded {
  /** The error, then its cause, and so on. */
  shape: Level[];
  isTransient: boolean;
  networkError: boolean;
  notSent: boolean;
}

/**
 * - `refused`: nothing listens on the port;
 * - `reset`: the server resets the connection (RST) once the request has arrived, before answering;
 * - `close`: the server closes the connection (FIN) once the request has arrived, without answering;
 * - `cut`: headers promising 100 bytes, 7 of them, then a reset (the error of reading the body);
 * - `dns`: `http://does-not-exist.invalid/` (RFC 6761: never resolves).
 */
export type FailureCase = 'refused' | 'reset' | 'close' | 'cut' | 'dns';

export type RuntimeName = 'node' | 'deno' | 'bun' | 'workerd' | 'chromium';

const lost = (networkError = true, notSent = false) => ({ isTransient: true, networkError, notSent });

const fetchFailed = (cause: Level): Level[] => [{ name: 'TypeError', message: 'fetch failed' }, cause];

const BUN_RESET =
  'ECONNRESET: The socket connection was closed unexpectedly. For more information, pass `verbose: true` in the second argument to fetch()';
const WORKERD_LOST: Level[] = [{ name: 'Error', message: 'Network connection lost.' }];
const CHROMIUM_FAILED: Level[] = [{ name: 'TypeError', message: 'Failed to fetch' }];

export const RUNTIME_FAILURES: Record<RuntimeName, Record<FailureCase, Recorded>> = {
  node: {
    refused: {
      shape: fetchFailed({ name: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:PORT', code: 'ECONNREFUSED', syscall: 'connect' }),
      ...lost(true, true),
    },
    reset: { shape: fetchFailed({ name: 'Error', message: 'read ECONNRESET', code: 'ECONNRESET', syscall: 'read' }), ...lost() },
    close: { shape: fetchFailed({ name: 'SocketError', message: 'other side closed', code: 'UND_ERR_SOCKET' }), ...lost() },
    cut: {
      shape: [
        { name: 'TypeError', message: 'terminated' },
        { name: 'Error', message: 'read ECONNRESET', code: 'ECONNRESET', syscall: 'read' },
      ],
      ...lost(),
    },
    dns: {
      shape: fetchFailed({
        name: 'Error',
        message: 'getaddrinfo ENOTFOUND does-not-exist.invalid',
        code: 'ENOTFOUND',
        syscall: 'getaddrinfo',
      }),
      ...lost(true, true),
    },
  },
  deno: {
    refused: {
      shape: fetchFailed({
        name: 'Error',
        message:
          'error sending request for url (http://127.0.0.1:PORT/refused): client error (Connect): tcp connect error: Connection refused (os error 111)',
      }),
      ...lost(true, true),
    },
    reset: { shape: fetchFailed({ name: 'Error', message: 'Connection reset by peer (os error 104)' }), ...lost() },
    close: {
      shape: fetchFailed({
        name: 'Error',
        message:
          'error sending request from 127.0.0.1:PORT for http://127.0.0.1:PORT/close?key=K&fail=99 (127.0.0.1:PORT): client error (SendRequest): connection closed before message completed',
      }),
      ...lost(),
    },
    cut: { shape: [{ name: 'TypeError', message: 'error reading a body from connection' }], ...lost() },
    dns: {
      shape: fetchFailed({
        name: 'Error',
        message:
          'error sending request for url (http://does-not-exist.invalid/): client error (Connect): dns error: failed to lookup address information: Name or service not known',
      }),
      ...lost(true, true),
    },
  },
  bun: {
    refused: {
      shape: [
        { name: 'TypeError', message: 'ECONNREFUSED: Unable to connect. Is the computer able to access the url?', code: 'ECONNREFUSED' },
      ],
      ...lost(true, true),
    },
    reset: { shape: [{ name: 'TypeError', message: BUN_RESET, code: 'ECONNRESET' }], ...lost() },
    close: { shape: [{ name: 'TypeError', message: BUN_RESET, code: 'ECONNRESET' }], ...lost() },
    cut: { shape: [{ name: 'TypeError', message: BUN_RESET, code: 'ECONNRESET' }], ...lost() },
    dns: {
      shape: [{ name: 'TypeError', message: 'getaddrinfo ENOTFOUND does-not-exist.invalid', code: 'ENOTFOUND', syscall: 'getaddrinfo' }],
      ...lost(true, true),
    },
  },
  // workerd cannot tell a refused connection from one that broke after the request went out:
  // notSent stays false. Its DNS failure is an "internal error", which only the default
  // classification (every plain Error is transient) retries.
  workerd: {
    refused: { shape: WORKERD_LOST, ...lost() },
    reset: { shape: WORKERD_LOST, ...lost() },
    close: { shape: WORKERD_LOST, ...lost() },
    cut: { shape: WORKERD_LOST, ...lost() },
    dns: { shape: [{ name: 'Error', message: 'internal error; reference = REF' }], ...lost(false) },
  },
  // Chromium says "Failed to fetch" for everything: notSent cannot be known there.
  chromium: {
    refused: { shape: CHROMIUM_FAILED, ...lost() },
    reset: { shape: CHROMIUM_FAILED, ...lost() },
    close: { shape: CHROMIUM_FAILED, ...lost() },
    cut: { shape: CHROMIUM_FAILED, ...lost() },
    dns: { shape: CHROMIUM_FAILED, ...lost() },
  },
};

/** The error a recorded shape describes, rebuilt with the same constructor name, message, fields and causes. */
export function rebuild(shape: readonly Level[]): Error {
  const [level, ...causes] = shape;
  if (level === undefined) throw new Error('rebuild: an empty shape');
  const cause = causes.length > 0 ? { cause: rebuild(causes) } : undefined;
  const error = level.name === 'TypeError' ? new TypeError(level.message, cause) : new Error(level.message, cause);
  if (level.name !== 'TypeError' && level.name !== 'Error') error.name = level.name;
  if (level.code !== undefined) Object.assign(error, { code: level.code });
  if (level.syscall !== undefined) Object.assign(error, { syscall: level.syscall });
  return error;
}

/** Every recorded failure, as [runtime, case, recorded] rows for `it.each`. */
export const RECORDED_ROWS: Array<[RuntimeName, FailureCase, Recorded]> = Object.entries(RUNTIME_FAILURES).flatMap(([runtime, cases]) =>
  Object.entries(cases).map(([failure, recorded]): [RuntimeName, FailureCase, Recorded] => [
    runtime as RuntimeName,
    failure as FailureCase,
    recorded,
  ]),
);
