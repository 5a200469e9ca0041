// The ky recipe of docs/recipes.md, run as shown against real ky (on Node's fetch) and a
// real node:http server on 127.0.0.1. ky retries on its own (2 retries by default) and times
// requests out after 10 s; the recipe turns both off, and the request counts prove there is one
// retry layer: the same call with ky's retries left on reaches the server three times per
// attempt. Also: the value, the HTTPError a 404 or 400 rejects with passed through unchanged,
// the default classification of every error ky really throws, and the attempt's signal
// cancelling the request in flight.
import ky, { HTTPError, TimeoutError } from 'ky';
import { describe, expect, it } from 'vitest';
import { RetryError, type RetryOptions, isTransient, retry, retryAfterMsOf } from '../../src/index.js';
import { failureOf, refusedUrl, sendGoogleError, startHttpServer } from './loopback.js';
import { ITEM, STATUS_CLASSES, fast, recipeRegionsOf, useScriptedServers } from './recipe-kit.js';

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

const serve = useScriptedServers();

it('runs the code the README shows', () => {
  expect(recipeRegionsOf(import.meta.url)).toEqual([{ code: expect.stringContaining('retry: 0, timeout: false') as unknown, shown: true }]);
});

describe('the ky recipe on loopback', () => {
  it('503, 503, 200: returns the body after exactly three requests', async () => {
    const server = await serve([503, 503]);
    await expect(getJson(server.url, fast)).resolves.toEqual(ITEM);
    expect(server.requests).toHaveLength(3);
  });

  it('always 503: gives up after maxAttempts requests, one per attempt, the last HTTPError as the cause', async () => {
    const server = await serve([], 503);
    const error = await failureOf(getJson(server.url, { ...fast, maxAttempts: 3 }));
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect((error as RetryError).cause).toBeInstanceOf(HTTPError);
    expect((error as RetryError).cause).toMatchObject({ response: { status: 503 } });
    expect(server.requests).toHaveLength(3);
  });

  it('without `retry: 0`, the same call reaches the server three times per attempt', async () => {
    const server = await serve([], 503);
    // ky's default retry, only with its waits shortened (at most 1 ms) for the test.
    const layered = ky.create({ retry: { backoffLimit: 1 }, timeout: false });
    const error = await failureOf(retry(({ signal }) => layered.get(server?.url ?? '', { signal }).json(), { ...fast, maxAttempts: 3 }));
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect(server.requests).toHaveLength(9);
  });

  it.each([404, 400])('%i: rejects at once with ky’s HTTPError itself, one request', async (status) => {
    const server = await serve([status]);
    const error = await failureOf(getJson(server.url, fast));
    expect(error).toBeInstanceOf(HTTPError);
    expect(error).toMatchObject({ name: 'HTTPError', response: { status } });
    expect(server.requests).toHaveLength(1);
  });

  it('a reset connection is retried', async () => {
    const server = await serve(['reset']);
    await expect(getJson(server.url, fast)).resolves.toEqual(ITEM);
    expect(server.requests).toHaveLength(2);
  });

  it('the caller’s abort cancels the request in flight: the server sees its socket close', async () => {
    const server = await serve(['stall']);
    const controller = new AbortController();
    void server.stalled.then(() => controller.abort(new Error('the user left')));
    const error = await failureOf(getJson(server.url, { ...fast, signal: controller.signal }));
    expect(error).toEqual(new Error('the user left'));
    await server.stalledSocketClosed;
    expect(server.requests).toHaveLength(1);
  });

  it('an attempt timeout aborts the hung request (its socket closes) and the next attempt succeeds', async () => {
    const server = await serve(['stall']);
    await expect(getJson(server.url, { ...fast, attemptTimeoutMs: 100 })).resolves.toEqual(ITEM);
    await server.stalledSocketClosed;
    expect(server.requests).toHaveLength(2);
  });
});

describe('the default classification of the errors ky really throws', () => {
  it.each(STATUS_CLASSES)('HTTP %i → transient: %s', async (status, expected) => {
    const server = await serve([status]);
    const error = await failureOf(api.get(server.url));
    expect(error).toBeInstanceOf(HTTPError);
    expect(error).toMatchObject({ response: { status } });
    expect(isTransient(error)).toBe(expected);
  });

  it('a reset connection (fetch’s TypeError “fetch failed”, ECONNRESET under it) is transient', async () => {
    const server = await serve(['reset']);
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
    const server = await serve(['stall']);
    const error = await failureOf(api.get(server.url, { timeout: 50 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ name: 'TimeoutError' });
    expect(isTransient(error)).toBe(true);
  });

  it('the caller’s abort (a DOMException named AbortError) is not', async () => {
    const server = await serve(['stall']);
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
