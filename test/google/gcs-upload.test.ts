// Cloud Storage resumable uploads against a loopback server that behaves like Google's storage
// testbench (test/fetch/testbench.ts): real sockets, real 308s, real resets; 1 ms backoff.
import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type GiveUpEvent, GcsUploadError, HttpStatusError, RetryError, type SuccessEvent, hedging } from '../../src/index.js';
import { gcsResumableUpload, gcsStartResumableUpload } from '../../src/google/index.js';
import { queueState } from '../../src/runtime/timer-queue.js';
import { type InstalledClock, track, useVirtualClock } from '../helpers/clock.js';
import { eventually } from '../fetch/loopback.js';
import { type Testbench, pattern, startTestbench } from '../fetch/testbench.js';

const KiB = 1024;
const quick = { backoff: { initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitter: 'none' as const }, deadlineMs: 10_000 };

const benches: Testbench[] = [];
afterEach(async () => {
  await Promise.all(benches.splice(0).map((bench) => bench.close()));
});

async function session(name = 'obj.bin'): Promise<{ tb: Testbench; uri: string }> {
  const tb = await startTestbench();
  benches.push(tb);
  const uri = await gcsStartResumableUpload({
    bucket: 'bucket',
    name,
    token: 't0ken',
    baseUrl: tb.base,
    contentType: 'application/octet-stream',
  });
  return { tb, uri };
}

/** Every PUT after the session started: its Content-Range and how many bytes it carried. */
const puts = (tb: Testbench) =>
  tb.seen.filter((s) => s.method === 'PUT').map((s) => ({ range: s.headers['content-range'], bytes: s.bodyBytes }));

