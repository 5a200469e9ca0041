// The open bugs of undici's own RetryAgent / retry interceptor, each as a named case against
// the REAL undici and a real node:http server on 127.0.0.1, passed by the tenacious interceptor:
// - nodejs/undici#4222: the body of the final error-status response is lost (and the socket is
//   destroyed on every retry);
// - nodejs/undici#4080: a status still failing when the retries run out throws, so its body,
//   which may hold data the caller wants, cannot be read;
// - nodejs/undici#3356: a resumed body whose server ignores Range comes out duplicated.
import { Agent, RetryAgent, errors, interceptors, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ResumeError } from '../../src/index.js';
import { tenaciousInterceptor } from '../../src/undici/index.js';
import { fast, useLoopback } from './kit.js';

const { serve, keep } = useLoopback();

const BUSY = JSON.stringify({ error: 'busy', data: [1, 2, 3] });

/** Always 503 with a JSON body worth reading. */
function busy(res: import('node:http').ServerResponse): void {
  res.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BUSY), 'retry-after': '0' });
  res.end(BUSY);
}

/** What a body stream delivered before it ended or failed, and how it failed. */
async function drain(body: AsyncIterable<Buffer>): Promise<{ text: string; error?: unknown }> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of body) chunks.push(chunk);
  } catch (error) {
    return { text: Buffer.concat(chunks).toString(), error };
  }
  return { text: Buffer.concat(chunks).toString() };
}

describe('nodejs/undici#4222: the final error response keeps its body', () => {
  it('always 503: after maxAttempts requests the caller gets the last 503, its body intact', async () => {
    const server = await serve((_n, res) => busy(res));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, maxAttempts: 3 })));
    const { statusCode, headers, body } = await request(server.url, { dispatcher });
    expect(statusCode).toBe(503);
    expect(headers['content-type']).toBe('application/json');
    expect(await body.text()).toBe(BUSY);
    expect(server.requests).toHaveLength(3);
  });

  it('the discarded 503s were read to their end: all three requests went over one connection', async () => {
    const server = await serve((_n, res) => busy(res));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, maxAttempts: 3 })));
    const { body } = await request(server.url, { dispatcher });
    await body.dump();
    expect(server.requests).toHaveLength(3);
    expect(server.connections()).toBe(1);
  });

  it('with interceptors.responseError() composed outside it, the ResponseError carries that body', async () => {
    const server = await serve((_n, res) => busy(res));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, maxAttempts: 2 }), interceptors.responseError()));
    const error = await request(server.url, { dispatcher }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.ResponseError);
    expect(error).toMatchObject({ statusCode: 503, body: { error: 'busy', data: [1, 2, 3] } });
    expect(server.requests).toHaveLength(2);
  });

  it('for contrast, undici’s RetryAgent on the same server: a RequestRetryError, no body', async () => {
    const server = await serve((_n, res) => busy(res));
    const dispatcher = keep(new RetryAgent(new Agent(), { maxRetries: 2, minTimeout: 1, maxTimeout: 2 }));
    const error = await request(server.url, { dispatcher }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.RequestRetryError);
    expect(error).toMatchObject({ statusCode: 503 });
    expect(JSON.stringify(error)).not.toContain('busy');
  });
});

describe('nodejs/undici#4080: data in a 500 that is still failing when the retries run out', () => {
  it('the caller reads the 500’s data; every attempt was made', async () => {
    const data = JSON.stringify({ items: ['a', 'b'] });
    const server = await serve((_n, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(data);
    });
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, maxAttempts: 4 })));
    const { statusCode, body } = await request(server.url, { dispatcher });
    expect(statusCode).toBe(500);
    expect(await body.json()).toEqual({ items: ['a', 'b'] });
    expect(server.requests).toHaveLength(4);
  });
});

describe('nodejs/undici#3356: a server that ignores Range never yields a duplicated body', () => {
  /** The server: "H", then the connection breaks; every later answer is the whole "Hello World", 200. */
  const ignoresRange = (validator: Record<string, string>) => (n: number, res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '11', ...validator });
    if (n > 0) return void res.end('Hello World');
    res.write('H', () => setTimeout(() => res.socket?.destroy(), 20));
  };

  it('no validator: the caller gets "H", then a ResumeError (unpinned); no second request', async () => {
    const server = await serve(ignoresRange({}));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor(fast)));
    const { body } = await request(server.url, { dispatcher });
    const { text, error } = await drain(body);
    expect(text).toBe('H');
    expect(error).toBeInstanceOf(ResumeError);
    expect(error).toMatchObject({ reason: 'unpinned', receivedBytes: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it('with an ETag: the rest is asked for, the whole body comes back, and the caller gets "H" and a ResumeError (range-ignored)', async () => {
    const server = await serve(ignoresRange({ etag: '"v1"' }));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor(fast)));
    const { body } = await request(server.url, { dispatcher });
    const { text, error } = await drain(body);
    expect(text).toBe('H');
    expect(error).toBeInstanceOf(ResumeError);
    expect(error).toMatchObject({ reason: 'range-ignored', receivedBytes: 1 });
    expect(server.requests.map((r) => [r.headers.range, r.headers['if-match']])).toEqual([
      [undefined, undefined],
      ['bytes=1-', '"v1"'],
    ]);
  });

  it('bufferBody: nothing was handed over yet, so the whole body starts over: exactly "Hello World"', async () => {
    const server = await serve(ignoresRange({}));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, bufferBody: true })));
    const { statusCode, body } = await request(server.url, { dispatcher });
    expect(statusCode).toBe(200);
    expect(await drain(body)).toEqual({ text: 'Hello World' });
    expect(server.requests).toHaveLength(2);
  });
});
