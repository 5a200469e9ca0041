// What becomes of retryFetch's responses (src/fetch/responses.ts): the ones it does not return
// are cancelled and free their sockets; the caller's signal, timeouts and hung requests. On a
// real node:http server on 127.0.0.1 with Node's own fetch.
import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import { PEEK_LIMIT_BYTES, followLate, peekText } from '../../src/fetch/responses.js';
import { installClock } from '../helpers/clock.js';
import { runInNewContext } from 'node:vm';
import { queueState } from '../../src/runtime/timer-queue.js';
import { startFaultServer } from '../faults/server.js';
import { startLoopback } from '../helpers/loopback.js';
import { BIG, bigReply, closeServersAfterEach, eventually, hang, quick, rejection, reply, scriptedServer, servers } from './loopback.js';

closeServersAfterEach();

describe('retryFetch on loopback: responses it does not return are cancelled, freeing their sockets', () => {
  it('cancels the body of every retried response, which closes its connection', async () => {
    const server = await scriptedServer([bigReply(503), bigReply(503), reply(200, 'done')]);
    const res = await retryFetch(server.url, undefined, quick);
    expect(await res.text()).toBe('done');
    // An unread 16 MiB body holds its connection open (the server is still writing it) until
    // the client reads it or cancels it; cancelling closes the connection.
    await eventually(
      () => server.seen[0]!.socketClosedAt !== undefined && server.seen[1]!.socketClosedAt !== undefined,
      "both 503s' connections closed",
    );
    expect(server.openSockets()).toBeLessThanOrEqual(1);
  });

  it('returns the final response with its whole body, having cancelled the ones before it', async () => {
    const server = await scriptedServer([bigReply(503), bigReply(503)]);
    const res = await retryFetch(server.url, undefined, { ...quick, maxAttempts: 2 });
    expect(res.status).toBe(503);
    await eventually(() => server.seen[0]!.socketClosedAt !== undefined, "the first 503's connection closed");
    expect(server.seen[1]!.socketClosedAt).toBeUndefined();
    expect((await res.arrayBuffer()).byteLength).toBe(BIG);
  });

  it('cancels the held response when the caller aborts during the wait', async () => {
    const server = await scriptedServer([bigReply(503)]);
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    const call = retryFetch(
      server.url,
      { signal: controller.signal },
      {
        ...quick,
        backoff: { initialDelayMs: 60_000, multiplier: 1, maxDelayMs: 60_000, jitter: 'none' },
        deadlineMs: 120_000,
        onRetry: () => setTimeout(() => controller.abort(reason), 20),
      },
    );
    expect(await rejection(call)).toBe(reason);
    await eventually(() => server.seen[0]!.socketClosedAt !== undefined, "the held 503's connection closed");
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
    await eventually(() => hung.socketClosedAt !== undefined, "the hung request's socket closed");
    // Aborting the attempt destroys its connection at once: no waiting for a keep-alive timer.
    expect(hung.socketClosedAt! - started).toBeLessThan(150 + 500);
  });

  it("rejects with the caller's reason at once when init.signal aborts during an attempt, and closes the socket", async () => {
    const server = await scriptedServer([hang]);
    const controller = new AbortController();
    const reason = new Error('stop');
    const call = retryFetch(server.url, { signal: controller.signal }, quick);
    await eventually(() => server.seen.length === 1, 'the request arrived');
    controller.abort(reason);
    expect(await rejection(call)).toBe(reason);
    await eventually(() => server.seen[0]!.socketClosedAt !== undefined, "the aborted request's socket closed", 500);
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

  it('lets go of a long-lived signal once every response it guarded is garbage', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const shared = new AbortController();
    const answer = (async () => new Response('body')) as typeof fetch;
    for (let i = 0; i < 20; i++) await retryFetch('http://x.test/', { signal: shared.signal }, { fetch: answer });
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    for (let round = 0; round < 20 && getEventListeners(shared.signal, 'abort').length > 0; round++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it("takes a Request's own signal as the caller's", async () => {
    const server = await scriptedServer([hang]);
    const controller = new AbortController();
    const call = retryFetch(new Request(server.url, { signal: controller.signal }), undefined, quick);
    await eventually(() => server.seen.length === 1, 'the request arrived');
    controller.abort(new Error('via the Request'));
    expect(((await rejection(call)) as Error).message).toBe('via the Request');
  });

  it("keeps the caller's signal on the returned response: aborting it stops the body", async () => {
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

  it('with resume: false, without bufferBody a body cut mid-way fails when read; with it the attempt fails and is retried', async () => {
    const cut = await startFaultServer({ faults: ['reset-mid-body', 'reset-mid-body'], bodyBytes: 4000 });
    servers.push(cut);
    const headers = { 'x-request-id': 'r' };
    const plain = await retryFetch(cut.url, { headers }, { ...quick, resume: false });
    expect(plain.status).toBe(200);
    expect(((await rejection(plain.text())) as Error).message).toBe('terminated');
    const buffered = await retryFetch(cut.url, { headers }, { ...quick, bufferBody: true, resume: false });
    expect(JSON.parse(await buffered.text())).toMatchObject({ id: 'r', method: 'GET' });
    expect(buffered.url).toBe(`${cut.url}/`);
    expect(cut.stats().history.map((h) => h.fault)).toEqual(['reset-mid-body', 'reset-mid-body', 'ok']);
  });
});

describe('retryFetch on loopback: a download in many parts', () => {
  it("keeps the listeners on an attempt's signal constant however many 206 parts the attempt reads (bufferBody)", async () => {
    const part = 16;
    const parts = 600;
    const data = Buffer.alloc(part * parts);
    for (let i = 0; i < data.length; i++) data[i] = i % 251;
    // The first answer breaks after one part, so the next attempt resumes; every 206 after it
    // is one part of its range, ending short of the whole, on a connection closed after it.
    const server = await startLoopback((req, res) => {
      const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
      if (range === null) {
        res.writeHead(200, { etag: '"v1"', 'content-length': String(data.length) });
        res.write(data.subarray(0, part), () => res.destroy());
        return;
      }
      const start = Number(range[1]);
      const end = Math.min(start + part, data.length) - 1;
      res.writeHead(206, {
        etag: '"v1"',
        connection: 'close',
        'content-range': `bytes ${start}-${end}/${data.length}`,
        'content-length': String(end - start + 1),
      });
      res.end(data.subarray(start, end + 1));
    });
    servers.push(server);
    let signal: AbortSignal | undefined;
    const listeners: number[] = [];
    const res = await retryFetch(server.url, undefined, {
      ...quick,
      bufferBody: true,
      // The attempt's own signal, as each send of the call sees it.
      telemetry: () => ({
        event: () => {},
        attempt: (ctx, run) => {
          signal = ctx.signal;
          return run();
        },
      }),
      fetch: (input, init) => {
        listeners.push(getEventListeners(signal as AbortSignal, 'abort').length);
        return fetch(input, init);
      },
    });
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    // The first attempt's request, then the second attempt's parts, one request each.
    expect(listeners).toHaveLength(parts);
    const second = listeners.slice(1);
    expect({ fewest: Math.min(...second), most: Math.max(...second) }).toEqual({ fewest: listeners[1], most: listeners[1] });
    expect(listeners[1]).toBeLessThanOrEqual(2);
  });
});

describe('followLate: the signal each fetch of an attempt is given', () => {
  it("aborts the latest follower at once when the abort is the caller's", () => {
    const attempt = new AbortController();
    let callerAborted = false;
    const follower = followLate(attempt.signal, () => callerAborted);
    callerAborted = true;
    const reason = new Error('the caller changed its mind');
    attempt.abort(reason);
    expect(follower.signal.reason).toBe(reason);
  });

  it("keeps one listener on the attempt's signal for every follower, and aborts the latest one a macrotask after it, with its reason", () => {
    const clock = installClock();
    try {
      const attempt = new AbortController();
      const earlier = followLate(attempt.signal);
      const latest = followLate(attempt.signal);
      expect(latest).not.toBe(earlier);
      expect(getEventListeners(attempt.signal, 'abort')).toHaveLength(1);
      const reason = new Error('attempt timed out');
      attempt.abort(reason);
      expect(latest.signal.aborted).toBe(false);
      clock.tick(0);
      expect(latest.signal.reason).toBe(reason);
      // Another attempt's signal has a follower of its own.
      const other = new AbortController();
      followLate(other.signal);
      expect(getEventListeners(other.signal, 'abort')).toHaveLength(1);
    } finally {
      clock.uninstall();
    }
  });
});

describe('peekText: a body read for a check of the library, bounded', () => {
  /** A body in the chunks given, then (with `endless`) one byte after another forever; counts the chunks pulled. */
  function chunked(chunks: Uint8Array[], endless = false) {
    let pulled = 0;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          const next = chunks[pulled++];
          if (next !== undefined) controller.enqueue(next);
          else if (endless) controller.enqueue(new Uint8Array([0x78]));
          else controller.close();
        },
        cancel: () => {
          cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    return { res: new Response(body), pulled: () => pulled, cancelled: () => cancelled };
  }

  it('reads 64 KiB at most by default', () => {
    expect(PEEK_LIMIT_BYTES).toBe(65_536);
  });

  it('reads a body up to the limit whole, from a copy: the caller still reads every byte', async () => {
    const euro = new TextEncoder().encode('€'); // three bytes, split across two chunks
    const body = chunked([euro.subarray(0, 2), euro.subarray(2), new TextEncoder().encode('12')]);
    expect(await peekText(body.res, 5)).toBe('€12');
    expect(await body.res.text()).toBe('€12');
    expect(await peekText(new Response(null), 5)).toBe('');
  });

  it('stops at the first chunk past the limit, and cancels the source once the caller cancels the body', async () => {
    const body = chunked([new Uint8Array(3), new Uint8Array(3)], true);
    expect(await peekText(body.res, 5)).toBeUndefined();
    expect(body.pulled()).toBeLessThanOrEqual(3);
    expect(body.cancelled()).toBe(false);
    await body.res.body?.cancel();
    expect(body.cancelled()).toBe(true);
  });

  it('rejects when the body breaks', async () => {
    const broken = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.error(new TypeError('terminated')),
    });
    await expect(peekText(new Response(broken))).rejects.toThrow('terminated');
  });
});
