// retryFetch end to end, by subject: statuses and classification, idempotency and resend,
// Retry-After, bodies, held and discarded responses, signals and abort, options. Behaviour is
// tested against real node:http servers on 127.0.0.1 with Node's own fetch (undici): real
// statuses, real bodies, real sockets. Exact timing (Retry-After, the deadline, when a body is
// cancelled) is tested in virtual time with an injected fetch that answers with real Response
// objects. Each stage alone has its own file: request-plan, attempt, fetch-policy, held-response,
// either-signal, resume-driver (and resume, responses, hedge-fetch for what they wire).
import { getEventListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { httpStatusOf, retryAfterMsOf } from '../../src/classify/error-shape.js';
import { httpStatus } from '../../src/classify/predicates.js';
import { RetryError } from '../../src/errors.js';
import { type RetryFetchOptions, retryFetch } from '../../src/fetch/index.js';
import { HttpStatusError } from '../../src/index.js';
import { gcs } from '../../src/presets/gcs.js';
import { iam } from '../../src/presets/iam.js';
import { scriptedFetch as scripted } from '../../src/testing/index.js';
import { track, useVirtualClock } from '../helpers/clock.js';
import { closedPort, closeServersAfterEach, quick, rejection, reply, scriptedServer, servers } from './loopback.js';

closeServersAfterEach();

afterEach(() => {
  vi.unstubAllGlobals();
});

/** An injected fetch: answer n is answers[n](init) (then 200 "ok"); records each call's time, signal and init. */
function scriptedFetch(answers: Array<(init: RequestInit) => Response | Promise<Response>>) {
  const calls: Array<{ at: number; signal: AbortSignal; init: RequestInit }> = [];
  const fn = (async (_input: string | URL | Request, init?: RequestInit) => {
    calls.push({ at: Date.now(), signal: init?.signal as AbortSignal, init: init as RequestInit });
    return (answers[calls.length - 1] ?? (() => new Response('ok')))(init as RequestInit);
  }) as typeof fetch;
  return { fn, calls };
}

/** An answer for {@link scriptedFetch}: status `code` with `headers`, its body "status <code>". */
const status =
  (code: number, headers: Record<string, string> = {}) =>
  () =>
    new Response(`status ${code}`, { status: code, headers });

/** A response whose body records when it was cancelled (if ever). */
function tracked(status: number, headers: Record<string, string> = {}, text = `body of ${status}`) {
  const state = { cancelledAt: undefined as number | undefined };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
    },
    pull(controller) {
      controller.close();
    },
    cancel() {
      state.cancelledAt = Date.now();
    },
  });
  return { response: new Response(body, { status, headers }), state };
}

/** The global fetch, counting its calls. */
function countingFetch() {
  let calls = 0;
  const fn: typeof fetch = (input, init) => {
    calls++;
    return fetch(input, init);
  };
  return { fn, calls: () => calls };
}

