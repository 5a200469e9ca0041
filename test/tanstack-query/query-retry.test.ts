// queryRetry's two functions on their own: the attempt boundary (TanStack's failureCount counts
// the failures before this one), the classification, idempotency, the waits and their hints,
// and options checked up front.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, computeDelay, httpStatus } from '../../src/index.js';
import { queryRetry } from '../../src/tanstack-query/index.js';
import { httpError } from '../helpers/clock.js';

const unavailable = httpError(503);
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED', syscall: 'connect' });
const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
const withRetryAfter = (seconds: string) => httpError(503, { response: { status: 503, headers: { 'retry-after': seconds } } });

describe('retry(failureCount, error)', () => {
  it('maxAttempts 3: retries after the 1st and 2nd failures (failureCount 0 and 1), not after the 3rd', () => {
    const { retry } = queryRetry({ maxAttempts: 3 });
    expect([0, 1, 2, 3].map((n) => retry(n, unavailable))).toEqual([true, true, false, false]);
  });

  it('maxAttempts 1: never retries', () => {
    expect(queryRetry({ maxAttempts: 1 }).retry(0, unavailable)).toBe(false);
  });

  it('defaults to 4 attempts (TanStack’s own 3 retries)', () => {
    const { retry } = queryRetry();
    expect([0, 1, 2, 3].map((n) => retry(n, unavailable))).toEqual([true, true, true, false]);
  });

  it('classifies with isTransient by default: 503, 429, a reset yes; 404, 400, a TypeError no', () => {
    const { retry } = queryRetry();
    expect([httpError(503), httpError(429), reset].map((e) => retry(0, e))).toEqual([true, true, true]);
    expect([httpError(404), httpError(400), new TypeError('x is not a function')].map((e) => retry(0, e))).toEqual([false, false, false]);
  });

  it('options.retryable replaces the classification, asked with the error alone', () => {
    const asked: unknown[][] = [];
    const { retry } = queryRetry({
      retryable: (...args) => {
        asked.push(args);
        return httpStatus(404)(args[0]);
      },
    });
    expect(retry(0, httpError(404))).toBe(true);
    expect(retry(0, httpError(503))).toBe(false);
    expect(asked).toHaveLength(2);
    expect(asked[0]).toHaveLength(1);
  });

  it('a retryable that answers with a promise is refused, naming it', () => {
    const { retry } = queryRetry({ retryable: (() => Promise.resolve(true)) as never });
    expect(() => retry(0, unavailable)).toThrow(new TypeError('queryRetry: options.retryable must return a boolean, got a promise'));
  });

  it('idempotent: false retries only a failure that proves the request never left', () => {
    const { retry } = queryRetry({ idempotent: false });
    expect(retry(0, refused)).toBe(true);
    expect(retry(0, reset)).toBe(false);
    expect(retry(0, unavailable)).toBe(false);
  });

  it('a Retry-After longer than maxRetryAfterMs is not waited for; one as long is', () => {
    const { retry } = queryRetry({ maxRetryAfterMs: 5_000 });
    expect(retry(0, withRetryAfter('5'))).toBe(true);
    expect(retry(0, withRetryAfter('6'))).toBe(false);
  });

  it('maxRetryAfterMs defaults to 120 s, retry()’s default deadline', () => {
    const { retry } = queryRetry();
    expect(retry(0, withRetryAfter('120'))).toBe(true);
    expect(retry(0, withRetryAfter('121'))).toBe(false);
  });

  it('maxRetryAfterMs 0 still retries a Retry-After of 0', () => {
    expect(queryRetry({ maxRetryAfterMs: 0 }).retry(0, withRetryAfter('0'))).toBe(true);
  });

  it('holds a RateLimit reset and gRPC pushback to maxRetryAfterMs as it holds a Retry-After', () => {
    const { retry } = queryRetry({ maxRetryAfterMs: 5_000 });
    const rateLimited = (headers: Record<string, string>) => httpError(429, { response: { status: 429, headers } });
    const pushback = (ms: string) =>
      Object.assign(new Error('UNAVAILABLE'), { code: 14, metadata: new Map([['grpc-retry-pushback-ms', [ms]]]) });
    expect(
      [rateLimited({ 'ratelimit-reset': '5' }), rateLimited({ ratelimit: 'r=0;t=5' }), pushback('5000')].map((e) => retry(0, e)),
    ).toEqual([true, true, true]);
    expect(
      [rateLimited({ 'ratelimit-reset': '6' }), rateLimited({ ratelimit: 'r=0;t=6' }), pushback('5001')].map((e) => retry(0, e)),
    ).toEqual([false, false, false]);
  });

  // Regression (issue 34): TanStack's setTimeout takes a wait above 2^31 − 1 ms as 1 ms.
  it('with maxRetryAfterMs: Infinity, a hint longer than a timer holds (2^31 − 1 ms) is not retried; one as long is', () => {
    const { retry } = queryRetry({ maxRetryAfterMs: Infinity });
    const longest = httpError(503, { retryAfterMs: 2 ** 31 - 1 });
    expect(retry(0, longest)).toBe(true);
    expect(retry(0, httpError(503, { retryAfterMs: 2 ** 31 }))).toBe(false);
    expect(retry(0, withRetryAfter(String(30 * 24 * 3600)))).toBe(false);
    expect(retry(0, withRetryAfter('9'.repeat(400)))).toBe(false);
  });
});

