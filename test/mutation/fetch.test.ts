// Edges of retryFetch that test/fetch.test.ts leaves open, found by mutation testing. An injected
// fetch answers with real Response objects; timing runs in virtual time where it matters.
import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpStatusError } from '../../src/errors.js';
import { type RetryFetchOptions, retryFetch } from '../../src/fetch.js';
import { httpStatus } from '../../src/classify/predicates.js';
import { track, useVirtualClock } from '../helpers/clock.js';

/** An injected fetch: answer n is answers[n]() (then 200 "ok"); records each call's init. */
function scriptedFetch(answers: Array<(init: RequestInit) => Response | Promise<Response>>) {
  const calls: RequestInit[] = [];
  const fn = (async (_input: string | URL | Request, init?: RequestInit) => {
    calls.push(init as RequestInit);
    return (answers[calls.length - 1] ?? (() => new Response('ok')))(init as RequestInit);
  }) as typeof fetch;
  return { fn, calls };
}

const status = (code: number, headers: Record<string, string> = {}) => () => new Response(`status ${code}`, { status: code, headers });
const fast = { initialDelayMs: 10, multiplier: 1, maxDelayMs: 10, jitter: 'none' } as const;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.resetModules();
});

describe('HttpStatusError', () => {
  it('says the status, the status text when there is one, and the method', () => {
    expect(new HttpStatusError(new Response('', { status: 503 }), 'GET').message).toBe('HTTP 503 (GET)');
    expect(new HttpStatusError(new Response('', { status: 503, statusText: 'Service Unavailable' }), 'PUT').message).toBe(
      'HTTP 503 Service Unavailable (PUT)',
    );
  });
});

describe('retryFetch: options and the fetch it calls', () => {
  it('says so when there is no fetch to call', () => {
    vi.stubGlobal('fetch', undefined);
    expect(() => retryFetch('http://x.test/')).toThrow(new TypeError('retryFetch: globalThis.fetch is undefined; pass options.fetch'));
  });

  it('works without options, with the global fetch', async () => {
    const { fn, calls } = scriptedFetch([]);
    vi.stubGlobal('fetch', fn);
    expect(await (await retryFetch('http://x.test/')).text()).toBe('ok');
    expect(calls).toHaveLength(1);
  });

  it.each([
    ['x', 'retryFetch: options must be an object, got "x"'],
    [{ signal: null }, 'retryFetch: options.signal must be an AbortSignal, got null'],
    [{ signal: Object.assign(() => undefined, { aborted: false }) }, 'retryFetch: options.signal must be an AbortSignal, got a function'],
  ])('refuses options %j, naming the field', (options, message) => {
    expect(() => retryFetch('http://x.test/', undefined, options as RetryFetchOptions)).toThrow(message);
  });

  it('takes a maxRetryAfterMs of 0', () => {
    const { fn } = scriptedFetch([]);
    expect(() => retryFetch('http://x.test/', undefined, { fetch: fn, maxRetryAfterMs: 0 })).not.toThrow();
  });

  it('rejects with what fetch rejected with, even undefined', async () => {
    const fn = (() => Promise.reject(undefined)) as typeof fetch;
    expect(await rejection(retryFetch('http://x.test/', undefined, { fetch: fn, retryable: () => false }))).toBeUndefined();
  });
});

describe('retryFetch: which requests are resent', () => {
  it('resends TRACE, an idempotent method', async () => {
    const { fn, calls } = scriptedFetch([status(503)]);
    const res = await retryFetch('http://x.test/', { method: 'TRACE' }, { fetch: fn, backoff: fast });
    expect(res.status).toBe(200);
    expect(calls).toHaveLength(2);
  });

  it('resends a request whose body is null', async () => {
    const { fn, calls } = scriptedFetch([status(503)]);
    const res = await retryFetch('http://x.test/', { method: 'PUT', body: null }, { fetch: fn, backoff: fast });
    expect(res.status).toBe(200);
    expect(calls).toHaveLength(2);
  });

  it('does not take a blank Idempotency-Key (Unicode space only) as one', async () => {
    const { fn, calls } = scriptedFetch([status(503)]);
    const res = await retryFetch('http://x.test/', { method: 'POST', body: '{}', headers: { 'idempotency-key': '\u00a0' } }, { fetch: fn, backoff: fast });
    expect(res.status).toBe(503);
    expect(calls).toHaveLength(1);
  });

  it('asks the predicate about a 400 response as about any error status', async () => {
    const { fn, calls } = scriptedFetch([status(400)]);
    const res = await retryFetch('http://x.test/', undefined, { fetch: fn, backoff: fast, retryable: httpStatus(400) });
    expect(res.status).toBe(200);
    expect(calls).toHaveLength(2);
  });

  it('rejects with what the predicate throws, and cancels the response it was asked about', async () => {
    const response = new Response('busy', { status: 503 });
    const { fn } = scriptedFetch([() => response]);
    const bug = (error: unknown): boolean => {
      throw new Error('predicate bug', { cause: error });
    };
    const error = (await rejection(retryFetch('http://x.test/', undefined, { fetch: fn, retryable: bug }))) as Error;
    expect(error.message).toBe('predicate bug');
    expect(response.bodyUsed).toBe(true); // its body was cancelled
  });
});

describe('retryFetch: the caller\'s two signals', () => {
  it.each(['init', 'options'] as const)('sends nothing when the %s signal has already aborted', async (which) => {
    const { fn, calls } = scriptedFetch([]);
    const reason = new Error(`aborted before the call via ${which}`);
    const aborted = AbortSignal.abort(reason);
    const live = new AbortController().signal;
    const call = retryFetch(
      'http://x.test/',
      { signal: which === 'init' ? aborted : live },
      { fetch: fn, signal: which === 'init' ? live : aborted },
    );
    expect(await rejection(call)).toBe(reason);
    expect(calls).toHaveLength(0);
  });
});