/** Backoff without jitter: `ms` before the first retry, doubling. */
const noJitter = (ms: number) => ({ initialDelayMs: ms, multiplier: 2, maxDelayMs: 60_000, jitter: 'none' as const });
/** Backoff without jitter: 10 ms before every retry. */
const fast = { initialDelayMs: 10, multiplier: 1, maxDelayMs: 10, jitter: 'none' } as const;
/** The presets' own backoff waits a second or more; their tests keep the rules, not the waits. */
const presetQuick = { backoff: { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' as const } };

describe('statuses and classification: what it resolves and rejects with', () => {
  it('retries 503s and resolves with the success, its body intact', async () => {
    const server = await scriptedServer([reply(503), reply(503), reply(200, 'hello')]);
    const res = await retryFetch(server.url, undefined, quick);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello');
    expect(server.seen.map((s) => s.method)).toEqual(['GET', 'GET', 'GET']);
  });

  it.each([408, 429, 500, 502, 503, 504])('retries %i by default', async (status) => {
    const server = await scriptedServer([reply(status)]);
    const res = await retryFetch(server.url, undefined, quick);
    expect(res.status).toBe(200);
    expect(server.seen).toHaveLength(2);
  });

  it.each([400, 401, 403, 404, 409, 412, 501, 505])('returns %i at once, body intact (not retried)', async (status) => {
    const server = await scriptedServer([reply(status, 'why')]);
    const res = await retryFetch(server.url, undefined, quick);
    expect(res.status).toBe(status);
    expect(await res.text()).toBe('why');
    expect(server.seen).toHaveLength(1);
  });

  it('resolves with the last retryable response when out of attempts (as fetch does for a 503)', async () => {
    const server = await scriptedServer([reply(503, 'first'), reply(503, 'second'), reply(503, 'third')]);
    const res = await retryFetch(server.url, undefined, { ...quick, maxAttempts: 3 });
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('third');
    expect(server.seen).toHaveLength(3);
  });

  it('rejects with a RetryError when out of attempts on network errors, the last one its cause', async () => {
    const port = await closedPort();
    const error = await rejection(retryFetch(`http://127.0.0.1:${port}/`, undefined, { ...quick, maxAttempts: 3 }));
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).reason).toBe('attempts');
    expect((error as RetryError).attempts).toBe(3);
    expect(((error as RetryError).cause as Error).message).toBe('fetch failed');
  });

  it("rejects with fetch's own TypeError for an invalid URL, at once", async () => {
    const counting = countingFetch();
    const error = await rejection(retryFetch('http://[not a url', undefined, { ...quick, fetch: counting.fn }));
    expect(error).toBeInstanceOf(TypeError);
    expect(counting.calls()).toBe(1);
  });

  // Regression (issue 12, defect 6): a redirect loop was retried until the deadline, 21
  // requests an attempt (~800 requests in 2 s); so were a redirect to ftp: and a blocked port.
  it("rejects at once with fetch's TypeError when the failure would repeat: redirect loop, ftp: redirect, bad port", async () => {
    const requests: string[] = [];
    const loop = createServer((req, res) => {
      requests.push(req.url ?? '');
      res.writeHead(302, { location: req.url === '/ftp' ? 'ftp://127.0.0.1/file' : '/loop' });
      res.end();
    });
    await new Promise<void>((resolve) => loop.listen(0, '127.0.0.1', resolve));
    servers.push({ close: () => new Promise<void>((resolve) => loop.close(() => resolve())) });
    const base = `http://127.0.0.1:${(loop.address() as AddressInfo).port}`;
    const counting = countingFetch();
    const options = { ...quick, maxAttempts: 3, fetch: counting.fn };

    const loopError = await rejection(retryFetch(`${base}/loop`, undefined, options));
    expect(loopError).toBeInstanceOf(TypeError);
    expect(((loopError as Error).cause as Error).message).toBe('redirect count exceeded');
    expect(requests).toHaveLength(21);
    expect(counting.calls()).toBe(1);

    const ftpError = await rejection(retryFetch(`${base}/ftp`, undefined, options));
    expect(((ftpError as Error).cause as Error).message).toBe('URL scheme must be a HTTP(S) scheme');
    expect(requests).toHaveLength(22);
    expect(counting.calls()).toBe(2);

    const badPort = await rejection(retryFetch('http://127.0.0.1:10080/', undefined, options));
    expect(((badPort as Error).cause as Error).message).toBe('bad port');
    expect(counting.calls()).toBe(3);
  });

  /** What `make` throws. */
  const rejectionOf = (make: () => unknown): Error => {
    try {
      make();
    } catch (error) {
      return error as Error;
    }
    throw new Error('did not throw');
  };

  it('rejects (as fetch does) for headers fetch would refuse', async () => {
    const { fn, calls } = scriptedFetch([]);
    const error = await rejection(retryFetch('http://127.0.0.1:9/', { headers: { 'bad header': 'x' } }, { ...quick, fetch: fn }));
    expect(error).toBeInstanceOf(TypeError);
    // fetch's own words, not an error of the library's making.
    expect((error as Error).message).toBe(rejectionOf(() => new Headers({ 'bad header': 'x' })).message);
    expect(calls).toHaveLength(0);
  });

  it('rejects with what fetch rejected with, even undefined', async () => {
    const fn = (() => Promise.reject(undefined)) as typeof fetch;
    expect(await rejection(retryFetch('http://x.test/', undefined, { fetch: fn, retryable: () => false }))).toBeUndefined();
  });

  it('carries status, method and the response with its headers, readable by the error readers', async () => {
    const server = await scriptedServer([reply(404, 'not yet', { 'retry-after': '0', 'x-trace': 't-1' })]);
    const seen: unknown[] = [];
    const res = await retryFetch(
      server.url,
      { method: 'DELETE' },
      {
        ...quick,
        retryable: (error) => {
          seen.push(error);
          return httpStatus(404)(error);
        },
      },
    );
    expect(res.status).toBe(200);
    const error = seen[0] as HttpStatusError;
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ name: 'HttpStatusError', status: 404, method: 'DELETE', retryAfterMs: 0 });
    expect(error.message).toBe('HTTP 404 Not Found (DELETE)');
    expect(httpStatusOf(error)).toBe(404);
    expect(retryAfterMsOf(error)).toBe(0);
    expect(error.response.headers.get('x-trace')).toBe('t-1');
  });

  it('asks the predicate about network errors too, not about successes', async () => {
    const port = await closedPort();
    const asked: string[] = [];
    await rejection(
      retryFetch(`http://127.0.0.1:${port}/`, undefined, {
        ...quick,
        retryable: (error) => {
          asked.push((error as Error).message);
          return false;
        },
      }),
    );
    expect(asked).toEqual(['fetch failed']);
    const server = await scriptedServer([]);
    const res = await retryFetch(server.url, undefined, {
      ...quick,
      retryable: () => {
        throw new Error('not asked about a 200');
      },
    });
    expect(res.status).toBe(200);
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

  it('gcs(): retries 429 and every 5xx, 501 included (the default does not retry 501)', async () => {
    const server = await scriptedServer([reply(429), reply(501), reply(507)]);
    const res = await retryFetch(server.url, undefined, gcs({ operation: 'objects.get', ...presetQuick }));
    expect(res.status).toBe(200);
    expect(server.seen).toHaveLength(4);
  });

  it('iam(): retries 503, returns 429 at once (IAM lists only the 5xx), sends a POST once', async () => {
    const server = await scriptedServer([reply(503), reply(429, 'quota')]);
    const get = await retryFetch(server.url, undefined, iam(presetQuick));
    expect(get.status).toBe(429);
    expect(await get.text()).toBe('quota');
    expect(server.seen).toHaveLength(2);
    const posts = await scriptedServer([reply(503)]);
    const post = await retryFetch(posts.url, { method: 'POST', body: '{}' }, iam(presetQuick));
    expect(post.status).toBe(503);
    expect(posts.seen).toHaveLength(1);
  });
});