describe('retryDelay(failureCount, error)', () => {
  it('is computeDelay of retry number failureCount under the options’ backoff', () => {
    const backoff = { initialDelayMs: 100, multiplier: 3, maxDelayMs: 2_000, jitter: 'none' } as const;
    const { retryDelay } = queryRetry({ backoff });
    expect([0, 1, 2, 3, 50].map((n) => retryDelay(n, unavailable))).toEqual([100, 300, 900, 2_000, 2_000]);
    expect(retryDelay(2, unavailable)).toBe(computeDelay(2, backoff));
  });

  it('draws its jitter from options.rng', () => {
    const { retryDelay } = queryRetry({ backoff: { initialDelayMs: 1_000, jitter: 'full' }, rng: () => 0.25 });
    expect(retryDelay(1, unavailable)).toBe(500);
  });

  it('draws from Math.random by default', () => {
    const { retryDelay } = queryRetry({ backoff: { initialDelayMs: 1_000, jitter: 'full' } });
    const delays = Array.from({ length: 20 }, () => retryDelay(0, unavailable));
    expect(delays.every((ms) => ms >= 0 && ms <= 1_000)).toBe(true);
    expect(new Set(delays).size).toBeGreaterThan(1);
  });

  it('an rng out of [0, 1] is refused at the draw, naming it', () => {
    const { retryDelay } = queryRetry({ rng: () => 2 });
    expect(() => retryDelay(0, unavailable)).toThrow(new RangeError('queryRetry: options.rng must return a number in [0, 1], got 2'));
  });

  it('defaults to DEFAULT_BACKOFF: full jitter under 1 s × 2^n, capped at 32 s', () => {
    const { retryDelay } = queryRetry({ rng: () => 1 });
    expect([0, 1, 5, 6].map((n) => retryDelay(n, unavailable))).toEqual([1_000, 2_000, 32_000, DEFAULT_BACKOFF.maxDelayMs]);
  });

  // Regression (issue 34): a 30-day hint, or Infinity, went to TanStack's setTimeout as it was,
  // which fired after 1 ms.
  it('never exceeds 2^31 − 1 ms, the longest wait a timer holds, whatever the hint or the backoff', () => {
    const MAX = 2 ** 31 - 1;
    const { retryDelay } = queryRetry({ maxRetryAfterMs: Infinity, rng: () => 1 });
    expect(retryDelay(0, withRetryAfter(String(30 * 24 * 3600)))).toBe(MAX);
    expect(retryDelay(0, withRetryAfter('9'.repeat(400)))).toBe(MAX);
    const slow = queryRetry({ backoff: { initialDelayMs: 1e12, maxDelayMs: 1e13, jitter: 'none' } });
    expect(slow.retryDelay(0, unavailable)).toBe(MAX);
    fc.assert(
      fc.property(
        fc.nat(60),
        fc.oneof(fc.double({ min: 0, noNaN: true }), fc.bigInt({ min: 0n, max: 10n ** 400n }).map(String)),
        fc.double({ min: 1, max: 1e300, noNaN: true, noDefaultInfinity: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (failureCount, hint, maxDelayMs, draw) => {
          const error =
            typeof hint === 'string' ? withRetryAfter(hint) : httpError(503, { retryAfterMs: hint === Infinity ? Number.MAX_VALUE : hint });
          const { retryDelay } = queryRetry({ backoff: { initialDelayMs: 1, maxDelayMs }, maxRetryAfterMs: Infinity, rng: () => draw });
          const ms = retryDelay(failureCount, error);
          return ms >= 0 && ms <= MAX;
        },
      ),
    );
  });

  it('a Retry-After lengthens the wait, never shortens it', () => {
    const { retryDelay } = queryRetry({ backoff: { initialDelayMs: 3_000, maxDelayMs: 3_000, jitter: 'none' } });
    expect(retryDelay(0, withRetryAfter('7'))).toBe(7_000);
    expect(retryDelay(0, withRetryAfter('1'))).toBe(3_000);
    expect(retryDelay(0, unavailable)).toBe(3_000);
  });
});

describe('options checked up front', () => {
  it('names the bad field and the value', () => {
    expect(() => queryRetry({ maxAttempts: 0 })).toThrow(
      new RangeError('queryRetry: options.maxAttempts must be a safe integer >= 1, got 0'),
    );
    expect(() => queryRetry({ maxAttempts: Infinity })).toThrow(
      new RangeError('queryRetry: options.maxAttempts must be a safe integer >= 1, got Infinity'),
    );
    expect(() => queryRetry({ maxRetryAfterMs: -1 })).toThrow(
      new RangeError('queryRetry: options.maxRetryAfterMs must be a number >= 0 (Infinity for none), got -1'),
    );
    expect(() => queryRetry({ maxRetryAfterMs: '5' as never })).toThrow(RangeError);
    expect(() => queryRetry({ idempotent: 'yes' as never })).toThrow(
      new TypeError('queryRetry: options.idempotent must be a boolean, got "yes"'),
    );
    expect(() => queryRetry({ retryable: true as never })).toThrow(
      new TypeError('queryRetry: options.retryable must be a function, got true'),
    );
    expect(() => queryRetry({ rng: 0.5 as never })).toThrow(new TypeError('queryRetry: options.rng must be a function, got 0.5'));
    expect(() => queryRetry({ backoff: 5 as never })).toThrow(new TypeError('queryRetry: options.backoff must be an object, got 5'));
    expect(() => queryRetry({ backoff: null as never })).toThrow(new TypeError('queryRetry: options.backoff must be an object, got null'));
    expect(() => queryRetry({ backoff: { multiplier: 0.5 } })).toThrow(/^queryRetry: options\.backoff\.multiplier must /);
    expect(() => queryRetry({ maxAtempts: 3 } as never)).toThrow(
      new TypeError('queryRetry: unknown option "maxAtempts" (did you mean "maxAttempts"?)'),
    );
    expect(() => queryRetry([] as never)).toThrow(new TypeError('queryRetry: options must be a plain object, got []'));
  });

  it('refuses a decorrelated jitter, which needs the previous wait', () => {
    expect(() => queryRetry({ backoff: { jitter: 'decorrelated' } })).toThrow(
      new RangeError(
        "queryRetry: options.backoff.jitter must not be 'decorrelated' (it draws from the previous wait, which TanStack's retryDelay(failureCount, error) does not give), got \"decorrelated\"",
      ),
    );
  });

  it.each([
    [
      'deadlineMs',
      1_000,
      "TanStack Query's retries have no overall deadline: bound them with maxAttempts and the backoff's maxDelayMs",
      '1000',
    ],
    [
      'signal',
      new AbortController().signal,
      "TanStack Query hands the query's own signal to your queryFn, and stops retrying when it is cancelled",
      'an AbortSignal',
    ],
  ])('refuses %s, saying why', (field, value, why, shown) => {
    expect(() => queryRetry({ [field]: value } as never)).toThrow(
      new TypeError(`queryRetry: options.${field} must be left out (${why}), got ${shown}`),
    );
  });

  it('reads own fields only', () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.maxAttempts = 1;
    try {
      expect(queryRetry().retry(0, unavailable)).toBe(true);
    } finally {
      delete proto.maxAttempts;
    }
  });

  it('returns a frozen pair', () => {
    expect(Object.isFrozen(queryRetry())).toBe(true);
  });
});
