// Download resume in retryFetch. The byte tests run on real loopback sockets against a server
// that behaves like Google's storage testbench (test/fetch/testbench.ts), with 1 ms backoff;
// the timing tests run in virtual time with an injected fetch whose bodies break on cue.
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpStatusError, ResumeError, RetryError, type RetryEvent } from '../../src/index.js';
import { type RetryFetchOptions, retryFetch } from '../../src/fetch/index.js';
import { gcs } from '../../src/google/index.js';
import { bodyBuffer } from '../../src/fetch/resume.js';
import { googHash } from '../transfer/crc32c-reference.js';
import { track, useVirtualClock } from '../helpers/clock.js';
import { type Loopback, startLoopback } from '../helpers/loopback.js';
import { type Testbench, pattern, startTestbench } from './testbench.js';

const KiB = 1024;
const quick: RetryFetchOptions = { backoff: { initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitter: 'none' }, deadlineMs: 10_000 };

const benches: Testbench[] = [];
afterEach(async () => {
  await Promise.all(benches.splice(0).map((bench) => bench.close()));
});

async function bench(name: string, data: Buffer, generation = '1700000000000001'): Promise<Testbench> {
  const tb = await startTestbench();
  benches.push(tb);
  tb.objects.set(name, { data, generation });
  return tb;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/** Every GET the server saw: its Range header (or null) and the bytes it sent back. */
const gets = (tb: Testbench) =>
  tb.seen.filter((s) => s.method === 'GET').map((s) => ({ range: s.headers.range ?? null, sent: s.sentBytes }));

describe('retryFetch resumes a broken download on loopback', () => {
  it('conformance scenario 8 (downloads_handle_complex_retries, return-broken-stream-after-256K): resumes with Range: bytes=262144-', async () => {
    const data = pattern(1024 * KiB);
    const tb = await bench('big.bin', data);
    tb.downloadFaults.push({ breakAfter: 256 * KiB });
    const res = await retryFetch(tb.mediaUrl('big.bin'), undefined, { ...gcs({ operation: 'objects.get' }), ...quick });
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.equals(data)).toBe(true);
    expect(gets(tb)).toEqual([
      { range: null, sent: 256 * KiB },
      { range: 'bytes=262144-', sent: 768 * KiB },
    ]);
    // Cloud Storage pins the version by generation, in the query.
    expect(tb.seen[1]?.url.searchParams.get('generation')).toBe('1700000000000001');
    // Nothing was downloaded twice: the bytes sent add up to the object.
    expect(gets(tb).reduce((sum, g) => sum + g.sent, 0)).toBe(data.length);
  });

  it('continues the same stream for res.body.getReader(), across two breaks', async () => {
    const data = pattern(600 * KiB);
    const tb = await bench('o', data);
    tb.downloadFaults.push({ breakAfter: 100 * KiB }, { breakAfter: 200 * KiB });
    const res = await retryFetch(tb.mediaUrl('o'), undefined, quick);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    expect(Buffer.concat(chunks).equals(data)).toBe(true);
    expect(gets(tb).map((g) => g.range)).toEqual([null, `bytes=${100 * KiB}-`, `bytes=${300 * KiB}-`]);
    expect(res.url).toBe(tb.mediaUrl('o'));
  });

  it('text() works too, and a plain server gets If-Unmodified-Since from Last-Modified', async () => {
    const data = Buffer.from('x'.repeat(300 * KiB));
    const tb = await bench('plain', data);
    (tb.objects.get('plain') as { lastModifiedOnly?: boolean }).lastModifiedOnly = true;
    tb.downloadFaults.push({ breakAfter: 64 * KiB });
    const res = await retryFetch(tb.mediaUrl('plain'), undefined, quick);
    expect(await res.text()).toBe(data.toString());
    expect(tb.seen[1]?.headers['if-unmodified-since']).toBe('Tue, 01 Sep 2026 10:00:00 GMT');
    expect(tb.seen[1]?.headers.range).toBe(`bytes=${64 * KiB}-`);
  });

  it('sends If-Match with the strong ETag when there is no generation', async () => {
    const data = pattern(200 * KiB);
    const tb = await bench('e', data);
    tb.downloadFaults.push({ breakAfter: 50 * KiB });
    // A fetch that hides x-goog-generation: the server looks like any web server with ETags.
    const noGeneration: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const headers = new Headers(res.headers);
      headers.delete('x-goog-generation');
      return new Response(res.body, { status: res.status, headers });
    };
    const res = await retryFetch(tb.mediaUrl('e'), undefined, { ...quick, fetch: noGeneration });
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    expect(tb.seen[1]?.headers['if-match']).toBe('"1700000000000001"');
    expect(tb.seen[1]?.url.searchParams.has('generation')).toBe(false);
  });

  it('fails the stream with ResumeError "changed" when the object was overwritten (If-Match → 412)', async () => {
    const tb = await bench('c', pattern(200 * KiB));
    tb.downloadFaults.push({ breakAfter: 50 * KiB });
    const noGeneration: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      // Overwritten between the first request and the resume.
      tb.objects.set('c', { data: pattern(10), generation: '2' });
      const headers = new Headers(res.headers);
      headers.delete('x-goog-generation');
      return new Response(res.body, { status: res.status, headers });
    };
    const res = await retryFetch(tb.mediaUrl('c'), undefined, { ...quick, fetch: noGeneration });
    const error = await rejection(res.arrayBuffer());
    expect(error).toBeInstanceOf(ResumeError);
    expect((error as ResumeError).reason).toBe('changed');
    expect((error as ResumeError).message).toMatch(/changed since the download began.*412/);
    expect(gets(tb)).toHaveLength(2);
  });

  it('fails the stream with ResumeError "changed" when the 206 carries another ETag', async () => {
    const tb = await bench('d', pattern(200 * KiB));
    tb.downloadFaults.push({ breakAfter: 50 * KiB });
    let calls = 0;
    const otherEtag: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (++calls === 1) return res;
      const headers = new Headers(res.headers);
      headers.set('etag', '"another"');
      return new Response(res.body, { status: res.status, headers });
    };
    const res = await retryFetch(tb.mediaUrl('d'), undefined, { ...quick, fetch: otherEtag });
    const error = (await rejection(res.text())) as ResumeError;
    expect(error.reason).toBe('changed');
    expect(error.receivedBytes).toBe(50 * KiB);
  });

  it('fails with ResumeError "range-ignored" when a server ignores Range after bytes were read', async () => {
    const tb = await bench('r', pattern(200 * KiB));
    tb.downloadFaults.push({ breakAfter: 50 * KiB }, 'ignore-range');
    const res = await retryFetch(tb.mediaUrl('r'), undefined, quick);
    const error = (await rejection(res.arrayBuffer())) as ResumeError;
    expect(error).toBeInstanceOf(ResumeError);
    expect(error.reason).toBe('range-ignored');
    expect(error.message).toContain('ignored "Range: bytes=51200-"');
  });

  it('restarts from 0 when a server ignores Range before any byte was read', async () => {
    const data = pattern(200 * KiB);
    const tb = await bench('z', data);
    tb.downloadFaults.push({ breakAfter: 0 }, 'ignore-range');
    const res = await retryFetch(tb.mediaUrl('z'), undefined, quick);
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    expect(gets(tb)).toEqual([
      { range: null, sent: 0 },
      { range: 'bytes=0-', sent: data.length },
    ]);
  });

  it('with bufferBody, the next attempt asks only for the rest; a server ignoring Range restarts the buffer', async () => {
    const data = pattern(300 * KiB);
    const tb = await bench('b', data);
    tb.downloadFaults.push({ breakAfter: 100 * KiB }, { breakAfter: 10 * KiB }, 'ignore-range');
    const res = await retryFetch(tb.mediaUrl('b'), undefined, { ...quick, bufferBody: true });
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    expect(gets(tb).map((g) => g.range)).toEqual([null, `bytes=${100 * KiB}-`, `bytes=${110 * KiB}-`]);
  });

  it('counts failures since the last progress: breaks that each bring new bytes never use up the attempts', async () => {
    const tb = await bench('a', pattern(300 * KiB));
    tb.downloadFaults.push({ breakAfter: 10 * KiB }, { breakAfter: 10 * KiB }, { breakAfter: 10 * KiB });
    const events: RetryEvent[] = [];
    const res = await retryFetch(tb.mediaUrl('a'), undefined, { ...quick, maxAttempts: 2, onRetry: (e) => events.push(e) });
    expect(Buffer.from(await res.arrayBuffer()).equals(pattern(300 * KiB))).toBe(true);
    expect(gets(tb).map((g) => g.range)).toEqual([null, `bytes=${10 * KiB}-`, `bytes=${20 * KiB}-`, `bytes=${30 * KiB}-`]);
    // Numbered as the call's attempts: the breaks of attempts 1, 2 and 3 were retried.
    expect(events.map((e) => [e.attempt, (e.error as Error).message])).toEqual([
      [1, 'terminated'],
      [2, 'terminated'],
      [3, 'terminated'],
    ]);
  });

  it('out of attempts without progress: the stream fails with RetryError "attempts", numbered as the call\'s', async () => {
    const tb = await bench('a', pattern(300 * KiB));
    tb.downloadFaults.push({ breakAfter: 10 * KiB }, { breakAfter: 0 }, { breakAfter: 0 });
    const events: RetryEvent[] = [];
    const res = await retryFetch(tb.mediaUrl('a'), undefined, { ...quick, maxAttempts: 3, onRetry: (e) => events.push(e) });
    const error = (await rejection(res.arrayBuffer())) as RetryError;
    expect(error).toBeInstanceOf(RetryError);
    expect(error.reason).toBe('attempts');
    expect((error.cause as Error).message).toBe('terminated');
    expect(gets(tb).map((g) => g.range)).toEqual([null, `bytes=${10 * KiB}-`, `bytes=${10 * KiB}-`]);
    expect(error.attempts).toBe(3);
    expect(events.map((e) => e.attempt)).toEqual([1, 2]);
  });

  it('with resume: false, hands the broken body over as fetch does', async () => {
    const tb = await bench('f', pattern(200 * KiB));
    tb.downloadFaults.push({ breakAfter: 10 * KiB });
    const res = await retryFetch(tb.mediaUrl('f'), undefined, { ...quick, resume: false });
    expect(((await rejection(res.arrayBuffer())) as Error).message).toBe('terminated');
    expect(gets(tb)).toHaveLength(1);
  });

  it('does not resume after the caller aborted: the body fails with the reason', async () => {
    const tb = await bench('s', pattern(2048 * KiB));
    const controller = new AbortController();
    const res = await retryFetch(tb.mediaUrl('s'), { signal: controller.signal }, quick);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    const reason = new Error('enough');
    controller.abort(reason);
    let error: unknown;
    try {
      for (let r = await reader.read(); !r.done; r = await reader.read());
    } catch (e) {
      error = e;
    }
    expect(error).toBe(reason);
    expect(gets(tb)).toHaveLength(1);
  });

  it('does not resume a request that carries its own Range, nor a content-encoded body', async () => {
    const tb = await bench('n', pattern(200 * KiB));
    tb.downloadFaults.push({ breakAfter: 10 * KiB }, { breakAfter: 10 * KiB });
    const own = await retryFetch(tb.mediaUrl('n'), { headers: { range: 'bytes=0-' } }, quick);
    expect(((await rejection(own.arrayBuffer())) as Error).message).toBe('terminated');
    // fetch decodes a gzip body: its offsets are not the ones a Range counts.
    const gzipped: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const headers = new Headers(res.headers);
      headers.set('content-encoding', 'gzip');
      return new Response(res.body, { status: res.status, headers });
    };
    const encoded = await retryFetch(tb.mediaUrl('n'), undefined, { ...quick, fetch: gzipped });
    expect(((await rejection(encoded.arrayBuffer())) as Error).message).toBe('terminated');
    expect(gets(tb)).toHaveLength(2);
  });

  it('rejects a bad resume option, naming it', async () => {
    await expect(retryFetch('http://127.0.0.1:9/', undefined, { resume: 'yes' as unknown as boolean })).rejects.toThrow(
      'retryFetch: options.resume must be a boolean, got "yes"',
    );
  });
});

