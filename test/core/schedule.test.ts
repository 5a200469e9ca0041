// The schedule options (core/schedule.ts): the growing attempt timeout's formula, and, through
// retry() in virtual time, the `delay` option, `countsAsAttempt` and a decorrelated jitter.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readTimeoutGrowth, timeoutOf } from '../../src/core/schedule.js';
import { type CallEvent, type DelayContext, type GiveUpEvent, RetryError, type RetryEvent, retry } from '../../src/index.js';
import { constant, noJitter, script, withRetryAfter } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

const growth = fc
  .record({
    initialMs: fc.double({ min: 0.001, max: 1e6, noNaN: true }),
    multiplier: fc.double({ min: 1, max: 10, noNaN: true }),
    extra: fc.oneof(fc.double({ min: 0, max: 1e7, noNaN: true }), fc.constant(Infinity)),
  })
  .map(({ initialMs, multiplier, extra }) => ({ initialMs, multiplier, maxMs: initialMs + extra }));

describe('timeoutOf', () => {
  it('is the fixed attemptTimeoutMs without a growth', () => {
    expect(timeoutOf({ attemptTimeoutMs: 250, schedule: undefined }, 7)).toBe(250);
    expect(timeoutOf({ attemptTimeoutMs: 250, schedule: { timeout: undefined } }, 7)).toBe(250);
  });

  it('is min(initialMs · multiplier^(n−1), maxMs): in [initialMs, maxMs], never NaN, non-decreasing in n', () => {
    fc.assert(
      fc.property(growth, fc.integer({ min: 1, max: 5000 }), (g, n) => {
        const config = { attemptTimeoutMs: Infinity, schedule: { timeout: readTimeoutGrowth(g, 'retry', 'options.attemptTimeoutMs') } };
        const ms = timeoutOf(config, n);
        expect(ms).toBeGreaterThanOrEqual(g.initialMs);
        expect(ms).toBeLessThanOrEqual(g.maxMs);
        expect(timeoutOf(config, n + 1)).toBeGreaterThanOrEqual(ms);
        if (n === 1) expect(ms).toBe(g.initialMs);
      }),
    );
  });

  it('reads its exact values', () => {
    const config = { attemptTimeoutMs: Infinity, schedule: { timeout: { initialMs: 5000, multiplier: 1.5, maxMs: 30_000 } } };
    expect([1, 2, 3, 4, 5, 6].map((n) => timeoutOf(config, n))).toEqual([5000, 7500, 11_250, 16_875, 25_312.5, 30_000]);
  });
});

describe('readTimeoutGrowth', () => {
  it('keeps only the three checked fields, in a fresh object', () => {
    const given = { initialMs: 1, multiplier: 1, maxMs: 1 };
    const read = readTimeoutGrowth(given, 'retry', 'options.attemptTimeoutMs');
    expect(read).toEqual(given);
    expect(read).not.toBe(given);
  });
});

/** What a call reports: onRetry's events, onGiveUp's, and each retry's wait and its source (onEvent). */
function watch() {
  const retries: RetryEvent[] = [];
  const gaveUp: GiveUpEvent[] = [];
  const waits: Array<[number, string]> = [];
  const hooks = {
    onRetry: (e: RetryEvent) => void retries.push(e),
    onGiveUp: (e: GiveUpEvent) => void gaveUp.push(e),
    onEvent: (e: CallEvent) => void (e.type === 'retry' && waits.push([e.delayMs, e.source])),
  };
  return { retries, gaveUp, waits, hooks };
}

describe("jitter 'decorrelated' in a call: each wait drawn from the previous sleep", () => {
  const backoff = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 1000, jitter: 'decorrelated' } as const;

  it('waits uniform in [initial, min(3 × the previous wait, max)]: at draws of 1, 300, 900, then the cap', async () => {
    const w = watch();
    const { fn } = script(httpError(503), httpError(503), httpError(503), httpError(503));
    const p = track(retry(fn, { backoff, rng: () => 1, ...w.hooks }));
    await clock.tickAsync(5000);
    expect(p.value).toBe('ok');
    expect(w.retries.map((e) => e.delayMs)).toEqual([300, 900, 1000, 1000]);
  });

  it("draws from the sleep itself: a server's longer hint raises the next wait's range, the cap still holds", async () => {
    const w = watch();
    const { fn } = script(withRetryAfter(503, '0.2'), httpError(503));
    const p = track(retry(fn, { backoff: { ...backoff, maxDelayMs: 10_000 }, rng: () => 1, ...w.hooks }));
    await clock.tickAsync(5000);
    expect(p.value).toBe('ok');
    expect(w.waits).toEqual([
      [300, 'backoff'], // the hint (200 ms) is shorter than the draw
      [900, 'backoff'],
    ]);
  });

  it('starts again from initialDelayMs after progress', async () => {
    const w = watch();
    let n = 0;
    const p = track(
      retry(
        (ctx) => {
          n++;
          if (n === 3) ctx.progress();
          return n < 5 ? Promise.reject(httpError(503)) : Promise.resolve('ok');
        },
        { backoff, rng: () => 1, ...w.hooks },
      ),
    );
    await clock.tickAsync(10_000);
    expect(p.value).toBe('ok');
    expect(w.retries.map((e) => e.delayMs)).toEqual([300, 900, 300, 900]);
  });
});

