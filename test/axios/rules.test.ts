// attachRetry's other promises, against real axios and loopback: a POST resent only when the
// connection was refused, the caller's signal and cancelToken ending the whole call, the
// deadline, one retry layer per instance, per-request options, and options checked up front.
import { getEventListeners } from 'node:events';
import axios, { type AxiosError } from 'axios';
import { describe, expect, it } from 'vitest';
import { attachRetry } from '../../src/axios/index.js';
import { RetryError } from '../../src/index.js';
import { startLoopback } from '../helpers/loopback.js';
import { closedPort } from '../helpers/loopback.js';
import { failureOf, sendJson } from '../clients/loopback.js';
import { ITEM, useScriptedServers } from '../clients/recipe-kit.js';
import { attached, fast } from './attached.js';

const serve = useScriptedServers();
describe('a POST on a refused connection (it provably never left)', () => {
  it('is resent: the server, started after the refusal, gets it once', async () => {
    const port = await closedPort();
    const bodies: string[] = [];
    let close: () => Promise<void> = async () => {};
    const api = attached({
      ...fast,
      // The first attempt was refused; now something listens on that port.
      onRetry: async () => {
        const loopback = await startLoopback(
          (req, res) => {
            let body = '';
            req.on('data', (chunk: Buffer) => (body += String(chunk)));
            req.on('end', () => {
              bodies.push(body);
              sendJson(res, ITEM);
            });
          },
          { port },
        );
        close = loopback.close;
      },
      backoff: { initialDelayMs: 50, maxDelayMs: 50, jitter: 'none' },
    });
    try {
      const response = await api.post(`http://127.0.0.1:${port}/orders`, { id: 7 });
      expect(response.data).toEqual(ITEM);
      expect(bodies).toEqual(['{"id":7}']);
    } finally {
      await close();
    }
  });
});