describe('retryFetch resume in virtual time', () => {
  const clock = useVirtualClock();

  /** A 200 whose body sends `bytes` bytes, then breaks with `error` (or ends when error is undefined). */
  function breaking(bytes: number, error: Error | undefined, headers: Record<string, string>, status = 200): Response {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(bytes).fill(0x61));
      },
      // The break (or the end) comes once the bytes were read: an error would drop queued chunks.
      pull(controller) {
        if (error === undefined) controller.close();
        else controller.error(error);
      },
    });
    return new Response(body, { status, headers });
  }

  /**
   * retryFetch over a fetch whose every answer is a 200 of 20 bytes that breaks after 10, with a
   * 1 s backoff: a body that waits a second to resume. `calls()` counts the requests sent.
   */
  async function waitingToResume(options: RetryFetchOptions = {}) {
    let calls = 0;
    const fn: typeof fetch = async () => {
      calls++;
      return breaking(10, new TypeError('terminated'), { etag: '"v1"', 'content-length': '20' });
    };
    const res = await retryFetch('http://x.test/', undefined, {
      fetch: fn,
      backoff: { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 10_000, jitter: 'none' },
      ...options,
    });
    return { res, calls: () => calls };
  }

  it('waits the backoff before the resumed request, as after any failed attempt', async () => {
    const requests: Array<{ at: number; range: string | null }> = [];
    const fn: typeof fetch = async (_input, init) => {
      const range = new Headers(init?.headers).get('range');
      requests.push({ at: Date.now(), range });
      return range === null
        ? breaking(10, new TypeError('terminated'), { etag: '"v1"', 'content-length': '20' })
        : breaking(10, undefined, { etag: '"v1"', 'content-range': 'bytes 10-19/20' }, 206);
    };
    const res = await retryFetch('http://x.test/', undefined, {
      fetch: fn,
      backoff: { initialDelayMs: 500, multiplier: 2, maxDelayMs: 10_000, jitter: 'none' },
    });
    const text = track(res.text());
    await clock.tickAsync(499);
    expect(requests).toEqual([{ at: 0, range: null }]);
    await clock.tickAsync(1);
    expect(requests).toEqual([
      { at: 0, range: null },
      { at: 500, range: 'bytes=10-' },
    ]);
    await clock.runAllAsync();
    expect(text.state).toBe('resolved');
    expect(text.value).toBe('a'.repeat(20));
  });

  it("stops at once when the caller aborts during a resume's backoff: the body fails with the reason, nothing sent", async () => {
    const controller = new AbortController();
    const { res, calls } = await waitingToResume({ signal: controller.signal });
    const text = track(res.text());
    await clock.tickAsync(400);
    const reason = new Error('shutting down');
    controller.abort(reason);
    await clock.tickAsync(0);
    expect(text.state).toBe('rejected');
    expect(text.error).toBe(reason);
    await clock.runAllAsync();
    expect(calls()).toBe(1);
  });

  it('resolves a cancel during the resume wait and sends nothing more (item 10: no stale "terminated" rejection)', async () => {
    const { res, calls } = await waitingToResume();
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).value?.byteLength).toBe(10);
    const pending = track(reader.read());
    await clock.tickAsync(400);
    const cancelled = track(reader.cancel(new Error('not needed')));
    await clock.tickAsync(0);
    expect(cancelled.state).toBe('resolved');
    await clock.runAllAsync();
    expect(pending.state).toBe('resolved');
    expect(calls()).toBe(1);
  });

  it('resumes a body that ended cleanly before its Content-Length, as after a break', async () => {
    const ranges: Array<string | null> = [];
    const fn: typeof fetch = async (_input, init) => {
      const range = new Headers(init?.headers).get('range');
      ranges.push(range);
      return range === null
        ? breaking(10, undefined, { etag: '"v1"', 'content-length': '20' })
        : breaking(10, undefined, { etag: '"v1"', 'content-range': 'bytes 10-19/20' }, 206);
    };
    const events: RetryEvent[] = [];
    const res = await retryFetch('http://x.test/', undefined, {
      fetch: fn,
      backoff: { initialDelayMs: 10, multiplier: 1, maxDelayMs: 10, jitter: 'none' },
      onRetry: (e) => events.push(e),
    });
    const text = track(res.text());
    await clock.runAllAsync();
    expect(text.value).toBe('a'.repeat(20));
    expect(ranges).toEqual([null, 'bytes=10-']);
    expect(events.map((e) => (e.error as Error).message)).toEqual(['the body ended after 10 bytes, before the end its headers declared']);
  });

  it('cancels the answer to a resume that arrives after the body was cancelled', async () => {
    let answered: Response | undefined;
    const fn: typeof fetch = async (_input, init) => {
      if (new Headers(init?.headers).get('range') === null) {
        return breaking(10, new TypeError('terminated'), { etag: '"v1"', 'content-length': '20' });
      }
      // The answer takes 500 ms to come: the reader cancels meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 500));
      answered = breaking(10, undefined, { etag: '"v1"', 'content-range': 'bytes 10-19/20' }, 206);
      return answered;
    };
    const res = await retryFetch('http://x.test/', undefined, {
      fetch: fn,
      backoff: { initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitter: 'none' },
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    const pending = track(reader.read());
    await clock.tickAsync(100);
    await reader.cancel(new Error('enough'));
    await clock.runAllAsync();
    expect(pending.state).not.toBe('pending');
    // Nobody will read it: its body was cancelled (a cancelled stream reads as done at once).
    expect(answered).toBeDefined();
    const left = await ((answered as Response).body as ReadableStream<Uint8Array>).getReader().read();
    expect(left.done).toBe(true);
  });

  it("rejects an aborted pipeTo with the caller's reason during the resume wait (item 10)", async () => {
    const { res, calls } = await waitingToResume();
    const controller = new AbortController();
    const piped = track((res.body as ReadableStream<Uint8Array>).pipeTo(new WritableStream(), { signal: controller.signal }));
    await clock.tickAsync(400);
    const reason = new Error('user left');
    controller.abort(reason);
    await clock.runAllAsync();
    expect(piped.state).toBe('rejected');
    expect(piped.error).toBe(reason);
    expect(calls()).toBe(1);
  });

  it("keeps an abandoned attempt's late bytes out of the bufferBody buffer (item 13)", async () => {
    const ranges: Array<string | null> = [];
    /** A body that sends `parts` ([delay ms, text]) and then ends or breaks, whatever its fetch's signal says. */
    const timed = (parts: Array<[number, string]>, end: 'close' | 'break', status: number, headers: Record<string, string>) => {
      let cancelled = false;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          let at = 0;
          for (const [delay, text] of parts) {
            at += delay;
            setTimeout(() => {
              if (!cancelled) controller.enqueue(new TextEncoder().encode(text));
            }, at);
          }
          setTimeout(() => {
            if (cancelled) return;
            if (end === 'close') controller.close();
            else controller.error(new TypeError('terminated'));
          }, at + 1);
        },
        cancel() {
          cancelled = true;
        },
      });
      return new Response(body, { status, headers });
    };
    const fn: typeof fetch = async (_input, init) => {
      ranges.push(new Headers(init?.headers).get('range'));
      // The first attempt: 5 bytes, then 5 more long after its 100 ms timeout, then a break.
      if (ranges.length === 1)
        return timed(
          [
            [0, 'aaaaa'],
            [150, 'xxxxx'],
          ],
          'break',
          200,
          { etag: '"v1"', 'content-length': '20' },
        );
      return timed(
        [
          [20, 'bbbbb'],
          [60, 'b'.repeat(10)],
        ],
        'close',
        206,
        { etag: '"v1"', 'content-range': 'bytes 5-19/20' },
      );
    };
    const call = track(
      retryFetch('http://x.test/', undefined, {
        fetch: fn,
        bufferBody: true,
        attemptTimeoutMs: 100,
        backoff: { initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitter: 'none' },
      }),
    );
    await clock.runAllAsync();
    expect(call.state).toBe('resolved');
    expect(await call.value?.text()).toBe(`aaaaa${'b'.repeat(15)}`);
    expect(ranges).toEqual([null, 'bytes=5-']);
  });

  /** A 20-byte body (ETag "v1") that sends `first` bytes, then breaks 2 s later; a resume gets the rest. */
  function slowBreak(first: number) {
    const calls: Headers[] = [];
    const fn: typeof fetch = async (_input, init) => {
      calls.push(new Headers(init?.headers));
      if (calls.length > 1) {
        return new Response(new Uint8Array(10), {
          status: 206,
          headers: { etag: '"v1"', 'content-range': 'bytes 10-19/20', 'content-length': '10' },
        });
      }
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          if (first > 0) controller.enqueue(new Uint8Array(first));
        },
        pull(controller) {
          // The break comes 2 s after the headers: past the 1 s deadline.
          return new Promise((resolve) => setTimeout(resolve, 2000)).then(() => controller.error(new TypeError('terminated')));
        },
      });
      return new Response(body, { headers: { etag: '"v1"', 'content-length': '20' } });
    };
    return { fn, calls };
  }

  it('counts the limits from the last progress: a break after the deadline, after bytes arrived, is resumed', async () => {
    const { fn, calls } = slowBreak(10);
    const res = await retryFetch('http://x.test/', undefined, {
      fetch: fn,
      deadlineMs: 1000,
      backoff: { jitter: 'none', initialDelayMs: 10 },
    });
    const body = track(res.arrayBuffer());
    await clock.tickAsync(2100);
    expect(body.state).toBe('resolved');
    expect((body.value as ArrayBuffer).byteLength).toBe(20);
    expect(calls.map((h) => h.get('range'))).toEqual([null, 'bytes=10-']);
  });

  it('continues a part that ended at its Content-Range short of the whole at once: no failure, no backoff', async () => {
    const requests: Array<{ at: number; range: string | null }> = [];
    const fn: typeof fetch = async (_input, init) => {
      const range = new Headers(init?.headers).get('range');
      requests.push({ at: Date.now(), range });
      if (range === null) return breaking(10, new TypeError('terminated'), { etag: '"v1"', 'content-length': '20' });
      if (range === 'bytes=10-') return breaking(5, undefined, { etag: '"v1"', 'content-range': 'bytes 10-14/20' }, 206);
      return breaking(5, undefined, { etag: '"v1"', 'content-range': 'bytes 15-19/20' }, 206);
    };
    const retries: RetryEvent[] = [];
    const res = await retryFetch('http://x.test/', undefined, {
      fetch: fn,
      backoff: { initialDelayMs: 500, multiplier: 2, maxDelayMs: 10_000, jitter: 'none' },
      onRetry: (e) => retries.push(e),
    });
    const text = track(res.text());
    await clock.runAllAsync();
    expect(text.value).toBe('a'.repeat(20));
    expect(requests).toEqual([
      { at: 0, range: null },
      { at: 500, range: 'bytes=10-' },
      { at: 500, range: 'bytes=15-' },
    ]);
    expect(retries).toHaveLength(1);
  });

  it('keeps the status line and headers of the first response on the resuming one', async () => {
    const fn: typeof fetch = async () =>
      new Response(new Uint8Array(20), {
        status: 200,
        statusText: 'Fine',
        headers: { etag: '"v1"', 'content-type': 'application/x-test' },
      });
    const res = await retryFetch('http://x.test/', undefined, { fetch: fn });
    expect(res.status).toBe(200);
    expect(res.statusText).toBe('Fine');
    expect(res.headers.get('content-type')).toBe('application/x-test');
    expect(res.headers.get('etag')).toBe('"v1"');
    expect((await res.arrayBuffer()).byteLength).toBe(20);
  });

  it('reads nothing of the body before the caller does: what was received is what was handed over', async () => {
    let pulls = 0;
    const fn: typeof fetch = async () => {
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            pulls++;
            controller.enqueue(new Uint8Array(10));
            if (pulls === 2) controller.close();
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { headers: { etag: '"v1"', 'content-length': '20' } });
    };
    const res = await retryFetch('http://x.test/', undefined, { fetch: fn });
    await clock.tickAsync(10);
    expect(pulls).toBe(0);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).value?.byteLength).toBe(10);
    expect(pulls).toBe(1);
  });

  it('does not resume a success other than 200, nor a response without a body', async () => {
    let calls = 0;
    const fn: typeof fetch = async (input) => {
      calls++;
      // A fetch double's 200 without a body, such as fetch gives only for HEAD.
      if (String(input).endsWith('/empty')) return new Response(null, { headers: { etag: '"v1"' } });
      return breaking(10, new TypeError('terminated'), { etag: '"v1"', 'content-length': '20' }, 203);
    };
    const other = await retryFetch('http://x.test/', undefined, { fetch: fn });
    const read = track(other.arrayBuffer());
    await clock.runAllAsync();
    expect((read.error as Error).message).toBe('terminated');
    expect(calls).toBe(1);
    const empty = await retryFetch('http://x.test/empty', undefined, { fetch: fn });
    expect(empty.body).toBeNull();
    expect(empty.headers.get('etag')).toBe('"v1"');
  });

  it("fails an unpinned body with the caller's reason when the caller aborts it, not with a resume refusal", async () => {
    const fn: typeof fetch = async (_input, init) => {
      const signal = init?.signal as AbortSignal;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array(10));
          signal.addEventListener('abort', () => controller.error(signal.reason));
        },
      });
      return new Response(body, { headers: { 'content-length': '20' } });
    };
    const controller = new AbortController();
    const res = await retryFetch('http://x.test/', { signal: controller.signal }, { fetch: fn });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).value?.byteLength).toBe(10);
    const rest = track(reader.read());
    const reason = new Error('enough');
    controller.abort(reason);
    await clock.runAllAsync();
    expect(rest.error).toBe(reason);
  });

  it('a break with no progress since the call began keeps its deadline: RetryError "deadline", no request sent', async () => {
    const { fn, calls } = slowBreak(0);
    const res = await retryFetch('http://x.test/', undefined, { fetch: fn, deadlineMs: 1000 });
    const text = track(res.text());
    await clock.tickAsync(2000);
    expect(text.state).toBe('rejected');
    const error = text.error as RetryError;
    expect(error).toBeInstanceOf(RetryError);
    expect(error.reason).toBe('deadline');
    expect(calls).toHaveLength(1);
  });
});

