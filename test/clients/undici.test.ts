// The undici recipes of docs/recipes.md — `request()` through the `responseError`
// interceptor, and undici's `fetch` through retryFetch — run as shown against real undici (the
// npm package, not Node's bundled copy) and a real node:http server on 127.0.0.1. undici does not
// retry unless given its RetryAgent or retry interceptor, so each attempt is one request. Also:
// the value, a 404 or 400 passed through (request: undici's ResponseError unchanged; fetch: the
// response itself, after one request), the default classification of every error undici really
// throws, and the attempt's signal cancelling the request in flight.
import { Agent, errors, fetch, interceptors, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { RetryError, type RetryOptions, isTransient, retry, retryAfterMsOf } from '../../src/index.js';
import { type FetchFunction, type RetryFetchOptions, retryFetch } from '../../src/fetch/index.js';
import { failureOf, refusedUrl, sendGoogleError, startHttpServer } from './loopback.js';
import { ITEM, STATUS_CLASSES, fast, recipeRegionsOf, useScriptedServers } from './recipe-kit.js';

// recipe:begin
const dispatcher = new Agent().compose(interceptors.responseError()); // no interceptors.retry()

async function getJson<T>(url: string, options: RetryOptions = {}): Promise<T> {
  return retry(
    async ({ signal }) => {
      const { body } = await request(url, { dispatcher, signal });
      return (await body.json()) as T;
    },
    { deadlineMs: 10_000, ...options },
  );
}
// recipe:end

// recipe:begin
// Typed with undici's own Request class: call retryFetch with a URL, which it passes on as it
// is (undici's fetch rejects the global Request with "Failed to parse URL").
const undiciFetch = fetch as FetchFunction;

async function fetchJson<T>(url: string, options: RetryFetchOptions = {}): Promise<T> {
  const response = await retryFetch(url, {}, { fetch: undiciFetch, deadlineMs: 10_000, ...options });
  if (!response.ok) throw new Error(`GET ${url} failed: ${response.status}`);
  return (await response.json()) as T;
}
// recipe:end

const serve = useScriptedServers();
afterAll(async () => {
  await dispatcher.close();
});

it('runs the code the README shows', () => {
  expect(recipeRegionsOf(import.meta.url)).toEqual([
    { code: expect.stringContaining('interceptors.responseError()') as unknown, shown: true },
    { code: expect.stringContaining('fetch: undiciFetch') as unknown, shown: true },
  ]);
});

describe('the undici request() recipe on loopback', () => {
  it('503, 503, 200: returns the body after exactly three requests', async () => {
    const server = await serve([503, 503]);
    await expect(getJson(server.url, fast)).resolves.toEqual(ITEM);
    expect(server.requests).toHaveLength(3);
  });

  it('always 503: gives up after maxAttempts requests, the last ResponseError as the cause', async () => {
    const server = await serve([], 503);
    const error = await failureOf(getJson(server.url, { ...fast, maxAttempts: 3 }));
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect((error as RetryError).cause).toBeInstanceOf(errors.ResponseError);
    expect((error as RetryError).cause).toMatchObject({ code: 'UND_ERR_RESPONSE', statusCode: 503 });
    expect(server.requests).toHaveLength(3);
  });

  it.each([404, 400])('%i: rejects at once with undici’s ResponseError itself, one request', async (status) => {
    const server = await serve([status]);
    const error = await failureOf(getJson(server.url, fast));
    expect(error).toBeInstanceOf(errors.ResponseError);
    expect(error).toMatchObject({ code: 'UND_ERR_RESPONSE', statusCode: status, body: { error: { code: status } } });
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

describe('the undici fetch recipe (retryFetch) on loopback', () => {
  it('503, 503, 200: returns the body after exactly three requests', async () => {
    const server = await serve([503, 503]);
    await expect(fetchJson(server.url, fast)).resolves.toEqual(ITEM);
    expect(server.requests).toHaveLength(3);
  });

  it('always 503: the last 503 after maxAttempts requests, then the recipe’s own error', async () => {
    const server = await serve([], 503);
    const error = await failureOf(fetchJson(server.url, { ...fast, maxAttempts: 3 }));
    expect(error).toEqual(new Error(`GET ${server.url} failed: 503`));
    expect(server.requests).toHaveLength(3);
  });

  it.each([404, 400])('%i: not retried, one request', async (status) => {
    const server = await serve([status]);
    const error = await failureOf(fetchJson(server.url, fast));
    expect(error).toEqual(new Error(`GET ${server.url} failed: ${status}`));
    expect(server.requests).toHaveLength(1);
  });

  it('a reset connection is retried', async () => {
    const server = await serve(['reset']);
    await expect(fetchJson(server.url, fast)).resolves.toEqual(ITEM);
    expect(server.requests).toHaveLength(2);
  });

  it('the caller’s abort cancels the request in flight: the server sees its socket close', async () => {
    const server = await serve(['stall']);
    const controller = new AbortController();
    void server.stalled.then(() => controller.abort(new Error('the user left')));
    const error = await failureOf(fetchJson(server.url, { ...fast, signal: controller.signal }));
    expect(error).toEqual(new Error('the user left'));
    await server.stalledSocketClosed;
    expect(server.requests).toHaveLength(1);
  });

  it('undici’s fetch rejects the global Request, as the recipe’s comment says', async () => {
    const server = await serve([]);
    const error = await failureOf(retryFetch(new Request(server.url), {}, { ...fast, fetch: undiciFetch }));
    expect(error).toMatchObject({ name: 'TypeError', message: 'Failed to parse URL from [object Request]' });
    expect(server.requests).toHaveLength(0);
  });
});

describe('the default classification of the errors undici really throws', () => {
  it.each(STATUS_CLASSES)('request(): HTTP %i → a ResponseError, transient: %s', async (status, expected) => {
    const server = await serve([status]);
    const error = await failureOf(request(server.url, { dispatcher }));
    expect(error).toBeInstanceOf(errors.ResponseError);
    expect(error).toMatchObject({ statusCode: status });
    expect(isTransient(error)).toBe(expected);
  });

  it('request(): a reset connection (code ECONNRESET) is transient', async () => {
    const server = await serve(['reset']);
    const error = await failureOf(request(server.url, { dispatcher }));
    expect(error).toMatchObject({ code: 'ECONNRESET' });
    expect(isTransient(error)).toBe(true);
  });

  it('request(): a refused connection (code ECONNREFUSED) is transient', async () => {
    const error = await failureOf(request(await refusedUrl(), { dispatcher }));
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(isTransient(error)).toBe(true);
  });

  it('request(): undici’s headers timeout (code UND_ERR_HEADERS_TIMEOUT) is transient', async () => {
    const server = await serve(['stall']);
    const error = await failureOf(request(server.url, { dispatcher, headersTimeout: 50 }));
    expect(error).toMatchObject({ name: 'HeadersTimeoutError', code: 'UND_ERR_HEADERS_TIMEOUT' });
    expect(isTransient(error)).toBe(true);
  });

  it('fetch: a reset or refused connection (TypeError “fetch failed”, the socket error under it) is transient', async () => {
    const server = await serve(['reset']);
    const reset = await failureOf(fetch(server.url));
    expect(reset).toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNRESET' } });
    expect(isTransient(reset)).toBe(true);
    const refused = await failureOf(fetch(await refusedUrl()));
    expect(refused).toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });
    expect(isTransient(refused)).toBe(true);
  });

  it.each([
    ['request()', (url: string, signal: AbortSignal) => request(url, { dispatcher, signal })],
    ['fetch', (url: string, signal: AbortSignal) => fetch(url, { signal })],
  ])('%s: the caller’s abort (a DOMException named AbortError) is not', async (_name, call) => {
    const server = await serve(['stall']);
    const controller = new AbortController();
    void server.stalled.then(() => controller.abort());
    const error = await failureOf(call(server.url, controller.signal));
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(isTransient(error)).toBe(false);
  });

  it('a 429’s Retry-After is read from the error (retry() waits at least that long)', async () => {
    const retryAfter = await startHttpServer((_seen, res) => sendGoogleError(res, 429, { headers: { 'retry-after': '7' } }));
    try {
      const error = await failureOf(request(retryAfter.url, { dispatcher }));
      expect(retryAfterMsOf(error)).toBe(7000);
    } finally {
      await retryAfter.close();
    }
  });
});