describe('countsAsAttempt: failures that do not use up maxAttempts', () => {
  const is429 = (error: unknown) => (error as { status?: number }).status !== 429;

  it('leaves maxAttempts to the counted failures; hooks and the error number every attempt; the backoff grows with each', async () => {
    const w = watch();
    const { fn, calls } = script(httpError(429), httpError(429), httpError(503), httpError(503), httpError(503));
    const p = track(retry(fn, { maxAttempts: 2, backoff: { ...noJitter, initialDelayMs: 100 }, countsAsAttempt: is429, ...w.hooks }));
    await clock.tickAsync(10_000);
    expect(calls).toEqual([0, 100, 300, 700]);
    expect(w.retries.map((e) => [e.attempt, e.delayMs])).toEqual([
      [1, 100],
      [2, 200],
      [3, 400],
    ]);
    expect(p.error).toBeInstanceOf(RetryError);
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 4 });
    expect(w.gaveUp[0]).toMatchObject({ reason: 'attempts', attempts: 4 });
  });

  it('counts a failure unless the answer is strictly false (undefined, 0 and null count)', async () => {
    for (const answer of [undefined, 0, null, true]) {
      const { fn } = script(httpError(503), httpError(503), httpError(503));
      const p = track(retry(fn, { maxAttempts: 2, backoff: constant(10), countsAsAttempt: () => answer as boolean }));
      await clock.tickAsync(1000);
      expect(p.error, String(answer)).toMatchObject({ reason: 'attempts', attempts: 2 });
    }
  });

  it('still lets the deadline end a storm of uncounted failures', async () => {
    const w = watch();
    const p = track(
      retry(() => Promise.reject(httpError(429)), {
        maxAttempts: 1,
        deadlineMs: 1000,
        backoff: constant(100),
        countsAsAttempt: () => false,
        ...w.hooks,
      }),
    );
    await clock.tickAsync(2000);
    expect(p.error).toMatchObject({ reason: 'deadline' });
    expect(w.retries).toHaveLength(9);
  });

  it('is refused without a deadline, which alone would end a storm of uncounted failures: the call never starts', async () => {
    let attempts = 0;
    const start = () =>
      retry(
        () => {
          attempts++;
          return Promise.reject(httpError(429));
        },
        { maxAttempts: 3, deadlineMs: Infinity, countsAsAttempt: () => false },
      );
    await expect(start()).rejects.toThrow(/^retry: options\.countsAsAttempt needs a finite options\.deadlineMs, got Infinity/);
    expect(attempts).toBe(0);
  });

  it('counts afresh after progress: failures left uncounted before it do not carry over', async () => {
    let n = 0;
    const p = track(
      retry(
        (ctx) => {
          n++;
          if (n === 2) ctx.progress();
          return Promise.reject(httpError(n === 1 ? 429 : 503));
        },
        { maxAttempts: 2, backoff: constant(10), countsAsAttempt: is429 },
      ),
    );
    await clock.tickAsync(1000);
    // The run begun by attempt 2's progress has attempts 2 and 3, both counted.
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 3 });
  });

  it('is asked only about a failure that would be retried, with its context', async () => {
    const asked: Array<[unknown, number]> = [];
    const { fn } = script(httpError(503), httpError(400));
    const p = track(
      retry(fn, {
        backoff: constant(10),
        countsAsAttempt: (error, ctx) => {
          asked.push([(error as { status: number }).status, ctx.attempt]);
          return true;
        },
      }),
    );
    await clock.tickAsync(100);
    expect((p.error as { status: number }).status).toBe(400);
    expect(asked).toEqual([[503, 1]]);
  });

  it('rejects the call with what it throws, or with a TypeError for a promise, as a predicate does', async () => {
    const bug = new Error('bug in countsAsAttempt');
    const w = watch();
    const thrown = track(
      retry(() => Promise.reject(httpError(503)), {
        countsAsAttempt: () => {
          throw bug;
        },
        ...w.hooks,
      }),
    );
    const asynchronous = track(
      retry(() => Promise.reject(httpError(503)), { countsAsAttempt: (async () => false) as unknown as () => boolean }),
    );
    await clock.tickAsync(0);
    expect(thrown.error).toBe(bug);
    expect(w.gaveUp[0]?.reason).toBe('not-retryable');
    expect(asynchronous.error).toEqual(new TypeError('retry: options.countsAsAttempt must return a boolean, got a promise'));
  });
});

