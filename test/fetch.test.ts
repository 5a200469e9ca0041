// retryFetch. Behaviour is tested against real node:http servers on 127.0.0.1 with Node's own
// fetch (undici): real statuses, real bodies, real sockets. Exact timing (Retry-After, the
// deadline, when a body is cancelled) is tested in virtual time with an injected fetch that
// answers with real Response objects.
import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpStatusError } from '../src/errors.js';
import { type RetryFetchOptions, retryFetch } from '../src/fetch.js';
import { httpStatusOf, retryAfterMsOf } from '../src/classify/error-shape.js';
import { httpStatus } from '../src/classify/predicates.js';
import { gcs } from '../src/presets/gcs.js';
import { iam } from '../src/presets/iam.js';
import { type AttemptContext, type RetryEvent } from '../src/types.js';
import { RetryError } from '../src/errors.js';
import { queueState } from '../src/runtime/timer-queue.js';
import { track, useVirtualClock } from './helpers/clock.js';
import { startFaultServer } from './faults/server.js';

// ---------------------------------------------------------------------------------------------
// A scripted loopback server: answer n is replies[n] (then 200 "ok"); records every request.

interface Seen {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** When the request's connection closed (performance.now()), if it has. */
  socketClosedAt: number | undefined;
}

type Reply = (res: ServerResponse, seen: Seen) => void;