describe('gcsResumableUpload on loopback', () => {
  it("starts a session with two calls' worth of input: POST uploadType=resumable, bearer token, Location back", async () => {
    const { tb, uri } = await session('dir/a b.txt');
    const post = tb.seen[0];
    expect(post?.method).toBe('POST');
    expect(post?.url.pathname).toBe('/upload/storage/v1/b/bucket/o');
    expect(post?.url.searchParams.get('uploadType')).toBe('resumable');
    expect(post?.url.searchParams.get('name')).toBe('dir/a b.txt');
    expect(post?.headers.authorization).toBe('Bearer t0ken');
    expect(post?.headers['x-upload-content-type']).toBe('application/octet-stream');
    expect(uri).toMatch(/upload_id=session-1$/);
    const res = await gcsResumableUpload(uri, new TextEncoder().encode('hello'), quick);
    expect(res.status).toBe(200);
    expect((await res.json()).name).toBe('dir/a b.txt');
    expect(tb.objects.get('dir/a b.txt')?.data.toString()).toBe('hello');
  });

  it('conformance scenario 7 (handle_complex_retries, return-503-after-256K): the request after the 503 starts at the persisted offset', async () => {
    const { tb, uri } = await session();
    const data = pattern(1024 * KiB);
    tb.uploadFaults.push({ fail503After: 256 * KiB });
    const res = await gcsResumableUpload(uri, data, { ...quick, chunkSizeBytes: Infinity });
    expect(res.status).toBe(200);
    expect(tb.objects.get('obj.bin')?.data.equals(data)).toBe(true);
    expect(puts(tb)).toEqual([
      { range: `bytes 0-${1024 * KiB - 1}/${1024 * KiB}`, bytes: 1024 * KiB },
      // Where does the session stand? 308, Range: bytes=0-262143.
      { range: `bytes */${1024 * KiB}`, bytes: 0 },
      { range: `bytes 262144-${1024 * KiB - 1}/${1024 * KiB}`, bytes: 768 * KiB },
    ]);
  });

  it('uploads in chunks, resumes after a reset at the offset the session reports, and sends no persisted byte twice', async () => {
    const { tb, uri } = await session();
    const data = pattern(1000 * KiB);
    // PUTs: chunk 0 ok, chunk 1 reset (nothing persisted), status query, chunk 1 again, ...
    tb.uploadFaults.push('ok', 'reset');
    const res = await gcsResumableUpload(new URL(uri), new Blob([new Uint8Array(data)]), { ...quick, chunkSizeBytes: 256 * KiB });
    expect(res.status).toBe(200);
    expect(tb.objects.get('obj.bin')?.data.equals(data)).toBe(true);
    const total = 1000 * KiB;
    expect(puts(tb).map((p) => p.range)).toEqual([
      `bytes 0-262143/${total}`,
      `bytes 262144-524287/${total}`,
      `bytes */${total}`,
      `bytes 262144-524287/${total}`,
      `bytes 524288-786431/${total}`,
      `bytes 786432-${total - 1}/${total}`,
    ]);
  });

  it('a 503 after part of a chunk was persisted: the rest of the chunk only, then on', async () => {
    const { tb, uri } = await session();
    const data = pattern(2048 * KiB);
    tb.uploadFaults.push({ fail503After: 512 * KiB });
    await gcsResumableUpload(uri, new Uint8Array(data).buffer, { ...quick, chunkSizeBytes: 1024 * KiB });
    expect(tb.objects.get('obj.bin')?.data.equals(data)).toBe(true);
    const sent = puts(tb);
    expect(sent.map((p) => p.range)).toEqual([
      'bytes 0-1048575/2097152',
      'bytes */2097152',
      'bytes 524288-1572863/2097152',
      'bytes 1572864-2097151/2097152',
    ]);
    // Beyond the break nothing was sent twice: the bytes sent are the object plus what the 503 dropped.
    expect(sent.reduce((sum, p) => sum + p.bytes, 0)).toBe(data.length + 512 * KiB);
  });

  it('rejects with GcsUploadError "session-expired" on 410, not retried', async () => {
    const { tb, uri } = await session();
    tb.uploadFaults.push('gone');
    const error = await gcsResumableUpload(uri, pattern(10), quick).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GcsUploadError);
    expect((error as GcsUploadError).reason).toBe('session-expired');
    expect((error as GcsUploadError).message).toContain('expired (HTTP 410)');
    expect(puts(tb)).toHaveLength(1);
  });

  it('gives up like any retry: out of attempts, a RetryError whose cause is the last 503', async () => {
    const { tb, uri } = await session();
    tb.uploadFaults.push({ fail503After: 0 }, 'ok', { fail503After: 0 });
    const error = await gcsResumableUpload(uri, pattern(300 * KiB), { ...quick, maxAttempts: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).cause).toBeInstanceOf(HttpStatusError);
    expect(((error as RetryError).cause as HttpStatusError).status).toBe(503);
  });

  it('validates its options and body, naming the field', async () => {
    await expect(gcsResumableUpload('http://127.0.0.1:9/', pattern(1), { chunkSizeBytes: 1000 })).rejects.toThrow(
      'gcsResumableUpload: options.chunkSizeBytes must be a multiple of 262144 (256 KiB) or Infinity, got 1000',
    );
    await expect(gcsResumableUpload('http://127.0.0.1:9/', 'text' as never)).rejects.toThrow(
      'gcsResumableUpload: body must be a Blob, an ArrayBuffer or a typed array, got "text"',
    );
    await expect(gcsStartResumableUpload({ bucket: 'b', name: '', token: 't' })).rejects.toThrow(
      'gcsStartResumableUpload: target.name must be a non-empty string, got ""',
    );
    await expect(gcsStartResumableUpload({ bucket: 'b', name: 'n' } as never)).rejects.toThrow(
      'gcsStartResumableUpload: target.token must be a non-empty string, got undefined',
    );
    await expect(gcsStartResumableUpload({ bucket: 'b', name: 'n', token: 't', contentType: 5 } as never)).rejects.toThrow(
      'gcsStartResumableUpload: target.contentType must be a string, got 5',
    );
    // retry()'s options in a target are read under the upload's name, not gcs()'s.
    await expect(gcsStartResumableUpload({ bucket: 'b', name: 'n', token: 't', maxAttempts: 0 })).rejects.toThrow(
      'gcsStartResumableUpload: target.maxAttempts must be a safe integer >= 1 or Infinity, got 0',
    );
    await expect(gcsStartResumableUpload({ bucket: 'b', name: 'n', token: 't', backoff: { multiplier: 0 } })).rejects.toThrow(
      'gcsStartResumableUpload: target.backoff.multiplier must be a finite number >= 1, got 0',
    );
    await expect(gcsStartResumableUpload({ bucket: 'b', name: 'n', token: 't', bukcet: 'c' } as never)).rejects.toThrow(
      'gcsStartResumableUpload: unknown option "bukcet" in target (did you mean "bucket"?)',
    );
    await expect(gcsResumableUpload('http://127.0.0.1:9/', pattern(1), { deadlineMs: -1 })).rejects.toThrow(
      'gcsResumableUpload: options.deadlineMs must be a number > 0 (Infinity for none), got -1',
    );
    await expect(
      gcsResumableUpload('http://127.0.0.1:9/', pattern(1), { maxDelayMs: 10, backoff: { initialDelayMs: 50 } }),
    ).rejects.toThrow('gcsResumableUpload: options.backoff.maxDelayMs must be a finite number >= initialDelayMs (50), got 10');
    await expect(gcsResumableUpload('http://127.0.0.1:9/', pattern(1), { chunkSize: 1 } as never)).rejects.toThrow(
      /^gcsResumableUpload: unknown option "chunkSize" \(known: .*, chunkSizeBytes, fetch\)$/,
    );
  });
});