describe('retryFetch resume: what a resumed answer must be (injected fetch, real Responses)', () => {
  /** First answer: a 200 of 20 bytes with `headers` that breaks after 10; then `next` for each resume. */
  function script(headers: Record<string, string>, next: Array<() => Response>) {
    const seen: Headers[] = [];
    const urls: string[] = [];
    const fn: typeof fetch = async (input, init) => {
      seen.push(new Headers(init?.headers));
      urls.push(String(input));
      if (seen.length === 1) {
        const body = new ReadableStream<Uint8Array>({
          start: (c) => c.enqueue(new Uint8Array(10).fill(0x61)),
          pull: (c) => c.error(new TypeError('terminated')),
        });
        return new Response(body, { headers: { 'content-length': '20', ...headers } });
      }
      return (next[seen.length - 2] ?? (() => new Response('?', { status: 500 })))();
    };
    return { fn, seen, urls };
  }
  const partial =
    (headers: Record<string, string>, status = 206) =>
    () =>
      new Response('b'.repeat(10), { status, headers });

  it.each([
    ['starts elsewhere', { 'content-range': 'bytes 0-19/20' }],
    ['has no Content-Range', {}],
    ['is of another length', { 'content-range': 'bytes 10-29/30' }],
  ])('fails with "bad-range" when the 206 %s', async (_what, headers) => {
    const { fn } = script({ etag: '"v1"' }, [partial(headers)]);
    const res = await retryFetch('http://x.test/o', undefined, { ...quick, fetch: fn });
    const error = (await rejection(res.text())) as ResumeError;
    expect(error).toBeInstanceOf(ResumeError);
    expect(error.reason).toBe('bad-range');
  });

  it('fails with "changed" when the 206 is of another generation', async () => {
    const { fn, urls } = script({ 'x-goog-generation': '7' }, [partial({ 'content-range': 'bytes 10-19/20', 'x-goog-generation': '8' })]);
    const res = await retryFetch('http://x.test/o?alt=media', undefined, { ...quick, fetch: fn });
    expect(((await rejection(res.text())) as ResumeError).reason).toBe('changed');
    expect(urls[1]).toBe('http://x.test/o?alt=media&generation=7');
  });

  it('takes no weak ETag as a validator: If-Unmodified-Since from Last-Modified instead', async () => {
    const lastModified = 'Mon, 01 Jun 2026 00:00:00 GMT';
    const { fn, seen } = script({ etag: 'W/"v1"', 'last-modified': lastModified }, [partial({ 'content-range': 'bytes 10-19/20' })]);
    const res = await retryFetch('http://x.test/o', undefined, { ...quick, fetch: fn });
    expect(await res.text()).toBe('a'.repeat(10) + 'b'.repeat(10));
    expect(seen[1]?.get('if-match')).toBeNull();
    expect(seen[1]?.get('if-unmodified-since')).toBe(lastModified);
    expect(seen[1]?.get('range')).toBe('bytes=10-');
  });

  it('retries a 503 to the resume request like any retryable answer; a 404 fails the body with its HttpStatusError', async () => {
    const ok = script({ etag: '"v1"' }, [
      () => new Response('busy', { status: 503 }),
      partial({ 'content-range': 'bytes 10-19/20', etag: '"v1"' }),
    ]);
    const res = await retryFetch('http://x.test/o', { headers: { 'x-kept': 'yes' } }, { ...quick, fetch: ok.fn });
    expect(await res.text()).toBe('a'.repeat(10) + 'b'.repeat(10));
    expect(ok.seen.map((h) => h.get('range'))).toEqual([null, 'bytes=10-', 'bytes=10-']);
    // The caller's own headers go with every resume request.
    expect(ok.seen[2]?.get('x-kept')).toBe('yes');
    const gone = script({ etag: '"v1"' }, [() => new Response('gone', { status: 404 })]);
    const res2 = await retryFetch('http://x.test/o', undefined, { ...quick, fetch: gone.fn });
    const error = (await rejection(res2.text())) as HttpStatusError;
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error.status).toBe(404);
  });
});

