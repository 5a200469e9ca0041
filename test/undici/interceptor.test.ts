// The interceptor's HTTP rules, through the REAL undici (request(), fetch(), the global
// dispatcher) against a real node:http server on 127.0.0.1, counting the requests it saw:
// which methods are resent, which failures are retried, and what the caller gets at the end.
import { Agent, type Dispatcher, fetch, request, setGlobalDispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { RetryError, hedging } from '../../src/index.js';
import { tenaciousInterceptor } from '../../src/undici/index.js';
import { closedPort } from '../helpers/loopback.js';
import { failThenOk, fast, sendStatus, useLoopback } from './kit.js';

const { serve, keep } = useLoopback();

/** An Agent with the interceptor composed on it. */
const agent = (options: Parameters<typeof tenaciousInterceptor>[0] = fast) => keep(new Agent().compose(tenaciousInterceptor(options)));

describe('retried through request(), fetch() and the global dispatcher', () => {
  it('request(): 503, 503, 200 → the 200 and its body, after three requests', async () => {
    const server = await serve(failThenOk(2));
    const { statusCode, body } = await request(server.url, { dispatcher: agent() });
    expect(statusCode).toBe(200);
    expect(await body.json()).toEqual({ status: 200, attempt: 3 });
    expect(server.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);
  });

  it('fetch() through the dispatcher: 503, 200 → the 200, two requests', async () => {
    const server = await serve(failThenOk(1));
    const res = await fetch(`${server.url}/item?x=1`, { dispatcher: agent() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 200, attempt: 2 });
    expect(server.requests.map((r) => r.url)).toEqual(['/item?x=1', '/item?x=1']);
  });

  it('setGlobalDispatcher(): a plain request() is retried', async () => {
    const server = await serve(failThenOk(1));
    setGlobalDispatcher(agent());
    const { statusCode, body } = await request(`${server.url}/global`);
    expect(statusCode).toBe(200);
    await body.dump();
    expect(server.requests).toHaveLength(2);
  });

  it('setGlobalDispatcher(): Node’s own globalThis.fetch (its bundled undici) goes through it too', async () => {
    const server = await serve(failThenOk(2));
    setGlobalDispatcher(agent());
    const res = await globalThis.fetch(`${server.url}/node-fetch`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 200, attempt: 3 });
    expect(server.requests).toHaveLength(3);
  });

  it('a reset connection is retried', async () => {
    const server = await serve((n, res, req) => (n === 0 ? req.socket.resetAndDestroy() : sendStatus(res, 200, n)));
    const { statusCode, body } = await request(server.url, { dispatcher: agent() });
    expect(statusCode).toBe(200);
    await body.dump();
    expect(server.requests).toHaveLength(2);
  });

  it('an attempt timeout aborts the hung dispatch (its socket closes) and the next attempt answers', async () => {
    let closed: () => void = () => {};
    const stalledClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = await serve((n, res, req) => {
      if (n > 0) return sendStatus(res, 200, n);
      req.socket.once('close', closed);
    });
    const { statusCode, body } = await request(server.url, { dispatcher: agent({ ...fast, attemptTimeoutMs: 100 }) });
    expect(statusCode).toBe(200);
    await body.dump();
    await stalledClosed;
    expect(server.requests).toHaveLength(2);
  });

  it('hedge: a GET still unanswered after the hedging delay is sent again; the first answer wins, the loser’s socket closes', async () => {
    let closed: () => void = () => {};
    const stalledClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = await serve((n, res, req) => {
      if (n > 0) return sendStatus(res, 200, n);
      req.socket.once('close', closed);
    });
    const { statusCode, body } = await request(server.url, { dispatcher: agent({ ...fast, hedge: hedging({ delayMs: 20 }) }) });
    expect(statusCode).toBe(200);
    expect(await body.json()).toEqual({ status: 200, attempt: 2 });
    await stalledClosed;
  });

  it('a 404 is the answer at once: one request, its body intact', async () => {
    const server = await serve((n, res) => sendStatus(res, 404, n));
    const { statusCode, body } = await request(server.url, { dispatcher: agent() });
    expect(statusCode).toBe(404);
    expect(await body.json()).toEqual({ status: 404, attempt: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it('a network error the engine gives up on: the handler gets a RetryError, undici’s error as its cause', async () => {
    const server = await serve((_n, _res, req) => req.socket.resetAndDestroy());
    const error = await request(server.url, { dispatcher: agent({ ...fast, maxAttempts: 3 }) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3, cause: { code: 'ECONNRESET' } });
    expect(server.requests).toHaveLength(3);
  });
});

describe('which requests are resent (method idempotency, Idempotency-Key, notSent)', () => {
  it.each(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE'] as const)('%s: retried after a 503', async (method) => {
    const server = await serve(failThenOk(1));
    const { statusCode, body } = await request(server.url, { method, dispatcher: agent() });
    expect(statusCode).toBe(200);
    await body.dump();
    expect(server.requests.map((r) => r.method)).toEqual([method, method]);
  });

  it.each(['POST', 'PATCH'] as const)('%s: a 503 is the answer, one request, its body intact', async (method) => {
    const server = await serve(failThenOk(1));
    const { statusCode, body } = await request(server.url, { method, body: 'order=1', dispatcher: agent() });
    expect(statusCode).toBe(503);
    expect(await body.json()).toEqual({ status: 503, attempt: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it('POST with an Idempotency-Key: retried, the same body and key each time', async () => {
    const server = await serve(failThenOk(2));
    const { statusCode, body } = await request(server.url, {
      method: 'POST',
      headers: { 'idempotency-key': 'order-7', 'content-type': 'text/plain' },
      body: Buffer.from('order=7'),
      dispatcher: agent(),
    });
    expect(statusCode).toBe(200);
    await body.dump();
    expect(server.requests.map((r) => [r.body, r.headers['idempotency-key']])).toEqual([
      ['order=7', 'order-7'],
      ['order=7', 'order-7'],
      ['order=7', 'order-7'],
    ]);
  });

  it('plain POST on ECONNREFUSED: resent (it never left), and reaches the server once it listens', async () => {
    const port = await closedPort();
    let listening: Promise<unknown> = Promise.resolve();
    // Below the interceptor: the second attempt's dispatch waits for the server the first retry starts.
    const held =
      (dispatch: Dispatcher['dispatch']): Dispatcher['dispatch'] =>
      (opts, handler) => {
        void listening.then(() => dispatch(opts, handler));
        return true;
      };
    let server: Awaited<ReturnType<typeof serve>> | undefined;
    const onRetry = (): void => {
      listening = serve(failThenOk(0), port).then((s) => (server = s));
    };
    const dispatcher = keep(new Agent().compose(held, tenaciousInterceptor({ ...fast, onRetry })));
    const { statusCode, body } = await request(`http://127.0.0.1:${port}/orders`, { method: 'POST', body: 'order=8', dispatcher });
    expect(statusCode).toBe(200);
    await body.dump();
    expect(server?.requests.map((r) => [r.method, r.body])).toEqual([['POST', 'order=8']]);
  });

  it('plain POST on a reset (the server may have read it): not resent', async () => {
    const server = await serve((_n, _res, req) => req.socket.resetAndDestroy());
    const error = await request(server.url, { method: 'POST', body: 'x', dispatcher: agent() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ECONNRESET' });
    expect(server.requests).toHaveLength(1);
  });
});