interface Scripted {
  readonly url: string;
  readonly seen: Seen[];
  openSockets(): number;
  close(): Promise<void>;
}

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function scriptedServer(replies: Reply[], port = 0): Promise<Scripted> {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry: Seen = {
        method: req.method ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        socketClosedAt: undefined,
      };
      seen.push(entry);
      requestsOn.get(req.socket)?.push(entry);
      (replies[seen.length - 1] ?? reply(200, 'ok'))(res, entry);
    });
  });
  // One close listener per socket (not per request: a kept-alive socket serves many).
  const requestsOn = new WeakMap<Socket, Seen[]>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    requestsOn.set(socket, []);
    socket.once('close', () => {
      sockets.delete(socket);
      const closedAt = performance.now();
      for (const entry of requestsOn.get(socket) ?? []) entry.socketClosedAt = closedAt;
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const scripted: Scripted = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    seen,
    openSockets: () => sockets.size,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
  servers.push(scripted);
  return scripted;
}

function reply(status: number, body = `status ${status}`, headers: Record<string, string> = {}): Reply {
  return (res) => {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(body);
  };
}

/** A body too big for the socket buffers: the server can only finish it if the client reads it. */
const BIG = 16 * 1024 * 1024;
function bigReply(status: number): Reply {
  return (res) => {
    res.writeHead(status, { 'content-type': 'application/octet-stream', 'content-length': String(BIG) });
    res.end(Buffer.alloc(BIG, 0x61));
  };
}

/** No answer at all; the connection stays open until the client gives up. */
const hang: Reply = () => {};

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls `condition` every 5 ms for up to `withinMs` (real time); fails with `what` otherwise. */
async function eventually(condition: () => boolean, what: string, withinMs = 2000): Promise<void> {
  const until = performance.now() + withinMs;
  while (!condition()) {
    if (performance.now() > until) throw new Error(`not within ${withinMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/** Real-time options: 1 ms waits, so loopback tests are fast. */
const quick: RetryFetchOptions = { backoff: { initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitter: 'none' }, deadlineMs: 10_000 };

// ---------------------------------------------------------------------------------------------

describe('retryFetch on loopback: what it resolves and rejects with', () => {
  it('retries 503s and resolves with the success, its body intact', async () => {
    const server = await scriptedServer([reply(503), reply(503), reply(200, 'hello')]);
    const res = await retryFetch(server.url, undefined, quick);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello');
    expect(server.seen.map((s) => s.method)).toEqual(['GET', 'GET', 'GET']);
  });

  it.each([408, 429, 500, 502, 503, 504])('retries %i by default', async (status) => {
    const server = await scriptedServer([reply(status)]);
    const res = await retryFetch(server.url, undefined, quick);
    expect(res.status).toBe(200);
    expect(server.seen).toHaveLength(2);
  });

  it.each([400, 401, 403, 404, 409, 412, 501, 505])('returns %i at once, body intact (not retried)', async (status) => {
    const server = await scriptedServer([reply(status, 'why')]);
    const res = await retryFetch(server.url, undefined, quick);
    expect(res.status).toBe(status);
    expect(await res.text()).toBe('why');
    expect(server.seen).toHaveLength(1);
  });

  it('resolves with the last retryable response when out of attempts (as fetch does for a 503)', async () => {
    const server = await scriptedServer([reply(503, 'first'), reply(503, 'second'), reply(503, 'third')]);
    const res = await retryFetch(server.url, undefined, { ...quick, maxAttempts: 3 });
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('third');
    expect(server.seen).toHaveLength(3);
  });

  it('rejects with a RetryError when out of attempts on network errors, the last one its cause', async () => {
    const port = await closedPort();
    const error = await rejection(retryFetch(`http://127.0.0.1:${port}/`, undefined, { ...quick, maxAttempts: 3 }));
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).reason).toBe('attempts');
    expect((error as RetryError).attempts).toBe(3);
    expect(((error as RetryError).cause as Error).message).toBe('fetch failed');
  });

  it('rejects with fetch\'s own TypeError for an invalid URL, at once', async () => {
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const error = await rejection(retryFetch('http://[not a url', undefined, { ...quick, fetch: counting }));
    expect(error).toBeInstanceOf(TypeError);
    expect(calls).toBe(1);
  });
  // Regression (issue 12, defect 6): a redirect loop was retried until the deadline, 21
  // requests an attempt (~800 requests in 2 s); so were a redirect to ftp: and a blocked port.
  it('rejects at once with fetch\'s TypeError when the failure would repeat: redirect loop, ftp: redirect, bad port', async () => {
    const requests: string[] = [];
    const loop = createServer((req, res) => {
      requests.push(req.url ?? '');
      res.writeHead(302, { location: req.url === '/ftp' ? 'ftp://127.0.0.1/file' : '/loop' });
      res.end();
    });
    await new Promise<void>((resolve) => loop.listen(0, '127.0.0.1', resolve));
    servers.push({ close: () => new Promise<void>((resolve) => loop.close(() => resolve())) });
    const base = `http://127.0.0.1:${(loop.address() as AddressInfo).port}`;
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const options = { ...quick, maxAttempts: 3, fetch: counting };

    const loopError = await rejection(retryFetch(`${base}/loop`, undefined, options));
    expect(loopError).toBeInstanceOf(TypeError);
    expect(((loopError as Error).cause as Error).message).toBe('redirect count exceeded');
    expect(requests).toHaveLength(21);
    expect(calls).toBe(1);

    const ftpError = await rejection(retryFetch(`${base}/ftp`, undefined, options));
    expect(((ftpError as Error).cause as Error).message).toBe('URL scheme must be a HTTP(S) scheme');
    expect(requests).toHaveLength(22);
    expect(calls).toBe(2);

    const badPort = await rejection(retryFetch('http://127.0.0.1:10080/', undefined, options));
    expect(((badPort as Error).cause as Error).message).toBe('bad port');
    expect(calls).toBe(3);
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
      idempotent: (ctx: AttemptContext) => {
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

describe('retryFetch on loopback: responses it does not return are cancelled, freeing their sockets', () => {
  it('cancels the body of every retried response, which closes its connection', async () => {
    const server = await scriptedServer([bigReply(503), bigReply(503), reply(200, 'done')]);
    const res = await retryFetch(server.url, undefined, quick);
    expect(await res.text()).toBe('done');
    // An unread 16 MiB body holds its connection open (the server is still writing it) until
    // the client reads it or cancels it; cancelling closes the connection.
    await eventually(
      () => server.seen[0]!.socketClosedAt !== undefined && server.seen[1]!.socketClosedAt !== undefined,
      'both 503s\' connections closed',
    );
    expect(server.openSockets()).toBeLessThanOrEqual(1);
  });

  it('returns the final response with its whole body, having cancelled the ones before it', async () => {
    const server = await scriptedServer([bigReply(503), bigReply(503)]);
    const res = await retryFetch(server.url, undefined, { ...quick, maxAttempts: 2 });
    expect(res.status).toBe(503);
    await eventually(() => server.seen[0]!.socketClosedAt !== undefined, 'the first 503\'s connection closed');
    expect(server.seen[1]!.socketClosedAt).toBeUndefined();
    expect((await res.arrayBuffer()).byteLength).toBe(BIG);
  });

  it('cancels the held response when the caller aborts during the wait', async () => {
    const server = await scriptedServer([bigReply(503)]);
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    const call = retryFetch(server.url, { signal: controller.signal }, {
      ...quick,
      backoff: { initialDelayMs: 60_000, multiplier: 1, maxDelayMs: 60_000, jitter: 'none' },
      deadlineMs: 120_000,
      onRetry: () => setTimeout(() => controller.abort(reason), 20),
    });
    expect(await rejection(call)).toBe(reason);
    await eventually(() => server.seen[0]!.socketClosedAt !== undefined, 'the held 503\'s connection closed');
    expect(queueState()).toEqual({ queued: 0, timerArmed: false });
  });
});

describe('retryFetch on loopback: signals, timeouts and hung requests', () => {
  it('abandons a hung attempt at attemptTimeoutMs, closes its socket, and retries', async () => {
    const server = await scriptedServer([hang, reply(200, 'second try')]);
    const started = performance.now();
    const res = await retryFetch(server.url, undefined, { ...quick, attemptTimeoutMs: 150 });
    expect(await res.text()).toBe('second try');
    const hung = server.seen[0]!;
    await eventually(() => hung.socketClosedAt !== undefined, 'the hung request\'s socket closed');
    // Aborting the attempt destroys its connection at once: no waiting for a keep-alive timer.
    expect(hung.socketClosedAt! - started).toBeLessThan(150 + 500);
  });

  it('rejects with the caller\'s reason at once when init.signal aborts during an attempt, and closes the socket', async () => {
    const server = await scriptedServer([hang]);
    const controller = new AbortController();
    const reason = new Error('stop');
    const call = retryFetch(server.url, { signal: controller.signal }, quick);
    await eventually(() => server.seen.length === 1, 'the request arrived');
    controller.abort(reason);
    expect(await rejection(call)).toBe(reason);
    await eventually(() => server.seen[0]!.socketClosedAt !== undefined, 'the aborted request\'s socket closed', 500);
  });

  it('sends nothing when the caller aborts (options.signal) in the same tick as the call', async () => {
    const server = await scriptedServer([]);
    const controller = new AbortController();
    const call = retryFetch(server.url, undefined, { ...quick, signal: controller.signal });
    controller.abort(new Error('changed my mind'));
    expect(((await rejection(call)) as Error).message).toBe('changed my mind');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.seen).toHaveLength(0);
  });

  it('honours both init.signal and options.signal, and leaves no per-call listener on them', async () => {
    for (const which of ['init', 'options'] as const) {
      const server = await scriptedServer([hang]);
      const fromInit = new AbortController();
      const fromOptions = new AbortController();
      const call = retryFetch(server.url, { signal: fromInit.signal }, { ...quick, signal: fromOptions.signal });
      await eventually(() => server.seen.length === 1, 'the request arrived');
      (which === 'init' ? fromInit : fromOptions).abort(new Error(`aborted via ${which}`));
      expect(((await rejection(call)) as Error).message).toBe(`aborted via ${which}`);
      const other = which === 'init' ? fromOptions.signal : fromInit.signal;
      expect(getEventListeners(other, 'abort')).toHaveLength(0);
    }
    // A long-lived signal shared by many calls: one listener in all (it keeps aborting the
    // bodies of returned responses), not one per call.
    const server = await scriptedServer([]);
    const shared = new AbortController();
    const other = new AbortController();
    for (let i = 0; i < 20; i++) {
      const res = await retryFetch(server.url, { signal: shared.signal }, { ...quick, signal: other.signal });
      await res.text();
    }
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
  });

  it('does not keep returned responses alive through a long-lived signal', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const shared = new AbortController();
    let collected = 0;
    const watch = new FinalizationRegistry(() => collected++);
    const answer = (async () => new Response('body')) as typeof fetch;
    for (let i = 0; i < 200; i++) {
      watch.register(await retryFetch('http://x.test/', { signal: shared.signal }, { fetch: answer }), i);
    }
    for (let round = 0; round < 10 && collected < 200; round++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(collected).toBeGreaterThanOrEqual(190);
  });

  it('takes a Request\'s own signal as the caller\'s', async () => {
    const server = await scriptedServer([hang]);
    const controller = new AbortController();
    const call = retryFetch(new Request(server.url, { signal: controller.signal }), undefined, quick);
    await eventually(() => server.seen.length === 1, 'the request arrived');
    controller.abort(new Error('via the Request'));
    expect(((await rejection(call)) as Error).message).toBe('via the Request');
  });

  it('keeps the caller\'s signal on the returned response: aborting it stops the body', async () => {
    const server = await scriptedServer([
      (res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('part of the body, the rest never comes');
      },
    ]);
    const controller = new AbortController();
    const res = await retryFetch(server.url, { signal: controller.signal }, quick);
    expect(res.status).toBe(200);
    const reading = rejection(res.text());
    const reason = new Error('enough');
    controller.abort(reason);
    const stillReading = new Promise((resolve) => setTimeout(() => resolve('still reading after 2 s'), 2000));
    expect(await Promise.race([reading, stillReading])).toBe(reason);
  });

  it('without bufferBody a body cut mid-way fails when read; with it the attempt fails and is retried', async () => {
    const cut = await startFaultServer({ faults: ['reset-mid-body', 'reset-mid-body'], bodyBytes: 4000 });
    servers.push(cut);
    const headers = { 'x-request-id': 'r' };
    const plain = await retryFetch(cut.url, { headers }, quick);
    expect(plain.status).toBe(200);
    expect(((await rejection(plain.text())) as Error).message).toBe('terminated');
    const buffered = await retryFetch(cut.url, { headers }, { ...quick, bufferBody: true });
    expect(JSON.parse(await buffered.text())).toMatchObject({ id: 'r', method: 'GET' });
    expect(buffered.url).toBe(cut.url + '/');
    expect(cut.stats().history.map((h) => h.fault)).toEqual(['reset-mid-body', 'reset-mid-body', 'ok']);
  });
});

describe('retryFetch on loopback: the retry policy sees an HttpStatusError', () => {
  it('carries status, method and the response with its headers, readable by the error readers', async () => {
    const server = await scriptedServer([reply(404, 'not yet', { 'retry-after': '0', 'x-trace': 't-1' })]);
    const seen: unknown[] = [];
    const res = await retryFetch(server.url, { method: 'DELETE' }, {
      ...quick,
      retryable: (error) => {
        seen.push(error);
        return httpStatus(404)(error);
      },
    });
    expect(res.status).toBe(200);
    const error = seen[0] as HttpStatusError;
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ name: 'HttpStatusError', status: 404, method: 'DELETE', retryAfterMs: 0 });
    expect(error.message).toBe('HTTP 404 Not Found (DELETE)');
    expect(httpStatusOf(error)).toBe(404);
    expect(retryAfterMsOf(error)).toBe(0);
    expect(error.response.headers.get('x-trace')).toBe('t-1');
  });

  it('asks the predicate about network errors too, not about successes', async () => {
    const port = await closedPort();
    const asked: string[] = [];
    await rejection(
      retryFetch(`http://127.0.0.1:${port}/`, undefined, {
        ...quick,
        retryable: (error) => {
          asked.push((error as Error).message);
          return false;
        },
      }),
    );
    expect(asked).toEqual(['fetch failed']);
    const server = await scriptedServer([]);
    const res = await retryFetch(server.url, undefined, {
      ...quick,
      retryable: () => {
        throw new Error('not asked about a 200');
      },
    });
    expect(res.status).toBe(200);
  });
});