describe('the delay option: picks each wait', () => {
  it('is told the failed attempt, its error or refused value, the times and the computed delay; its number is the wait', async () => {
    const seen: DelayContext[] = [];
    const w = watch();
    let n = 0;
    const p = track(
      retry(
        async () => {
          n++;
          if (n === 1) throw httpError(503);
          return n;
        },
        {
          backoff: { ...noJitter, initialDelayMs: 100 },
          deadlineMs: 10_000,
          retryOnResult: (value) => value === 2,
          delay: (ctx) => {
            seen.push(ctx);
            return ctx.attempt === 1 ? 50 : undefined;
          },
          ...w.hooks,
        },
      ),
    );
    await clock.tickAsync(1000);
    expect(p.value).toBe(3);
    expect(seen).toEqual([
      { attempt: 1, error: httpError(503), value: undefined, elapsedMs: 0, remainingMs: 10_000, computedDelayMs: 100 },
      { attempt: 2, error: undefined, value: 2, elapsedMs: 50, remainingMs: 9950, computedDelayMs: 200 },
    ]);
    expect(w.waits).toEqual([
      [50, 'backoff'],
      [200, 'backoff'], // undefined: the computed delay
    ]);
  });

  it("is lengthened by a server's hint and bounded by the deadline (a wait past it gives up at once)", async () => {
    const w = watch();
    const hinted = track(retry(script(withRetryAfter(503, '2')).fn, { delay: () => 50, backoff: constant(10), ...w.hooks }));
    const late = watch();
    const pastDeadline = track(retry(script(httpError(503)).fn, { delay: () => 5000, deadlineMs: 1000, ...late.hooks }));
    await clock.tickAsync(0);
    expect(pastDeadline.error).toMatchObject({ reason: 'deadline', attempts: 1 });
    expect(late.retries).toEqual([]);
    await clock.tickAsync(2000);
    expect(hinted.value).toBe('ok');
    expect(w.waits).toEqual([[2000, 'server']]);
  });

  it.each([
    [Number.NaN, RangeError, 'NaN'],
    [-1, RangeError, '-1'],
    [Number.POSITIVE_INFINITY, RangeError, 'Infinity'],
    ['100', TypeError, '"100"'],
    [null, TypeError, 'null'],
  ])('refuses a return of %s with a %o naming delay and the value; the call gives up not-retryable', async (bad, type, shown) => {
    const w = watch();
    const p = track(retry(() => Promise.reject(httpError(503)), { delay: () => bad as number, ...w.hooks }));
    await clock.tickAsync(0);
    expect(p.error).toBeInstanceOf(type);
    expect((p.error as Error).message).toBe(`retry: options.delay must return a finite number >= 0 or undefined, got ${shown}`);
    expect(w.gaveUp[0]?.reason).toBe('not-retryable');
  });

  it('takes a return of 0 as the wait: the next attempt at once', async () => {
    const w = watch();
    const p = track(retry(script(httpError(503)).fn, { delay: () => 0, backoff: constant(100), ...w.hooks }));
    await clock.tickAsync(0);
    expect(p.value).toBe('ok');
    expect(w.waits).toEqual([[0, 'backoff']]);
  });

  it('refuses a promise (an async delay) the same way, and surfaces what it throws', async () => {
    const bug = new Error('bug in delay');
    const asynchronous = track(retry(() => Promise.reject(httpError(503)), { delay: (async () => 10) as unknown as () => number }));
    const thrown = track(
      retry(() => Promise.reject(httpError(503)), {
        delay: () => {
          throw bug;
        },
      }),
    );
    await clock.tickAsync(0);
    expect(asynchronous.error).toBeInstanceOf(TypeError);
    expect((asynchronous.error as Error).message).toMatch(
      /^retry: options\.delay must return a finite number >= 0 or undefined, got a Promise/,
    );
    expect(thrown.error).toBe(bug);
  });

  it('is not asked when no retry follows (out of attempts, or the budget refused)', async () => {
    let asked = 0;
    const p = track(
      retry(() => Promise.reject(httpError(503)), {
        maxAttempts: 1,
        delay: () => {
          asked++;
          return 1;
        },
      }),
    );
    const budget = { record: () => {}, canRetry: () => false };
    const refused = track(
      retry(() => Promise.reject(httpError(503)), {
        budget,
        delay: () => {
          asked++;
          return 1;
        },
      }),
    );
    await clock.tickAsync(0);
    expect(p.error).toMatchObject({ reason: 'attempts' });
    expect(refused.error).toMatchObject({ reason: 'budget' });
    expect(asked).toBe(0);
  });
});
