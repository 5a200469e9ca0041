// Which requests retryFetch sends again, and with which body (src/fetch/request-plan.ts): the
// plan itself, read from the request alone (pure), then retryFetch on a real node:http server on
// 127.0.0.1 with Node's own fetch.
import { describe, expect, it } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import { planRequest } from '../../src/fetch/request-plan.js';
import type { AttemptContext, RetryEvent } from '../../src/types.js';
import { startFaultServer } from '../faults/server.js';
import {
  closedPort,
  closeServersAfterEach,
  quick,
  rejection,
  reply,
  type Scripted,
  scriptedServer,
  type Seen,
  servers,
} from './loopback.js';

closeServersAfterEach();

describe('the request plan', () => {
  it('sends the method as the caller spelled it and judges it upper-cased; GET when none is given', () => {
    expect(planRequest('http://x.test/', { method: 'patch' })).toMatchObject({ sentMethod: 'patch', method: 'PATCH', idempotent: false });
    expect(planRequest('http://x.test/', { method: 'delete' })).toMatchObject({ sentMethod: 'delete', method: 'DELETE', idempotent: true });
    expect(planRequest('http://x.test/', undefined)).toMatchObject({ sentMethod: 'GET', method: 'GET', request: undefined });
  });

  it('takes an init of null as none, as fetch does', () => {
    expect(planRequest('http://x.test/', null as unknown as RequestInit)).toMatchObject({
      sentMethod: 'GET',
      method: 'GET',
      idempotent: true,
      replayable: true,
      callerSignal: undefined,
    });
  });

  it.each(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE'])('takes %s as safe to resend by its method', (method) => {
    expect(planRequest('http://x.test/', { method }).idempotent).toBe(true);
  });

  it('takes a POST with a non-blank Idempotency-Key as safe to resend; a blank one is no key', () => {
    expect(planRequest('http://x.test/', { method: 'POST', headers: { 'Idempotency-Key': 'k-1' } }).idempotent).toBe(true);
    for (const blank of ['', ' ', '\t', '\u00a0']) {
      expect(planRequest('http://x.test/', { method: 'POST', headers: { 'Idempotency-Key': blank } }).idempotent).toBe(false);
    }
  });

  it("reads a Request's method, headers and signal; init's replace them as in fetch", () => {
    const controller = new AbortController();
    const request = new Request('http://x.test/', { method: 'POST', headers: { 'Idempotency-Key': 'r' }, signal: controller.signal });
    const plain = planRequest(request, undefined);
    expect(plain).toMatchObject({ request, method: 'POST', idempotent: true });
    expect(plain.headers?.get('idempotency-key')).toBe('r');
    expect(plain.callerSignal?.aborted).toBe(false);
    controller.abort();
    expect(plain.callerSignal?.aborted).toBe(true);
    const mine = new AbortController().signal;
    const overridden = planRequest(request, { method: 'PUT', headers: { 'x-other': '1' }, signal: mine });
    expect(overridden).toMatchObject({ method: 'PUT', callerSignal: mine });
    expect(overridden.headers?.has('idempotency-key')).toBe(false);
    // An explicit null signal in init means none, as in fetch: the Request's no longer guards it.
    expect(planRequest(request, { signal: null }).callerSignal).toBeUndefined();
    expect(planRequest('http://x.test/', undefined).headers).toBeUndefined();
  });

  it("reads init as own properties only: what Object.prototype carries is not the caller's", () => {
    const init = Object.create({ method: 'POST', headers: { 'Idempotency-Key': 'planted' }, body: new ReadableStream() }) as RequestInit;
    expect(planRequest('http://x.test/', init)).toMatchObject({ method: 'GET', headers: undefined, replayable: true });
  });

  it.each<[string, unknown]>([
    ['no body', undefined],
    ['null', null],
    ['a string', 'text'],
    ['an ArrayBuffer', new ArrayBuffer(2)],
    ['a typed array', new Uint8Array(2)],
    ['a Blob', new Blob(['b'])],
    ['URLSearchParams', new URLSearchParams('a=1')],
    ['FormData', new FormData()],
  ])('can send %s again', (_name, body) => {
    expect(planRequest('http://x.test/', { method: 'PUT', body: body as BodyInit }).replayable).toBe(true);
  });

  it('cannot send a stream or an async iterable again: the first attempt consumes it', () => {
    expect(planRequest('http://x.test/', { method: 'PUT', body: new ReadableStream() }).replayable).toBe(false);
    const iterable = (async function* () {
      yield new Uint8Array(1);
    })();
    expect(planRequest('http://x.test/', { method: 'PUT', body: iterable as unknown as BodyInit }).replayable).toBe(false);
  });

  it('throws what fetch would throw for headers it refuses', () => {
    expect(() => planRequest('http://x.test/', { headers: { 'bad header': 'x' } })).toThrow(TypeError);
  });
});