describe('retryFetch on loopback with the presets', () => {
  // The presets' own backoff waits a second or more; these tests keep their rules, not their waits.
  const fast = { backoff: { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' as const } };

  it('gcs(): retries 429 and every 5xx, 501 included (the default does not retry 501)', async () => {
    const server = await scriptedServer([reply(429), reply(501), reply(507)]);
    const res = await retryFetch(server.url, undefined, gcs({ operation: 'objects.get', ...fast }));
    expect(res.status).toBe(200);
    expect(server.seen).toHaveLength(4);
  });

  it('gcs(): objects.insert is resent only with its precondition, though it is a POST', async () => {
    const without = await scriptedServer([reply(503)]);
    const once = await retryFetch(without.url, { method: 'POST', body: 'x' }, gcs({ operation: 'objects.insert', ...fast }));
    expect(once.status).toBe(503);
    expect(without.seen).toHaveLength(1);
    const withIt = await scriptedServer([reply(503)]);
    const retried = await retryFetch(
      withIt.url + '?ifGenerationMatch=0',
      { method: 'POST', body: 'x' },
      gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 }, ...fast }),
    );
    expect(retried.status).toBe(200);
    expect(withIt.seen).toHaveLength(2);
  });

  it('gcs(): a never-idempotent PUT (bucketAccessControls.update) is not resent, though PUT usually is', async () => {
    const server = await scriptedServer([reply(503)]);
    const res = await retryFetch(server.url, { method: 'PUT', body: '{}' }, gcs({ operation: 'bucketAccessControls.update', ...fast }));
    expect(res.status).toBe(503);
    expect(server.seen).toHaveLength(1);
  });

  it('gcs(): even strategy "never" resends a request whose connection was refused (it never left)', async () => {
    const port = await closedPort();
    const error = await rejection(
      retryFetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x' }, gcs({ strategy: 'never', maxAttempts: 3, ...fast })),
    );
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).attempts).toBe(3);
  });

  it('iam(): retries 503, returns 429 at once (IAM lists only the 5xx), sends a POST once', async () => {
    const server = await scriptedServer([reply(503), reply(429, 'quota')]);
    const get = await retryFetch(server.url, undefined, iam(fast));
    expect(get.status).toBe(429);
    expect(await get.text()).toBe('quota');
    expect(server.seen).toHaveLength(2);
    const posts = await scriptedServer([reply(503)]);
    const post = await retryFetch(posts.url, { method: 'POST', body: '{}' }, iam(fast));
    expect(post.status).toBe(503);
    expect(posts.seen).toHaveLength(1);
  });
});

