// The shapes undici requests and responses come in, through the interceptor and the REAL undici:
// every form of request headers (read for Idempotency-Key, sent as given), bodies that can or
// cannot be sent again, responses with no body, informational and unusual statuses, repeated
// headers, and discarded bodies long enough to be cut rather than read.
import { Readable } from 'node:stream';
import { Agent, type Dispatcher, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { tenaciousInterceptor } from '../../src/undici/index.js';
import { failThenOk, fast, recorder, sendStatus, useLoopback } from './kit.js';

const { serve, keep } = useLoopback();
const agent = () => keep(new Agent().compose(tenaciousInterceptor(fast)));

describe('request headers, in every form undici takes', () => {
  it.each([
    ['a flat list, a name repeated', ['Idempotency-Key', 'k1', 'x-tag', 'a', 'x-tag', 'b'], 'a, b'],
    [
      'an iterable of pairs',
      new Map([
        ['idempotency-key', 'k1'],
        ['x-tag', 'a'],
      ]),
      'a',
    ],
    ['an object with a list value', { 'Idempotency-Key': 'k1', 'x-tag': ['a', 'b'], 'x-none': undefined }, 'a, b'],
  ])('%s: the Idempotency-Key is read (POST retried), the headers sent as given', async (_name, headers, tag) => {
    const server = await serve(failThenOk(1));
    const { statusCode, body } = await request(server.url, {
      method: 'POST',
      body: 'b',
      headers: headers as Dispatcher.DispatchOptions['headers'],
      dispatcher: agent(),
    });
    expect(statusCode).toBe(200);
    await body.dump();
    expect(server.requests.map((r) => [r.headers['idempotency-key'], r.headers['x-tag'], 'x-none' in r.headers])).toEqual([
      ['k1', tag, false],
      ['k1', tag, false],
    ]);
  });

  it('every attempt sends the caller’s headers in the caller’s form: a repeated name stays two lines', async () => {
    const raw: string[][] = [];
    const server = await serve((n, res, req) => {
      raw.push(req.rawHeaders.filter((_v, i, all) => all[i - (i % 2)] === 'X-Tag'));
      sendStatus(res, n === 0 ? 503 : 200, n);
    });
    const { body } = await request(server.url, { headers: ['X-Tag', 'a', 'X-Tag', 'b'], dispatcher: agent() });
    await body.dump();
    expect(raw).toEqual([
      ['X-Tag', 'a', 'X-Tag', 'b'],
      ['X-Tag', 'a', 'X-Tag', 'b'],
    ]);
  });

  it('without an Idempotency-Key, a POST with a flat list of headers is sent once', async () => {
    const server = await serve(failThenOk(1));
    const { statusCode, body } = await request(server.url, { method: 'POST', body: 'b', headers: ['x-tag', 'a'], dispatcher: agent() });
    expect(statusCode).toBe(503);
    await body.dump();
    expect(server.requests).toHaveLength(1);
  });
});

describe('request bodies', () => {
  it('a stream body is sent once: a PUT whose 503 would be retried is answered with it', async () => {
    const server = await serve(failThenOk(1));
    const { statusCode, body } = await request(server.url, {
      method: 'PUT',
      body: Readable.from(['chunk-1 ', 'chunk-2']),
      dispatcher: agent(),
    });
    expect(statusCode).toBe(503);
    await body.dump();
    expect(server.requests.map((r) => r.body)).toEqual(['chunk-1 chunk-2']);
  });

  it('a Uint8Array body is sent again, byte for byte', async () => {
    const server = await serve(failThenOk(1));
    const { body } = await request(server.url, { method: 'PUT', body: new Uint8Array([104, 105]), dispatcher: agent() });
    await body.dump();
    expect(server.requests.map((r) => r.body)).toEqual(['hi', 'hi']);
  });
});

describe('responses', () => {
  it('204: no body, the status as it came', async () => {
    const server = await serve((_n, res) => {
      res.writeHead(204, 'Nothing Here');
      res.end();
    });
    const { handler, ended } = recorder();
    agent().dispatch({ origin: server.url, path: '/', method: 'DELETE' }, handler);
    const told = await ended;
    expect(told.events).toEqual(['start', 'status 204', 'end']);
  });

  it('HEAD: the headers, no body', async () => {
    const server = await serve((n, res) => sendStatus(res, 200, n));
    const { statusCode, headers, body } = await request(server.url, { method: 'HEAD', dispatcher: agent() });
    expect(statusCode).toBe(200);
    expect(headers['content-length']).toBe('26');
    expect(await body.text()).toBe('');
  });

  it('a 103 Early Hints before the 200 is not the answer: the 200 is', async () => {
    const server = await serve((n, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload' });
      sendStatus(res, 200, n);
    });
    const { statusCode, body } = await request(server.url, { dispatcher: agent() });
    expect(statusCode).toBe(200);
    expect(await body.json()).toEqual({ status: 200, attempt: 1 });
  });

  it('the status message and repeated Set-Cookie headers reach the caller as undici gives them', async () => {
    const server = await serve((_n, res) => {
      res.writeHead(200, 'Fine', { 'set-cookie': ['a=1', 'b=2'], 'x-one': 'v' });
      res.end('ok');
    });
    const { handler, ended } = recorder();
    let message: string | undefined;
    agent().dispatch(
      { origin: server.url, path: '/', method: 'GET' },
      {
        ...handler,
        onResponseStart: (c, s, h, m) => {
          message = m;
          handler.onResponseStart?.(c, s, h, m);
        },
      },
    );
    const told = await ended;
    expect(message).toBe('Fine');
    expect(told.headers).toMatchObject({ 'set-cookie': ['a=1', 'b=2'], 'x-one': 'v' });
    expect(told.body).toBe('ok');
  });

  it('a status fetch cannot carry (600): the call fails with fetch’s RangeError, one request', async () => {
    const server = await serve((_n, res) => {
      res.writeHead(600);
      res.end('odd');
    });
    const error = await request(server.url, { dispatcher: agent() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect(server.requests).toHaveLength(1);
  });
});

describe('discarded bodies', () => {
  const long = 'e'.repeat(100 * 1024);

  /** A server whose first answer is a 503 written by `write`; it resolves `cut` when that connection closes. */
  async function first503(write: (res: import('node:http').ServerResponse) => void) {
    let closed: () => void = () => {};
    const cut = new Promise<void>((resolve) => (closed = resolve));
    const server = await serve((n, res) => {
      if (n > 0) return sendStatus(res, 200, n);
      res.socket?.once('close', closed);
      write(res);
    });
    return { server, cut };
  }

  it('a long 503 body (over the 64 KiB queued) is cut: its connection closes, the retry answers', async () => {
    const { server, cut } = await first503((res) => {
      res.writeHead(503, { 'content-length': String(long.length) });
      res.end(long);
    });
    const { body } = await request(server.url, { dispatcher: agent() });
    expect(await body.json()).toEqual({ status: 200, attempt: 2 });
    await cut;
  });

  it('a long 503 body of unknown length, still arriving when the retry starts, is cut: its connection closes', async () => {
    const { server, cut } = await first503((res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      for (let at = 0; at < long.length; at += 8192) res.write(long.slice(at, at + 8192));
      res.end();
    });
    const { body } = await request(server.url, { dispatcher: agent() });
    expect(await body.json()).toEqual({ status: 200, attempt: 2 });
    await cut;
  });

  it('a short one (of unknown length) has arrived whole: one connection carries both requests', async () => {
    const { server } = await first503((res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.write('busy, ');
      res.end('try again');
    });
    const { body } = await request(server.url, { dispatcher: agent() });
    await body.dump();
    expect(server.requests).toHaveLength(2);
    expect(server.connections()).toBe(1);
  });
});
