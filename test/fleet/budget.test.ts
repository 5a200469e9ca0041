import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRetryBudget, retry, RetryError } from '../../src/index.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

describe('createRetryBudget: gRFC A6 token bucket', () => {
  it('starts full with the gRPC defaults (10 tokens, 0.1 per success)', () => {
    const budget = createRetryBudget();
    expect(budget.tokens).toBe(10);
    expect(budget.maxTokens).toBe(10);
    expect(budget.tokenRatio).toBe(0.1);
    expect(budget.canRetry()).toBe(true);
  });

  it('takes 1 per failure and allows retries only while tokens > maxTokens / 2', () => {
    const budget = createRetryBudget();
    const allowed: boolean[] = [];
    for (let i = 0; i < 6; i++) {
      budget.record(false);
      allowed.push(budget.canRetry());
    }
    // 9, 8, 7, 6 are above the threshold of 5; 5 itself is not.
    expect(allowed).toEqual([true, true, true, true, false, false]);
    expect(budget.tokens).toBe(4);
  });

  it('gives back tokenRatio per success, exactly, and never above maxTokens', () => {
    const budget = createRetryBudget({ maxTokens: 4, tokenRatio: 1.6 });
    budget.record(false); // 3
    budget.record(true); // 4.6 → capped at 4
    expect(budget.tokens).toBe(4);
    budget.record(false);
    budget.record(false); // 2: at the threshold
    expect(budget.canRetry()).toBe(false);
    budget.record(true); // 3.6
    expect(budget.tokens).toBe(3.6);
    expect(budget.canRetry()).toBe(true);
  });

  it('counts in thousandths: ten refunds of 0.1 make exactly one token', () => {
    const budget = createRetryBudget();
    for (let i = 0; i < 6; i++) budget.record(false); // 4
    for (let i = 0; i < 10; i++) budget.record(true);
    expect(budget.tokens).toBe(5);
    expect(budget.canRetry()).toBe(false); // 5 is not > 5
    budget.record(true);
    expect(budget.tokens).toBe(5.1);
    expect(budget.canRetry()).toBe(true);
  });

  it('never goes below 0', () => {
    const budget = createRetryBudget({ maxTokens: 2 });
    for (let i = 0; i < 5; i++) budget.record(false);
    expect(budget.tokens).toBe(0);
    budget.record(true);
    expect(budget.tokens).toBe(0.1);
  });

  it('property: tokens stay within [0, maxTokens] and canRetry() ⇔ tokens > maxTokens / 2', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }).map((m) => m / 1000), // (0, 1000] in thousandths
        fc.integer({ min: 1, max: 5000 }).map((m) => m / 1000),
        fc.array(fc.boolean(), { maxLength: 300 }),
        (maxTokens, tokenRatio, outcomes) => {
          const budget = createRetryBudget({ maxTokens, tokenRatio });
          for (const success of outcomes) {
            budget.record(success);
            expect(budget.tokens).toBeGreaterThanOrEqual(0);
            expect(budget.tokens).toBeLessThanOrEqual(maxTokens);
            expect(budget.canRetry()).toBe(budget.tokens > maxTokens / 2);
          }
        },
      ),
    );
  });

  it('property: it matches a reference model of the bucket in exact thousandths', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 2000 }),
        fc.array(fc.boolean(), { maxLength: 200 }),
        (maxTokens, ratioMilli, outcomes) => {
          const budget = createRetryBudget({ maxTokens, tokenRatio: ratioMilli / 1000 });
          let model = maxTokens * 1000;
          for (const success of outcomes) {
            model = success ? Math.min(maxTokens * 1000, model + ratioMilli) : Math.max(0, model - 1000);
            budget.record(success);
          }
          expect(budget.tokens).toBe(model / 1000);
        },
      ),
    );
  });

  it.each([
    [{ maxTokens: 0 }, RangeError, /options\.maxTokens must be a number > 0 and <= 1000 .*got 0$/],
    [{ maxTokens: -3 }, RangeError, /options\.maxTokens .*got -3$/],
    [{ maxTokens: 1000.5 }, RangeError, /options\.maxTokens .*got 1000\.5$/],
    [{ maxTokens: Number.NaN }, RangeError, /options\.maxTokens .*got NaN$/],
    [{ maxTokens: Number.POSITIVE_INFINITY }, RangeError, /options\.maxTokens .*got Infinity$/],
    [{ maxTokens: '10' }, RangeError, /options\.maxTokens .*got "10"$/],
    [{ tokenRatio: -0.1 }, RangeError, /options\.tokenRatio must be a finite number > 0 .*got -0\.1$/],
    [{ tokenRatio: 0 }, RangeError, /options\.tokenRatio .*got 0$/],
    [{ tokenRatio: 0.0001 }, RangeError, /options\.tokenRatio .*got 0\.0001$/],
    [{ tokenRatio: Number.POSITIVE_INFINITY }, RangeError, /options\.tokenRatio .*got Infinity$/],
    [{ tokenRatio: null }, RangeError, /options\.tokenRatio .*got null$/],
    [{ max: 10 }, TypeError, /unknown option "max"/],
    [null, TypeError, /options must be an object, got null/],
  ])('rejects %o with a clear error', (options, type, message) => {
    const make = () => createRetryBudget(options as never);
    expect(make).toThrow(type);
    expect(make).toThrow(message);
  });

  it('accepts the bounds: maxTokens 1000 and 0.001, tokenRatio 0.001', () => {
    expect(createRetryBudget({ maxTokens: 1000 }).tokens).toBe(1000);
    expect(createRetryBudget({ maxTokens: 0.001, tokenRatio: 0.001 }).tokens).toBe(0.001);
  });
});