describe('retryFetch on loopback: which requests are resent', () => {
  it.each(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])('resends %s after a 503', async (method) => {
    const server = await scriptedServer([reply(503)]);
    const res = await retryFetch(server.url, { method }, quick);
    expect(res.status).toBe(200);
    expect(server.seen.map((s) => s.method)).toEqual([method, method]);
  });

  it.each(['POST', 'PATCH'])('sends %s once: a 503 is returned, not retried', async (method) => {
    const server = await scriptedServer([reply(503, 'busy')]);
    const res = await retryFetch(server.url, { method, body: 'x' }, quick);
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('busy');
    expect(server.seen).toHaveLength(1);
  });

  it('sends a POST once when the connection breaks after it was sent, and rejects with that error', async () => {
    const faults = await startFaultServer({ faults: ['reset-before-response'] });
    servers.push(faults);
    const error = await rejection(retryFetch(faults.url, { method: 'POST', body: 'x', headers: { 'x-request-id': 'p' } }, quick));
    expect((error as Error).message).toBe('fetch failed');
    expect(((error as Error).cause as { code?: string }).code).toBe('ECONNRESET');
    expect(faults.stats().requests).toBe(1);
  });

  it('resends a POST with an Idempotency-Key header (not with an empty one)', async () => {
    const server = await scriptedServer([reply(503), reply(503)]);
    const keyed = await retryFetch(server.url, { method: 'POST', body: 'x', headers: { 'Idempotency-Key': 'k-1' } }, quick);
    expect(keyed.status).toBe(200);
    expect(server.seen.map((s) => s.headers['idempotency-key'])).toEqual(['k-1', 'k-1', 'k-1']);
    for (const blank of ['', ' ']) {
      const again = await scriptedServer([reply(503)]);
      const unkeyed = await retryFetch(again.url, { method: 'POST', body: 'x', headers: { 'Idempotency-Key': blank } }, quick);
      expect(unkeyed.status).toBe(503);
      expect(again.seen).toHaveLength(1);
    }
  });

  it('resends a POST, whatever the rules say, when the connection was refused: it never left', async () => {
    const port = await closedPort();
    let server: Scripted | undefined;
    const events: RetryEvent[] = [];
    const res = await retryFetch(
      `http://127.0.0.1:${port}/orders`,
      { method: 'POST', body: 'order 1' },
      {
        ...quick,
        idempotent: false,
        backoff: { initialDelayMs: 20, multiplier: 1, maxDelayMs: 20, jitter: 'none' },
        onRetry: (event) => {
          events.push(event);
          // The server comes up during the second wait.
          if (events.length === 2) void scriptedServer([reply(201, 'created')], port).then((s) => (server = s));
        },
      },
    );
    expect(res.status).toBe(201);
    expect(await res.text()).toBe('created');
    expect(events).toHaveLength(2);
    expect(server?.seen.map((s) => `${s.method} ${s.body.toString()}`)).toEqual(['POST order 1']);
  });

  // Regression (issue 12): options and init were read through the prototype chain, so a
  // package that planted `Object.prototype.idempotent = true` made every POST retried.
  it('reads options and init as own properties only: a polluted Object.prototype resends no POST', async () => {
    const server = await scriptedServer([reply(503, 'one'), reply(503, 'two'), reply(503, 'three')]);
    const proto = Object.prototype as Record<string, unknown>;
    proto.idempotent = true;
    proto.method = 'PUT';
    try {
      const post = await retryFetch(server.url, { method: 'POST', body: 'x' }, { ...quick, maxAttempts: 3 });
      expect(post.status).toBe(503);
      expect(await post.text()).toBe('one');
      expect(server.seen.map((s) => s.method)).toEqual(['POST']);
      // No init at all: fetch itself would fill the method from Object.prototype ('PUT'); the
      // GET that retryFetch judged is what goes out.
      const get = await retryFetch(server.url, undefined, { ...quick, maxAttempts: 3 });
      expect(get.status).toBe(200);
      expect(server.seen.map((s) => s.method)).toEqual(['POST', 'GET', 'GET', 'GET']);
    } finally {
      delete proto.idempotent;
      delete proto.method;
    }
  });

  it('options.idempotent replaces the method rule (a preset knows the operation better than its method)', async () => {
    const server = await scriptedServer([reply(503), reply(503)]);
    const post = await retryFetch(server.url, { method: 'POST', body: 'x' }, { ...quick, idempotent: true });
    expect(post.status).toBe(200);
    expect(server.seen).toHaveLength(3);
    const again = await scriptedServer([reply(503)]);
    const seenBy: number[] = [];
    const get = await retryFetch(again.url, undefined, {
      ...quick,
      idempotent: (_error: unknown, ctx: AttemptContext) => {
        seenBy.push(ctx.attempt);
        return false;
      },
    });
    expect(get.status).toBe(503);
    expect(seenBy).toEqual([1]);
    expect(again.seen).toHaveLength(1);
  });
});