describe('idempotency and resend: which requests are sent again', () => {
  it('resends TRACE, an idempotent method', async () => {
    const { fn, calls } = scriptedFetch([status(503)]);
    const res = await retryFetch('http://x.test/', { method: 'TRACE' }, { fetch: fn, backoff: fast });
    expect(res.status).toBe(200);
    expect(calls).toHaveLength(2);
  });

  it('does not take a blank Idempotency-Key (Unicode space only) as one', async () => {
    const { fn, calls } = scriptedFetch([status(503)]);
    const res = await retryFetch(
      'http://x.test/',
      { method: 'POST', body: '{}', headers: { 'idempotency-key': '\u00a0' } },
      { fetch: fn, backoff: fast },
    );
    expect(res.status).toBe(503);
    expect(calls).toHaveLength(1);
  });

  it('hands options.idempotent the error it judges, and still resends what never left (issue 13: no side channel)', async () => {
    const server = await scriptedServer([reply(503), reply(503)]);
    const judged: unknown[] = [];
    // A POST the caller declares safe to resend after a 503 only.
    const idempotent = (error: unknown) => {
      judged.push(error);
      return error instanceof HttpStatusError && error.status === 503;
    };
    const res = await retryFetch(server.url, { method: 'POST', body: 'x' }, { ...quick, idempotent });
    expect(res.status).toBe(200);
    expect(judged).toHaveLength(2);
    expect(judged.every((e) => e instanceof HttpStatusError && e.status === 503)).toBe(true);

    const port = await closedPort();
    const refused: unknown[] = [];
    const error = await rejection(
      retryFetch(
        `http://127.0.0.1:${port}/`,
        { method: 'POST', body: 'x' },
        {
          ...quick,
          maxAttempts: 2,
          idempotent: (e) => {
            refused.push(e);
            return false;
          },
        },
      ),
    );
    // Resent although the caller's rule says no: the connection was refused, nothing was sent.
    expect(error).toMatchObject({ reason: 'attempts', attempts: 2 });
    expect(refused).toHaveLength(2);
    expect(refused[1]).toBe((error as RetryError).cause);
  });

  it('gcs(): objects.insert is resent only with its precondition, though it is a POST', async () => {
    const without = await scriptedServer([reply(503)]);
    const once = await retryFetch(without.url, { method: 'POST', body: 'x' }, gcs({ operation: 'objects.insert', ...presetQuick }));
    expect(once.status).toBe(503);
    expect(without.seen).toHaveLength(1);
    const withIt = await scriptedServer([reply(503)]);
    const retried = await retryFetch(
      `${withIt.url}?ifGenerationMatch=0`,
      { method: 'POST', body: 'x' },
      gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 }, ...presetQuick }),
    );
    expect(retried.status).toBe(200);
    expect(withIt.seen).toHaveLength(2);
  });

  it('gcs(): a never-idempotent PUT (bucketAccessControls.update) is not resent, though PUT usually is', async () => {
    const server = await scriptedServer([reply(503)]);
    const res = await retryFetch(
      server.url,
      { method: 'PUT', body: '{}' },
      gcs({ operation: 'bucketAccessControls.update', ...presetQuick }),
    );
    expect(res.status).toBe(503);
    expect(server.seen).toHaveLength(1);
  });

  it('gcs(): even strategy "never" resends a request whose connection was refused (it never left)', async () => {
    const port = await closedPort();
    const error = await rejection(
      retryFetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x' }, gcs({ strategy: 'never', maxAttempts: 3, ...presetQuick })),
    );
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).attempts).toBe(3);
  });
});

