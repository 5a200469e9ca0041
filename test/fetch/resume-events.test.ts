// A resumed download reports to the call's one event stream: the break as a `resume` of the call,
// then the run's attempts, numbered as the call's.
import { describe, expect, it } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import type { CallEvent } from '../../src/index.js';

describe('retryFetch resume: events', () => {
  it('reports the break as a resume, then the next attempt, numbered as the call’s', async () => {
    const ranges: (string | null)[] = [];
    const fn: typeof fetch = async (_input, init) => {
      ranges.push(new Headers(init?.headers).get('range'));
      if (ranges.length > 1) {
        return new Response(new Uint8Array(10).fill(0x62), {
          status: 206,
          headers: { etag: '"v1"', 'content-range': 'bytes 10-19/20', 'content-length': '10' },
        });
      }
      const body = new ReadableStream<Uint8Array>({
        start: (c) => c.enqueue(new Uint8Array(10).fill(0x61)),
        pull: (c) => c.error(new TypeError('terminated')),
      });
      return new Response(body, { headers: { etag: '"v1"', 'content-length': '20' } });
    };
    const events: CallEvent[] = [];
    const res = await retryFetch('http://x.test/', undefined, {
      fetch: fn,
      backoff: { initialDelayMs: 1, jitter: 'none' },
      onEvent: (e) => events.push(e),
    });
    expect(new TextDecoder().decode(await res.arrayBuffer())).toBe('a'.repeat(10) + 'b'.repeat(10));
    expect(ranges).toEqual([null, 'bytes=10-']);
    expect(events.map((e) => [e.type, 'attempt' in e ? e.attempt : e.type === 'success' ? e.attempts : undefined])).toEqual([
      ['attempt', 1],
      ['success', 1],
      ['resume', 1],
      ['retry', 1],
      ['attempt', 2],
      ['success', 2],
    ]);
    const resume = events[2] as Extract<CallEvent, { type: 'resume' }>;
    expect((resume.error as Error).message).toBe('terminated');
  });
});