describe('a length the server never states (206 with "Content-Range: bytes N-M/*"), on loopback', () => {
  const data = pattern(3500);
  const part = 1000;
  /**
   * A server that never says how long the object is: its first answer is chunked (no
   * Content-Length) and breaks after one part; each 206 is at most one part, "/*"; a range that
   * starts at the end is answered 416 with the object's length, as RFC 9110 §15.5.17 asks.
   */
  async function unsized(): Promise<{ url: string; ranges: Array<string | null> }> {
    const ranges: Array<string | null> = [];
    const server = await startLoopback((req, res) => {
      ranges.push(req.headers.range ?? null);
      const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
      if (range === null) {
        res.writeHead(200, { etag: '"v1"' });
        res.write(data.subarray(0, part), () => res.destroy());
        return;
      }
      const start = Number(range[1]);
      if (start >= data.length) {
        // A body of its own, which is not the object's.
        res.writeHead(416, { 'content-range': `bytes */${data.length}`, 'content-type': 'text/plain' }).end('Range Not Satisfiable');
        return;
      }
      const end = Math.min(start + part, data.length) - 1;
      res.writeHead(206, { etag: '"v1"', 'content-range': `bytes ${start}-${end}/*`, 'content-length': String(end - start + 1) });
      res.end(data.subarray(start, end + 1));
    });
    loopbacks.push(server);
    return { url: server.url, ranges };
  }
  const loopbacks: Loopback[] = [];
  afterEach(async () => {
    await Promise.all(loopbacks.splice(0).map((server) => server.close()));
  });

  it('takes no "/*" part for the end of the object: asks on until a 416 says where it ends, and reads every byte', async () => {
    const server = await unsized();
    const res = await retryFetch(server.url, undefined, quick);
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    // The last part ends at byte 3499, and only the 416 to "bytes=3500-" says nothing follows.
    expect(server.ranges.slice(-2)).toEqual(['bytes=3000-', 'bytes=3500-']);
  });

  it('does the same with bufferBody', async () => {
    const server = await unsized();
    const res = await retryFetch(server.url, undefined, { ...quick, bufferBody: true });
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    expect(server.ranges.slice(-2)).toEqual(['bytes=3000-', 'bytes=3500-']);
  });

  it('cancels the body of the 416 that ends the object, streamed or buffered, and reads none of it (nor needs one)', async () => {
    for (const [bufferBody, withBody] of [
      [false, true],
      [true, true],
      [false, false],
      [true, false],
    ]) {
      let cancelled = 0;
      const fn: typeof fetch = async (_input, init) => {
        const range = new Headers(init?.headers).get('range');
        if (range === null) {
          // 10 bytes of a length never stated, then a break.
          const first = new ReadableStream<Uint8Array>({
            start: (controller) => controller.enqueue(new Uint8Array(10).fill(0x61)),
            pull: (controller) => controller.error(new TypeError('terminated')),
          });
          return new Response(first, { headers: { etag: '"v1"' } });
        }
        const body = new ReadableStream<Uint8Array>({
          pull: (controller) => controller.enqueue(new TextEncoder().encode('not the object')),
          cancel: () => {
            cancelled++;
          },
        });
        return new Response(withBody ? body : null, { status: 416, headers: { 'content-range': 'bytes */10' } });
      };
      const res = await retryFetch('http://x.test/', undefined, { ...quick, fetch: fn, bufferBody });
      expect(await res.text()).toBe('a'.repeat(10));
      expect(cancelled).toBe(withBody ? 1 : 0);
    }
  });
});

