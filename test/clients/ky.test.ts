// The ky recipe of docs/recipes.md, run as shown against real ky (on Node's fetch) and a
// real node:http server on 127.0.0.1. ky retries on its own (2 retries by default) and times
// requests out after 10 s; the recipe turns both off, and the request counts prove there is one
// retry layer: the same call with ky's retries left on reaches the server three times per
// attempt. Also: the value, the HTTPError a 404 or 400 rejects with passed through unchanged,
// the default classification of every error ky really throws, and the attempt's signal
// cancelling the request in flight.
import ky, { HTTPError, TimeoutError } from 'ky';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RetryError, type RetryOptions, isTransient, retry, retryAfterMsOf } from '../../src/index.js';
import { failureOf, isLoopback, refusedUrl, sendGoogleError, startHttpServer, watchConnections } from './loopback.js';
import { ITEM, type ScriptedServer, recipeRegionsOf, scriptedServer } from './recipe-kit.js';

// recipe:begin
const api = ky.create({ retry: 0, timeout: false }); // tenacious retries and times out

async function getJson<T>(url: string, options: RetryOptions = {}): Promise<T> {
  return retry(({ signal }) => api.get(url, { signal }).json<T>(), {
    deadlineMs: 10_000,
    attemptTimeoutMs: 3_000,
    ...options,
  });
}
// recipe:end

/** Tiny waits: these tests count requests, the waits themselves are tested with virtual time elsewhere. */
const fast: RetryOptions = { backoff: { initialDelayMs: 1, maxDelayMs: 5 } };

let server: ScriptedServer | undefined;
let connections: ReturnType<typeof watchConnections>;
beforeEach(() => {
  connections = watchConnections();
});
afterEach(async () => {
  connections.restore();
  await server?.close();
  server = undefined;
  expect(connections.hosts.every(isLoopback)).toBe(true);
});

it('runs the code the README shows', () => {
  expect(recipeRegionsOf(import.meta.url)).toEqual([{ code: expect.stringContaining('retry: 0, timeout: false') as unknown, shown: true }]);
});

describe('the ky recipe on loopback', () => {
  it('503, 503, 200: returns the body after exactly three requests', async () => {
    server = await scriptedServer([503, 503]);
    await expect(getJson(server.url, fast)).resolves.toEqual(ITEM);
    expect(server.requests).toHaveLength(3);
  });

  it('always 503: gives up after maxAttempts requests, one per attempt, the last HTTPError as the cause', async () => {
    server = await scriptedServer([], 503);
    const error = await failureOf(getJson(server.url, { ...fast, maxAttempts: 3 }));
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect((error as RetryError).cause).toBeInstanceOf(HTTPError);
    expect((error as RetryError).cause).toMatchObject({ response: { status: 503 } });
    expect(server.requests).toHaveLength(3);
  });

  it('without `retry: 0`, the same call reaches the server three times per attempt', async () => {
    server = await scriptedServer([], 503);
    // ky's default retry, only with its waits shortened (at most 1 ms) for the test.
    const layered = ky.create({ retry: { backoffLimit: 1 }, timeout: false });
    const error = await failureOf(retry(({ signal }) => layered.get(server?.url ?? '', { signal }).json(), { ...fast, maxAttempts: 3 }));
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect(server.requests).toHaveLength(9);
  });

  it.each([404, 400])('%i: rejects at once with ky’s HTTPError itself, one request', async (status) => {
    server = await scriptedServer([status]);
    const error = await failureOf(getJson(server.url, fast));
    expect(error).toBeInstanceOf(HTTPError);
    expect(error).toMatchObject({ name: 'HTTPError', response: { status } });
    expect(server.requests).toHaveLength(1);
  });

  it('a reset connection is retried', async () => {
    server = await scriptedServer(['reset']);
    await expect(getJson(server.url, fast)).resolves.toEqual(ITEM);
    expect(server.requests).toHaveLength(2);
  });

  it('the caller’s abort cancels the request in flight: the server sees its socket close', async () => {
    server = await scriptedServer(['stall']);
    const controller = new AbortController();
    void server.stalled.then(() => controller.abort(new Error('the user left')));
    const error = await failureOf(getJson(server.url, { ...fast, signal: controller.signal }));
    expect(error).toEqual(new Error('the user left'));
    await server.stalledSocketClosed;
    expect(server.requests).toHaveLength(1);
  });

  it('an attempt timeout aborts the hung request (its socket closes) and the next attempt succeeds', async () => {
    server = await scriptedServer(['stall']);
    await expect(getJson(server.url, { ...fast, attemptTimeoutMs: 100 })).resolves.toEqual(ITEM);
    await server.stalledSocketClosed;
    expect(server.requests).toHaveLength(2);
  });
});

describe('the default classification of the errors ky really throws', () => {
  it.each([
    [408, true],
    [429, true],
    [500, true],
    [502, true],
    [503, true],
    [504, true],
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [412, false],
  ])('HTTP %i → transient: %s', async (status, expected) => {
    server = await scriptedServer([status]);
    const error = await failureOf(api.get(server.url));
    expect(error).toBeInstanceOf(HTTPError);
    expect(error).toMatchObject({ response: { status } });
    expect(isTransient(error)).toBe(expected);
  });

  it('a reset connection (fetch’s TypeError “fetch failed”, ECONNRESET under it) is transient', async () => {
    server = await scriptedServer(['reset']);
    const error = await failureOf(api.get(server.url));
    expect(error).toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNRESET' } });
    expect(isTransient(error)).toBe(true);
  });

  it('a refused connection (fetch’s TypeError, ECONNREFUSED under it) is transient', async () => {
    const error = await failureOf(api.get(await refusedUrl()));
    expect(error).toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });
    expect(isTransient(error)).toBe(true);
  });

  it('ky’s own timeout (its TimeoutError) is transient', async () => {
    server = await scriptedServer(['stall']);
    const error = await failureOf(api.get(server.url, { timeout: 50 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ name: 'TimeoutError' });
    expect(isTransient(error)).toBe(true);
  });

  it('the caller’s abort (a DOMException named AbortError) is not', async () => {
    server = await scriptedServer(['stall']);
    const controller = new AbortController();
    void server.stalled.then(() => controller.abort());
    const error = await failureOf(api.get(server.url, { signal: controller.signal }));
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(isTransient(error)).toBe(false);
  });

  it('a 429’s Retry-After is read from the error (retry() waits at least that long)', async () => {
    const retryAfter = await startHttpServer((_seen, res) => sendGoogleError(res, 429, { headers: { 'retry-after': '7' } }));
    try {
      const error = await failureOf(api.get(retryAfter.url));
      expect(retryAfterMsOf(error)).toBe(7000);
    } finally {
      await retryAfter.close();
    }
  });
});