describe('gcsResumableUpload: protocol edges (injected fetch)', () => {
  it('uploads an empty body with one "bytes */0" request', async () => {
    const ranges: string[] = [];
    const fn: typeof fetch = async (_input, init) => {
      ranges.push(new Headers(init?.headers).get('content-range') ?? '');
      return new Response('{"size":"0"}', { status: 201 });
    };
    const res = await gcsResumableUpload('http://x.test/s', new Uint8Array(0), { ...quick, fetch: fn });
    expect(res.status).toBe(201);
    expect(ranges).toEqual(['bytes */0']);
  });

  it('rejects with GcsUploadError "protocol" when a 308 names bytes past the end', async () => {
    const fn: typeof fetch = async () => new Response(null, { status: 308, headers: { range: 'bytes=0-999' } });
    const error = (await gcsResumableUpload('http://x.test/s', new Uint8Array(10), { ...quick, fetch: fn }).catch(
      (e: unknown) => e,
    )) as GcsUploadError;
    expect(error).toBeInstanceOf(GcsUploadError);
    expect(error.reason).toBe('protocol');
    expect(error.message).toContain('"bytes=0-999" for a 10-byte upload');
  });

  it('takes a final answer whose body breaks as one without a size: the response is handed over, the break is its reader’s', async () => {
    let puts = 0;
    const fn: typeof fetch = async () => {
      puts++;
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(new TextEncoder().encode('{"si')),
        pull: (controller) => controller.error(new TypeError('terminated')),
      });
      return new Response(body, { status: 200 });
    };
    const res = await gcsResumableUpload('http://x.test/s', new Uint8Array(10), { ...quick, fetch: fn });
    expect(res.status).toBe(200);
    expect(puts).toBe(1);
    await expect(res.text()).rejects.toThrow('terminated');
  });

  it('calls onSuccess once for the whole upload, counting the call’s attempts (a chunk is not an attempt)', async () => {
    const KiB256 = 256 * KiB;
    let persisted = 0;
    let puts = 0;
    const fn: typeof fetch = async (_input, init) => {
      // The second PUT is lost (a 503, nothing persisted): its chunk takes two attempts.
      if (++puts === 2) return new Response('busy', { status: 503 });
      const range = /bytes (\d+)-(\d+)\//.exec(new Headers(init?.headers).get('content-range') ?? '');
      if (range !== null && Number(range[1]) === persisted) persisted = Number(range[2]) + 1;
      if (persisted === 3 * KiB256) return new Response('{}', { status: 200 });
      return new Response(null, { status: 308, headers: persisted > 0 ? { range: `bytes=0-${persisted - 1}` } : {} });
    };
    const successes: SuccessEvent[] = [];
    const giveUps: GiveUpEvent[] = [];
    const options = { ...quick, fetch: fn, chunkSizeBytes: KiB256 };
    const res = await gcsResumableUpload('http://x.test/s', new Uint8Array(3 * KiB256), {
      ...options,
      onSuccess: (e) => void successes.push(e),
      onGiveUp: (e) => void giveUps.push(e),
    });
    expect(res.status).toBe(200);
    expect(successes).toHaveLength(1);
    // Attempt 1 sent chunk 1 and lost chunk 2; attempt 2 asked, then sent chunks 2 and 3.
    expect(successes[0]).toMatchObject({ attempts: 2, value: res });
    expect(giveUps).toEqual([]);
    // Failing: onGiveUp once, with the reason of the run that gave up, and no onSuccess before it.
    const failing: typeof fetch = async () =>
      puts++ === 0
        ? new Response(null, { status: 308, headers: { range: `bytes=0-${KiB256 - 1}` } })
        : new Response('busy', { status: 503 });
    puts = 0;
    const error = await gcsResumableUpload('http://x.test/s', new Uint8Array(3 * KiB256), {
      ...options,
      fetch: failing,
      maxAttempts: 2,
      onSuccess: (e) => void successes.push(e),
      onGiveUp: (e) => void giveUps.push(e),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryError);
    expect(successes).toHaveLength(1);
    expect(giveUps).toHaveLength(1);
    // Attempt 1 persisted a chunk (progress), then failed; attempt 2 failed too: two since progress.
    expect(giveUps[0]).toMatchObject({ reason: 'attempts', error, attempts: 2 });
  });

  it('refuses retryOnResult, naming the field, rather than judging each 308 with it', async () => {
    const retryOnResult = (): boolean => true;
    await expect(gcsResumableUpload('http://x.test/s', new Uint8Array(1), { ...quick, retryOnResult })).rejects.toThrow(
      "gcsResumableUpload: options.retryOnResult must be left out (an upload's answers are judged by its protocol), got a function (retryOnResult)",
    );
    await expect(gcsStartResumableUpload({ bucket: 'b', name: 'n', token: 't', retryOnResult })).rejects.toThrow(
      "gcsStartResumableUpload: target.retryOnResult must be left out (an upload's answers are judged by its protocol), got a function",
    );
  });

  it('refuses hedge at the call, before any request: two copies would race over one offset', async () => {
    let requests = 0;
    const fn: typeof fetch = async () => {
      requests++;
      return new Response(null, { status: 200 });
    };
    await expect(
      gcsResumableUpload('http://x.test/s', new Uint8Array(1), { ...quick, fetch: fn, hedge: hedging({ delayMs: 10 }) }),
    ).rejects.toThrow(
      /^gcsResumableUpload: options\.hedge must be left out \(an upload sends its chunks in order from the offset the session reports: two copies would race over it\), got /,
    );
    expect(requests).toBe(0);
  });

  it('refuses idempotent: every request of a session is safe, and a start is decided by its preconditions', async () => {
    await expect(gcsResumableUpload('http://x.test/s', new Uint8Array(1), { idempotent: false } as never)).rejects.toThrow(
      'gcsResumableUpload: options.idempotent must be left out (every request of an upload session is safe to resend), got false',
    );
    await expect(gcsStartResumableUpload({ bucket: 'b', name: 'n', token: 't', idempotent: true } as never)).rejects.toThrow(
      'gcsStartResumableUpload: target.idempotent must be left out (preconditions and strategy decide whether a failed start is sent again), got true',
    );
  });

  it('gcsStartResumableUpload rejects with the HttpStatusError of a 403, not retried', async () => {
    let calls = 0;
    const fn: typeof fetch = async () => {
      calls++;
      return new Response('forbidden', { status: 403 });
    };
    const error = (await gcsStartResumableUpload({ bucket: 'b', name: 'n', token: 't', fetch: fn, ...quick }).catch(
      (e: unknown) => e,
    )) as HttpStatusError;
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error.status).toBe(403);
    expect(calls).toBe(1);
  });
});

/** One request the scripted server got: when (virtual time), what, and its body's size. */
interface Received {
  readonly at: number;
  readonly method: string;
  readonly url: URL;
  readonly headers: IncomingHttpHeaders;
  readonly range: string;
  readonly bytes: number;
  /** The body as text. */
  readonly text: string;
}

