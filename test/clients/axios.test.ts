// The axios recipe of docs/recipes.md, run as shown against real axios and a real
// node:http server on 127.0.0.1: the requests the server saw (axios has no retries of its own,
// so each attempt is one request), the value, the AxiosError a 404 or 400 rejects with passed
// through unchanged, the default classification of every error axios really throws, and the
// attempt's signal cancelling the request in flight.
import axios, { AxiosError } from 'axios';
import { describe, expect, it } from 'vitest';
import { RetryError, type RetryOptions, isTransient, retry, retryAfterMsOf } from '../../src/index.js';
import { failureOf, refusedUrl, sendGoogleError, startHttpServer } from './loopback.js';
import { ITEM, STATUS_CLASSES, fast, recipeRegionsOf, useScriptedServers } from './recipe-kit.js';

// recipe:begin
async function getJson<T>(url: string, options: RetryOptions = {}): Promise<T> {
  const response = await retry(({ signal }) => axios.get<T>(url, { signal }), { deadlineMs: 10_000, ...options });
  return response.data;
}
// recipe:end

const serve = useScriptedServers();

it('runs the code the README shows', () => {
  expect(recipeRegionsOf(import.meta.url)).toEqual([{ code: expect.stringContaining('axios.get') as unknown, shown: true }]);
});

describe('the axios recipe on loopback', () => {
  it('503, 503, 200: returns the body after exactly three requests', async () => {
    const server = await serve([503, 503]);
    await expect(getJson(server.url, fast)).resolves.toEqual(ITEM);
    expect(server.requests).toHaveLength(3);
  });

  it('always 503: gives up after maxAttempts requests, the last AxiosError as the cause', async () => {
    const server = await serve([], 503);
    const error = await failureOf(getJson(server.url, { ...fast, maxAttempts: 3 }));
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect((error as RetryError).cause).toBeInstanceOf(AxiosError);
    expect((error as RetryError).cause).toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(3);
  });

  it.each([404, 400])('%i: rejects at once with the AxiosError itself, one request', async (status) => {
    const server = await serve([status]);
    const error = await failureOf(getJson(server.url, fast));
    expect(error).toBeInstanceOf(AxiosError);
    expect(error).toMatchObject({ status, response: { status } });
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
});

describe('the default classification of the errors axios really throws', () => {
  it.each(STATUS_CLASSES)('HTTP %i → transient: %s', async (status, expected) => {
    const server = await serve([status]);
    const error = await failureOf(axios.get(server.url));
    expect(error).toBeInstanceOf(AxiosError);
    expect(isTransient(error)).toBe(expected);
  });

  it('a reset connection (AxiosError, code ECONNRESET) is transient', async () => {
    const server = await serve(['reset']);
    const error = await failureOf(axios.get(server.url));
    expect(error).toMatchObject({ name: 'Error', code: 'ECONNRESET' });
    expect(isTransient(error)).toBe(true);
  });

  it('a refused connection (AxiosError, code ECONNREFUSED) is transient', async () => {
    const error = await failureOf(axios.get(await refusedUrl()));
    expect(error).toBeInstanceOf(AxiosError);
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(isTransient(error)).toBe(true);
  });

  // axios rejects an aborted request with its own CanceledError — name 'CanceledError', code
  // 'ERR_CANCELED', message 'canceled', no `cause`, whatever the signal's reason. Inside retry()
  // the loop sees its own signals abort, but an axios call aborted by a signal retry() does not
  // know of must not be retried.
  it('the caller’s abort (CanceledError) is not', async () => {
    const server = await serve(['stall']);
    const controller = new AbortController();
    void server.stalled.then(() => controller.abort());
    const error = await failureOf(axios.get(server.url, { signal: controller.signal }));
    expect(error).toMatchObject({ name: 'CanceledError', code: 'ERR_CANCELED' });
    expect(isTransient(error)).toBe(false);
  });

  it('a 429’s Retry-After is read from the error (retry() waits at least that long)', async () => {
    const retryAfter = await startHttpServer((_seen, res) => sendGoogleError(res, 429, { headers: { 'retry-after': '7' } }));
    try {
      const error = await failureOf(axios.get(retryAfter.url));
      expect(retryAfterMsOf(error)).toBe(7000);
    } finally {
      await retryAfter.close();
    }
  });
});
