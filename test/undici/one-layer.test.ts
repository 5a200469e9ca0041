// One retry layer: the interceptor is the only retry loop. Composed with undici's own
// interceptors.retry() as well, the two multiply their attempts (counted on a real server), and
// the outer one then sees the inner one's error instead of the response: leave undici's out.
import { Agent, errors, interceptors, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { RetryError } from '../../src/index.js';
import { tenaciousInterceptor } from '../../src/undici/index.js';
import { fast, sendStatus, useLoopback } from './kit.js';

const { serve, keep } = useLoopback();
const always503 = (n: number, res: import('node:http').ServerResponse): void => sendStatus(res, 503, n);
/** undici's retry interceptor, 2 retries (3 requests) per call, with tiny waits. */
const undiciRetry = () => interceptors.retry({ maxRetries: 2, minTimeout: 1, maxTimeout: 2 });

describe('always 503, maxAttempts 3', () => {
  it('tenacious alone: 3 requests, and the last 503 is the answer', async () => {
    const server = await serve(always503);
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, maxAttempts: 3 })));
    const { statusCode, body } = await request(server.url, { dispatcher });
    expect(statusCode).toBe(503);
    expect(await body.json()).toEqual({ status: 503, attempt: 3 });
    expect(server.requests).toHaveLength(3);
  });

  it('undici’s retry inside it as well: 3 × 3 = 9 requests, and a RetryError whose cause has no body', async () => {
    const server = await serve(always503);
    const dispatcher = keep(new Agent().compose(undiciRetry(), tenaciousInterceptor({ ...fast, maxAttempts: 3 })));
    const error = await request(server.url, { dispatcher }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).cause).toBeInstanceOf(errors.RequestRetryError);
    expect(server.requests).toHaveLength(9);
  });

  it('undici’s retry outside it: 3 × 3 = 9 requests, and undici’s RequestRetryError', async () => {
    const server = await serve(always503);
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, maxAttempts: 3 }), undiciRetry()));
    const error = await request(server.url, { dispatcher }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.RequestRetryError);
    expect(server.requests).toHaveLength(9);
  });
});
