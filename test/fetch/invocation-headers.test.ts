// Google's invocation headers (`x-goog-api-client: gccl-invocation-id/… gccl-attempt-count/…`,
// `x-goog-gcs-idempotency-token`) as the server receives them: retryFetch under gcs() on a real
// loopback server, a resumed download and a resumable upload on the loopback testbench, and
// the merge with a caller's own headers.
import { describe, expect, it } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import { invocationHeaders } from '../../src/fetch/invocation-headers.js';
import { gcs, gcsResumableUpload, gcsStartResumableUpload } from '../../src/google/index.js';
import { type AttemptContext, hedging } from '../../src/index.js';
import { closeServersAfterEach, quick, reply, scriptedServer } from './loopback.js';
import { pattern, startTestbench } from './testbench.js';

closeServersAfterEach();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const fast = { backoff: { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' as const } };

/** The invocation id and attempt count of an `x-goog-api-client` value, and what else it holds. */
function parse(value: string | string[] | undefined): { id?: string; count?: string; rest: string[] } {
  const tokens = String(value).split(' ');
  const pick = (prefix: string) => tokens.find((t) => t.startsWith(prefix))?.slice(prefix.length);
  return {
    id: pick('gccl-invocation-id/'),
    count: pick('gccl-attempt-count/'),
    rest: tokens.filter((t) => !t.startsWith('gccl-invocation-id/') && !t.startsWith('gccl-attempt-count/')),
  };
}

describe('invocationHeaders', () => {
  const ctx = { attempt: 3, invocationId: 'abc' } as AttemptContext;

  it('names the call and the attempt, and sends the id as the idempotency token', () => {
    expect(invocationHeaders(undefined, ctx)).toEqual({
      'x-goog-api-client': 'gccl-invocation-id/abc gccl-attempt-count/3',
      'x-goog-gcs-idempotency-token': 'abc',
    });
  });

  it("keeps a caller's tokens first and replaces a caller's call tokens with the call's own", () => {
    const own = new Headers({
      'x-goog-api-client': 'gl-node/20.20.0  gccl/7.0.0 gccl-invocation-id/old gccl-attempt-count/9',
      'x-goog-gcs-idempotency-token': 'mine',
    });
    expect(invocationHeaders(own, ctx)).toEqual({
      'x-goog-api-client': 'gl-node/20.20.0 gccl/7.0.0 gccl-invocation-id/abc gccl-attempt-count/3',
      'x-goog-gcs-idempotency-token': 'mine',
    });
  });
});

describe('retryFetch under gcs() on loopback', () => {
  it('sends one invocation id for the call and counts its attempts: 503, 503, 200', async () => {
    const server = await scriptedServer([reply(503), reply(503), reply(200, 'done')]);
    const res = await retryFetch(
      server.url,
      { headers: { 'x-goog-api-client': 'gl-node/20 gccl/7.0.0' } },
      gcs({ operation: 'objects.get', ...fast }),
    );
    expect(await res.text()).toBe('done');
    const sent = server.seen.map((s) => parse(s.headers['x-goog-api-client']));
    expect(sent.map((s) => s.count)).toEqual(['1', '2', '3']);
    expect(sent.every((s) => s.id === sent[0]?.id)).toBe(true);
    expect(sent[0]?.id).toMatch(UUID);
    expect(sent.map((s) => s.rest)).toEqual(Array(3).fill(['gl-node/20', 'gccl/7.0.0']));
    expect(server.seen.map((s) => s.headers['x-goog-gcs-idempotency-token'])).toEqual(Array(3).fill(sent[0]?.id));
  });

  it('gives every call its own id', async () => {
    const server = await scriptedServer([]);
    await retryFetch(server.url, undefined, gcs({ operation: 'objects.get' }));
    await retryFetch(server.url, undefined, gcs({ operation: 'objects.get' }));
    const [first, second] = server.seen.map((s) => parse(s.headers['x-goog-api-client']).id);
    expect(first).toMatch(UUID);
    expect(second).toMatch(UUID);
    expect(first).not.toBe(second);
  });

  it("sends the caller's other headers and a Request's own along", async () => {
    const server = await scriptedServer([reply(503), reply(200)]);
    const request = new Request(server.url, { headers: { authorization: 'Bearer t0ken' } });
    await retryFetch(request, undefined, gcs({ operation: 'objects.get', ...fast }));
    expect(server.seen.map((s) => s.headers.authorization)).toEqual(['Bearer t0ken', 'Bearer t0ken']);
    expect(server.seen.map((s) => parse(s.headers['x-goog-api-client']).count)).toEqual(['1', '2']);
  });

  it('adds nothing outside the Cloud Storage preset', async () => {
    const server = await scriptedServer([reply(503), reply(200)]);
    await retryFetch(server.url, { headers: { 'x-goog-api-client': 'gl-node/20' } }, quick);
    expect(server.seen.map((s) => s.headers['x-goog-api-client'])).toEqual(['gl-node/20', 'gl-node/20']);
    expect(server.seen.map((s) => s.headers['x-goog-gcs-idempotency-token'])).toEqual([undefined, undefined]);
  });

  it('numbers hedged copies by their attempt, under the one id', async () => {
    // Copy 1 hangs until the call ends; copy 2, sent 5 ms later, answers.
    const server = await scriptedServer([() => {}, reply(200, 'second')]);
    const res = await retryFetch(server.url, undefined, {
      ...gcs({ operation: 'objects.get' }),
      hedge: hedging({ delayMs: 5, maxCopies: 2 }),
    });
    expect(await res.text()).toBe('second');
    const sent = server.seen.map((s) => parse(s.headers['x-goog-api-client']));
    expect(sent.map((s) => s.count)).toEqual(['1', '1']);
    expect(sent[1]?.id).toBe(sent[0]?.id);
  });
});

describe('on the loopback testbench', () => {
  it('a resumed download is the same invocation: the request for the rest counts attempt 2', async () => {
    const tb = await startTestbench();
    const data = pattern(64 * 1024);
    tb.objects.set('a.bin', { data, generation: '1' });
    tb.downloadFaults.push({ breakAfter: 1000 });
    try {
      const res = await retryFetch(tb.mediaUrl('a.bin'), undefined, { ...gcs({ operation: 'objects.get' }), ...quick });
      expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
      const sent = tb.seen.map((s) => ({ range: s.headers.range, ...parse(s.headers['x-goog-api-client']) }));
      expect(sent.map((s) => [s.range, s.count])).toEqual([
        [undefined, '1'],
        ['bytes=1000-', '2'],
      ]);
      expect(sent[1]?.id).toBe(sent[0]?.id);
    } finally {
      await tb.close();
    }
  });

  it("an upload's chunks are attempts of one call; the session start is a call of its own", async () => {
    const tb = await startTestbench();
    try {
      const uri = await gcsStartResumableUpload({ bucket: 'bucket', name: 'up.bin', token: 't', baseUrl: tb.base });
      // The second chunk's request fails after 1 KiB of it persisted.
      tb.uploadFaults.push('ok', { fail503After: 1024 });
      await gcsResumableUpload(uri, pattern(512 * 1024), { ...fast, chunkSizeBytes: 256 * 1024 });
      const [start, ...puts] = tb.seen.map((s) => parse(s.headers['x-goog-api-client']));
      expect(start?.count).toBe('1');
      // Attempt 1 sends chunk 1 and fails in chunk 2; attempt 2 asks the session what it kept
      // (`bytes */N`) and sends the rest.
      expect(tb.seen.slice(1).map((s) => s.headers['content-range'])).toEqual([
        'bytes 0-262143/524288',
        'bytes 262144-524287/524288',
        'bytes */524288',
        'bytes 263168-524287/524288',
      ]);
      expect(puts.map((p) => p.count)).toEqual(['1', '1', '2', '2']);
      expect(puts.every((p) => p.id === puts[0]?.id)).toBe(true);
      expect(puts[0]?.id).toMatch(UUID);
      expect(puts[0]?.id).not.toBe(start?.id);
      expect(tb.seen.map((s) => s.headers['x-goog-gcs-idempotency-token'])).toEqual([start?.id, ...puts.map((p) => p.id)]);
    } finally {
      await tb.close();
    }
  });
});