describe('retryFetch: options', () => {
  it('calls options.fetch instead of the global fetch', async () => {
    const server = await scriptedServer([reply(503)]);
    const inits: RequestInit[] = [];
    const res = await retryFetch(server.url, { method: 'PUT', body: 'b' }, {
      ...quick,
      fetch: (input, init) => {
        inits.push(init!);
        return fetch(input, init);
      },
    });
    expect(res.status).toBe(200);
    expect(inits).toHaveLength(2);
    expect(inits.every((init) => init.signal instanceof AbortSignal && init.method === 'PUT' && init.body === 'b')).toBe(true);
  });

  // Found by reading surviving mutants (the `once` flags that seemed to be the only cleanup).
  it('regression (mutation): bad retry options with two signals throw and leave no listener on either', () => {
    const a = new AbortController();
    const b = new AbortController();
    const send = vi.fn(async () => new Response('never sent'));
    expect(() => retryFetch('http://127.0.0.1:1/', { signal: a.signal }, { signal: b.signal, maxAttempts: 0, fetch: send })).toThrow(
      'retryFetch: options.maxAttempts must be',
    );
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(0);
    expect(send).not.toHaveBeenCalled();
  });

  it('looks the global fetch up when called, so a fetch installed later is used', async () => {
    const server = await scriptedServer([]);
    const original = globalThis.fetch;
    let used = 0;
    globalThis.fetch = (input, init) => {
      used++;
      return original(input, init);
    };
    try {
      await retryFetch(server.url, undefined, quick);
    } finally {
      globalThis.fetch = original;
    }
    expect(used).toBe(1);
  });

  it.each([
    [null, TypeError, 'retryFetch: options must be an object, got null'],
    [{ fetch: 'fetch' }, TypeError, 'retryFetch: options.fetch must be a function, got "fetch"'],
    [{ maxRetryAfterMs: -1 }, RangeError, 'retryFetch: options.maxRetryAfterMs must be a number >= 0 (Infinity for none), got -1'],
    [{ maxRetryAfterMs: Number.NaN }, RangeError, 'got NaN'],
    [{ maxRetryAfterMs: '5' }, RangeError, 'got "5"'],
    [{ bufferBody: 'yes' }, TypeError, 'retryFetch: options.bufferBody must be a boolean, got "yes"'],
    [{ retryable: 3 }, TypeError, 'retryFetch: options.retryable must be a function, got 3'],
    [{ idempotent: 'yes' }, TypeError, 'retryFetch: options.idempotent must be a boolean or a function, got "yes"'],
    [{ signal: {} }, TypeError, 'retryFetch: options.signal must be an AbortSignal, got {}'],
    // Regression (issue 12, defect 11's shape): passed, then hung the call when it was dropped.
    [{ signal: { aborted: false, addEventListener() {} } }, TypeError, 'retryFetch: options.signal must be an AbortSignal, got {"aborted":false}'],
    // Regression (issue 13, item 10): retry()'s checks said "retry:" to a retryFetch caller.
    [{ retries: 3 }, TypeError, 'retryFetch: unknown option "retries"'],
    [{ retries: 3 }, TypeError, ', fetch, maxRetryAfterMs, bufferBody, hedge)'],
    [{ deadlineMs: -5 }, RangeError, 'retryFetch: options.deadlineMs must be a number > 0'],
    [{ backoff: { multiplier: 0.5 } }, RangeError, 'retryFetch: options.backoff'],
  ])('throws synchronously for bad options %j', (options, Type, message) => {
    let called = false;
    const spy = (() => {
      called = true;
      return Promise.resolve(new Response('x'));
    }) as typeof fetch;
    const bad = options === null ? null : { fetch: spy, ...(options as object) };
    expect(() => retryFetch('http://127.0.0.1:9/', undefined, bad as RetryFetchOptions)).toThrow(Type);
    expect(() => retryFetch('http://127.0.0.1:9/', undefined, bad as RetryFetchOptions)).toThrow(message);
    expect(called).toBe(false);
  });

  it('rejects (as fetch does) for headers fetch would refuse', async () => {
    const error = await rejection(retryFetch('http://127.0.0.1:9/', { headers: { 'bad header': 'x' } }, quick));
    expect(error).toBeInstanceOf(TypeError);
  });
});