/**
 * A real upload session on 127.0.0.1 whose every answer comes from `answer` (the requests so
 * far, this one included). Past `limit` requests it answers 410, so code that loops without end fails
 * the test instead of hanging it.
 */
async function scriptedSession(
  answer: (requests: readonly Received[]) => { status: number; headers?: Record<string, string>; body?: string },
  limit = 200,
): Promise<{ base: string; uri: string; requests: Received[]; close(): Promise<void> }> {
  const requests: Received[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let bytes = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      chunks.push(chunk);
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const range = String(req.headers['content-range']);
      requests.push({
        at: Date.now(),
        method: req.method ?? '',
        url,
        headers: req.headers,
        range,
        bytes,
        text: Buffer.concat(chunks).toString(),
      });
      const { status, headers = {}, body } = requests.length > limit ? { status: 410 } : answer(requests);
      res.writeHead(status, headers).end(body);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = async (): Promise<void> => {
    const closed = new Promise((resolve) => server.close(resolve));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  sessions.push(close);
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, uri: `${base}/upload?upload_id=s1`, requests, close };
}
const sessions: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((close) => close()));
});

/**
 * Real fetch on real sockets, in virtual time: I/O runs between steps (setImmediate is not
 * faked), and the clock jumps to its next timer only while no request is on the wire, so the
 * waits that pass are the upload's own, never a socket's time on the wire.
 */
function virtualFetch(clock: InstalledClock): {
  fetch: typeof fetch;
  settle<T>(promise: Promise<T>): Promise<{ state: string; value?: T; error?: unknown; at: number }>;
  finish(session: { close(): Promise<void> }): Promise<void>;
} {
  let onWire = 0;
  return {
    fetch: async (input, init) => {
      onWire++;
      try {
        return await fetch(input, init);
      } finally {
        onWire--;
      }
    },
    async settle(promise) {
      const box = track(promise);
      while (box.state === 'pending') {
        await new Promise((resolve) => setImmediate(resolve));
        if (box.state === 'pending' && onWire === 0) await clock.nextAsync();
      }
      return { ...box, at: clock.now };
    },
    // Undici sets its own timers (its keep-alive clock) on the virtual clock: once the upload
    // has left nothing queued (checked first, or running the clock would hide it), they run out.
    async finish(session) {
      await session.close();
      expect(queueState()).toEqual({ queued: 0, timerArmed: false });
      await clock.runAllAsync();
    },
  };
}

describe('gcsResumableUpload: a session that keeps nothing, in virtual time on loopback', () => {
  const clock = useVirtualClock();
  const KiB256 = 256 * KiB;
  // Google's schedule without jitter: waits of 1, 2, 4, 8, 16 s.
  const backoff = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 64_000, jitter: 'none' as const };

  it('a 308 without Range is a failed attempt: backed off, counted against maxAttempts, ending in a RetryError', async () => {
    const session = await scriptedSession(() => ({ status: 308 }));
    const net = virtualFetch(clock);
    const outcome = await net.settle(
      gcsResumableUpload(session.uri, pattern(2 * KiB256), { fetch: net.fetch, chunkSizeBytes: KiB256, backoff, maxAttempts: 4 }),
    );
    expect(outcome.state).toBe('rejected');
    const error = outcome.error as RetryError;
    expect(error).toBeInstanceOf(RetryError);
    expect(error.reason).toBe('attempts');
    expect(error.attempts).toBe(4);
    expect(error.cause).toBeInstanceOf(GcsUploadError);
    expect((error.cause as GcsUploadError).reason).toBe('no-progress');
    expect((error.cause as GcsUploadError).message).toBe(
      `gcsResumableUpload: HTTP 308 without Range: nothing persisted past the 0 bytes of ${2 * KiB256} reported before`,
    );
    // Four attempts at chunk 0, each after the first asking the session first, with the backoff between.
    const first = `bytes 0-${KiB256 - 1}/${2 * KiB256}`;
    const ask = `bytes */${2 * KiB256}`;
    expect(session.requests.map(({ at, range }) => [at, range])).toEqual([
      [0, first],
      [1000, ask],
      [1000, first],
      [3000, ask],
      [3000, first],
      [7000, ask],
      [7000, first],
    ]);
    expect(outcome.at).toBe(7000);
    await net.finish(session);
  });

  it('a 308 without Range forever, no maxAttempts: settles by the deadline with RetryError "deadline"', async () => {
    const session = await scriptedSession(() => ({ status: 308 }));
    const net = virtualFetch(clock);
    const outcome = await net.settle(gcsResumableUpload(session.uri, pattern(1000), { fetch: net.fetch, backoff, deadlineMs: 20_000 }));
    expect(outcome.state).toBe('rejected');
    expect(outcome.error).toBeInstanceOf(RetryError);
    expect((outcome.error as RetryError).reason).toBe('deadline');
    // Attempts at 0, 1, 3, 7 and 15 s; the next wait (16 s) would end past the deadline: it gives up at once.
    expect(outcome.at).toBe(15_000);
    expect(session.requests.filter((p) => p.bytes > 0).map((p) => p.at)).toEqual([0, 1000, 3000, 7000, 15_000]);
    await net.finish(session);
  });

  it('a 308 whose Range goes back is no progress: resent from where the session says, but counted as a failure', async () => {
    const total = 2 * KiB256;
    // The first chunk is kept; from then on the session says it holds only the first 128 KiB.
    const session = await scriptedSession((requests) => ({
      status: 308,
      headers: { range: requests.length === 1 ? `bytes=0-${KiB256 - 1}` : `bytes=0-${KiB256 / 2 - 1}` },
    }));
    const net = virtualFetch(clock);
    const outcome = await net.settle(
      gcsResumableUpload(session.uri, pattern(total), { fetch: net.fetch, chunkSizeBytes: KiB256, backoff, maxAttempts: 3 }),
    );
    const error = outcome.error as RetryError;
    expect(error).toBeInstanceOf(RetryError);
    expect(error.reason).toBe('attempts');
    expect((error.cause as GcsUploadError).reason).toBe('no-progress');
    expect((error.cause as GcsUploadError).message).toContain(
      `HTTP 308 with Range bytes=0-131071: nothing persisted past the 262144 bytes of ${total} reported before`,
    );
    const back = `bytes 131072-393215/${total}`;
    expect(session.requests.map(({ at, range }) => [at, range])).toEqual([
      [0, `bytes 0-262143/${total}`],
      [0, `bytes 262144-524287/${total}`],
      [1000, `bytes */${total}`],
      [1000, back],
      [3000, `bytes */${total}`],
      [3000, back],
    ]);
    await net.finish(session);
  });
});