// These answers come from tenacious/testing's scriptedFetch: real Responses from a script, and
// the requests counted (what the kit gives users testing their own retrying code).
describe('Retry-After', () => {
  const clock = useVirtualClock();

  it('Retry-After in seconds on a 503 lengthens the wait to exactly that', async () => {
    const fetch = scripted([{ status: 503, retryAfter: 3, body: 'busy' }, 200]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch, backoff: noJitter(100) }));
    await clock.tickAsync(2999);
    expect(fetch.requests).toHaveLength(1);
    await clock.tickAsync(1);
    expect(fetch.requests).toHaveLength(2);
    expect(call.state).toBe('resolved');
    expect(call.value?.status).toBe(200);
  });

  it('Retry-After as an HTTP-date on a 429 lengthens the wait until that date', async () => {
    // 'Thu, 01 Jan 1970 00:00:07 GMT'; the clock starts at 0
    const fetch = scripted([{ status: 429, retryAfter: new Date(7000), body: 'slow down' }, 200]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch, backoff: noJitter(100) }));
    await clock.tickAsync(6999);
    expect(fetch.requests).toHaveLength(1);
    await clock.tickAsync(1);
    expect(fetch.requests).toHaveLength(2);
    expect(call.state).toBe('resolved');
  });

  // Regression (issue 12): measured against the local clock, the hint lay an hour away, past
  // the deadline, and the 429 was returned at once.
  it("Retry-After as an HTTP-date is measured against the response's Date: a server an hour ahead asking for 2 s gets 2 s", async () => {
    const serverNow = 3_600_000; // the virtual clock starts at 0; the server's is an hour ahead
    const headers = { date: new Date(serverNow).toUTCString() };
    const fetch = scripted([{ status: 429, headers, retryAfter: new Date(serverNow + 2000) }, 200]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch, backoff: noJitter(100) }));
    await clock.tickAsync(1999);
    expect(fetch.requests).toHaveLength(1);
    await clock.tickAsync(1);
    expect(fetch.requests).toHaveLength(2);
    expect(call.state).toBe('resolved');
  });

  it('a Retry-After shorter than the backoff does not shorten the wait', async () => {
    const fetch = scripted([{ status: 503, retryAfter: 1, body: '' }, 200]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch, backoff: noJitter(5000) }));
    await clock.tickAsync(4999);
    expect(fetch.requests).toHaveLength(1);
    await clock.tickAsync(1);
    expect(fetch.requests).toHaveLength(2);
    expect(call.state).toBe('resolved');
  });

  it('a Retry-After past the remaining deadline returns the response at once, body intact', async () => {
    const fetch = scripted([{ status: 429, retryAfter: 60, body: 'come back in a minute' }]);
    const res = await retryFetch('http://x.test/', undefined, { fetch, backoff: noJitter(100), deadlineMs: 30_000 });
    expect(Date.now()).toBe(0);
    expect(res.status).toBe(429);
    expect(await res.text()).toBe('come back in a minute');
    expect(fetch.requests).toHaveLength(1);
  });

  it('a Retry-After beyond maxRetryAfterMs returns the response at once; one within it is waited for', async () => {
    const fetch = scripted([
      { status: 503, retryAfter: 3, body: '' },
      { status: 503, retryAfter: 10, body: 'too long' },
    ]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch, backoff: noJitter(100), maxRetryAfterMs: 5000 }));
    await clock.tickAsync(2999);
    expect(fetch.requests).toHaveLength(1);
    await clock.tickAsync(1);
    expect(fetch.requests).toHaveLength(2);
    expect(call.state).toBe('resolved');
    expect(await call.value!.text()).toBe('too long');
    expect(Date.now()).toBe(3000);
  });

  it('waits for a Retry-After equal to maxRetryAfterMs', async () => {
    const fetch = scripted([{ status: 503, retryAfter: 3 }, 200]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch, backoff: fast, maxRetryAfterMs: 3000 }));
    await clock.tickAsync(3000);
    expect(fetch.requests).toHaveLength(2);
    expect(call.value?.status).toBe(200);
  });

  it('applies maxRetryAfterMs to responses only: a network error asking for longer is still retried', async () => {
    const fetch = scripted([Object.assign(new TypeError('fetch failed'), { retryAfterMs: 5000 }), 200]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch, backoff: fast, maxRetryAfterMs: 1000 }));
    await clock.tickAsync(4999);
    expect(fetch.requests).toHaveLength(1);
    await clock.tickAsync(1);
    expect(fetch.requests).toHaveLength(2);
    expect(call.value?.status).toBe(200);
  });

  it('takes a maxRetryAfterMs of 0: a response with Retry-After: 1 is returned at once, after one request', async () => {
    const fetch = scripted([{ status: 503, retryAfter: 1 }]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch, backoff: fast, maxRetryAfterMs: 0 }));
    await clock.tickAsync(0);
    expect(call.state).toBe('resolved');
    expect(call.value?.status).toBe(503);
    expect(await call.value?.text()).toBe('503');
    expect(fetch.requests).toHaveLength(1);
    // A response that asks for no wait is still retried under that limit.
    const again = scripted([503, 200]);
    const retried = track(retryFetch('http://x.test/', undefined, { fetch: again, backoff: fast, maxRetryAfterMs: 0 }));
    await clock.tickAsync(9);
    expect(again.requests).toHaveLength(1);
    await clock.tickAsync(1);
    expect(again.requests).toHaveLength(2);
    expect(retried.value?.status).toBe(200);
  });
});

