// What the undici interceptor's tests share: loopback servers that record what they saw
// (requests, bodies, connections), closed after each test with the dispatchers made for it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { afterEach } from 'vitest';
import { type Loopback, startLoopback } from '../helpers/loopback.js';
import type { SeenRequest } from '../clients/loopback.js';

/** A loopback server, what it was asked, and how many connections carried it. */
export interface Recorded extends Loopback {
  readonly requests: SeenRequest[];
}

/** Answers the n-th request (0-based) as `answer(n, …)` says. */
export type Answerer = (n: number, res: ServerResponse, req: IncomingMessage, seen: SeenRequest) => void;

/**
 * Registers the after-each cleanup and returns how to start a recording server and how to keep
 * a dispatcher to close: every server and dispatcher of a test is closed after it, and the
 * global dispatcher is put back.
 */
export function useLoopback(): {
  serve(answer: Answerer, port?: number): Promise<Recorded>;
  keep<D extends Dispatcher>(dispatcher: D): D;
} {
  const servers: Loopback[] = [];
  const dispatchers: Dispatcher[] = [];
  const global = getGlobalDispatcher();
  afterEach(async () => {
    setGlobalDispatcher(global);
    await Promise.all(dispatchers.splice(0).map((d) => d.destroy()));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return {
    async serve(answer, port) {
      const requests: SeenRequest[] = [];
      const loopback = await startLoopback(
        (req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (chunk: Buffer) => chunks.push(chunk));
          req.on('end', () => {
            const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
            requests.push(seen);
            answer(requests.length - 1, res, req, seen);
          });
        },
        port === undefined ? {} : { port },
      );
      servers.push(loopback);
      return Object.assign(loopback, { requests });
    },
    keep(dispatcher) {
      dispatchers.push(dispatcher);
      return dispatcher;
    },
  };
}

/** Answers `status` with a JSON body naming it and the attempt, and `Retry-After: 0` when it is worth a retry. */
export function sendStatus(res: ServerResponse, status: number, n: number, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ status, attempt: n + 1 });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** Answers 503 (with its body) until the `failures`-th request, then 200 `{ ok: true }`. */
export function failThenOk(failures: number): Answerer {
  return (n, res) => (n < failures ? sendStatus(res, 503, n) : sendStatus(res, 200, n));
}

/** Tiny waits: these tests count requests; the waits are the engine's, tested in virtual time elsewhere. */
export const fast = { backoff: { initialDelayMs: 1, maxDelayMs: 2 } } as const;

/** What a handler was told: its events in order, the body bytes, and how it ended. */
export interface Told {
  readonly events: string[];
  readonly status?: number;
  readonly headers?: Record<string, string | string[] | undefined>;
  readonly body: string;
  readonly error?: Error;
  readonly controller?: Dispatcher.DispatchController;
}

/**
 * A handler that records what it is told; `extra` runs after each of its callbacks. `ended`
 * resolves at onResponseEnd or onResponseError.
 */
export function recorder(extra: Partial<Dispatcher.DispatchHandler> = {}): {
  handler: Dispatcher.DispatchHandler;
  ended: Promise<Told>;
  told: Told;
} {
  const told: { -readonly [K in keyof Told]: Told[K] } = { events: [], body: '' };
  let done: (t: Told) => void = () => {};
  const ended = new Promise<Told>((resolve) => (done = resolve));
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(controller, context) {
      told.events.push('start');
      told.controller = controller;
      extra.onRequestStart?.(controller, context);
    },
    onResponseStart(controller, status, headers, message) {
      told.events.push(`status ${status}`);
      told.status = status;
      told.headers = headers;
      extra.onResponseStart?.(controller, status, headers, message);
    },
    onResponseData(controller, chunk) {
      told.events.push('data');
      told.body += chunk.toString();
      extra.onResponseData?.(controller, chunk);
    },
    onResponseEnd(controller, trailers) {
      told.events.push('end');
      done(told);
      extra.onResponseEnd?.(controller, trailers);
    },
    onResponseError(_controller, error) {
      told.events.push('error');
      told.error = error;
      done(told);
    },
  };
  return { handler, ended, told };
}

/** What the dispatcher below the interceptor told one attempt's handler, as an interceptor composed inside it sees. */
export interface SeenBelow {
  readonly events: string[];
  /** After each body chunk: the bytes handed up so far, and whether the attempt's handler had paused the dispatch. */
  readonly chunks: { readonly bytes: number; readonly paused: boolean }[];
  error?: Error;
  /** Resolves at onResponseEnd or onResponseError. */
  readonly ended: Promise<void>;
}

/**
 * An interceptor to compose inside (before) tenaciousInterceptor: it records what undici tells
 * each attempt's handler, and what that handler does to undici's controller.
 */
export function watchBelow(): {
  interceptor: Dispatcher.DispatcherComposeInterceptor;
  dispatches: SeenBelow[];
} {
  const dispatches: SeenBelow[] = [];
  const interceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
    let done: () => void = () => {};
    const seen: SeenBelow = { events: [], chunks: [], ended: new Promise<void>((resolve) => (done = resolve)) };
    dispatches.push(seen);
    let bytes = 0;
    return dispatch(opts, {
      onRequestStart(controller, context) {
        seen.events.push('start');
        handler.onRequestStart?.(controller, context);
      },
      onResponseStart(controller, status, headers, message) {
        seen.events.push(`status ${status}`);
        handler.onResponseStart?.(controller, status, headers, message);
      },
      onResponseData(controller, chunk) {
        bytes += chunk.byteLength;
        handler.onResponseData?.(controller, chunk);
        seen.chunks.push({ bytes, paused: controller.paused });
      },
      onResponseEnd(controller, trailers) {
        seen.events.push('end');
        handler.onResponseEnd?.(controller, trailers);
        done();
      },
      onResponseError(controller, error) {
        seen.events.push('error');
        seen.error = error;
        handler.onResponseError?.(controller, error);
        done();
      },
    });
  };
  return { interceptor, dispatches };
}
