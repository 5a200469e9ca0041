// Retry-After through the interceptor, in virtual time (@sinonjs/fake-timers): the engine's
// sleep is a fake timer, the requests are real ones to a node:http server on 127.0.0.1.
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tenaciousInterceptor } from '../../src/undici/index.js';
import { type InstalledClock, installClock, track } from '../helpers/clock.js';
import { fast, sendStatus, useLoopback } from './kit.js';

const { serve, keep } = useLoopback();
let clock: InstalledClock | undefined;
afterEach(() => {
  clock?.uninstall();
  clock = undefined;
});

describe('Retry-After', () => {
  it('429 with Retry-After: 2 → the second request goes out 2 s (virtual) later, not sooner', async () => {
    const server = await serve((n, res) => (n === 0 ? sendStatus(res, 429, n, { 'retry-after': '2' }) : sendStatus(res, 200, n)));
    const delays: number[] = [];
    let attempts = 0;
    const onEvent = (e: { type: string }): void => {
      if (e.type === 'attempt') attempts++;
    };
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, onRetry: (e) => delays.push(e.delayMs), onEvent })));
    clock = installClock();
    const call = track(request(server.url, { dispatcher }));
    await vi.waitFor(() => expect(delays).toHaveLength(1));
    expect(delays[0]).toBeGreaterThanOrEqual(2000);
    await clock.tickAsync(1990);
    expect(attempts).toBe(1);
    await clock.tickAsync(10);
    expect(attempts).toBe(2);
    await vi.waitFor(() => expect(call.state).toBe('resolved'));
    expect(call.value?.statusCode).toBe(200);
    await call.value?.body.dump();
    expect(server.requests).toHaveLength(2);
  });

  it('a Retry-After longer than maxRetryAfterMs: that 429 is the answer at once, its body intact, one request', async () => {
    const server = await serve((n, res) => sendStatus(res, 429, n, { 'retry-after': '120' }));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, maxRetryAfterMs: 30_000 })));
    const { statusCode, headers, body } = await request(server.url, { dispatcher });
    expect(statusCode).toBe(429);
    expect(headers['retry-after']).toBe('120');
    expect(await body.json()).toEqual({ status: 429, attempt: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it('a Retry-After past the deadline: the 503 is the answer at once', async () => {
    const server = await serve((n, res) => sendStatus(res, 503, n, { 'retry-after': '60' }));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, deadlineMs: 10_000 })));
    const { statusCode, body } = await request(server.url, { dispatcher });
    expect(statusCode).toBe(503);
    await body.dump();
    expect(server.requests).toHaveLength(1);
  });
});

/** Every way a server says "wait 3 s": each must be held to maxRetryAfterMs like Retry-After. */
const THREE_SECOND_HINTS: ReadonlyArray<readonly [string, Record<string, string>]> = [
  ['Retry-After: 3', { 'retry-after': '3' }],
  ['Retry-After: a date 3 s after the Date', { date: 'Wed, 21 Oct 2015 07:28:00 GMT', 'retry-after': 'Wed, 21 Oct 2015 07:28:03 GMT' }],
  ['RateLimit-Reset: 3', { 'ratelimit-reset': '3' }],
  ['RateLimit: …, reset=3', { ratelimit: 'limit=10, remaining=0, reset=3' }],
  ['RateLimit: …;t=3', { ratelimit: '"default";r=0;t=3' }],
];

describe('maxRetryAfterMs holds every server hint, whatever header it came in', () => {
  it.each(THREE_SECOND_HINTS)('429 with %s under a 300 ms cap: that 429 is the answer at once, one request', async (_name, hint) => {
    const server = await serve((n, res) => sendStatus(res, 429, n, hint));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, maxRetryAfterMs: 300 })));
    clock = installClock();
    const call = track(request(server.url, { dispatcher }));
    // No virtual time passes: a call that waits for the hint never resolves here.
    await vi.waitFor(() => expect(call.state).toBe('resolved'));
    expect(call.value?.statusCode).toBe(429);
    expect(await call.value?.body.json()).toEqual({ status: 429, attempt: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it.each(THREE_SECOND_HINTS)('429 with %s under a 5 s cap: the second request goes out 3 s (virtual) later', async (_name, hint) => {
    const server = await serve((n, res) => (n === 0 ? sendStatus(res, 429, n, hint) : sendStatus(res, 200, n)));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, maxRetryAfterMs: 5_000 })));
    clock = installClock();
    const call = track(request(server.url, { dispatcher }));
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    await clock.tickAsync(2_990);
    expect(server.requests).toHaveLength(1);
    await clock.tickAsync(10);
    await vi.waitFor(() => expect(call.state).toBe('resolved'));
    expect(call.value?.statusCode).toBe(200);
    await call.value?.body.dump();
    expect(server.requests).toHaveLength(2);
  });
});
