// Which requests retryFetch sends again, and with which body (src/fetch/request-plan.ts): the
// plan itself, read from the request alone (pure), then retryFetch on a real node:http server on
// 127.0.0.1 with Node's own fetch.
import { Request as UndiciRequest, fetch as undiciFetchOf } from 'undici';
import { describe, expect, it } from 'vitest';
import { type FetchFunction, type RetryFetchOptions, retryFetch } from '../../src/fetch/index.js';
import { planRequest } from '../../src/fetch/request-plan.js';
import { gcs } from '../../src/google/index.js';
import type { AttemptContext, RetryEvent } from '../../src/types.js';
import { startFaultServer } from '../faults/server.js';
import {
  closedPort,
  closeServersAfterEach,
  eventually,
  hang,
  quick,
  rejection,
  reply,
  type Scripted,
  scriptedServer,
  type Seen,
  servers,
} from './loopback.js';

closeServersAfterEach();

const undiciFetch = undiciFetchOf as unknown as FetchFunction;

/** A Request made by undici's npm package: not an instance of this realm's Request. */
function undiciRequest(url: string, init: Record<string, unknown>): Request {
  return new UndiciRequest(url, init as never) as unknown as Request;
}

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

  // Regression (issue 34, defect 9): a Request of undici's package failed `instanceof Request`
  // and was planned as a GET with no headers, whatever it was.
  it("reads a Request of another realm (undici's package) by its fields: method, headers, signal, body", () => {
    const controller = new AbortController();
    const request = undiciRequest('http://x.test/o', {
      method: 'DELETE',
      headers: { authorization: 'Bearer t' },
      signal: controller.signal,
    });
    expect(request).not.toBeInstanceOf(Request);
    const plan = planRequest(request, undefined);
    expect(plan).toMatchObject({ method: 'DELETE', sentMethod: 'DELETE', idempotent: true, replayable: true, request: undefined });
    expect(plan.headers?.get('authorization')).toBe('Bearer t');
    expect(plan.fields).toMatchObject({ redirect: 'follow', credentials: 'same-origin' });
    expect(plan.url).toBe('http://x.test/o');
    controller.abort();
    expect(plan.callerSignal?.aborted).toBe(true);
    const post = planRequest(
      undiciRequest('http://x.test/o', { method: 'POST', body: 'hello', headers: { 'Idempotency-Key': 'k' } }),
      undefined,
    );
    expect(post).toMatchObject({ method: 'POST', idempotent: true, replayable: false });
    expect(post.fields?.body).toBeInstanceOf(ReadableStream);
    expect(post.fields).toMatchObject({ duplex: 'half' });
  });

  it('refuses an input with a url but no method: read as a Request, it would be sent as a GET', () => {
    expect(() => planRequest({ url: 'http://x.test/', method: 7 } as unknown as Request, undefined)).toThrow(
      new TypeError('retryFetch: input.method must be a string when input has a url (it is read as a Request), got 7'),
    );
    expect(() => planRequest({ url: 'http://x.test/' } as unknown as Request, undefined, 'tenaciousInterceptor')).toThrow(
      new TypeError('tenaciousInterceptor: input.method must be a string when input has a url (it is read as a Request), got undefined'),
    );
  });

  it('reads a Request of another realm through its class, never from Object.prototype: a planted url makes no URL a Request', () => {
    // Made first: undici's Request constructor itself reads its init through the prototype chain.
    const request = undiciRequest('http://x.test/b', { redirect: 'manual' });
    const proto = Object.prototype as Record<string, unknown>;
    proto.url = 'http://planted.test/';
    proto.method = 'DELETE';
    proto.body = 'planted';
    try {
      expect(planRequest(new URL('http://x.test/a'), undefined)).toMatchObject({
        url: 'http://x.test/a',
        method: 'GET',
        fields: undefined,
      });
      const foreign = planRequest(request, undefined);
      expect(foreign).toMatchObject({ url: 'http://x.test/b', method: 'GET', replayable: true });
      expect(Object.hasOwn(foreign.fields!, 'body')).toBe(false);
      expect(foreign.fields?.redirect).toBe('manual');
      const own = { url: 'http://x.test/c', method: 'PUT' } as unknown as Request;
      expect(planRequest(own, undefined)).toMatchObject({ url: 'http://x.test/c', method: 'PUT', replayable: true });
      expect(planRequest(own, undefined).fields).toEqual({});
      const bare = Object.assign(Object.create(null), { url: 'http://x.test/d', method: 'HEAD', redirect: 'error' }) as Request;
      expect(planRequest(bare, undefined)).toMatchObject({ url: 'http://x.test/d', method: 'HEAD', fields: { redirect: 'error' } });
    } finally {
      delete proto.url;
      delete proto.method;
      delete proto.body;
    }
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

// Regression (issue 34, defect 9): a Request of undici's package failed `instanceof Request`, so
// retryFetch sent it with `method: 'GET'` and without its headers under gcs(): a DELETE became a
// GET answered 200, its Authorization dropped. What the server receives is the request made.
describe("retryFetch on loopback: a Request of this realm or of undici's package is sent as made", () => {
  const seenAs = (server: Scripted) => server.seen.map((s) => `${s.method} ${s.headers.authorization ?? '-'} ${s.body.toString() || '-'}`);
  const makers: Array<[string, (url: string, init: Record<string, unknown>) => Request]> = [
    ['a global Request', (url, init) => new Request(url, init)],
    ['an undici Request', undiciRequest],
  ];
  // undici's fetch refuses the global Request itself (test/clients/undici.test.ts): not a pairing.
  const cases = [
    ...makers.map(([name, make]) => ({ name, via: 'global fetch', make, fetch: undefined as FetchFunction | undefined })),
    { name: 'an undici Request', via: "undici's fetch", make: undiciRequest, fetch: undiciFetch as FetchFunction | undefined },
  ];
  const deleteOptions = (fetch: FetchFunction | undefined): Array<[string, RetryFetchOptions]> => [
    ['plain', { ...quick, ...(fetch && { fetch }) }],
    ['gcs()', { ...gcs({ operation: 'objects.delete', preconditions: { ifGenerationMatch: 1 } }), ...quick, ...(fetch && { fetch }) }],
  ];

  it.each(cases)('$name through $via: a DELETE with its Authorization, resent after a 503 as a DELETE', async ({ make, fetch }) => {
    for (const [preset, options] of deleteOptions(fetch)) {
      const server = await scriptedServer([reply(503)]);
      const res = await retryFetch(make(server.url, { method: 'DELETE', headers: { authorization: 'Bearer t0ken' } }), undefined, options);
      expect([preset, res.status]).toEqual([preset, 200]);
      expect([preset, ...seenAs(server)]).toEqual([preset, 'DELETE Bearer t0ken -', 'DELETE Bearer t0ken -']);
      if (preset === 'gcs()')
        expect(server.seen.map((s) => s.headers['x-goog-api-client'])).toEqual([
          expect.stringContaining('gccl-attempt-count/1'),
          expect.stringContaining('gccl-attempt-count/2'),
        ]);
    }
  });

  it.each(cases)('$name through $via: a POST with its body and headers, sent once; the 503 is the answer', async ({ make, fetch }) => {
    const postOptions: Array<[string, RetryFetchOptions]> = [
      ['plain', { ...quick, ...(fetch && { fetch }) }],
      ['gcs()', { ...gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 } }), ...quick, ...(fetch && { fetch }) }],
    ];
    for (const [preset, options] of postOptions) {
      const server = await scriptedServer([reply(503, 'busy')]);
      const request = make(server.url, {
        method: 'POST',
        body: 'order 1',
        headers: { authorization: 'Bearer t0ken', 'content-type': 'text/x-order' },
      });
      const res = await retryFetch(request, undefined, options);
      expect([preset, res.status, await res.text()]).toEqual([preset, 503, 'busy']);
      expect([preset, ...seenAs(server)]).toEqual([preset, 'POST Bearer t0ken order 1']);
      expect(server.seen[0]!.headers['content-type']).toBe('text/x-order');
    }
  });

  it("keeps an undici Request's redirect mode: 'manual' hands the 302 over, as fetch does", async () => {
    for (const fetch of [undefined, undiciFetch]) {
      const server = await scriptedServer([reply(302, 'moved', { location: '/elsewhere' })]);
      const res = await retryFetch(undiciRequest(server.url, { redirect: 'manual' }), undefined, { ...quick, ...(fetch && { fetch }) });
      expect(res.status).toBe(302);
      expect(server.seen).toHaveLength(1);
    }
  });

  it("aborts with an undici Request's own signal, as fetch does", async () => {
    const server = await scriptedServer([hang]);
    const controller = new AbortController();
    const call = retryFetch(undiciRequest(server.url, { signal: controller.signal }), undefined, quick);
    await eventually(() => server.seen.length === 1, 'the request arrived');
    controller.abort(new Error('the user left'));
    expect(await rejection(call)).toEqual(new Error('the user left'));
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

  /** Global fetch, recording the input and the body each call was given. */
  function recordedFetch() {
    const given: Array<{ input: unknown; body: unknown }> = [];
    const fetch: FetchFunction = (input, init) => {
      given.push({ input, body: init?.body });
      return globalThis.fetch(input, init);
    };
    return { fetch, given };
  }

  /** A stream of `chunks` chunks of 1 KiB, counting the chunks pulled from it. */
  function countedStream(chunks: number) {
    const state = { pulled: 0 };
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (state.pulled === chunks) return controller.close();
        state.pulled += 1;
        controller.enqueue(new Uint8Array(1024).fill(0x61));
      },
    });
    return { stream, state };
  }

  // Regression (issue 34, defect 11): a Request with a streamed body was cloned for each attempt;
  // the clone's tee kept the whole body in memory, even with maxAttempts: 1, and the stream was
  // sent again after a 503 although a stream body is sent once.
  it.each([
    ['maxAttempts: 3', { maxAttempts: 3 }],
    ['maxAttempts: 1', { maxAttempts: 1 }],
    ['idempotent: true', { idempotent: true }],
  ])("sends a Request's streamed body once, the Request itself and never a clone (%s): the 503 is the answer", async (_name, extra) => {
    const server = await scriptedServer([reply(503, 'busy')]);
    const { stream, state } = countedStream(64);
    const request = new Request(server.url, { method: 'PUT', body: stream, duplex: 'half' } as RequestInit);
    const { fetch, given } = recordedFetch();
    const res = await retryFetch(request, undefined, { ...quick, ...extra, fetch });
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('busy');
    expect(server.seen).toHaveLength(1);
    expect(server.seen[0]!.body.length).toBe(64 * 1024);
    // No tee: fetch was given the caller's Request, whose own body it read (a clone leaves it unused).
    expect(given.map((g) => g.input)).toEqual([request]);
    expect(given[0]!.input).toBe(request);
    expect(request.bodyUsed).toBe(true);
    expect(state.pulled).toBe(64);
  });

  it("sends an undici Request's body once, its own stream, through either fetch", async () => {
    for (const via of [globalThis.fetch, undiciFetch]) {
      const server = await scriptedServer([reply(503, 'busy')]);
      const { stream } = countedStream(8);
      const request = undiciRequest(server.url, { method: 'PUT', body: stream, duplex: 'half' });
      const given: unknown[] = [];
      const fetch: FetchFunction = (input, init) => {
        given.push(init?.body);
        return via(input, init);
      };
      const res = await retryFetch(request, undefined, { ...quick, fetch });
      expect(res.status).toBe(503);
      expect(server.seen.map((s) => s.body.length)).toEqual([8 * 1024]);
      expect(given).toEqual([stream]);
      expect(given[0]).toBe(stream);
    }
  });

  it('sends an init.body stream once, the stream itself, even when options.idempotent says it may be resent', async () => {
    const server = await scriptedServer([reply(503, 'busy')]);
    const { stream, state } = countedStream(16);
    const { fetch, given } = recordedFetch();
    const res = await retryFetch(server.url, { method: 'PUT', body: stream, duplex: 'half' } as RequestInit, {
      ...quick,
      idempotent: true,
      fetch,
    });
    expect(res.status).toBe(503);
    expect(server.seen.map((s) => s.body.length)).toEqual([16 * 1024]);
    expect(given).toHaveLength(1);
    expect(given[0]!.body).toBe(stream);
    expect(state.pulled).toBe(16);
  });

  it('sends a Request with any body once: its body is a stream whatever it was made from', async () => {
    const server = await scriptedServer([reply(503, 'busy')]);
    const request = new Request(server.url, { method: 'PUT', body: 'from a Request' });
    const res = await retryFetch(request, undefined, quick);
    expect(res.status).toBe(503);
    expect(server.seen.map((s) => `${s.method} ${s.body.toString()}`)).toEqual(['PUT from a Request']);
    expect(request.bodyUsed).toBe(true);
  });

  it("replays a body given in init on every attempt, in place of the Request's (even a Request whose body was read)", async () => {
    const server = await scriptedServer([reply(503), reply(503)]);
    const request = new Request(server.url, { method: 'POST', body: 'stale', headers: { 'Idempotency-Key': 'r-1' } });
    const bytes = new Uint8Array(await request.arrayBuffer());
    const res = await retryFetch(request, { body: bytes }, quick);
    expect(res.status).toBe(200);
    expect(server.seen.map((s) => `${s.method} ${s.body.toString()} ${s.headers['idempotency-key']}`)).toEqual([
      'POST stale r-1',
      'POST stale r-1',
      'POST stale r-1',
    ]);
  });

  it('resends a body-less Request as it is on every attempt', async () => {
    const server = await scriptedServer([reply(503), reply(503)]);
    const request = new Request(server.url, { method: 'DELETE', headers: { 'x-request-id': 'd-1' } });
    const { fetch, given } = recordedFetch();
    const res = await retryFetch(request, undefined, { ...quick, fetch });
    expect(res.status).toBe(200);
    expect(server.seen.map((s) => `${s.method} ${s.headers['x-request-id']}`)).toEqual(['DELETE d-1', 'DELETE d-1', 'DELETE d-1']);
    expect(given.map((g) => g.input)).toEqual([request, request, request]);
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