describe('gcsStartResumableUpload: preconditions and headers, on loopback', () => {
  /** A start endpoint: the scripted statuses first (with no Location), then 200 with a session URI. */
  const startServer = (...statuses: number[]) =>
    scriptedSession((requests) => {
      const status = statuses[requests.length - 1];
      return status === undefined ? { status: 200, headers: { location: 'http://127.0.0.1:9/s?upload_id=1' } } : { status };
    });
  const target = (base: string) => ({ bucket: 'b', name: 'o.txt', token: 't0ken', baseUrl: base, ...quick });

  it('sends the preconditions as query parameters and the extra headers with the POST', async () => {
    const server = await startServer();
    const uri = await gcsStartResumableUpload({
      ...target(server.base),
      contentType: 'text/plain',
      preconditions: { ifGenerationMatch: 0, ifMetagenerationMatch: '1700000000000001' },
      headers: { 'X-Upload-Content-Length': '5', 'x-goog-user-project': 'my-project' },
    });
    expect(uri).toBe('http://127.0.0.1:9/s?upload_id=1');
    const [post] = server.requests;
    expect(post?.method).toBe('POST');
    expect(post?.url.pathname).toBe('/upload/storage/v1/b/b/o');
    expect([...(post?.url.searchParams ?? [])]).toEqual([
      ['uploadType', 'resumable'],
      ['name', 'o.txt'],
      ['ifGenerationMatch', '0'],
      ['ifMetagenerationMatch', '1700000000000001'],
    ]);
    expect(post?.headers).toMatchObject({
      authorization: 'Bearer t0ken',
      'x-upload-content-type': 'text/plain',
      'x-upload-content-length': '5',
      'x-goog-user-project': 'my-project',
    });
  });

  it("resends a failed start as gcs({ operation: 'objects.insert', preconditions, strategy }) decides", async () => {
    const outcome = async (extra: object): Promise<{ posts: number; error?: unknown }> => {
      const server = await startServer(503);
      const error = await gcsStartResumableUpload({ ...target(server.base), ...extra }).then(
        () => undefined,
        (e: unknown) => e,
      );
      return { posts: server.requests.length, error };
    };
    // ifGenerationMatch makes the write conditional: safe to resend.
    expect(await outcome({ preconditions: { ifGenerationMatch: 0 } })).toEqual({ posts: 2, error: undefined });
    expect(await outcome({ preconditions: { ifGenerationMatch: 1234n } })).toEqual({ posts: 2, error: undefined });
    // Without it, or with a precondition that does not guard an insert, the 503 is the answer.
    for (const extra of [{}, { preconditions: { ifMetagenerationMatch: 3 } }, { preconditions: { ifGenerationMatch: null } }]) {
      const { posts, error } = await outcome(extra);
      expect(posts).toBe(1);
      expect(error).toBeInstanceOf(HttpStatusError);
      expect((error as HttpStatusError).status).toBe(503);
    }
    // The strategy speaks as it does to gcs().
    expect(await outcome({ strategy: 'always' })).toEqual({ posts: 2, error: undefined });
    expect((await outcome({ strategy: 'never', preconditions: { ifGenerationMatch: 0 } })).posts).toBe(1);
  });

  it('refuses bad preconditions and headers before sending anything, naming the field and the value', async () => {
    const server = await startServer();
    const start = (extra: object) => gcsStartResumableUpload({ ...target(server.base), ...extra } as never);
    const takes = 'use ifGenerationMatch or ifMetagenerationMatch';
    await expect(start({ preconditions: { ifGenerationMatc: 0 } })).rejects.toThrow(
      "gcsStartResumableUpload: target.preconditions.ifGenerationMatc is not a precondition an upload's start takes, got 0: did you mean ifGenerationMatch?",
    );
    // gcs() knows these, but they are not parameters of an upload: sending nothing would leave the write unguarded.
    await expect(start({ preconditions: { etag: '"abc"' } })).rejects.toThrow(
      `gcsStartResumableUpload: target.preconditions.etag is not a precondition an upload's start takes, got "\\"abc\\"": ${takes}`,
    );
    await expect(start({ preconditions: { generation: 5 } })).rejects.toThrow(
      `target.preconditions.generation is not a precondition an upload's start takes, got 5: ${takes}`,
    );
    await expect(start({ preconditions: { ifGenerationNotMatch: 5 } })).rejects.toThrow(`got 5: ${takes}`);
    await expect(start({ preconditions: new Map() })).rejects.toThrow(
      'gcsStartResumableUpload: target.preconditions must be a plain object such as { ifGenerationMatch: 0 }, got a Map',
    );
    // Values and the strategy are gcs()'s to check, with its messages.
    await expect(start({ preconditions: { ifGenerationMatch: -1 } })).rejects.toThrow(
      new RangeError(
        'Cloud Storage precondition ifGenerationMatch must be a non-negative integer: a number up to Number.MAX_SAFE_INTEGER ' +
          '(past it digits are lost: pass a string or bigint), a decimal string or a bigint; got -1',
      ),
    );
    await expect(start({ preconditions: { ifGenerationMatch: '12abc' } })).rejects.toThrow('got "12abc"');
    await expect(start({ strategy: 'allways' })).rejects.toThrow(
      `gcsStartResumableUpload: target.strategy must be 'always', 'conditional' or 'never', got "allways"`,
    );
    await expect(start({ headers: { 'x-goog-meta-color': 7 } })).rejects.toThrow(
      'gcsStartResumableUpload: target.headers["x-goog-meta-color"] must be a string, got 7',
    );
    await expect(start({ headers: { 'x-goog-meta-a': 'b\r\nx-evil: 1' } })).rejects.toThrow(
      'gcsStartResumableUpload: target.headers["x-goog-meta-a"] is not a valid header, got "b\\r\\nx-evil: 1"',
    );
    await expect(start({ headers: { 'bad name': 'x' } })).rejects.toThrow('target.headers["bad name"] is not a valid header, got "x"');
    await expect(start({ headers: { Authorization: 'Bearer other' } })).rejects.toThrow(
      'gcsStartResumableUpload: target.headers["Authorization"] is given already, got "Bearer other"',
    );
    await expect(start({ contentType: 'text/plain', headers: { 'X-Upload-Content-Type': 'text/csv' } })).rejects.toThrow(
      'target.headers["X-Upload-Content-Type"] is given already, got "text/csv"',
    );
    await expect(start({ headers: { 'x-a': '1', 'X-A': '2' } })).rejects.toThrow('target.headers["X-A"] is given already, got "2"');
    await expect(start({ headers: 'x-a: b' })).rejects.toThrow(
      'gcsStartResumableUpload: target.headers must be a plain object of header names and values, got "x-a: b"',
    );
    expect(server.requests).toEqual([]);
  });
});

