// The dispatch handler protocol, seen from the caller's handler: one onRequestStart at once,
// the controller it gets (abort ends the whole call, pause holds the body), one response or one
// error, a handler that throws, and upgrades passed through untouched. Real undici, real server.
import type { ServerResponse } from 'node:http';
import { Agent, Client, type Dispatcher, request } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { QUEUED_BYTES } from '../../src/undici/bridge.js';
import { tenaciousInterceptor } from '../../src/undici/index.js';
import { fast, recorder, sendStatus, useLoopback, watchBelow } from './kit.js';

const { serve, keep } = useLoopback();
const agent = (options: Parameters<typeof tenaciousInterceptor>[0] = fast) => keep(new Agent().compose(tenaciousInterceptor(options)));
const get = (url: string): Dispatcher.DispatchOptions => ({ origin: url, path: '/', method: 'GET' });

describe('the controller the caller’s handler gets', () => {
  it('aborted at onRequestStart: onResponseError with the reason, nothing sent', async () => {
    const server = await serve((n, res) => sendStatus(res, 200, n));
    const reason = new Error('not wanted');
    const { handler, ended } = recorder({ onRequestStart: (controller) => controller.abort(reason) });
    agent().dispatch(get(server.url), handler);
    const told = await ended;
    expect(told.events).toEqual(['start', 'error']);
    expect(told.error).toBe(reason);
    expect(told.controller).toMatchObject({ aborted: true, reason, paused: false });
    expect(server.requests).toHaveLength(0);
  });

  it('aborted during a backoff (request()’s signal): rejects with the reason at once, one request', async () => {
    const server = await serve((n, res) => sendStatus(res, 503, n));
    const controller = new AbortController();
    const onRetry = (): void => controller.abort(new Error('the user left'));
    const dispatcher = agent({ backoff: { initialDelayMs: 60_000, maxDelayMs: 60_000, jitter: 'none' }, onRetry });
    const error = await request(server.url, { dispatcher, signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toEqual(new Error('the user left'));
    expect(server.requests).toHaveLength(1);
  });

  it('aborted mid-body: onResponseError with the reason, no end, and the server sees its socket close', async () => {
    let closed: () => void = () => {};
    const socketClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = await serve((_n, res) => {
      res.socket?.once('close', closed);
      res.writeHead(200, { 'content-length': '100', etag: '"v"' });
      res.write('part');
    });
    const reason = new Error('enough');
    const { handler, ended } = recorder({ onResponseData: (controller) => controller.abort(reason) });
    agent().dispatch(get(server.url), handler);
    const told = await ended;
    expect(told.events).toEqual(['start', 'status 200', 'data', 'error']);
    expect(told.error).toBe(reason);
    expect(told.body).toBe('part');
    await socketClosed;
  });

  it.each([false, true])(
    'paused and aborted in one callback (bufferBody %s): onResponseError with the reason, no more data',
    async (bufferBody) => {
      const server = await serve((_n, res) => {
        res.writeHead(200, { 'content-length': '100000', etag: '"v"' });
        res.end('y'.repeat(100_000));
      });
      const reason = new Error('stop here');
      const { handler, ended } = recorder({
        onResponseData: (controller) => {
          controller.pause();
          controller.abort(reason);
        },
      });
      agent({ ...fast, bufferBody }).dispatch(get(server.url), handler);
      const told = await ended;
      expect(told.events).toEqual(['start', 'status 200', 'data', 'error']);
      expect(told.error).toBe(reason);
    },
  );

  it('aborted at onResponseStart of a body in memory (bufferBody): onResponseError with the reason, no data', async () => {
    const server = await serve((n, res) => sendStatus(res, 200, n));
    const reason = new Error('not now');
    const { handler, ended } = recorder({ onResponseStart: (controller) => controller.abort(reason) });
    agent({ ...fast, bufferBody: true }).dispatch(get(server.url), handler);
    const told = await ended;
    expect(told.events).toEqual(['start', 'status 200', 'error']);
    expect(told.error).toBe(reason);
  });

  it('paused: no data until resumed, then every byte in order', async () => {
    const big = 'x'.repeat(300_000);
    let sent: () => void = () => {};
    const allSent = new Promise<void>((resolve) => (sent = resolve));
    const server = await serve((_n, res) => {
      res.writeHead(200, { 'content-length': String(big.length) });
      res.end(big, sent);
    });
    let controller: Dispatcher.DispatchController | undefined;
    const {
      handler,
      ended,
      told: sofar,
    } = recorder({
      onResponseData: (c) => {
        if (controller === undefined) {
          controller = c;
          c.pause();
        }
      },
    });
    agent().dispatch(get(server.url), handler);
    await vi.waitFor(() => expect(controller?.paused).toBe(true));
    // The server has written everything and the socket has had turns to deliver it: a paused handler is told nothing.
    await allSent;
    for (let turn = 0; turn < 5; turn++) await new Promise(setImmediate);
    expect(sofar.events).toEqual(['start', 'status 200', 'data']);
    controller?.resume();
    const told = await ended;
    expect(told.body).toBe(big);
    expect(told.events.at(-1)).toBe('end');
    expect(told.controller).toMatchObject({ aborted: false, reason: null, paused: false });
  });

  it('a handler that throws at onResponseStart of a long body: the body is cancelled, its connection cut', async () => {
    let closed: () => void = () => {};
    const socketClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = await serve((_n, res) => {
      res.socket?.once('close', closed);
      res.writeHead(200, { 'content-length': '300000' });
      res.end('z'.repeat(300_000));
    });
    const { handler, ended } = recorder({
      onResponseStart: () => {
        throw new Error('handler bug');
      },
    });
    agent().dispatch(get(server.url), handler);
    expect((await ended).events).toEqual(['start', 'status 200', 'error']);
    await socketClosed;
  });

  it('a handler that throws at onResponseStart gets onResponseError with what it threw', async () => {
    const server = await serve((n, res) => sendStatus(res, 200, n));
    const thrown = new Error('handler bug');
    const { handler, ended } = recorder({
      onResponseStart: () => {
        throw thrown;
      },
    });
    agent().dispatch(get(server.url), handler);
    const told = await ended;
    expect(told.events).toEqual(['start', 'status 200', 'error']);
    expect(told.error).toBe(thrown);
  });

  it('a bad origin: onResponseError with the TypeError, nothing sent', async () => {
    const { handler, ended } = recorder();
    agent().dispatch({ origin: 'not a url', path: '/', method: 'GET' }, handler);
    const told = await ended;
    expect(told.events).toEqual(['start', 'error']);
    expect(told.error).toBeInstanceOf(TypeError);
  });
});

describe('what the dispatcher below is told (an interceptor composed inside this one sees it)', () => {
  it('an attempt whose signal aborted before undici started its request: aborted at its start, nothing sent', async () => {
    const server = await serve((n, res) => sendStatus(res, 200, n));
    // Between the interceptor and the agent: holds the attempt's dispatch until released.
    let held: () => void = () => {};
    const reached = new Promise<void>((resolve) => (held = resolve));
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const hold =
      (dispatch: Dispatcher['dispatch']): Dispatcher['dispatch'] =>
      (opts, handler) => {
        held();
        void released.then(() => dispatch(opts, handler));
        return true;
      };
    const below = watchBelow();
    const reason = new Error('changed my mind');
    const { handler, ended, told } = recorder();
    keep(new Agent().compose(below.interceptor, hold, tenaciousInterceptor(fast))).dispatch(get(server.url), handler);
    await reached;
    told.controller?.abort(reason);
    expect((await ended).error).toBe(reason);
    // The caller's abort reaches the attempt's fetch signal at once (retryFetch's followLate); a
    // macrotask more, and the held dispatch goes on with that signal aborted.
    await new Promise((resolve) => setTimeout(resolve, 0));
    release();
    await vi.waitFor(() => expect(below.dispatches).toHaveLength(1));
    const [attempt] = below.dispatches;
    await attempt?.ended;
    expect(attempt?.events).toEqual(['start', 'error']);
    expect(attempt?.error).toBe(reason);
    expect(server.requests).toHaveLength(0);
  });

  it('a long body nobody will read is cut with an error that says why', async () => {
    const long = 'd'.repeat(4 * QUEUED_BYTES);
    const server = await serve((n, res) => {
      if (n > 0) return sendStatus(res, 200, n);
      res.writeHead(503, { 'content-length': String(long.length) });
      res.end(long);
    });
    const below = watchBelow();
    const { handler, ended } = recorder();
    keep(new Agent().compose(below.interceptor, tenaciousInterceptor(fast))).dispatch(get(server.url), handler);
    expect((await ended).status).toBe(200);
    const [discarded] = below.dispatches;
    await discarded?.ended;
    expect(discarded?.events.at(-1)).toBe('error');
    expect(discarded?.error).toEqual(new Error('tenaciousInterceptor: the body was discarded'));
  });

  it('a body the caller does not read: the socket is paused once 64 KiB wait unread, not before; every chunk holds bytes', async () => {
    const first = 'a'.repeat(1024);
    const rest = 'b'.repeat(16 * QUEUED_BYTES);
    let more: () => void = () => {};
    const go = new Promise<void>((resolve) => (more = resolve));
    const server = await serve((_n, res) => {
      res.writeHead(200, { 'content-length': String(first.length + rest.length) });
      res.write(first);
      void go.then(() => res.end(rest));
    });
    const below = watchBelow();
    const sizes: number[] = [];
    const { handler, ended, told } = recorder({
      onResponseStart: (controller) => controller.pause(),
      onResponseData: (_controller, chunk) => void sizes.push(chunk.byteLength),
    });
    keep(new Agent().compose(below.interceptor, tenaciousInterceptor(fast))).dispatch(get(server.url), handler);
    await vi.waitFor(() => expect(below.dispatches[0]?.chunks.at(-1)?.bytes).toBe(first.length));
    const attempt = below.dispatches[0]!;
    // The first kilobyte alone: far below the queue's mark, the socket keeps flowing.
    expect(attempt.chunks.filter((c) => c.paused)).toEqual([]);
    more();
    await vi.waitFor(() => expect(attempt.chunks.some((c) => c.paused) || attempt.events.includes('end')).toBe(true));
    expect(attempt.events).not.toContain('end');
    const pausedAt = attempt.chunks.find((c) => c.paused)!;
    expect(pausedAt.bytes).toBeGreaterThanOrEqual(QUEUED_BYTES);
    told.controller?.resume();
    const all = await ended;
    expect(all.body).toBe(first + rest);
    expect(sizes.length).toBeGreaterThan(0);
    expect(sizes.filter((size) => size === 0)).toEqual([]);
  });
});

describe('what passes through untouched', () => {
  it.each([
    ['CONNECT', { method: 'CONNECT' }],
    ['an upgrade', { method: 'GET', upgrade: 'websocket' }],
  ] as const)('%s: dispatched down the chain as it came, the handler itself', (_name, fields) => {
    const seen: unknown[] = [];
    const down = (opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean => {
      seen.push(opts, handler);
      return false;
    };
    const opts = { origin: 'http://127.0.0.1:1', path: '/', ...fields } as Dispatcher.DispatchOptions;
    const handler = {};
    expect(tenaciousInterceptor()(down)(opts, handler)).toBe(false);
    expect(seen).toEqual([opts, handler]);
    expect(seen[1]).toBe(handler);
  });

  it('any other request: the interceptor runs it and says it took it (true)', () => {
    const down = vi.fn((_opts: Dispatcher.DispatchOptions, _handler: Dispatcher.DispatchHandler) => false);
    const { handler } = recorder({ onRequestStart: (c) => c.abort(new Error('stop')) });
    expect(tenaciousInterceptor()(down)({ origin: 'http://127.0.0.1:1', path: '/', method: 'GET' }, handler)).toBe(true);
  });
});

describe('dispatchers and origins', () => {
  it('a Client (its requests carry no origin): retried on its own origin', async () => {
    const server = await serve((n, res: ServerResponse) => sendStatus(res, n === 0 ? 503 : 200, n));
    const client = keep(new Client(server.url).compose(tenaciousInterceptor(fast)));
    const { statusCode, body } = await client.request({ path: '/c', method: 'GET' });
    expect(statusCode).toBe(200);
    await body.dump();
    expect(server.requests.map((r) => r.url)).toEqual(['/c', '/c']);
  });

  it('an origin given as a URL', async () => {
    const server = await serve((n, res) => sendStatus(res, n === 0 ? 503 : 200, n));
    const { handler, ended } = recorder();
    agent().dispatch({ origin: new URL(server.url), path: '/u', method: 'GET' }, handler);
    expect((await ended).status).toBe(200);
    expect(server.requests.map((r) => r.url)).toEqual(['/u', '/u']);
  });
});

describe('handlers that leave callbacks out (new-style handlers, called directly: compose wraps the others)', () => {
  /** The interceptor over a plain Agent, called without compose's wrapping. */
  const direct = (options: Parameters<typeof tenaciousInterceptor>[0] = fast) => {
    const plain = keep(new Agent());
    return tenaciousInterceptor(options)((o, h) => plain.dispatch(o, h));
  };

  it('only onResponseEnd and onResponseError: the call runs to its end without calling what is missing', async () => {
    const server = await serve((n, res) => sendStatus(res, n === 0 ? 503 : 200, n));
    const ended = new Promise<string>((resolve) => {
      direct()(get(server.url), { onResponseEnd: () => resolve('end'), onResponseError: (_c, e) => resolve(`error ${e}`) });
    });
    expect(await ended).toBe('end');
    expect(server.requests).toHaveLength(2);
  });

  it('no onResponseError: a failed call is reported to no one, and nothing throws', async () => {
    const server = await serve((_n, _res, req) => req.socket.resetAndDestroy());
    const gaveUp = new Promise<void>((resolve) => {
      direct({ ...fast, maxAttempts: 2, onGiveUp: () => resolve() })(get(server.url), { onRequestStart: () => {} });
    });
    await gaveUp;
    for (let turn = 0; turn < 3; turn++) await new Promise(setImmediate);
    expect(server.requests).toHaveLength(2);
  });

  it('no onResponseEnd: a call that succeeds is not reported as an error', async () => {
    const server = await serve((n, res) => sendStatus(res, 200, n));
    const expected = JSON.stringify({ status: 200, attempt: 1 });
    let body = '';
    const errors: Error[] = [];
    const read = new Promise<void>((resolve) => {
      direct({ ...fast, bufferBody: true })(get(server.url), {
        onResponseData: (_c, chunk) => {
          body += new TextDecoder().decode(chunk);
          if (body === expected) resolve();
        },
        onResponseError: (_c, error) => void errors.push(error),
      });
    });
    await read;
    // The body was in memory: what follows its last chunk runs in microtasks, done after these turns.
    for (let turn = 0; turn < 3; turn++) await new Promise(setImmediate);
    expect(errors).toEqual([]);
  });

  it('a handler that throws at a 204’s onResponseStart (no body to cancel) gets onResponseError', async () => {
    const server = await serve((_n, res) => {
      res.writeHead(204);
      res.end();
    });
    const thrown = new Error('handler bug');
    const { handler, ended } = recorder({
      onResponseStart: () => {
        throw thrown;
      },
    });
    agent().dispatch(get(server.url), handler);
    expect((await ended).error).toBe(thrown);
  });
});
