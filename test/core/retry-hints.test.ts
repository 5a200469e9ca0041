// Server hints: a Retry-After (seconds or an HTTP-date) or a gRPC pushback lengthens the next
// wait, never shortens it, and gives up at once when it would pass the deadline. A hint is the
// failure's own: a later timeout does not inherit an earlier attempt's.
import { describe, expect, it } from 'vitest';
import { type RetryError, type RetryEvent, retry } from '../../src/index.js';
import { hang, noJitter, script, withRetryAfter } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

describe('a hint lengthens the next wait', () => {
  it('Retry-After in seconds (a Headers object)', async () => {
    const { fn, calls } = script(httpError(429, { response: { status: 429, headers: new Headers({ 'Retry-After': '5' }) } }));
    const p = track(retry(fn, { backoff: noJitter }));
    await clock.tickAsync(5000);
    expect(calls).toEqual([0, 5000]);
    expect(p.state).toBe('resolved');
  });

  it('Retry-After as an HTTP-date', async () => {
    const { fn, calls } = script(withRetryAfter(503, new Date(7000).toUTCString()));
    const p = track(retry(fn, { backoff: noJitter }));
    await clock.tickAsync(7000);
    expect(calls).toEqual([0, 7000]);
    expect(p.state).toBe('resolved');
  });

  it('gRPC pushback (grpc-retry-pushback-ms metadata)', async () => {
    const metadata = { get: (key: string) => (key === 'grpc-retry-pushback-ms' ? ['2500'] : []) };
    const { fn, calls } = script(Object.assign(new Error('unavailable'), { code: 14, metadata }));
    const p = track(retry(fn, { backoff: noJitter }));
    await clock.tickAsync(2500);
    expect(calls).toEqual([0, 2500]);
    expect(p.state).toBe('resolved');
  });

  it('never shortens it', async () => {
    const { fn, calls } = script(withRetryAfter(503, '0'));
    const events: RetryEvent[] = [];
    const p = track(retry(fn, { backoff: noJitter, onRetry: (e) => events.push(e) }));
    await clock.tickAsync(1000);
    expect(calls).toEqual([0, 1000]);
    expect(events[0]?.delayMs).toBe(1000);
    expect(p.state).toBe('resolved');
  });
});

describe('a hint and the limits', () => {
  it('gives up at once when a Retry-After hint passes the deadline', async () => {
    const busy = withRetryAfter(503, '30');
    const { fn } = script(busy);
    const p = track(retry(fn, { deadlineMs: 10_000 }));
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).cause).toBe(busy);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('a stale Retry-After from an earlier attempt does not lengthen the wait after a timeout', async () => {
    const busy = withRetryAfter(503, '1');
    const events: RetryEvent[] = [];
    let calls = 0;
    const p = track(
      retry(
        () => {
          calls++;
          if (calls === 1) return Promise.reject(busy);
          if (calls === 2) return hang();
          return Promise.resolve('third');
        },
        { attemptTimeoutMs: 10, backoff: { ...noJitter, initialDelayMs: 0, maxDelayMs: 0 }, onRetry: (e) => events.push(e) },
      ),
    );
    await clock.tickAsync(1100);
    expect(p.value).toBe('third');
    expect(events.map((e) => e.delayMs)).toEqual([1000, 0]);
  });
});