// Which bodies are replayed is request-plan.test.ts's subject, and bodies that break mid-way
// resume.test.ts's; here, the bodies retryFetch itself reads or sends again.
describe('bodies and replay', () => {
  it('resends a request whose body is null', async () => {
    const { fn, calls } = scriptedFetch([status(503)]);
    const res = await retryFetch('http://x.test/', { method: 'PUT', body: null }, { fetch: fn, backoff: fast });
    expect(res.status).toBe(200);
    expect(calls).toHaveLength(2);
  });

  describe('in virtual time', () => {
    const clock = useVirtualClock();

    it('with bufferBody, cancels the body of an attempt abandoned while it was being read', async () => {
      let cancelledAt: number | undefined;
      const slow = new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            setTimeout(() => {
              if (cancelledAt !== undefined) return;
              controller.enqueue(new TextEncoder().encode('slow body'));
              controller.close();
            }, 200);
          },
          cancel() {
            cancelledAt = Date.now();
          },
        }),
      );
      const { fn, calls } = scriptedFetch([() => slow]);
      const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: fast, attemptTimeoutMs: 100, bufferBody: true }));
      await clock.tickAsync(200);
      expect(calls).toHaveLength(2);
      expect(await call.value?.text()).toBe('ok');
      // Cancelled when its attempt timed out (the abort reaches fetch one macrotask later), not left to run.
      expect(cancelledAt).toBeGreaterThanOrEqual(100);
      expect(cancelledAt).toBeLessThan(200);
    });
  });
});

describe('held and discarded responses: the one returned, and the bodies cancelled', () => {
  const clock = useVirtualClock();

  it('a wait that would end past the deadline is not started: the 503 is returned at once, body intact', async () => {
    const first = tracked(503, {}, 'busy');
    const { fn, calls } = scriptedFetch([() => first.response]);
    const res = await retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(1000), deadlineMs: 900 });
    expect(Date.now()).toBe(0);
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('busy');
    expect(first.state.cancelledAt).toBeUndefined();
    expect(calls).toHaveLength(1);
  });

  it('when the deadline passes during a wait (a late timer), the call resolves with the held 503, body intact', async () => {
    const first = tracked(503, {}, 'busy');
    const { fn, calls } = scriptedFetch([() => first.response]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(500), deadlineMs: 1000 }));
    await clock.tickAsync(0);
    // The process stalls for 2 s (a blocked event loop, a suspended laptop): the wake-up timer
    // fires late, past the deadline, so no second attempt may start.
    clock.jump(2000);
    await clock.tickAsync(0);
    expect(call.state).toBe('resolved');
    expect(call.value!.status).toBe(503);
    expect(await call.value!.text()).toBe('busy');
    expect(first.state.cancelledAt).toBeUndefined();
    expect(calls).toHaveLength(1);
  });

  it('when the next attempt is still running at the deadline: RetryError "deadline" at the deadline; the 503 was discarded', async () => {
    const first = tracked(503);
    const { fn, calls } = scriptedFetch([
      () => first.response,
      (init) =>
        new Promise<Response>((_resolve, reject) => {
          init.signal!.addEventListener('abort', () => reject(init.signal!.reason));
        }),
    ]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(1000), deadlineMs: 5000 }));
    await clock.tickAsync(1000);
    // The 503 is discarded when the second attempt starts, not before.
    expect(first.state.cancelledAt).toBe(1000);
    await clock.tickAsync(3999);
    expect(call.state).toBe('pending');
    await clock.tickAsync(1);
    expect(call.state).toBe('rejected');
    expect(call.error).toBeInstanceOf(RetryError);
    expect((call.error as RetryError).reason).toBe('deadline');
    expect((call.error as RetryError).cause).toMatchObject({ name: 'TimeoutError' });
    // The fetch's signal aborts one timer turn later: the caller hears of the deadline before
    // fetch's cleanup runs (which, for fifty calls sharing a deadline, adds up).
    expect(calls[1]!.signal.aborted).toBe(false);
    await clock.tickAsync(1); // setTimeout(0) waits 1 ms, in Node as in the fake clock
    expect(calls[1]!.signal.aborted).toBe(true);
    expect(calls[1]!.signal.reason).toBe((call.error as RetryError).cause);
  });

  it('cancels each retried response when the next attempt starts; the returned one is left alone', async () => {
    const answers = [tracked(503), tracked(502), tracked(500), tracked(200, {}, 'fine')];
    const { fn, calls } = scriptedFetch(answers.map((a) => () => a.response));
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(100) }));
    await clock.tickAsync(100 + 200 + 400);
    expect(calls.map((c) => c.at)).toEqual([0, 100, 300, 700]);
    expect(answers.map((a) => a.state.cancelledAt)).toEqual([100, 300, 700, undefined]);
    expect(await call.value!.text()).toBe('fine');
  });

  it('resolves with the response when the retry budget refuses the retry', async () => {
    const first = tracked(503, {}, 'no budget');
    const { fn, calls } = scriptedFetch([() => first.response]);
    const budget = { record: () => {}, canRetry: () => false };
    const res = await retryFetch('http://x.test/', undefined, { fetch: fn, budget });
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('no budget');
    expect(calls).toHaveLength(1);
    expect(first.state.cancelledAt).toBeUndefined();
  });

  it('cancels the late response of an abandoned attempt when it arrives', async () => {
    const late = tracked(200, {}, 'too late');
    const { fn, calls } = scriptedFetch([
      // A fetch that ignores its signal and answers after 5 s.
      () => new Promise<Response>((resolve) => setTimeout(() => resolve(late.response), 5000)),
      () => new Response('on time'),
    ]);
    const call = track(retryFetch('http://x.test/', undefined, { fetch: fn, backoff: noJitter(10), attemptTimeoutMs: 1000 }));
    await clock.tickAsync(1010);
    expect(calls.map((c) => c.at)).toEqual([0, 1010]);
    expect(calls[0]!.signal.aborted).toBe(true);
    expect((calls[0]!.signal.reason as Error).name).toBe('TimeoutError');
    expect(await call.value!.text()).toBe('on time');
    await clock.tickAsync(5000);
    expect(late.state.cancelledAt).toBe(5000);
  });
});

