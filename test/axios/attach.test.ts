// attachRetry against real axios 1.x and a real node:http server on 127.0.0.1, counting the
// requests the server saw: axios has no retries of its own, so a bare instance sends each
// request once, and an attached one sends exactly the attempts the engine makes.
import { Readable } from 'node:stream';
import axios, { AxiosError } from 'axios';
import { describe, expect, it } from 'vitest';
import { attachRetry } from '../../src/axios/index.js';
import { type GiveUpEvent, RetryError, type RetryEvent } from '../../src/index.js';
import { failureOf } from '../clients/loopback.js';
import { ITEM, useScriptedServers } from '../clients/recipe-kit.js';
import { attached, fast } from './attached.js';

const serve = useScriptedServers();

describe('one axios request, one call of the engine', () => {
  it('503, 503, 200: resolves with the transformed body after exactly three requests (a bare instance: one, and a 503)', async () => {
    const server = await serve([503, 503]);
    const response = await attached().get(server.url);
    expect(response.data).toEqual(ITEM);
    expect(response.status).toBe(200);
    expect(server.requests).toHaveLength(3);

    const bare = await serve([503, 503]);
    const error = await failureOf(axios.create().get(bare.url));
    expect(error).toMatchObject({ status: 503 });
    expect(bare.requests).toHaveLength(1);
  });

  it('out of attempts: rejects with the last AxiosError itself, data parsed; onGiveUp runs once after it', async () => {
    const server = await serve([], 503);
    const giveUps: GiveUpEvent[] = [];
    const error = await failureOf(attached({ ...fast, maxAttempts: 3, onGiveUp: (event) => void giveUps.push(event) }).get(server.url));
    expect(axios.isAxiosError(error)).toBe(true);
    expect(error).toBeInstanceOf(AxiosError);
    expect(error).toMatchObject({ status: 503, response: { status: 503, data: { error: { code: 503 } } } });
    expect(server.requests).toHaveLength(3);
    expect(giveUps).toHaveLength(1);
    expect(giveUps[0]).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect(giveUps[0]?.error).toBeInstanceOf(RetryError);
    expect(giveUps[0]?.error).toMatchObject({ cause: error });
  });

  it.each([404, 400])('%i: rejects at once with the AxiosError, one request, onGiveUp hears not-retryable', async (status) => {
    const server = await serve([status]);
    const giveUps: GiveUpEvent[] = [];
    const error = await failureOf(attached({ ...fast, onGiveUp: (event) => void giveUps.push(event) }).get(server.url));
    expect(error).toMatchObject({ isAxiosError: true, status });
    expect(server.requests).toHaveLength(1);
    expect(giveUps).toEqual([expect.objectContaining({ reason: 'not-retryable', attempts: 1, error })]);
  });

  it('options.retryable judges the AxiosError instead of the default classification', async () => {
    const server = await serve([404, 404]);
    const seen: unknown[] = [];
    const api = attached({
      ...fast,
      retryable: (error) => {
        seen.push(error);
        return axios.isAxiosError(error) && error.status === 404;
      },
    });
    await expect(api.get(server.url)).resolves.toMatchObject({ data: ITEM });
    expect(server.requests).toHaveLength(3);
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBeInstanceOf(AxiosError);
  });

  it('a response interceptor and transformResponse run once per axios request, not per attempt', async () => {
    const server = await serve([503, 503]);
    const api = attached();
    let intercepted = 0;
    let transformed = 0;
    api.interceptors.response.use((response) => {
      intercepted++;
      return response;
    });
    const response = await api.get(server.url, {
      transformResponse: [
        (data: string) => {
          transformed++;
          return JSON.parse(data) as unknown;
        },
      ],
    });
    expect(response.data).toEqual(ITEM);
    expect([intercepted, transformed, server.requests.length]).toEqual([1, 1, 3]);
  });

  it('each attempt calls the adapter the instance names, with the attempt’s signal', async () => {
    const server = await serve([503]);
    const signals: unknown[] = [];
    const http = axios.getAdapter('http');
    const api = axios.create({
      adapter: (config) => {
        signals.push(config.signal);
        return http(config);
      },
    });
    attachRetry(api, fast);
    await expect(api.get(server.url)).resolves.toMatchObject({ data: ITEM });
    expect(signals).toHaveLength(2);
    expect(signals[0]).toBeInstanceOf(AbortSignal);
    expect(signals[1]).toBeInstanceOf(AbortSignal);
    expect(signals[0]).not.toBe(signals[1]);
  });

  it('the response and the error carry the request’s config: its own signal and adapter, not the attempt’s', async () => {
    const server = await serve([503], 404);
    const api = attached();
    const controller = new AbortController();
    const error = (await failureOf(api.get(server.url, { signal: controller.signal }))) as AxiosError;
    expect(error.config?.signal).toBe(controller.signal);
    expect(error.response?.config.signal).toBe(controller.signal);
    expect(error.config?.adapter).toEqual(['xhr', 'http', 'fetch']);
    expect(error.config?.cancelToken).toBeUndefined();

    const ok = await serve([503]);
    const response = await api.get(ok.url);
    expect(response.config.signal).toBeUndefined();
    expect(response.config.adapter).toEqual(['xhr', 'http', 'fetch']);
  });

  it('a retried stream response is destroyed before the next attempt; the one handed over is not', async () => {
    const server = await serve([503]);
    const destroyed: boolean[] = [];
    const api = attached({
      ...fast,
      onRetry: ({ error }: RetryEvent) => {
        const data = (error as AxiosError<Readable>).response?.data;
        destroyed.push(data?.destroyed === true);
      },
    });
    const response = await api.get<Readable>(server.url, { responseType: 'stream' });
    expect(destroyed).toEqual([true]);
    expect(response.data.destroyed).toBe(false);
    let text = '';
    for await (const chunk of response.data) text += String(chunk);
    expect(JSON.parse(text)).toEqual(ITEM);
    expect(server.requests).toHaveLength(2);
  });
});