describe('retryFetch: the returned response and the caller\'s signal', () => {
  it('adds no listener to the caller\'s signal for a response without a body', async () => {
    const { fn } = scriptedFetch([() => new Response(null, { status: 204 })]);
    const controller = new AbortController();
    const res = await retryFetch('http://x.test/', { signal: controller.signal }, { fetch: fn });
    expect(res.status).toBe(204);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('leaves no listener on the caller\'s signal once it has aborted', async () => {
    const { fn } = scriptedFetch([]);
    const controller = new AbortController();
    await retryFetch('http://x.test/', { signal: controller.signal }, { fetch: fn });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort(new Error('done'));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('aborts the response\'s fetch when the caller aborted just as it arrived', async () => {
    const { fn, calls } = scriptedFetch([]);
    const controller = new AbortController();
    const reason = new Error('gone');
    // Budgets are user code; this one aborts the caller's signal the moment the attempt succeeds.
    const budget = { record: (success: boolean) => (success ? controller.abort(reason) : undefined), canRetry: () => true };
    const res = await retryFetch('http://x.test/', { signal: controller.signal }, { fetch: fn, budget });
    expect(res.status).toBe(200);
    expect(calls[0]?.signal?.aborted).toBe(true);
    expect(calls[0]?.signal?.reason).toBe(reason);
  });

  it('aborts a shared signal harmlessly after some returned responses were garbage-collected', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const shared = new AbortController();
    const answer = (async () => new Response('body')) as typeof fetch;
    for (let i = 0; i < 20; i++) await retryFetch('http://x.test/', { signal: shared.signal }, { fetch: answer });
    const thrown: unknown[] = [];
    const record = (error: unknown): void => {
      thrown.push(error);
    };
    process.on('uncaughtException', record);
    try {
      await new Promise((resolve) => setTimeout(resolve, 10)); // the calls' last references go
      gc(); // the responses' controllers go now; their registry entries only in a later task
      shared.abort(new Error('shutdown'));
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off('uncaughtException', record);
    }
    expect(thrown).toEqual([]);
  });
});

describe('retryFetch in a runtime without parts of the fetch API', () => {
  it.each(['FinalizationRegistry', 'WeakRef'])('without %s, returns responses (the caller\'s signal then stops only the call)', async (name) => {
    vi.stubGlobal(name, undefined);
    vi.resetModules();
    const fresh = await import('../../src/fetch.js');
    const { fn } = scriptedFetch([]);
    const controller = new AbortController();
    const res = await fresh.retryFetch('http://x.test/', { signal: controller.signal }, { fetch: fn });
    expect(await res.text()).toBe('ok');
  });

  it('without Request, takes a URL string', async () => {
    vi.stubGlobal('Request', undefined);
    const { fn } = scriptedFetch([]);
    expect((await retryFetch('http://x.test/', undefined, { fetch: fn })).status).toBe(200);
  });

  it('without Blob, URLSearchParams or FormData, still sends a stream body once', async () => {
    const { fn, calls } = scriptedFetch([status(503)]);
    vi.stubGlobal('Blob', undefined);
    vi.stubGlobal('URLSearchParams', undefined);
    vi.stubGlobal('FormData', undefined);
    const body = new ReadableStream({
      start(controller) {
        controller.close();
      },
    });
    const res = await retryFetch('http://x.test/', { method: 'PUT', body, duplex: 'half' } as RequestInit, { fetch: fn, backoff: fast });
    expect(res.status).toBe(503);
    expect(calls).toHaveLength(1);
  });
});

describe('retryFetch in virtual time', () => {
  const clock = useVirtualClock();

  it('sends nothing when options.signal aborts in the same tick as the call', async () => {
    const { fn, calls } = scriptedFetch([]);
    const controller = new AbortController();
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, signal: controller.signal }));
    controller.abort(new Error('changed my mind'));
    await clock.tickAsync(0);
    expect(call.state).toBe('rejected');
    expect(calls).toHaveLength(0);
  });

  it('waits for a Retry-After equal to maxRetryAfterMs', async () => {
    const { fn, calls } = scriptedFetch([status(503, { 'retry-after': '3' })]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: fast, maxRetryAfterMs: 3000 }));
    await clock.tickAsync(3000);
    expect(calls).toHaveLength(2);
    expect(call.value?.status).toBe(200);
  });

  it('applies maxRetryAfterMs to responses only: a network error asking for longer is still retried', async () => {
    const { fn, calls } = scriptedFetch([
      () => Promise.reject(Object.assign(new TypeError('fetch failed'), { retryAfterMs: 5000 })),
    ]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: fast, maxRetryAfterMs: 1000 }));
    await clock.tickAsync(5000);
    expect(calls).toHaveLength(2);
    expect(call.value?.status).toBe(200);
  });

  it('with bufferBody, discards a response whose body ends after its attempt was abandoned', async () => {
    const slow = new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          setTimeout(() => {
            controller.enqueue(new TextEncoder().encode('slow body'));
            controller.close();
          }, 200);
        },
      }),
    );
    const { fn, calls } = scriptedFetch([() => slow]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: fast, attemptTimeoutMs: 100, bufferBody: true }));
    await clock.tickAsync(200);
    expect(calls).toHaveLength(2);
    expect(await call.value?.text()).toBe('ok');
    expect(slow.bodyUsed).toBe(true); // its body was cancelled when it finally arrived
  });
});