describe('createRetryBudget with retry() in virtual time', () => {
  const clock = useVirtualClock();

  const backoff = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 1000, jitter: 'none' } as const;

  it('regression (issue 12, defect 3): an attempt the caller aborted, or the deadline abandoned, spends no token', async () => {
    const budget = createRetryBudget();
    const hang = () => new Promise<never>(() => {});
    // The caller aborts while the failure is being judged (its predicate cancels the work).
    const controller = new AbortController();
    const judged = track(
      retry(() => Promise.reject(httpError(503)), {
        budget,
        signal: controller.signal,
        retryable: () => {
          controller.abort(new Error('cancelled'));
          return true;
        },
      }),
    );
    // The caller aborts a running attempt; the deadline abandons another.
    const other = new AbortController();
    const aborted = track(retry(hang, { budget, signal: other.signal }));
    const abandoned = track(retry(hang, { budget, deadlineMs: 100 }));
    await clock.tickAsync(0);
    other.abort(new Error('gone'));
    await clock.tickAsync(100);
    expect((judged.error as Error).message).toBe('cancelled');
    expect((aborted.error as Error).message).toBe('gone');
    expect((abandoned.error as RetryError).reason).toBe('deadline');
    expect(budget.tokens).toBe(10);
  });

  it('refuses the fifth retry of a failing call: RetryError "budget" with the last error', async () => {
    const budget = createRetryBudget();
    const errors = Array.from({ length: 10 }, (_, i) => httpError(503, { i }));
    let attempts = 0;
    const p = track(
      retry(
        async () => {
          throw errors[attempts++];
        },
        { budget, backoff },
      ),
    );
    await clock.tickAsync(60_000);
    expect(p.state).toBe('rejected');
    const error = p.error as RetryError;
    expect(error).toBeInstanceOf(RetryError);
    expect(error.reason).toBe('budget');
    // Failures take 10 → 9, 8, 7, 6 (each still > 5: retried), then 5: refused.
    expect(attempts).toBe(5);
    expect(error.attempts).toBe(5);
    expect(error.cause).toBe(errors[4]);
    expect(budget.tokens).toBe(5);
  });

  it('is shared: once one call drained it, another call gets no retry at all', async () => {
    const budget = createRetryBudget();
    const failing = async () => {
      throw httpError(503);
    };
    const first = track(retry(failing, { budget, backoff }));
    await clock.tickAsync(60_000);
    expect((first.error as RetryError).reason).toBe('budget');

    let secondAttempts = 0;
    const second = track(
      retry(
        async () => {
          secondAttempts++;
          throw httpError(503);
        },
        { budget, backoff },
      ),
    );
    await clock.tickAsync(0);
    expect(second.state).toBe('rejected');
    expect((second.error as RetryError).reason).toBe('budget');
    expect(secondAttempts).toBe(1);
  });

  it('refills on successes until retries are allowed again', async () => {
    const budget = createRetryBudget();
    for (let i = 0; i < 5; i++) budget.record(false); // 5: no retries
    for (let i = 0; i < 1; i++) await retry(async () => 'ok', { budget });
    expect(budget.tokens).toBe(5.1);
    let attempts = 0;
    const p = track(
      retry(
        async () => {
          attempts++;
          if (attempts === 1) throw httpError(503);
          return 'recovered';
        },
        { budget, backoff },
      ),
    );
    // The failure takes 5.1 → 4.1: at or below the threshold, so no retry.
    await clock.tickAsync(0);
    expect((p.error as RetryError).reason).toBe('budget');
    for (let i = 0; i < 20; i++) await retry(async () => 'ok', { budget });
    expect(budget.tokens).toBeCloseTo(6.1, 10);
    attempts = 0;
    const again = track(
      retry(
        async () => {
          attempts++;
          if (attempts === 1) throw httpError(503);
          return 'recovered';
        },
        { budget, backoff },
      ),
    );
    await clock.tickAsync(100);
    expect(again.value).toBe('recovered');
  });

  it('is not charged for errors that are not transient', async () => {
    const budget = createRetryBudget();
    const forbidden = httpError(403);
    for (let i = 0; i < 20; i++) {
      await expect(
        retry(
          async () => {
            throw forbidden;
          },
          { budget },
        ),
      ).rejects.toBe(forbidden);
    }
    expect(budget.tokens).toBe(10);
  });
});

describe('createRetryBudget', () => {
  it('says options must be an object when they are not', () => {
    expect(() => createRetryBudget('big' as never)).toThrow(new TypeError('createRetryBudget: options must be an object, got "big"'));
  });
});