describe('timeouts, which axios-retry does not retry', () => {
  it.each([
    ['ECONNABORTED', {}],
    ['ETIMEDOUT', { transitional: { clarifyTimeoutError: true } }],
  ])('axios’s timeout (%s) is retried for a GET: stall, stall, 200 is three requests', async (code, extra) => {
    const server = await serve(['stall', 'stall']);
    const retried: unknown[] = [];
    const api = attached({ ...fast, onRetry: ({ error }) => void retried.push(error) });
    await expect(api.get(server.url, { timeout: 50, ...extra })).resolves.toMatchObject({ data: ITEM });
    expect(server.requests).toHaveLength(3);
    expect(retried).toEqual([expect.objectContaining({ code }), expect.objectContaining({ code })]);
  });

  it('a POST that timed out is not resent (it may have been applied): one request, the AxiosError', async () => {
    const server = await serve(['stall']);
    const error = await failureOf(attached().post(server.url, { id: 1 }, { timeout: 50 }));
    expect(error).toMatchObject({ isAxiosError: true, code: 'ECONNABORTED' });
    expect(server.requests).toHaveLength(1);
  });
});

describe('which requests are resent', () => {
  it.each(['get', 'head', 'options', 'put', 'delete', 'trace'])('%s after a reset: resent', async (method) => {
    const server = await serve(['reset']);
    await attached().request({ url: server.url, method: method as 'get' });
    expect(server.requests.map((r) => r.method)).toEqual([method.toUpperCase(), method.toUpperCase()]);
  });

  it.each(['post', 'patch'] as const)('%s after a reset: sent once, the ECONNRESET AxiosError', async (method) => {
    const server = await serve(['reset']);
    const error = await failureOf(attached().request({ url: server.url, method, data: { id: 1 } }));
    expect(error).toMatchObject({ isAxiosError: true, code: 'ECONNRESET' });
    expect(server.requests).toHaveLength(1);
  });

  it('a POST with an Idempotency-Key is resent, the same body each time', async () => {
    const server = await serve(['reset', 503]);
    await attached().post(server.url, { id: 1 }, { headers: { 'Idempotency-Key': 'order-1' } });
    expect(server.requests.map((r) => r.body)).toEqual(['{"id":1}', '{"id":1}', '{"id":1}']);
    expect(server.requests.every((r) => r.headers['idempotency-key'] === 'order-1')).toBe(true);
  });

  it.each([
    ['a Buffer', () => Buffer.from('bytes \u00ff')],
    ['a Uint8Array', () => new TextEncoder().encode('bytes \u00ff')],
  ])('a PUT with %s body is resent after a reset, the same bytes each time', async (_name, body) => {
    const server = await serve(['reset', 503]);
    await attached().put(server.url, body(), { headers: { 'content-type': 'application/octet-stream' } });
    expect(server.requests.map((r) => r.body)).toEqual(['bytes \u00ff', 'bytes \u00ff', 'bytes \u00ff']);
  });

  it('a blank Idempotency-Key does not count', async () => {
    const server = await serve(['reset']);
    await failureOf(attached().post(server.url, 'x', { headers: { 'Idempotency-Key': '  ' } }));
    expect(server.requests).toHaveLength(1);
  });

  it('options.idempotent replaces the method’s rule, both ways', async () => {
    const post = await serve(['reset']);
    await attached({ ...fast, idempotent: true }).post(post.url, 'x');
    expect(post.requests).toHaveLength(2);
    const get = await serve(['reset']);
    await failureOf(attached({ ...fast, idempotent: () => false }).get(get.url));
    expect(get.requests).toHaveLength(1);
  });

  it('a stream body is sent once, even with an Idempotency-Key (the first attempt consumed it)', async () => {
    const server = await serve(['reset']);
    const error = await failureOf(
      attached().put(server.url, Readable.from(['part one, ', 'part two']), { headers: { 'Idempotency-Key': 'k' } }),
    );
    expect(error).toMatchObject({ code: 'ECONNRESET' });
    expect(server.requests).toHaveLength(1);
  });

  it('a stream body that was read is not resent even when the failure would allow it (ECONNREFUSED)', async () => {
    const { refusedUrl } = await import('../clients/loopback.js');
    const url = await refusedUrl();
    const attempts: number[] = [];
    const error = await failureOf(
      attached({ ...fast, onEvent: (e) => void (e.type === 'attempt' && attempts.push(e.attempt)) }).put(url, Readable.from(['x'])),
    );
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(attempts).toEqual([1]);
  });
});