describe('the integrity rule: the bytes of one version of the object, exactly, or an error', () => {
  /** A fetch through which the testbench looks like a server without validators, the object overwritten after the first answer. */
  function unpinnedServer(tb: Testbench, name: string, next: Buffer) {
    let calls = 0;
    const fn: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (++calls === 1) tb.objects.set(name, { data: next, generation: '2' });
      const headers = new Headers(res.headers);
      for (const key of ['etag', 'x-goog-generation', 'last-modified']) headers.delete(key);
      return new Response(res.body, { status: res.status, headers });
    };
    return fn;
  }

  it('fails a stream that broke after bytes were handed over when nothing pins the version (item 1: no splice of two versions)', async () => {
    const v1 = pattern(200 * KiB);
    const tb = await bench('u', v1);
    tb.downloadFaults.push({ breakAfter: 50 * KiB });
    const res = await retryFetch(tb.mediaUrl('u'), undefined, { ...quick, fetch: unpinnedServer(tb, 'u', Buffer.alloc(200 * KiB, 0x7a)) });
    const error = (await rejection(res.arrayBuffer())) as ResumeError;
    expect(error).toBeInstanceOf(ResumeError);
    expect(error.reason).toBe('unpinned');
    expect(error.message).toBe(
      `resume: cannot continue the download after ${50 * KiB} bytes: the first response carries no ETag, Last-Modified or x-goog-generation, so the rest could be of another version`,
    );
    expect(error.receivedBytes).toBe(50 * KiB);
    expect((error.cause as Error).message).toBe('terminated');
    expect(gets(tb)).toHaveLength(1);
  });

  it('starts over when nothing pins the version and the body broke before its first byte: nothing was handed over', async () => {
    const v2 = Buffer.alloc(200 * KiB, 0x7a);
    const tb = await bench('u0', pattern(200 * KiB));
    tb.downloadFaults.push({ breakAfter: 0 });
    const res = await retryFetch(tb.mediaUrl('u0'), undefined, { ...quick, fetch: unpinnedServer(tb, 'u0', v2) });
    expect(Buffer.from(await res.arrayBuffer()).equals(v2)).toBe(true);
    expect(gets(tb).map((g) => g.range)).toEqual([null, 'bytes=0-']);
  });

  it('with bufferBody, resumes a body that ended cleanly before its Content-Length', async () => {
    const ranges: Array<string | null> = [];
    const fn: typeof fetch = async (_input, init) => {
      const range = new Headers(init?.headers).get('range');
      ranges.push(range);
      return range === null
        ? new Response('a'.repeat(10), { headers: { etag: '"v1"', 'content-length': '20' } })
        : new Response('b'.repeat(10), { status: 206, headers: { etag: '"v1"', 'content-range': 'bytes 10-19/20' } });
    };
    const events: RetryEvent[] = [];
    const res = await retryFetch('http://x.test/o', undefined, { ...quick, fetch: fn, bufferBody: true, onRetry: (e) => events.push(e) });
    expect(await res.text()).toBe(`${'a'.repeat(10)}${'b'.repeat(10)}`);
    expect(ranges).toEqual([null, 'bytes=10-']);
    expect(events.map((e) => (e.error as Error).message)).toEqual(['the body ended after 10 bytes, before the end its headers declared']);
  });

  it('with bufferBody, starts over whole when nothing pins the version: the new version, exactly', async () => {
    const v2 = Buffer.alloc(200 * KiB, 0x7a);
    const tb = await bench('ub', pattern(200 * KiB));
    tb.downloadFaults.push({ breakAfter: 50 * KiB });
    const res = await retryFetch(tb.mediaUrl('ub'), undefined, { ...quick, bufferBody: true, fetch: unpinnedServer(tb, 'ub', v2) });
    expect(Buffer.from(await res.arrayBuffer()).equals(v2)).toBe(true);
    expect(gets(tb).map((g) => g.range)).toEqual([null, null]);
  });

  /** First answer: a 200 of 20 bytes ('a' × 10, then a break) with `headers`; then `next` for each later request. */
  function script(headers: Record<string, string>, next: Array<() => Response>) {
    const ranges: Array<string | null> = [];
    const fn: typeof fetch = async (_input, init) => {
      ranges.push(new Headers(init?.headers).get('range'));
      if (ranges.length === 1) {
        const body = new ReadableStream<Uint8Array>({
          start: (c) => c.enqueue(new Uint8Array(10).fill(0x61)),
          pull: (c) => c.error(new TypeError('terminated')),
        });
        return new Response(body, { headers: { 'content-length': '20', ...headers } });
      }
      return (next[ranges.length - 2] ?? (() => new Response('?', { status: 500 })))();
    };
    return { fn, ranges };
  }
  const answer =
    (body: string, headers: Record<string, string>, status = 206) =>
    () =>
      new Response(body, { status, headers });

  it.each([false, true])(
    'asks for the rest after a 206 shorter than asked for (item 2, RFC 9110 §15.3.7), bufferBody %s',
    async (bufferBody) => {
      const { fn, ranges } = script({ etag: '"v1"' }, [
        answer('bbbbb', { etag: '"v1"', 'content-range': 'bytes 10-14/20' }),
        answer('ccccc', { etag: '"v1"', 'content-range': 'bytes 15-19/20' }),
      ]);
      const res = await retryFetch('http://x.test/o', undefined, { ...quick, fetch: fn, bufferBody });
      expect(await res.text()).toBe(`${'a'.repeat(10)}bbbbbccccc`);
      expect(ranges).toEqual([null, 'bytes=10-', 'bytes=15-']);
    },
  );

  /** A 206 for bytes 10-19 whose body sends 12 bytes and never ends; `cancelled` tells whether it was freed. */
  function overlong() {
    const state = { cancelled: false };
    const body = new ReadableStream<Uint8Array>({
      start: (c) => c.enqueue(new Uint8Array(12).fill(0x62)),
      cancel: () => {
        state.cancelled = true;
      },
    });
    return { state, answer: () => new Response(body, { status: 206, headers: { etag: '"v1"', 'content-range': 'bytes 10-19/20' } }) };
  }

  it('fails with "bad-range" when a 206 sends more bytes than its Content-Range, before handing any of them over, and frees it', async () => {
    const long = overlong();
    const { fn } = script({ etag: '"v1"' }, [long.answer]);
    const res = await retryFetch('http://x.test/o', undefined, { ...quick, fetch: fn });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).value?.byteLength).toBe(10);
    const error = (await rejection(reader.read())) as ResumeError;
    expect(error.reason).toBe('bad-range');
    expect(long.state.cancelled).toBe(true);
  });

  it('with bufferBody, fails the call on a 206 that sends more than its range, and frees it', async () => {
    const long = overlong();
    const { fn } = script({ etag: '"v1"' }, [long.answer]);
    const error = (await rejection(retryFetch('http://x.test/o', undefined, { ...quick, fetch: fn, bufferBody: true }))) as ResumeError;
    expect(error.reason).toBe('bad-range');
    expect(long.state.cancelled).toBe(true);
  });

  it('fails with "changed" when the 206 carries another Last-Modified, the only validator (item 3)', async () => {
    const { fn, ranges } = script({ 'last-modified': 'Mon, 01 Jun 2026 00:00:00 GMT' }, [
      answer('b'.repeat(10), { 'last-modified': 'Tue, 02 Jun 2026 00:00:00 GMT', 'content-range': 'bytes 10-19/20' }),
    ]);
    const res = await retryFetch('http://x.test/o', undefined, { ...quick, fetch: fn });
    const error = (await rejection(res.text())) as ResumeError;
    expect(error.reason).toBe('changed');
    expect(error.message).toContain('Last-Modified Mon, 01 Jun 2026 00:00:00 GMT → Tue, 02 Jun 2026 00:00:00 GMT');
    expect(ranges).toHaveLength(2);
  });

  it.each([
    ['carries a Content-Range', { 'content-range': 'bytes 4-19/20', 'content-length': '16' }, 'b'.repeat(16)],
    ['is of another length', { 'content-length': '16' }, 'b'.repeat(16)],
  ])('with bufferBody, refuses a 200 to the ranged retry that %s: not a restart (item 4)', async (_what, headers, body) => {
    const { fn } = script({ etag: '"v1"' }, [answer(body, { etag: '"v1"', ...headers }, 200)]);
    const error = (await rejection(retryFetch('http://x.test/o', undefined, { ...quick, fetch: fn, bufferBody: true }))) as ResumeError;
    expect(error).toBeInstanceOf(ResumeError);
    expect(error.reason).toBe('bad-range');
  });

  it.each([false, true])(
    "takes a 200 that names the range asked for as that range (storage testbench's answer after a broken stream), bufferBody %s",
    async (bufferBody) => {
      const { fn } = script({ etag: '"v1"' }, [
        answer('b'.repeat(10), { etag: '"v1"', 'content-range': 'bytes 10-19/20', 'content-length': '10' }, 200),
      ]);
      const res = await retryFetch('http://x.test/o', undefined, { ...quick, fetch: fn, bufferBody });
      expect(await res.text()).toBe(`${'a'.repeat(10)}${'b'.repeat(10)}`);
    },
  );

  it('restarts the buffer on a 200 of the whole object again (same version and length)', async () => {
    const { fn } = script({ etag: '"v1"' }, [answer('c'.repeat(20), { etag: '"v1"', 'content-length': '20' }, 200)]);
    const res = await retryFetch('http://x.test/o', undefined, { ...quick, fetch: fn, bufferBody: true });
    expect(await res.text()).toBe('c'.repeat(20));
  });

  it.each([false, true])(
    "checks a resumed Cloud Storage download against x-goog-hash's CRC32C (item 5), bufferBody %s",
    async (bufferBody) => {
      const object = new Uint8Array(20).fill(0x61);
      const good = script({ 'x-goog-generation': '7', 'x-goog-hash': googHash(object) }, [
        answer('a'.repeat(10), { 'x-goog-generation': '7', 'content-range': 'bytes 10-19/20' }),
      ]);
      const res = await retryFetch('http://x.test/o', undefined, { ...quick, fetch: good.fn, bufferBody });
      expect(await res.text()).toBe('a'.repeat(20));
      // Same generation, other bytes (a faulty cache or proxy): the checksum tells.
      const bad = script({ 'x-goog-generation': '7', 'x-goog-hash': googHash(object) }, [
        answer('b'.repeat(10), { 'x-goog-generation': '7', 'content-range': 'bytes 10-19/20' }),
      ]);
      const call = retryFetch('http://x.test/o', undefined, { ...quick, fetch: bad.fn, bufferBody });
      const error = (await rejection(bufferBody ? call : call.then((r) => r.text()))) as ResumeError;
      expect(error).toBeInstanceOf(ResumeError);
      expect(error.reason).toBe('checksum');
      expect(error.receivedBytes).toBe(20);
    },
  );

  it('takes no checksum from x-goog-hash when Cloud Storage decompressed the object (the hash is of the stored bytes)', async () => {
    const { fn } = script({ 'x-goog-generation': '7', 'x-goog-hash': 'crc32c=AAAAAA==', 'x-goog-stored-content-encoding': 'gzip' }, [
      answer('b'.repeat(10), { 'x-goog-generation': '7', 'content-range': 'bytes 10-19/20' }),
    ]);
    const res = await retryFetch('http://x.test/o', undefined, { ...quick, fetch: fn });
    expect(await res.text()).toBe('a'.repeat(10) + 'b'.repeat(10));
  });
});