describe("signals and abort: the caller's two signals, the attempt's, the returned response's", () => {
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

  it("adds no listener to the caller's signal for a response without a body", async () => {
    const { fn } = scriptedFetch([() => new Response(null, { status: 204 })]);
    const controller = new AbortController();
    const res = await retryFetch('http://x.test/', { signal: controller.signal }, { fetch: fn });
    expect(res.status).toBe(204);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it("leaves no listener on the caller's signal once it has aborted", async () => {
    const { fn } = scriptedFetch([]);
    const controller = new AbortController();
    await retryFetch('http://x.test/', { signal: controller.signal }, { fetch: fn });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort(new Error('done'));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it("aborts the response's fetch when the caller aborted just as it arrived", async () => {
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

  describe('in virtual time', () => {
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

    it.each(['init', 'options'] as const)(
      "aborts the fetch under way at once when the %s signal aborts (a deadline's abort reaches it a macrotask later)",
      async (which) => {
        const signals: AbortSignal[] = [];
        const hanging = ((_input: string | URL | Request, init?: RequestInit) => {
          signals.push(init!.signal!);
          return new Promise<Response>(() => {});
        }) as typeof fetch;
        const controller = new AbortController();
        const init = which === 'init' ? { signal: controller.signal } : undefined;
        const signal = which === 'options' ? controller.signal : undefined;
        const call = track(retryFetch('http://x.test/', init, { fetch: hanging, signal }));
        await clock.tickAsync(0);
        expect(signals).toHaveLength(1);
        const reason = new Error('changed my mind');
        controller.abort(reason);
        // Synchronously: a request still being written must not go out after the caller said stop.
        expect(signals[0]?.reason).toBe(reason);
        await clock.tickAsync(0);
        expect(call.error).toBe(reason);
        // The deadline's abort is deferred, so fifty calls sharing it each settle before any cleanup.
        const timed = track(retryFetch('http://x.test/', undefined, { fetch: hanging, deadlineMs: 1000 }));
        await clock.tickAsync(1000);
        expect(timed.state).toBe('rejected');
        expect(signals[1]?.aborted).toBe(false);
        await clock.tickAsync(1); // sinon runs a 0 ms timer set during a tick 1 ms later
        expect(signals[1]?.aborted).toBe(true);
      },
    );

    it("the caller's abort during the wait rejects at once with its reason and cancels the held response", async () => {
      const first = tracked(503);
      const { fn } = scriptedFetch([() => first.response]);
      const controller = new AbortController();
      const call = track(retryFetch('http://x.test/', { signal: controller.signal }, { fetch: fn, backoff: noJitter(10_000) }));
      await clock.tickAsync(2500);
      const reason = new Error('user navigated away');
      controller.abort(reason);
      await clock.tickAsync(0);
      expect(call.state).toBe('rejected');
      expect(call.error).toBe(reason);
      expect(first.state.cancelledAt).toBe(2500);
    });

    it("counts fetch's own setup time against the deadline, even for many calls started at once", async () => {
      // A fetch whose synchronous setup takes 2 ms (simulated by moving the clock), then hangs.
      const slowStart = ((_input: string | URL | Request, init?: RequestInit) => {
        clock.tick(2);
        return new Promise<Response>((_resolve, reject) => init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason)));
      }) as typeof fetch;
      const started: number[] = [];
      const settled: number[] = [];
      const calls = Array.from({ length: 20 }, (_, i) => {
        started[i] = Date.now();
        return retryFetch('http://x.test/', undefined, { fetch: slowStart, deadlineMs: 100 }).catch((error: unknown) => {
          settled[i] = Date.now();
          return error;
        });
      });
      await clock.tickAsync(500);
      const errors = await Promise.all(calls);
      expect(errors.every((e) => e instanceof RetryError && e.reason === 'deadline')).toBe(true);
      // Each call ends within its deadline plus one fetch setup: the clock starts when the first
      // setup is done, not after all twenty (which would make every call 40 ms late).
      const lateness = settled.map((at, i) => at - (started[i]! + 100));
      expect(Math.max(...lateness)).toBeLessThanOrEqual(2);
    });
  });
});

describe('options', () => {
  it('says so when there is no fetch to call', async () => {
    vi.stubGlobal('fetch', undefined);
    await expect(retryFetch('http://x.test/')).rejects.toThrow(
      new TypeError('retryFetch: globalThis.fetch is undefined; pass options.fetch'),
    );
  });

  it('works without options, with the global fetch', async () => {
    const { fn, calls } = scriptedFetch([]);
    vi.stubGlobal('fetch', fn);
    expect(await (await retryFetch('http://x.test/')).text()).toBe('ok');
    expect(calls).toHaveLength(1);
  });

  it('checks each option once: the engine is handed what FETCH_RULES checked, not a copy to check again', async () => {
    // A budget whose methods are counted as they are looked up: its rule looks each up once.
    const lookups: string[] = [];
    const budget = new Proxy(
      { record() {}, canRetry: () => true },
      {
        get(target, key, receiver) {
          if (typeof key === 'string') lookups.push(key);
          return Reflect.get(target, key, receiver);
        },
      },
    );
    const { fn } = scriptedFetch([]);
    expect((await retryFetch('http://x.test/', undefined, { fetch: fn, budget })).status).toBe(200);
    // The rule's two lookups, then the success recorded; canRetry is never asked of a call that never failed.
    expect(lookups).toEqual(['record', 'canRetry', 'record']);
  });

  it('refuses retryOnResult, naming what to use instead', async () => {
    await expect(retryFetch('http://127.0.0.1:1/', undefined, { retryOnResult: () => true } as never)).rejects.toThrow(
      /^retryFetch: options\.retryOnResult must be left out \(judge the status with options\.retryable, an HttpStatusError, or call retry\(\) around fetch to poll a body\), got a function \(retryOnResult\)$/,
    );
  });

  it('calls options.fetch instead of the global fetch', async () => {
    const server = await scriptedServer([reply(503)]);
    const inits: RequestInit[] = [];
    const res = await retryFetch(
      server.url,
      { method: 'PUT', body: 'b' },
      {
        ...quick,
        fetch: (input, init) => {
          inits.push(init!);
          return fetch(input, init);
        },
      },
    );
    expect(res.status).toBe(200);
    expect(inits).toHaveLength(2);
    expect(inits.every((init) => init.signal instanceof AbortSignal && init.method === 'PUT' && init.body === 'b')).toBe(true);
  });

  it('looks the global fetch up when called, so a fetch installed later is used', async () => {
    const server = await scriptedServer([]);
    const original = globalThis.fetch;
    let used = 0;
    globalThis.fetch = (input, init) => {
      used++;
      return original(input, init);
    };
    try {
      await retryFetch(server.url, undefined, quick);
    } finally {
      globalThis.fetch = original;
    }
    expect(used).toBe(1);
  });

  it.each([
    ['x', 'retryFetch: options must be an object, got "x"'],
    [{ signal: null }, 'retryFetch: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got null'],
    [
      { signal: Object.assign(() => undefined, { aborted: false }) },
      'retryFetch: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got a function',
    ],
  ])('refuses options %j, naming the field', async (options, message) => {
    await expect(retryFetch('http://x.test/', undefined, options as RetryFetchOptions)).rejects.toThrow(message);
  });

  it.each([
    [null, TypeError, 'retryFetch: options must be an object, got null'],
    [{ fetch: 'fetch' }, TypeError, 'retryFetch: options.fetch must be a function, got "fetch"'],
    [{ maxRetryAfterMs: -1 }, RangeError, 'retryFetch: options.maxRetryAfterMs must be a number >= 0 (Infinity for none), got -1'],
    [{ maxRetryAfterMs: Number.NaN }, RangeError, 'got NaN'],
    [{ maxRetryAfterMs: '5' }, RangeError, 'got "5"'],
    [{ bufferBody: 'yes' }, TypeError, 'retryFetch: options.bufferBody must be a boolean, got "yes"'],
    [{ retryable: 3 }, TypeError, 'retryFetch: options.retryable must be a function, got 3'],
    [{ idempotent: 'yes' }, TypeError, 'retryFetch: options.idempotent must be a boolean or a function, got "yes"'],
    [
      { signal: {} },
      TypeError,
      'retryFetch: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got {}',
    ],
    // Regression (issue 12, defect 11's shape): passed, then hung the call when it was dropped.
    [
      { signal: { aborted: false, addEventListener() {} } },
      TypeError,
      'retryFetch: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got {"aborted":false}',
    ],
    // Regression (issue 13, item 10): retry()'s checks said "retry:" to a retryFetch caller.
    [{ retries: 3 }, TypeError, 'retryFetch: unknown option "retries"'],
    [{ retries: 3 }, TypeError, 'unref, clock, hedge, telemetry, name, service, fetch, maxRetryAfterMs, bufferBody, resume)'],
    [{ deadlineMs: -5 }, RangeError, 'retryFetch: options.deadlineMs must be a number > 0'],
    [{ backoff: { multiplier: 0.5 } }, RangeError, 'retryFetch: options.backoff'],
  ])('throws synchronously for bad options %j', async (options, Type, message) => {
    let called = false;
    const spy = (() => {
      called = true;
      return Promise.resolve(new Response('x'));
    }) as typeof fetch;
    const bad = options === null ? null : { fetch: spy, ...(options as object) };
    await expect(retryFetch('http://127.0.0.1:9/', undefined, bad as RetryFetchOptions)).rejects.toThrow(Type);
    await expect(retryFetch('http://127.0.0.1:9/', undefined, bad as RetryFetchOptions)).rejects.toThrow(message);
    expect(called).toBe(false);
  });

  // Found by reading surviving mutants (the `once` flags that seemed to be the only cleanup).
  it('regression (mutation): bad retry options with two signals throw and leave no listener on either', async () => {
    const a = new AbortController();
    const b = new AbortController();
    const send = vi.fn(async () => new Response('never sent'));
    await expect(
      retryFetch('http://127.0.0.1:1/', { signal: a.signal }, { signal: b.signal, maxAttempts: 0, fetch: send }),
    ).rejects.toThrow('retryFetch: options.maxAttempts must be');
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(0);
    expect(send).not.toHaveBeenCalled();
  });

  it('calls onSuccess and onGiveUp once per call; onGiveUp also when it then resolves with the last response', async () => {
    const server = await scriptedServer([reply(503)]);
    const onSuccess = vi.fn();
    const onGiveUp = vi.fn();
    const first = await retryFetch(server.url, undefined, { ...quick, onSuccess, onGiveUp });
    expect(first.status).toBe(200);
    expect(onSuccess).toHaveBeenCalledTimes(1);
    expect(onSuccess.mock.calls[0]?.[0]).toMatchObject({ attempts: 2, value: first });
    const busy = await scriptedServer([reply(503), reply(503)]);
    const last = await retryFetch(busy.url, undefined, { ...quick, maxAttempts: 2, onSuccess, onGiveUp });
    expect(last.status).toBe(503);
    expect(onGiveUp).toHaveBeenCalledTimes(1);
    expect(onGiveUp.mock.calls[0]?.[0]).toMatchObject({ reason: 'attempts', attempts: 2 });
    expect(onSuccess).toHaveBeenCalledTimes(1);
  });
});

describe('in a runtime without parts of the fetch API', () => {
  afterEach(() => {
    vi.resetModules();
  });

  it.each(['FinalizationRegistry', 'WeakRef'])(
    "without %s, returns responses (the caller's signal then stops only the call)",
    async (name) => {
      vi.stubGlobal(name, undefined);
      vi.resetModules();
      const fresh = await import('../../src/fetch/retry-fetch.js');
      const { fn, calls } = scriptedFetch([]);
      const controller = new AbortController();
      const res = await fresh.retryFetch('http://x.test/', { signal: controller.signal }, { fetch: fn });
      // Unguarded: aborting the caller's signal now no longer reaches the body's fetch.
      controller.abort(new Error('too late'));
      expect(calls[0]?.signal.aborted).toBe(false);
      expect(await res.text()).toBe('ok');
    },
  );

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