describe('details', () => {
  it('a web ReadableStream body (axios’s fetch adapter) is sent once, even with an Idempotency-Key', async () => {
    const server = await serve(['reset']);
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('abc'));
        controller.close();
      },
    });
    const api = axios.create({ adapter: 'fetch' });
    const attempts: number[] = [];
    attachRetry(api, { ...fast, onEvent: (event) => void (event.type === 'attempt' && attempts.push(event.attempt)) });
    const error = await failureOf(api.put(server.url, body, { headers: { 'Idempotency-Key': 'k' } }));
    expect(axios.isAxiosError(error)).toBe(true);
    expect(attempts).toEqual([1]);
    expect(server.requests).toHaveLength(1);
  });

  it('a null body is replayable: a keyed POST with it is resent', async () => {
    const server = await serve(['reset']);
    await attached().post(server.url, null, { headers: { 'Idempotency-Key': 'k' } });
    expect(server.requests).toHaveLength(2);
  });

  it('an instance without an adapter setting uses axios’s default list', async () => {
    const server = await serve([503]);
    const api = attached();
    api.defaults.adapter = undefined;
    await expect(api.get(server.url)).resolves.toMatchObject({ data: ITEM });
    expect(server.requests).toHaveLength(2);
  });

  it('adds no tick: with synchronous interceptors only, the adapter is called within the call, as without it', () => {
    let calls = 0;
    const api = axios.create({
      adapter: () => {
        calls++;
        return new Promise(() => {});
      },
    });
    attachRetry(api, fast);
    const controller = new AbortController();
    void api.get('http://127.0.0.1:9/', { signal: controller.signal }).catch(() => {});
    expect(calls).toBe(1);
    controller.abort();
  });

  it('maxRetryAfterMs: 0 still retries a Retry-After of 0', async () => {
    const server = await serve([503]);
    await expect(attached({ ...fast, maxRetryAfterMs: 0 }).get(server.url)).resolves.toMatchObject({ data: ITEM });
    expect(server.requests).toHaveLength(2);
  });

  it('attaches with no options (retry()’s defaults): a 404 is one request', async () => {
    const server = await serve([404]);
    const api = axios.create();
    attachRetry(api);
    await expect(api.get(server.url)).rejects.toMatchObject({ status: 404 });
    expect(server.requests).toHaveLength(1);
  });
});

describe('an adapter of your own', () => {
  it('a retried error whose data is no stream is left as it is, and your onRetry still runs', async () => {
    let calls = 0;
    const busy = Object.assign(new Error('busy'), {
      isAxiosError: true,
      response: { status: 503, data: { message: 'busy' }, headers: {} },
    });
    const api = axios.create({
      adapter: async (config) => {
        calls++;
        if (calls === 1) throw busy;
        return { data: '{"ok":true}', status: 200, statusText: 'OK', headers: {}, config };
      },
    });
    const retried: unknown[] = [];
    attachRetry(api, { ...fast, onRetry: ({ error }) => void retried.push(error) });
    await expect(api.get('http://127.0.0.1:9/')).resolves.toMatchObject({ data: { ok: true } });
    expect(retried).toEqual([busy]);
    expect(busy.response.data).toEqual({ message: 'busy' });
  });

  it('an AxiosError whose cause is another is handed over itself, not its cause', async () => {
    const inner = { isAxiosError: true, status: 500, message: 'inner' };
    const outer = Object.assign(new Error('outer'), { isAxiosError: true, status: 404, cause: inner });
    const api = axios.create({
      adapter: async () => {
        throw outer;
      },
    });
    attachRetry(api, fast);
    expect(await failureOf(api.get('http://127.0.0.1:9/'))).toBe(outer);
  });

  it('the global axios can be attached and detached too', async () => {
    const server = await serve([503]);
    const detach = attachRetry(axios, fast);
    try {
      await expect(axios.get(server.url)).resolves.toMatchObject({ data: ITEM });
      expect(server.requests).toHaveLength(2);
    } finally {
      detach();
    }
    await expect(axios.get(server.url)).resolves.toMatchObject({ data: ITEM });
    expect(server.requests).toHaveLength(3);
  });
});
