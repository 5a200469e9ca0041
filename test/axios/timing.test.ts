// The waits of attachRetry in virtual time (@sinonjs/fake-timers over the engine's timers), the
// requests still real: axios over loopback. A server's Retry-After lengthens the wait, a wait
// past maxRetryAfterMs or the deadline is not made (the AxiosError is the answer, at once).
import axios, { type AxiosInstance } from 'axios';
import { afterEach, describe, expect, it } from 'vitest';
import { attachRetry } from '../../src/axios/index.js';
import type { GiveUpEvent, RetryEvent } from '../../src/index.js';
import { track, useVirtualClock } from '../helpers/clock.js';
import { type LoopbackServer, failureOf, sendGoogleError, sendJson, startHttpServer } from '../clients/loopback.js';
import { ITEM } from '../clients/recipe-kit.js';

const clock = useVirtualClock();
const servers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Answers each request with the next `Retry-After` of the script (a 503), then 200. */
async function retryAfterServer(script: readonly string[]): Promise<LoopbackServer> {
  let answered = 0;
  const server = await startHttpServer((_seen, res) => {
    const retryAfter = script[answered++];
    if (retryAfter === undefined) sendJson(res, ITEM);
    else sendGoogleError(res, 503, { headers: { 'retry-after': retryAfter } });
  });
  servers.push(server);
  return server;
}

