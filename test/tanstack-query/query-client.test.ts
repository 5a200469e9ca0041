// queryRetry in the real @tanstack/query-core (QueryClient.fetchQuery, QueryObserver,
// mutations), whose queryFn makes one real request with axios to a node:http server on
// 127.0.0.1, in virtual time: TanStack's waits are global setTimeout calls (its timeoutManager
// looks setTimeout up at each call), which @sinonjs/fake-timers replaces. The server counts the
// requests: TanStack's own retries (its default of 3, or none on the server) against ours.
import { MutationObserver, QueryClient, type QueryClientConfig, QueryObserver, environmentManager } from '@tanstack/query-core';
import axios from 'axios';
import { afterEach, describe, expect, it } from 'vitest';
import { queryRetry } from '../../src/tanstack-query/index.js';
import { type LoopbackServer, sendGoogleError, sendJson, startHttpServer } from '../clients/loopback.js';
import { ITEM } from '../clients/recipe-kit.js';
import { track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server answering each request with the next status of the script (`Retry-After`, or the headers, as given), then 200. */
async function scripted(
  script: ReadonlyArray<number | readonly [number, string | Record<string, string>]>,
  after = 200,
): Promise<LoopbackServer> {
  let answered = 0;
  const server = await startHttpServer((_seen, res) => {
    const next = script[answered++] ?? after;
    const [status, hint] = typeof next === 'number' ? [next, undefined] : next;
    const headers = typeof hint === 'string' ? { 'retry-after': hint } : hint;
    if (status === 200) sendJson(res, ITEM);
    else sendGoogleError(res, status, headers === undefined ? {} : { headers });
  });
  cleanups.push(() => server.close());
  return server;
}

/** A client whose queries never schedule garbage collection (no timer left on the virtual clock). */
function client(queries: NonNullable<QueryClientConfig['defaultOptions']>['queries'] = {}): QueryClient {
  const made = new QueryClient({ defaultOptions: { queries: { gcTime: Infinity, ...queries }, mutations: { gcTime: Infinity } } });
  cleanups.push(() => made.clear());
  return made;
}

/** Lets real I/O run (setImmediate is not faked) until `done()`. */
async function untilIo(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 10_000; turn++) {
    if (done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('the condition never held');
}

const fetchItem =
  (url: string) =>
  ({ signal }: { signal: AbortSignal }) =>
    axios.get<typeof ITEM>(url, { signal }).then((response) => response.data);

const steps = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 1_000, jitter: 'none' } as const;

describe('QueryClient.fetchQuery with queryRetry', () => {
  it('503, 503, 200: three requests, 100 ms then 200 ms apart', async () => {
    const server = await scripted([503, 503]);
    const call = track(client(queryRetry({ backoff: steps })).fetchQuery({ queryKey: ['item'], queryFn: fetchItem(server.url) }));
    await untilIo(() => server.requests.length === 1);
    await clock.tickAsync(99);
    await untilIo(() => true);
    expect(server.requests).toHaveLength(1);
    await clock.tickAsync(1);
    await untilIo(() => server.requests.length === 2);
    await clock.tickAsync(199);
    expect(server.requests).toHaveLength(2);
    await clock.tickAsync(1);
    await untilIo(() => call.state !== 'pending');
    expect(call.value).toEqual(ITEM);
    expect(server.requests).toHaveLength(3);
  });

  it('maxAttempts 3 against a server that always answers 503: exactly three requests, then the last error', async () => {
    const server = await scripted([], 503);
    const call = track(
      client(queryRetry({ backoff: steps, maxAttempts: 3 })).fetchQuery({ queryKey: ['item'], queryFn: fetchItem(server.url) }),
    );
    await untilIo(() => server.requests.length === 1);
    await clock.tickAsync(100);
    await untilIo(() => server.requests.length === 2);
    await clock.tickAsync(200);
    await untilIo(() => call.state !== 'pending');
    expect(call.state).toBe('rejected');
    expect(call.error).toMatchObject({ isAxiosError: true, status: 503 });
    await clock.tickAsync(10_000);
    expect(server.requests).toHaveLength(3);
  });

  it('a 404 is not retried: one request (TanStack’s own default, in a browser, sends four)', async () => {
    const ours = await scripted([], 404);
    const call = track(client(queryRetry()).fetchQuery({ queryKey: ['item'], queryFn: fetchItem(ours.url) }));
    await untilIo(() => call.state !== 'pending');
    expect(call.error).toMatchObject({ status: 404 });
    expect(ours.requests).toHaveLength(1);

    // TanStack's own: `retry: 3` in a browser (QueryObserver's default), whatever the error.
    environmentManager.setIsServer(() => false);
    cleanups.push(() => environmentManager.setIsServer(() => typeof window === 'undefined' || 'Deno' in globalThis));
    const theirs = await scripted([], 404);
    const observer = new QueryObserver(client(), { queryKey: ['item'], queryFn: fetchItem(theirs.url), retryDelay: 10 });
    const results: string[] = [];
    cleanups.push(observer.subscribe((result) => results.push(result.status)));
    for (let sent = 1; sent <= 4; sent++) {
      await untilIo(() => theirs.requests.length === sent);
      await clock.tickAsync(10);
    }
    await untilIo(() => results.includes('error'));
    expect(theirs.requests).toHaveLength(4);
  });

  it('waits as long as a Retry-After asks (2 s, over a 100 ms backoff)', async () => {
    const server = await scripted([[503, '2']]);
    const call = track(client(queryRetry({ backoff: steps })).fetchQuery({ queryKey: ['item'], queryFn: fetchItem(server.url) }));
    await untilIo(() => server.requests.length === 1);
    await clock.tickAsync(1_999);
    await untilIo(() => true);
    expect(server.requests).toHaveLength(1);
    await clock.tickAsync(1);
    await untilIo(() => call.state !== 'pending');
    expect(call.value).toEqual(ITEM);
    expect(server.requests).toHaveLength(2);
  });

  it('a Retry-After past maxRetryAfterMs: the error at once, one request', async () => {
    const server = await scripted([[503, '60']]);
    const call = track(
      client(queryRetry({ backoff: steps, maxRetryAfterMs: 30_000 })).fetchQuery({ queryKey: ['item'], queryFn: fetchItem(server.url) }),
    );
    await untilIo(() => call.state !== 'pending');
    expect(call.error).toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
  });
});

describe('server hints and maxRetryAfterMs', () => {
  it.each([
    ['RateLimit-Reset: 60', { 'ratelimit-reset': '60' }],
    ['RateLimit: …, reset=60', { ratelimit: 'limit=10, remaining=0, reset=60' }],
    ['RateLimit: …;t=60', { ratelimit: '"default";r=0;t=60' }],
  ])('a 429 whose %s is past maxRetryAfterMs: the error at once, one request', async (_name, headers) => {
    const server = await scripted([[429, headers]]);
    const call = track(
      client(queryRetry({ backoff: steps, maxRetryAfterMs: 30_000 })).fetchQuery({ queryKey: ['item'], queryFn: fetchItem(server.url) }),
    );
    await untilIo(() => call.state !== 'pending');
    expect(call.error).toMatchObject({ status: 429 });
    expect(server.requests).toHaveLength(1);
  });

  // Regression (issue 34): retryDelay handed TanStack 2.6e9 ms, or Infinity; its setTimeout took
  // either as 1 ms, and every attempt ran at once. A wait no timer can hold is not waited for.
  it.each([
    ['a 30-day Retry-After', String(30 * 24 * 3600)],
    ['a Retry-After of 400 digits (Infinity ms)', '9'.repeat(400)],
  ])('with maxRetryAfterMs: Infinity, %s is not retried at once: the error is the answer, one request', async (_name, retryAfter) => {
    const server = await scripted([
      [503, retryAfter],
      [503, retryAfter],
      [503, retryAfter],
    ]);
    const call = track(
      client(queryRetry({ backoff: steps, maxRetryAfterMs: Infinity })).fetchQuery({ queryKey: ['item'], queryFn: fetchItem(server.url) }),
    );
    await untilIo(() => server.requests.length === 1);
    await clock.tickAsync(10_000);
    await untilIo(() => call.state !== 'pending');
    expect(call.error).toMatchObject({ status: 503 });
    await clock.tickAsync(10_000);
    await untilIo(() => true);
    expect(server.requests).toHaveLength(1);
  });
});

describe('QueryObserver (useQuery’s engine) with queryRetry as the client’s default', () => {
  it('replaces TanStack’s default (none on the server): 503, 200 is two requests', async () => {
    const server = await scripted([503]);
    const observer = new QueryObserver(client(queryRetry({ backoff: steps })), { queryKey: ['item'], queryFn: fetchItem(server.url) });
    const results: Array<{ status: string; failureCount: number }> = [];
    cleanups.push(observer.subscribe(({ status, failureCount }) => results.push({ status, failureCount })));
    await untilIo(() => server.requests.length === 1);
    await untilIo(() => results.some((r) => r.failureCount === 1));
    await clock.tickAsync(100);
    await untilIo(() => results.some((r) => r.status === 'success'));
    expect(server.requests).toHaveLength(2);

    const bare = await scripted([503]);
    const plain = new QueryObserver(client(), { queryKey: ['other'], queryFn: fetchItem(bare.url) });
    const plainResults: string[] = [];
    cleanups.push(plain.subscribe(({ status }) => plainResults.push(status)));
    await untilIo(() => plainResults.includes('error'));
    expect(bare.requests).toHaveLength(1);
  });
});

describe('mutations', () => {
  it('idempotent: false: a 503 is not retried (the POST may have been applied)', async () => {
    const server = await scripted([503]);
    const mutations = client();
    const observer = new MutationObserver(mutations, {
      mutationFn: (body: { id: number }) => axios.post(server.url, body).then((r) => r.data as unknown),
      ...queryRetry({ backoff: steps, idempotent: false }),
    });
    const result = track(observer.mutate({ id: 1 }));
    await untilIo(() => result.state !== 'pending');
    expect(result.error).toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
  });
});