describe('gcsResumableUpload: a final answer that is not the object sent, on loopback', () => {
  const KiB256 = 256 * KiB;
  const total = 2 * KiB256;
  const upload = async (uri: string) =>
    (await gcsResumableUpload(uri, pattern(total), { ...quick, chunkSizeBytes: KiB256 }).catch((e: unknown) => e)) as GcsUploadError;

  it('rejects a 200 whose object has another size than the body, not retried', async () => {
    const session = await scriptedSession(() => ({ status: 200, body: JSON.stringify({ name: 'o', size: String(KiB256) }) }));
    const error = await upload(session.uri);
    expect(error).toBeInstanceOf(GcsUploadError);
    expect(error.reason).toBe('protocol');
    expect(error.status).toBe(200);
    expect(error.message).toContain(`HTTP 200 (upload complete) for an object of 262144 bytes, but the upload is ${total} bytes`);
    expect(session.requests).toHaveLength(1);
  });

  it('rejects a 201 without a size to a request that did not reach the last byte', async () => {
    const session = await scriptedSession(() => ({ status: 201, body: '{}' }));
    const error = await upload(session.uri);
    expect(error).toBeInstanceOf(GcsUploadError);
    expect(error.reason).toBe('protocol');
    expect(error.message).toContain(`HTTP 201 (upload complete) after 262144 bytes sent, but the upload is ${total} bytes`);
  });

  it('checks the size of a 200 that answers the status query too', async () => {
    // The chunk's answer is lost (503); the status query says the upload is complete, at 10 bytes.
    const session = await scriptedSession((requests) =>
      requests.length === 1 ? { status: 503 } : { status: 200, body: JSON.stringify({ size: '10' }) },
    );
    const error = await upload(session.uri);
    expect(error).toBeInstanceOf(GcsUploadError);
    expect(error.message).toContain(`for an object of 10 bytes, but the upload is ${total} bytes`);
    expect(session.requests.map((r) => r.range)).toEqual([`bytes 0-262143/${total}`, `bytes */${total}`]);
  });

  it('takes a 200 whose size is the body’s, and leaves its body to the caller', async () => {
    const session = await scriptedSession((requests) =>
      requests.length === 1
        ? { status: 308, headers: { range: `bytes=0-${KiB256 - 1}` } }
        : { status: 200, body: JSON.stringify({ name: 'o', size: String(total) }) },
    );
    const res = await gcsResumableUpload(session.uri, pattern(total), { ...quick, chunkSizeBytes: KiB256 });
    expect(await res.json()).toEqual({ name: 'o', size: String(total) });
  });

  it('reads no more than 64 KiB of a final answer: one that never ends is refused ("protocol") and its connection closed', async () => {
    // A session endpoint that answers the last chunk with a 200 whose body never ends.
    let written = 0;
    let closed = false;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"size":"');
        const chunk = Buffer.alloc(64 * KiB, 0x37);
        const pump = (): void => {
          while (!res.destroyed && res.write(chunk)) written += chunk.length;
        };
        res.on('drain', pump);
        res.on('close', () => {
          closed = true;
        });
        pump();
      });
    });
    const sockets = new Set<Socket>();
    server.on('connection', (socket: Socket) => sockets.add(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    sessions.push(async () => {
      const done = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await done;
    });
    const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/upload?upload_id=s1`;
    const error = (await gcsResumableUpload(uri, pattern(10), { ...quick, deadlineMs: 600_000 }).catch(
      (e: unknown) => e,
    )) as GcsUploadError;
    expect(error).toBeInstanceOf(GcsUploadError);
    expect(error.reason).toBe('protocol');
    expect(error.status).toBe(200);
    expect(error.message).toBe(
      "gcsResumableUpload: HTTP 200 (upload complete) with a body of more than 65536 bytes, which no object's metadata is",
    );
    // Closed by the client: the server stops at what the socket buffers took.
    await eventually(() => closed, 'the connection of the endless answer closed');
    expect(written).toBeLessThan(64 * 1024 * KiB);
  });
});

describe('gcsResumableUpload: answers outside the happy path, on loopback', () => {
  const KiB256 = 256 * KiB;
  const total = 2 * KiB256;
  const upload = async (uri: string, options: object = {}) =>
    gcsResumableUpload(uri, pattern(total), { ...quick, chunkSizeBytes: KiB256, ...options }).catch((e: unknown) => e);
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('rejects with GcsUploadError "session-expired" on 404 as on 410, not retried', async () => {
    const session = await scriptedSession(() => ({ status: 404 }));
    const error = (await upload(session.uri)) as GcsUploadError;
    expect(error).toBeInstanceOf(GcsUploadError);
    expect(error.reason).toBe('session-expired');
    expect(error.message).toBe('gcsResumableUpload: the upload session expired (HTTP 404); start a new session and upload again');
    expect(session.requests).toHaveLength(1);
  });

  it('rejects with the HttpStatusError of a 400 (PUT), and a GcsUploadError "protocol" for a status the protocol has no place for', async () => {
    const bad = await scriptedSession(() => ({ status: 400 }));
    const error = (await upload(bad.uri)) as HttpStatusError;
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error.status).toBe(400);
    expect(error.method).toBe('PUT');
    expect(error.message).toBe('HTTP 400 Bad Request (PUT)');
    const odd = await scriptedSession(() => ({ status: 204 }));
    const protocol = (await upload(odd.uri)) as GcsUploadError;
    expect(protocol).toBeInstanceOf(GcsUploadError);
    expect(protocol.reason).toBe('protocol');
    expect(protocol.status).toBe(204);
    expect(protocol.message).toBe('gcsResumableUpload: unexpected HTTP 204 from the upload session');
  });

  it('rejects a 308 whose Range is not "bytes=0-<last>" as a protocol error', async () => {
    for (const range of ['bytes=0-99junk', 'xbytes=0-99', 'bytes=5-99', 'bytes=0-']) {
      const session = await scriptedSession(() => ({ status: 308, headers: { range } }));
      const error = (await upload(session.uri)) as GcsUploadError;
      expect(error).toBeInstanceOf(GcsUploadError);
      expect(error.reason).toBe('protocol');
      expect(error.message).toBe(`gcsResumableUpload: the session answered Range ${JSON.stringify(range)} for a ${total}-byte upload`);
      expect(session.requests).toHaveLength(1);
    }
  });

  it('takes a 308 that names every byte as progress, and the final answer after it', async () => {
    const session = await scriptedSession((requests) =>
      requests.length === 1
        ? { status: 308, headers: { range: `bytes=0-${total - 1}` } }
        : { status: 200, body: JSON.stringify({ size: String(total) }) },
    );
    const res = (await upload(session.uri, { chunkSizeBytes: Infinity })) as Response;
    expect(res).toBeInstanceOf(Response);
    expect(res.status).toBe(200);
    expect(session.requests).toHaveLength(2);
    // Every byte is kept: the request after it asks for the object, with no body.
    expect(session.requests.map((r) => [r.range, r.bytes])).toEqual([
      [`bytes 0-${total - 1}/${total}`, total],
      [`bytes */${total}`, 0],
    ]);
  });

  it('reads a retryable that answers undefined as no, as retry() does: a 503 is not retried', async () => {
    const session = await scriptedSession(() => ({ status: 503 }));
    const error = (await upload(session.uri, { retryable: () => undefined })) as HttpStatusError;
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error.status).toBe(503);
    expect(session.requests).toHaveLength(1);
  });

  it('takes a 201 that answers the status query as the object', async () => {
    const session = await scriptedSession((requests) =>
      requests.length === 1 ? { status: 503 } : { status: 201, body: JSON.stringify({ size: String(total) }) },
    );
    const res = (await upload(session.uri)) as Response;
    expect(res).toBeInstanceOf(Response);
    expect(res.status).toBe(201);
    expect(session.requests.map((r) => r.range)).toEqual([`bytes 0-${KiB256 - 1}/${total}`, `bytes */${total}`]);
  });

  it('rejects with "session-expired" when the status query is answered 410, and sends nothing more', async () => {
    const session = await scriptedSession((requests) => (requests.length === 1 ? { status: 503 } : { status: 410 }));
    const error = (await upload(session.uri)) as GcsUploadError;
    expect(error).toBeInstanceOf(GcsUploadError);
    expect(error.reason).toBe('session-expired');
    expect(session.requests.map((r) => r.range)).toEqual([`bytes 0-${KiB256 - 1}/${total}`, `bytes */${total}`]);
  });

  it('reads a size that is not a decimal string, or a body that is not an object, as no size', async () => {
    for (const body of [JSON.stringify({ size: 'x5' }), JSON.stringify({ size: '5x' }), JSON.stringify({ size: -5 }), 'null', 'not json']) {
      const session = await scriptedSession(() => ({ status: 201, body }));
      const error = (await upload(session.uri)) as GcsUploadError;
      expect(error).toBeInstanceOf(GcsUploadError);
      expect(error.message).toBe(
        `gcsResumableUpload: HTTP 201 (upload complete) after ${KiB256} bytes sent, but the upload is ${total} bytes`,
      );
    }
  });

  it('names itself when the rng it was given draws out of range', async () => {
    const session = await scriptedSession(() => ({ status: 503 }));
    const error = (await upload(session.uri, { backoff: { initialDelayMs: 1 }, rng: () => 2 })) as Error;
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toMatch(/^gcsResumableUpload: options\.rng /);
  });

  it('refuses a chunk size of 0, a negative one or a numeric string', async () => {
    for (const [chunkSizeBytes, got] of [
      [0, '0'],
      [-KiB256, String(-KiB256)],
      [String(KiB256), `"${KiB256}"`],
    ] as const) {
      await expect(gcsResumableUpload('http://127.0.0.1:9/', pattern(1), { chunkSizeBytes } as never)).rejects.toThrow(
        `gcsResumableUpload: options.chunkSizeBytes must be a multiple of 262144 (256 KiB) or Infinity, got ${got}`,
      );
    }
  });

  it('requires options.fetch where there is no global fetch', async () => {
    vi.stubGlobal('fetch', undefined);
    await expect(gcsResumableUpload('http://127.0.0.1:9/', pattern(1), quick)).rejects.toThrow(
      'gcsResumableUpload: options.fetch must be a function, got undefined',
    );
  });

  it('uploads a typed array where there is no global Blob', async () => {
    const session = await scriptedSession(() => ({ status: 200, body: JSON.stringify({ size: '5' }) }));
    const put = fetch;
    vi.stubGlobal('Blob', undefined);
    const res = await gcsResumableUpload(session.uri, new TextEncoder().encode('hello'), { ...quick, fetch: put });
    expect(res.status).toBe(200);
    expect(session.requests.map((r) => r.text)).toEqual(['hello']);
  });
});

describe('gcsStartResumableUpload: the request it sends', () => {
  const ok = () => ({ status: 200, headers: { location: 'http://127.0.0.1:9/s?upload_id=1' } });

  it('POSTs a JSON body naming the object, and sends X-Upload-Content-Type only when given a contentType', async () => {
    const server = await scriptedSession(ok);
    await gcsStartResumableUpload({ bucket: 'b', name: 'dir/o.txt', token: 't', baseUrl: server.base, ...quick });
    const [post] = server.requests;
    expect(post?.text).toBe('{"name":"dir/o.txt"}');
    expect(post?.headers['content-type']).toBe('application/json; charset=UTF-8');
    expect(post?.headers).not.toHaveProperty('x-upload-content-type');
  });

  it('posts to storage.googleapis.com by default, and drops any trailing slashes of baseUrl', async () => {
    const urls: string[] = [];
    const fn: typeof fetch = async (input) => {
      urls.push(String(input));
      return new Response(null, { status: 200, headers: { location: 'http://x.test/s' } });
    };
    await gcsStartResumableUpload({ bucket: 'b', name: 'n', token: 't', fetch: fn });
    await gcsStartResumableUpload({ bucket: 'b', name: 'n', token: 't', fetch: fn, baseUrl: 'http://x.test//' });
    expect(urls).toEqual([
      'https://storage.googleapis.com/upload/storage/v1/b/b/o?uploadType=resumable&name=n',
      'http://x.test/upload/storage/v1/b/b/o?uploadType=resumable&name=n',
    ]);
  });

  it('rejects a 200 without a Location with its HttpStatusError (POST)', async () => {
    const server = await scriptedSession(() => ({ status: 200 }));
    const error = (await gcsStartResumableUpload({ bucket: 'b', name: 'n', token: 't', baseUrl: server.base, ...quick }).catch(
      (e: unknown) => e,
    )) as HttpStatusError;
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error.status).toBe(200);
    expect(error.message).toBe('HTTP 200 OK (POST)');
  });

  it('leaves out of the query a precondition given as undefined or null, and preconditions: null', async () => {
    const server = await scriptedSession(ok);
    const target = { bucket: 'b', name: 'n', token: 't', baseUrl: server.base, ...quick };
    await gcsStartResumableUpload({ ...target, preconditions: { ifGenerationMatch: undefined, ifMetagenerationMatch: null } } as never);
    await gcsStartResumableUpload({ ...target, preconditions: null } as never);
    expect(server.requests.map((r) => r.url.search)).toEqual(['?uploadType=resumable&name=n', '?uploadType=resumable&name=n']);
  });

  it('refuses a header value that is not a string for that reason, whatever fetch would make of it', async () => {
    await expect(gcsStartResumableUpload({ bucket: 'b', name: 'n', token: 't', headers: { 'x-a': Symbol('s') } } as never)).rejects.toThrow(
      'gcsStartResumableUpload: target.headers["x-a"] must be a string, got ',
    );
  });
});