/** An instance whose own backoff is 1 ms, so that any longer wait is the server's. */
function instance(options: Parameters<typeof attachRetry>[1] = {}): {
  api: AxiosInstance;
  attempts: number[];
  retried: Promise<RetryEvent>;
} {
  const attempts: number[] = [];
  let tell: (event: RetryEvent) => void = () => {};
  const retried = new Promise<RetryEvent>((resolve) => (tell = resolve));
  const api = axios.create();
  attachRetry(api, {
    backoff: { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' },
    onEvent: (event) => void (event.type === 'attempt' && attempts.push(Date.now())),
    onRetry: tell,
    ...options,
  });
  return { api, attempts, retried };
}

describe('Retry-After, read from the AxiosError’s response', () => {
  it('is waited for: the next request goes out 2 s later, not 1 ms', async () => {
    const server = await retryAfterServer(['2']);
    const { api, attempts, retried } = instance();
    const call = track(api.get(server.url));
    expect(await retried).toMatchObject({ attempt: 1, delayMs: 2000 });
    await clock.tickAsync(1999);
    expect(attempts).toEqual([0]);
    await clock.tickAsync(1);
    expect(attempts).toEqual([0, 2000]);
    await untilIo(() => call.state !== 'pending');
    expect(call.value).toMatchObject({ data: ITEM });
    expect(server.requests).toHaveLength(2);
  });

  it('a hint equal to maxRetryAfterMs is waited for', async () => {
    const server = await retryAfterServer(['2']);
    const { api, retried } = instance({ maxRetryAfterMs: 2000 });
    const call = api.get(server.url);
    expect(await retried).toMatchObject({ delayMs: 2000 });
    await clock.tickAsync(2000);
    await expect(call).resolves.toMatchObject({ data: ITEM });
    expect(server.requests).toHaveLength(2);
  });

  it('a hint longer than maxRetryAfterMs is not: the AxiosError at once, one request', async () => {
    const server = await retryAfterServer(['3']);
    const giveUps: GiveUpEvent[] = [];
    const { api } = instance({ maxRetryAfterMs: 2999, onGiveUp: (event) => void giveUps.push(event) });
    const error = await failureOf(api.get(server.url));
    expect(error).toMatchObject({ isAxiosError: true, status: 503 });
    expect(giveUps).toEqual([expect.objectContaining({ reason: 'not-retryable', attempts: 1 })]);
    expect(server.requests).toHaveLength(1);
  });

  it('a hint past the deadline gives up at once with the AxiosError; onGiveUp hears "deadline"', async () => {
    const server = await retryAfterServer(['60']);
    const giveUps: GiveUpEvent[] = [];
    const { api } = instance({ deadlineMs: 10_000, onGiveUp: (event) => void giveUps.push(event) });
    const error = await failureOf(api.get(server.url));
    expect(axios.isAxiosError(error)).toBe(true);
    expect(error).toMatchObject({ status: 503 });
    expect(giveUps).toEqual([expect.objectContaining({ reason: 'deadline', attempts: 1 })]);
    expect(Date.now()).toBe(0);
    expect(server.requests).toHaveLength(1);
  });
});

describe('every server hint, whatever its header, under maxRetryAfterMs and the deadline', () => {
  /** Answers the first request 429 with `headers`, then 200. */
  async function rateLimited(headers: Record<string, string>): Promise<LoopbackServer> {
    let answered = 0;
    const server = await startHttpServer((_seen, res) => {
      if (answered++ === 0) sendGoogleError(res, 429, { headers });
      else sendJson(res, ITEM);
    });
    servers.push(server);
    return server;
  }
  const THREE_SECONDS: ReadonlyArray<readonly [string, Record<string, string>]> = [
    ['RateLimit-Reset: 3', { 'ratelimit-reset': '3' }],
    ['RateLimit: …, reset=3', { ratelimit: 'limit=10, remaining=0, reset=3' }],
    ['RateLimit: …;t=3', { ratelimit: '"default";r=0;t=3' }],
    ['Retry-After: a date 3 s after the Date', { date: 'Wed, 21 Oct 2015 07:28:00 GMT', 'retry-after': 'Wed, 21 Oct 2015 07:28:03 GMT' }],
  ];

  it.each(THREE_SECONDS)('%s under a 300 ms cap: the AxiosError at once, one request', async (_name, headers) => {
    const server = await rateLimited(headers);
    const { api } = instance({ maxRetryAfterMs: 300 });
    const error = await failureOf(api.get(server.url));
    expect(error).toMatchObject({ isAxiosError: true, status: 429 });
    expect(Date.now()).toBe(0);
    expect(server.requests).toHaveLength(1);
  });

  it.each(THREE_SECONDS)('%s past the deadline: the AxiosError at once, one request', async (_name, headers) => {
    const server = await rateLimited(headers);
    const { api } = instance({ deadlineMs: 2_000 });
    const error = await failureOf(api.get(server.url));
    expect(error).toMatchObject({ isAxiosError: true, status: 429 });
    expect(Date.now()).toBe(0);
    expect(server.requests).toHaveLength(1);
  });

  it.each(THREE_SECONDS)('%s within the cap: the next request goes out 3 s later', async (_name, headers) => {
    const server = await rateLimited(headers);
    const { api, attempts, retried } = instance({ maxRetryAfterMs: 3_000 });
    const call = track(api.get(server.url));
    expect(await retried).toMatchObject({ delayMs: 3000 });
    await clock.tickAsync(2999);
    expect(attempts).toEqual([0]);
    await clock.tickAsync(1);
    await untilIo(() => call.state !== 'pending');
    expect(call.value).toMatchObject({ data: ITEM });
    expect(attempts).toEqual([0, 3000]);
  });
});

describe('the backoff', () => {
  it('waits the options’ backoff between requests when the server gives no hint', async () => {
    let answered = 0;
    const server = await startHttpServer((_seen, res) => (answered++ < 2 ? sendGoogleError(res, 500) : sendJson(res, ITEM)));
    servers.push(server);
    const waits: number[] = [];
    const { api, attempts } = instance({
      backoff: { initialDelayMs: 100, multiplier: 3, maxDelayMs: 1000, jitter: 'none' },
      onRetry: ({ delayMs }) => void waits.push(delayMs),
    });
    const call = api.get(server.url);
    await untilIo(() => waits.length === 1);
    await clock.tickAsync(100);
    await untilIo(() => waits.length === 2);
    await clock.tickAsync(300);
    await expect(call).resolves.toMatchObject({ data: ITEM });
    expect(waits).toEqual([100, 300]);
    expect(attempts).toEqual([0, 100, 400]);
  });
});

/** Lets real I/O run (setImmediate is not faked) until `done()`; fails after many turns. */
async function untilIo(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 10_000; turn++) {
    if (done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('the condition never held');
}