describe('retryFetch on loopback: request bodies', () => {
  const form = new FormData();
  form.set('field', 'value');
  const bodies: Array<[string, () => BodyInit]> = [
    ['a string', () => 'plain text'],
    ['an ArrayBuffer', () => new TextEncoder().encode('array buffer').buffer],
    ['a Uint8Array', () => new TextEncoder().encode('typed array')],
    ['a DataView', () => new DataView(new TextEncoder().encode('data view').buffer)],
    ['a Blob', () => new Blob(['a blob'], { type: 'application/x-blob' })],
    ['URLSearchParams', () => new URLSearchParams({ a: '1', b: 'two' })],
    ['FormData', () => form],
  ];

  it.each(bodies)('replays %s on every attempt, byte for byte', async (name, make) => {
    const server = await scriptedServer([reply(503), reply(503)]);
    const res = await retryFetch(server.url, { method: 'PUT', body: make() }, quick);
    expect(res.status).toBe(200);
    expect(server.seen).toHaveLength(3);
    const [first, ...rest] = server.seen;
    expect(first!.body.length).toBeGreaterThan(0);
    const mediaType = (entry: Seen) => entry.headers['content-type']?.split(';')[0];
    for (const later of rest) expect(mediaType(later)).toBe(mediaType(first!));
    if (name === 'FormData') {
      // Each multipart encoding picks a fresh boundary; the part itself is the same every time.
      for (const entry of server.seen) expect(entry.body.toString()).toMatch(/name="field"\r\n\r\nvalue\r\n/);
    } else {
      for (const later of rest) expect(later.body.equals(first!.body)).toBe(true);
    }
  });

  it('sends a ReadableStream body once: the stream cannot be read again, so the request is not retried', async () => {
    const server = await scriptedServer([reply(503, 'busy')]);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('streamed'));
        controller.close();
      },
    });
    const res = await retryFetch(server.url, { method: 'PUT', body: stream, duplex: 'half' } as RequestInit, quick);
    expect(res.status).toBe(503);
    expect(server.seen.map((s) => s.body.toString())).toEqual(['streamed']);
  });

  it('does not resend a ReadableStream body even when the connection was refused', async () => {
    const port = await closedPort();
    const stream = new ReadableStream<Uint8Array>({ pull: (controller) => controller.close() });
    const error = await rejection(
      retryFetch(`http://127.0.0.1:${port}/`, { method: 'PUT', body: stream, duplex: 'half' } as RequestInit, quick),
    );
    expect((error as Error).message).toBe('fetch failed');
  });

  it('clones a Request input for every attempt and leaves the original unused', async () => {
    const server = await scriptedServer([reply(503), reply(503)]);
    const request = new Request(server.url, { method: 'POST', body: 'from a Request', headers: { 'Idempotency-Key': 'r-1' } });
    const res = await retryFetch(request, undefined, quick);
    expect(res.status).toBe(200);
    expect(server.seen.map((s) => `${s.method} ${s.body.toString()} ${s.headers['idempotency-key']}`)).toEqual([
      'POST from a Request r-1',
      'POST from a Request r-1',
      'POST from a Request r-1',
    ]);
    expect(request.bodyUsed).toBe(false);
  });

  it('with a Request input, init overrides its method and headers as in fetch', async () => {
    const server = await scriptedServer([reply(503)]);
    const request = new Request(server.url, { method: 'POST', body: 'x', headers: { 'Idempotency-Key': 'r-2' } });
    // init.headers replace the request's: the key is gone, so the POST is sent once.
    const res = await retryFetch(request, { headers: { 'x-other': '1' } }, quick);
    expect(res.status).toBe(503);
    expect(server.seen).toHaveLength(1);
    expect(server.seen[0]!.headers['x-other']).toBe('1');
  });
});