describe('the caller’s signal and cancelToken abort the whole call', () => {
  it('a signal aborted during a wait: axios’s CanceledError at once, no further request', async () => {
    const server = await serve([503]);
    const controller = new AbortController();
    const api = attached({ backoff: { initialDelayMs: 60_000, maxDelayMs: 60_000 }, onRetry: () => controller.abort() });
    const started = performance.now();
    const error = await failureOf(api.get(server.url, { signal: controller.signal }));
    expect(axios.isCancel(error)).toBe(true);
    expect(error).toMatchObject({ code: 'ERR_CANCELED' });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(server.requests).toHaveLength(1);
  });

  it('a signal aborted during an attempt: the request in flight is cancelled (its socket closes)', async () => {
    const server = await serve(['stall']);
    const controller = new AbortController();
    void server.stalled.then(() => controller.abort());
    const error = await failureOf(attached().get(server.url, { signal: controller.signal }));
    expect(axios.isCancel(error)).toBe(true);
    await server.stalledSocketClosed;
    expect(server.requests).toHaveLength(1);
  });

  it('a cancelToken cancelled during a wait: its CanceledError, with its message', async () => {
    const server = await serve([503]);
    const source = axios.CancelToken.source();
    const api = attached({ backoff: { initialDelayMs: 60_000, maxDelayMs: 60_000 }, onRetry: () => source.cancel('the user left') });
    const error = await failureOf(api.get(server.url, { cancelToken: source.token }));
    expect(axios.isCancel(error)).toBe(true);
    expect(error).toMatchObject({ message: 'the user left' });
    expect(server.requests).toHaveLength(1);
  });

  it('a cancelToken cancelled during an attempt cancels the request in flight', async () => {
    const server = await serve(['stall']);
    const source = axios.CancelToken.source();
    void server.stalled.then(() => source.cancel('stop'));
    const error = await failureOf(attached().get(server.url, { cancelToken: source.token }));
    expect(error).toMatchObject({ message: 'stop' });
    await server.stalledSocketClosed;
  });

  it('a signal and a cancelToken together: either one aborts', async () => {
    const server = await serve([503, 503]);
    const source = axios.CancelToken.source();
    const controller = new AbortController();
    const api = attached({ backoff: { initialDelayMs: 60_000, maxDelayMs: 60_000 }, onRetry: () => source.cancel('token') });
    const error = await failureOf(api.get(server.url, { cancelToken: source.token, signal: controller.signal }));
    expect(error).toMatchObject({ message: 'token' });
    expect(server.requests).toHaveLength(1);

    const other = await serve([503, 503]);
    const source2 = axios.CancelToken.source();
    const controller2 = new AbortController();
    const api2 = attached({ backoff: { initialDelayMs: 60_000, maxDelayMs: 60_000 }, onRetry: () => controller2.abort() });
    const error2 = await failureOf(api2.get(other.url, { cancelToken: source2.token, signal: controller2.signal }));
    expect(error2).toMatchObject({ code: 'ERR_CANCELED' });
    expect(other.requests).toHaveLength(1);
  });

  it('a request refused for its options, or failed, leaves no listener on its token', async () => {
    const server = await serve([404]);
    const source = axios.CancelToken.source();
    const api = attached();
    const listeners = () => (source.token as unknown as { _listeners?: unknown[] })._listeners;
    await failureOf(api.get(server.url, { cancelToken: source.token, tenacious: { maxAttempts: Infinity, deadlineMs: Infinity } }));
    expect(listeners()).toEqual([]);
    await failureOf(api.get(server.url, { cancelToken: source.token }));
    expect(listeners()).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('the request’s signal keeps no listener once the call settles, with a cancelToken or without', async () => {
    const server = await serve([503, 503]);
    const api = attached();
    const controller = new AbortController();
    const source = axios.CancelToken.source();
    await api.get(server.url, { signal: controller.signal, cancelToken: source.token });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    await api.get(server.url, { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(server.requests).toHaveLength(4);
  });

  it('a token cancelled afterwards does nothing to a settled request (its listener is gone)', async () => {
    const server = await serve([503]);
    const source = axios.CancelToken.source();
    const response = await attached().get(server.url, { cancelToken: source.token });
    expect(response.data).toEqual(ITEM);
    const listeners = (source.token as unknown as { _listeners?: unknown[] })._listeners ?? [];
    expect(listeners).toHaveLength(0);
  });
});

describe('the deadline', () => {
  it('an attempt still running at the deadline is abandoned: RetryError "deadline", its socket closed', async () => {
    const server = await serve(['stall']);
    const error = await failureOf(attached({ ...fast, deadlineMs: 100 }).get(server.url));
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'deadline', attempts: 1 });
    expect(error).not.toHaveProperty('config');
    await server.stalledSocketClosed;
    expect(server.requests).toHaveLength(1);
  });

  it('attemptTimeoutMs ends a hung attempt and the next one is sent', async () => {
    const server = await serve(['stall']);
    await expect(attached({ ...fast, attemptTimeoutMs: 50 }).get(server.url)).resolves.toMatchObject({ data: ITEM });
    expect(server.requests).toHaveLength(2);
  });
});

describe('one retry layer', () => {
  it('attaching twice is refused, and the instance keeps one layer: maxAttempts requests, not its square', async () => {
    const server = await serve([], 503);
    const api = axios.create();
    attachRetry(api, { ...fast, maxAttempts: 2 });
    expect(() => attachRetry(api, { ...fast, maxAttempts: 2 })).toThrow(
      new Error(
        'attachRetry: this axios instance retries already (one retry layer); call the function attachRetry returned to detach it first',
      ),
    );
    await failureOf(api.get(server.url));
    expect(server.requests).toHaveLength(2);
  });

  it('detach takes the rules off (one request again) and lets it attach anew; a second detach leaves the new one', async () => {
    const server = await serve([], 503);
    const api = axios.create();
    const detach = attachRetry(api, { ...fast, maxAttempts: 2 });
    detach();
    await failureOf(api.get(server.url));
    expect(server.requests).toHaveLength(1);
    attachRetry(api, { ...fast, maxAttempts: 3 });
    detach();
    await failureOf(api.get(server.url));
    expect(server.requests).toHaveLength(4);
    // The instance is still known to retry: a third layer is refused, as with no stale detach.
    expect(() => attachRetry(api, fast)).toThrow(/retries already/);
    await failureOf(api.get(server.url));
    expect(server.requests).toHaveLength(7);
  });

  it('a config that went through the instance already, sent again, is wrapped once', async () => {
    const server = await serve([], 503);
    const api = axios.create();
    const configs: unknown[] = [];
    // Registered first, so it runs after attachRetry's interceptor and sees its adapter.
    api.interceptors.request.use(
      (config) => {
        configs.push(config);
        return config;
      },
      undefined,
      { synchronous: true },
    );
    attachRetry(api, { ...fast, maxAttempts: 2 });
    await failureOf(api.get(server.url));
    expect(server.requests).toHaveLength(2);
    await failureOf(api.request(configs[0] as object));
    expect(server.requests).toHaveLength(4);
  });

  it('why one layer: an axios-retry-like interceptor over attachRetry multiplies the requests (3 × 2), attachRetry alone sends 2', async () => {
    const layered = await serve([], 503);
    const api = attached({ ...fast, maxAttempts: 2 });
    // What axios-retry does: on an error, send error.config again through the instance, here twice at most.
    let resent = 0;
    api.interceptors.response.use(undefined, (error: AxiosError) => {
      if (resent >= 2 || error.config === undefined) throw error;
      resent++;
      return api.request(error.config);
    });
    await failureOf(api.get(layered.url));
    expect(layered.requests).toHaveLength(6);

    const alone = await serve([], 503);
    await failureOf(attached({ ...fast, maxAttempts: 2 }).get(alone.url));
    expect(alone.requests).toHaveLength(2);
  });

  it('retrying error.config again, as an outer layer would, adds the attempts of one call', async () => {
    const server = await serve([], 503);
    const api = attached({ ...fast, maxAttempts: 2 });
    const error = (await failureOf(api.get(server.url))) as AxiosError;
    await failureOf(api.request(error.config as object));
    expect(server.requests).toHaveLength(4);
  });
});

describe('per-request options', () => {
  it('tenacious: false sends the request once', async () => {
    const server = await serve([503]);
    const error = await failureOf(attached().get(server.url, { tenacious: false }));
    expect(error).toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
  });

  it('config.tenacious replaces the attached options field by field', async () => {
    const server = await serve([], 503);
    const api = attached({ ...fast, maxAttempts: 5 });
    await failureOf(api.get(server.url, { tenacious: { maxAttempts: 2 } }));
    expect(server.requests).toHaveLength(2);
    // The backoff given at attach still applies: the test would wait seconds otherwise.
    await failureOf(api.get(server.url));
    expect(server.requests).toHaveLength(7);
  });

  it('a bad request option rejects that request, naming the field; nothing is sent', async () => {
    const server = await serve([]);
    const api = attached();
    await expect(api.get(server.url, { tenacious: { maxAttempts: 0 } })).rejects.toThrow(
      new RangeError('axios request: config.tenacious.maxAttempts must be a safe integer >= 1 or Infinity, got 0'),
    );
    await expect(api.get(server.url, { tenacious: true as never })).rejects.toThrow(
      new TypeError('axios request: config.tenacious must be an options object or false, got true'),
    );
    await expect(api.get(server.url, { tenacious: null as never })).rejects.toThrow(
      new TypeError('axios request: config.tenacious must be an options object or false, got null'),
    );
    await expect(api.get(server.url, { tenacious: { maxAtempts: 2 } as never })).rejects.toThrow(
      'axios request: unknown option "maxAtempts" in config.tenacious (did you mean "maxAttempts"?)',
    );
    expect(server.requests).toHaveLength(0);
  });

  it('a combination the engine refuses rejects the request with the engine’s message', async () => {
    const server = await serve([]);
    const api = attached();
    await expect(api.get(server.url, { tenacious: { maxAttempts: Infinity, deadlineMs: Infinity } })).rejects.toThrow(
      new RangeError('attachRetry: options.maxAttempts and options.deadlineMs are both Infinity: the loop would never give up'),
    );
    expect(server.requests).toHaveLength(0);
  });

  it('an adapter name axios does not know rejects the request with axios’s own error', async () => {
    const api = attached();
    await expect(api.get('http://127.0.0.1:9/', { adapter: 'carrier-pigeon' })).rejects.toThrow("Unknown adapter 'carrier-pigeon'");
  });
});

describe('options checked when attaching', () => {
  it('names the bad field and the value', () => {
    const api = axios.create();
    expect(() => attachRetry(api, { maxAttempts: 0 })).toThrow(
      new RangeError('attachRetry: options.maxAttempts must be a safe integer >= 1 or Infinity, got 0'),
    );
    expect(() => attachRetry(api, { maxRetryAfterMs: -1 })).toThrow(
      new RangeError('attachRetry: options.maxRetryAfterMs must be a number >= 0 (Infinity for none), got -1'),
    );
    expect(() => attachRetry(api, { maxRetryAfterMs: '5' as never })).toThrow(RangeError);
    expect(() => attachRetry(api, { maxAtempts: 3 } as never)).toThrow(
      new TypeError('attachRetry: unknown option "maxAtempts" (did you mean "maxAttempts"?)'),
    );
    expect(() => attachRetry(api, [] as never)).toThrow(new TypeError('attachRetry: options must be a plain object, got []'));
  });

  it.each([
    ['retryOnResult', "axios's validateStatus says which responses fail; those are judged by retryable"],
    ['signal', "pass the request's own signal or cancelToken: it aborts the whole call"],
    ['hedge', 'not offered for axios'],
  ])('refuses %s, saying why', (field, why) => {
    expect(() => attachRetry(axios.create(), { [field]: () => true } as never)).toThrow(
      new TypeError(`attachRetry: options.${field} must be left out (${why}), got a function (${field})`),
    );
  });

  it('refuses what is not an axios instance', () => {
    expect(() => attachRetry({} as never)).toThrow(
      new TypeError('attachRetry: instance must be an axios instance (axios, or one from axios.create()), got {}'),
    );
    const message = (got: string) => `attachRetry: instance must be an axios instance (axios, or one from axios.create()), got ${got}`;
    expect(() => attachRetry((() => {}) as never)).toThrow(new TypeError(message('a function (anonymous)')));
    expect(() => attachRetry(Object.assign(function api() {}, { interceptors: {} }) as never)).toThrow(
      new TypeError(message('a function (api)')),
    );
    expect(() => attachRetry(undefined as never)).toThrow(new TypeError(message('undefined')));
  });

  it('bad options leave the instance unattached', async () => {
    const server = await serve([503]);
    const api = axios.create();
    expect(() => attachRetry(api, { maxAttempts: 0 })).toThrow(RangeError);
    attachRetry(api, fast);
    await expect(api.get(server.url)).resolves.toMatchObject({ data: ITEM });
  });

  it('reads own fields only: an option planted on Object.prototype is not one', async () => {
    const server = await serve([], 'reset');
    const proto = Object.prototype as Record<string, unknown>;
    proto.idempotent = true;
    try {
      await failureOf(attached().post(server.url, 'x'));
      await failureOf(attached().post(server.url, 'x', { tenacious: {} }));
    } finally {
      delete proto.idempotent;
    }
    expect(server.requests).toHaveLength(2);
  });
});