describe('bodyBuffer: only the latest fill writes, and a fill leaves nothing behind', () => {
  /** A body whose chunks the test sends: `send(text)`, `end()`. */
  function controlled() {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
    });
    return {
      stream,
      send: (text: string) => controller.enqueue(new TextEncoder().encode(text)),
      end: () => controller.close(),
    };
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it("fails with the attempt's reason when its signal aborts mid-body", async () => {
    const body = controlled();
    const attempt = new AbortController();
    const filling = rejection(
      bodyBuffer().fill(new Response(body.stream, { headers: { etag: '"v1"', 'content-length': '20' } }), 'GET', attempt.signal),
    );
    body.send('a'.repeat(10));
    await settle();
    const reason = new Error('attempt timed out');
    attempt.abort(reason);
    expect(await filling).toBe(reason);
  });

  it("keeps a superseded fill's late bytes out of the buffer, even while its signal has not aborted", async () => {
    const buffer = bodyBuffer();
    const first = controlled();
    const stale = rejection(
      buffer.fill(new Response(first.stream, { headers: { etag: '"v1"', 'content-length': '20' } }), 'GET', new AbortController().signal),
    );
    first.send('a'.repeat(10));
    await settle();
    expect(buffer.next()?.headers.range).toBe('bytes=10-');
    const rest = controlled();
    const filling = buffer.fill(
      new Response(rest.stream, { status: 206, headers: { etag: '"v1"', 'content-range': 'bytes 10-19/20' } }),
      'GET',
      new AbortController().signal,
    );
    first.send('xxxxx');
    await settle();
    rest.send('b'.repeat(10));
    rest.end();
    expect(await (await filling)?.text()).toBe(`${'a'.repeat(10)}${'b'.repeat(10)}`);
    await stale;
  });

  it("does not let a superseded fill's failure start over the newer fill of an unpinned body", async () => {
    const buffer = bodyBuffer();
    const first = controlled();
    const stale = rejection(
      buffer.fill(new Response(first.stream, { headers: { 'content-length': '20' } }), 'GET', new AbortController().signal),
    );
    first.send('a'.repeat(10));
    await settle();
    // Unpinned: the next answer is the whole body again, from byte 0.
    const again = controlled();
    const filling = buffer.fill(new Response(again.stream, { headers: { 'content-length': '20' } }), 'GET', new AbortController().signal);
    again.send('b'.repeat(10));
    await settle();
    first.send('xxxxx');
    await stale;
    again.send('c'.repeat(10));
    again.end();
    expect(await (await filling)?.text()).toBe(`${'b'.repeat(10)}${'c'.repeat(10)}`);
  });

  it("leaves no listener on the attempt's signal once the fill is done, whether it succeeded or failed", async () => {
    const done = new AbortController();
    await bodyBuffer().fill(new Response('whole', { headers: { etag: '"v1"' } }), 'GET', done.signal);
    expect(getEventListeners(done.signal, 'abort')).toHaveLength(0);
    const failed = new AbortController();
    const short = controlled();
    const filling = rejection(
      bodyBuffer().fill(new Response(short.stream, { headers: { etag: '"v1"', 'content-length': '20' } }), 'GET', failed.signal),
    );
    short.send('a'.repeat(5));
    short.end();
    expect(((await filling) as Error).message).toBe('the body ended after 5 bytes, before the end its headers declared');
    expect(getEventListeners(failed.signal, 'abort')).toHaveLength(0);
  });
});