// ---------------------------------------------------------------------------------------------
// Virtual time: an injected fetch answering with real Response objects on a script.

describe('retryFetch in virtual time', () => {
  const clock = useVirtualClock();

  /** A response whose body records when it was cancelled (if ever). */
  function tracked(status: number, headers: Record<string, string> = {}, text = `body of ${status}`) {
    const state = { cancelledAt: undefined as number | undefined };
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(text));
      },
      pull(controller) {
        controller.close();
      },
      cancel() {
        state.cancelledAt = Date.now();
      },
    });
    return { response: new Response(body, { status, headers }), state };
  }

  /** An injected fetch: answer n is answers[n]() (then 200); records each call's time and signal. */
  function scriptedFetch(answers: Array<(init: RequestInit) => Response | Promise<Response>>) {
    const calls: Array<{ at: number; signal: AbortSignal }> = [];
    const fn = (async (_input: string | URL | Request, init?: RequestInit) => {
      calls.push({ at: Date.now(), signal: init!.signal! });
      return (answers[calls.length - 1] ?? (() => new Response('ok')))(init!);
    }) as typeof fetch;
    return { fn, calls };
  }

  const noJitter = (ms: number) => ({ initialDelayMs: ms, multiplier: 2, maxDelayMs: 60_000, jitter: 'none' as const });

  it('Retry-After in seconds on a 503 lengthens the wait to exactly that', async () => {
    const { fn, calls } = scriptedFetch([() => new Response('busy', { status: 503, headers: { 'retry-after': '3' } })]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(100) }));
    await clock.tickAsync(2999);
    expect(calls).toHaveLength(1);
    await clock.tickAsync(1);
    expect(calls.map((c) => c.at)).toEqual([0, 3000]);
    expect(call.state).toBe('resolved');
    expect(call.value?.status).toBe(200);
  });

  it('Retry-After as an HTTP-date on a 429 lengthens the wait until that date', async () => {
    const date = new Date(7000).toUTCString(); // 'Thu, 01 Jan 1970 00:00:07 GMT'; the clock starts at 0
    const { fn, calls } = scriptedFetch([() => new Response('slow down', { status: 429, headers: { 'retry-after': date } })]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(100) }));
    await clock.tickAsync(7000);
    expect(calls.map((c) => c.at)).toEqual([0, 7000]);
    expect(call.state).toBe('resolved');
  });

  // Regression (issue 12): measured against the local clock, the hint lay an hour away, past
  // the deadline, and the 429 was returned at once.
  it('Retry-After as an HTTP-date is measured against the response\'s Date: a server an hour ahead asking for 2 s gets 2 s', async () => {
    const serverNow = 3_600_000; // the virtual clock starts at 0; the server's is an hour ahead
    const headers = { date: new Date(serverNow).toUTCString(), 'retry-after': new Date(serverNow + 2000).toUTCString() };
    const { fn, calls } = scriptedFetch([() => new Response('slow down', { status: 429, headers })]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(100) }));
    await clock.tickAsync(2000);
    expect(calls.map((c) => c.at)).toEqual([0, 2000]);
    expect(call.state).toBe('resolved');
  });

  it('a Retry-After shorter than the backoff does not shorten the wait', async () => {
    const { fn, calls } = scriptedFetch([() => new Response('', { status: 503, headers: { 'retry-after': '1' } })]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(5000) }));
    await clock.tickAsync(5000);
    expect(calls.map((c) => c.at)).toEqual([0, 5000]);
    expect(call.state).toBe('resolved');
  });

  it('a Retry-After past the remaining deadline returns the response at once, body intact', async () => {
    const { fn, calls } = scriptedFetch([() => new Response('come back in a minute', { status: 429, headers: { 'retry-after': '60' } })]);
    const res = await retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(100), deadlineMs: 30_000 });
    expect(Date.now()).toBe(0);
    expect(res.status).toBe(429);
    expect(await res.text()).toBe('come back in a minute');
    expect(calls).toHaveLength(1);
  });

  it('a Retry-After beyond maxRetryAfterMs returns the response at once; one within it is waited for', async () => {
    const { fn, calls } = scriptedFetch([
      () => new Response('', { status: 503, headers: { 'retry-after': '3' } }),
      () => new Response('too long', { status: 503, headers: { 'retry-after': '10' } }),
    ]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(100), maxRetryAfterMs: 5000 }));
    await clock.tickAsync(3000);
    expect(calls.map((c) => c.at)).toEqual([0, 3000]);
    expect(call.state).toBe('resolved');
    expect(await call.value!.text()).toBe('too long');
    expect(Date.now()).toBe(3000);
  });

  it('a wait that would end past the deadline is not started: the 503 is returned at once, body intact', async () => {
    const first = tracked(503, {}, 'busy');
    const { fn, calls } = scriptedFetch([() => first.response]);
    const res = await retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(1000), deadlineMs: 900 });
    expect(Date.now()).toBe(0);
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('busy');
    expect(first.state.cancelledAt).toBeUndefined();
    expect(calls).toHaveLength(1);
  });

  it('when the deadline passes during a wait (a late timer), the call resolves with the held 503, body intact', async () => {
    const first = tracked(503, {}, 'busy');
    const { fn, calls } = scriptedFetch([() => first.response]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(500), deadlineMs: 1000 }));
    await clock.tickAsync(0);
    // The process stalls for 2 s (a blocked event loop, a suspended laptop): the wake-up timer
    // fires late, past the deadline, so no second attempt may start.
    clock.jump(2000);
    await clock.tickAsync(0);
    expect(call.state).toBe('resolved');
    expect(call.value!.status).toBe(503);
    expect(await call.value!.text()).toBe('busy');
    expect(first.state.cancelledAt).toBeUndefined();
    expect(calls).toHaveLength(1);
  });

  it('when the next attempt is still running at the deadline: RetryError "deadline" at the deadline; the 503 was discarded', async () => {
    const first = tracked(503);
    const { fn, calls } = scriptedFetch([
      () => first.response,
      (init) =>
        new Promise<Response>((_resolve, reject) => {
          init.signal!.addEventListener('abort', () => reject(init.signal!.reason));
        }),
    ]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(1000), deadlineMs: 5000 }));
    await clock.tickAsync(1000);
    // The 503 is discarded when the second attempt starts, not before.
    expect(first.state.cancelledAt).toBe(1000);
    await clock.tickAsync(3999);
    expect(call.state).toBe('pending');
    await clock.tickAsync(1);
    expect(call.state).toBe('rejected');
    expect(call.error).toBeInstanceOf(RetryError);
    expect((call.error as RetryError).reason).toBe('deadline');
    expect((call.error as RetryError).cause).toMatchObject({ name: 'TimeoutError' });
    // The fetch's signal aborts one timer turn later: the caller hears of the deadline before
    // fetch's cleanup runs (which, for fifty calls sharing a deadline, adds up).
    expect(calls[1]!.signal.aborted).toBe(false);
    await clock.tickAsync(1); // setTimeout(0) waits 1 ms, in Node as in the fake clock
    expect(calls[1]!.signal.aborted).toBe(true);
    expect(calls[1]!.signal.reason).toBe((call.error as RetryError).cause);
  });

  it('counts fetch\'s own setup time against the deadline, even for many calls started at once', async () => {
    // A fetch whose synchronous setup takes 2 ms (simulated by moving the clock), then hangs.
    const slowStart = ((_input: string | URL | Request, init?: RequestInit) => {
      clock.tick(2);
      return new Promise<Response>((_resolve, reject) => init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason)));
    }) as typeof fetch;
    const started: number[] = [];
    const settled: number[] = [];
    const calls = Array.from({ length: 20 }, (_, i) => {
      started[i] = Date.now();
      return retryFetch('http://x.test/', undefined, { fetch: slowStart, deadlineMs: 100 }).catch((error: unknown) => {
        settled[i] = Date.now();
        return error;
      });
    });
    await clock.tickAsync(500);
    const errors = await Promise.all(calls);
    expect(errors.every((e) => e instanceof RetryError && e.reason === 'deadline')).toBe(true);
    // Each call ends within its deadline plus one fetch setup: the clock starts when the first
    // setup is done, not after all twenty (which would make every call 40 ms late).
    const lateness = settled.map((at, i) => at - (started[i]! + 100));
    expect(Math.max(...lateness)).toBeLessThanOrEqual(2);
  });

  it('cancels each retried response when the next attempt starts; the returned one is left alone', async () => {
    const answers = [tracked(503), tracked(502), tracked(500), tracked(200, {}, 'fine')];
    const { fn, calls } = scriptedFetch(answers.map((a) => () => a.response));
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(100) }));
    await clock.tickAsync(100 + 200 + 400);
    expect(calls.map((c) => c.at)).toEqual([0, 100, 300, 700]);
    expect(answers.map((a) => a.state.cancelledAt)).toEqual([100, 300, 700, undefined]);
    expect(await call.value!.text()).toBe('fine');
  });

  it('resolves with the response when the retry budget refuses the retry', async () => {
    const first = tracked(503, {}, 'no budget');
    const { fn } = scriptedFetch([() => first.response]);
    const budget = { record: () => {}, canRetry: () => false };
    const res = await retryFetch('http://x.test/', undefined, { fetch: fn, budget });
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('no budget');
  });

  it('cancels the late response of an abandoned attempt when it arrives', async () => {
    const late = tracked(200, {}, 'too late');
    const { fn, calls } = scriptedFetch([
      // A fetch that ignores its signal and answers after 5 s.
      () => new Promise<Response>((resolve) => setTimeout(() => resolve(late.response), 5000)),
      () => new Response('on time'),
    ]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(10), attemptTimeoutMs: 1000 }));
    await clock.tickAsync(1010);
    expect(calls.map((c) => c.at)).toEqual([0, 1010]);
    expect(calls[0]!.signal.aborted).toBe(true);
    expect((calls[0]!.signal.reason as Error).name).toBe('TimeoutError');
    expect(await call.value!.text()).toBe('on time');
    await clock.tickAsync(5000);
    expect(late.state.cancelledAt).toBe(5000);
  });

  it('the caller\'s abort during the wait rejects at once with its reason and cancels the held response', async () => {
    const first = tracked(503);
    const { fn } = scriptedFetch([() => first.response]);
    const controller = new AbortController();
    const call = track(retryFetch('http://x.test/', { signal: controller.signal }, { fetch: fn, backoff: noJitter(10_000) }));
    await clock.tickAsync(2500);
    const reason = new Error('user navigated away');
    controller.abort(reason);
    await clock.tickAsync(0);
    expect(call.state).toBe('rejected');
    expect(call.error).toBe(reason);
    expect(first.state.cancelledAt).toBe(2500);
  });
});
