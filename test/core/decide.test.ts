// decide() without a clock: what follows a failed attempt, as a function of the attempt and
// the configuration. The loop's own tests (test/core/retry-*.test.ts) check that it acts on it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decide, type Decision, type Facts, MIN_SLEEP_MS } from '../../src/core/decide.js';
import { readOptions } from '../../src/core/read-options.js';
import { RetryError, type RetryOptions } from '../../src/index.js';

/** The facts of a failure, its outcome written as `error` (default a new Error), or `value` for a refused value. */
const failure = ({
  error = new Error('boom'),
  value,
  ...overrides
}: Partial<Omit<Facts, 'outcome'>> & { error?: unknown; value?: unknown } = {}): Facts => ({
  outcome: value === undefined ? { ok: false, error } : { ok: true, value },
  transient: true,
  attempt: 1,
  elapsedMs: 0,
  idempotent: true,
  uncounted: false,
  random: 0.5,
  ...overrides,
});

const config = (options: RetryOptions = {}) => readOptions({ rng: () => 0.5, ...options });

const delayOf = (decision: Decision): number => {
  if (decision.action !== 'wait') throw new Error(`expected a wait, got ${decision.reason}`);
  return decision.delayMs;
};

describe('decide', () => {
  it('gives up with the error itself when it is not transient, whatever the other facts say', () => {
    const error = new Error('permanent');
    const decision = decide(failure({ error, transient: false, budgetAllows: false, hintMs: 5 }), config());
    expect(decision).toEqual({ action: 'give-up', reason: 'not-retryable', error });
  });

  it('gives up with the error itself when the operation is not idempotent', () => {
    const error = new Error('reset');
    expect(decide(failure({ error, idempotent: false }), config())).toEqual({ action: 'give-up', reason: 'not-idempotent', error });
  });

  it('gives up with RetryError "attempts" on the last attempt, the error as its cause', () => {
    const error = new Error('again');
    const decision = decide(failure({ error, attempt: 3, elapsedMs: 1234.4 }), config({ maxAttempts: 3 }));
    expect(decision).toMatchObject({ action: 'give-up', reason: 'attempts' });
    const retryError = (decision as { error: RetryError }).error;
    expect(retryError).toBeInstanceOf(RetryError);
    expect(retryError).toMatchObject({ reason: 'attempts', attempts: 3, elapsedMs: 1234, cause: error });
    expect(delayOf(decide(failure({ attempt: 2 }), config({ maxAttempts: 3 })))).toBe(1000); // half of 2 s (n = 1)
  });

  it('gives up with RetryError "budget" when the budget refused a retry, and only then', () => {
    expect(decide(failure({ budgetAllows: true }), config())).toMatchObject({ action: 'wait' });
    expect(decide(failure({ budgetAllows: undefined }), config())).toMatchObject({ action: 'wait' });
    expect(decide(failure({ budgetAllows: false }), config())).toMatchObject({
      action: 'give-up',
      reason: 'budget',
      error: { reason: 'budget' },
    });
    // Out of attempts comes first: the budget's answer does not matter then.
    expect(decide(failure({ budgetAllows: false, attempt: 3 }), config({ maxAttempts: 3 }))).toMatchObject({ reason: 'attempts' });
  });

  it('waits the backoff delay of retry n = attempt − 1', () => {
    const backoff = { initialDelayMs: 100, multiplier: 3, maxDelayMs: 10_000, jitter: 'none' as const };
    expect([1, 2, 3, 4].map((attempt) => delayOf(decide(failure({ attempt }), config({ backoff }))))).toEqual([100, 300, 900, 2700]);
  });

  it('gives up at once when the sleep would end at or past the deadline', () => {
    const options = { deadlineMs: 1000, backoff: { initialDelayMs: 400, jitter: 'none' as const } };
    expect(delayOf(decide(failure({ elapsedMs: 599 }), config(options)))).toBe(400);
    expect(decide(failure({ elapsedMs: 600 }), config(options))).toMatchObject({
      reason: 'deadline',
      error: { reason: 'deadline', elapsedMs: 600 },
    });
    // A zero delay still costs one timer turn, a fractional one a whole millisecond.
    const zero = { deadlineMs: 10, backoff: { initialDelayMs: 0, jitter: 'none' as const } };
    expect(decide(failure({ elapsedMs: 10 - MIN_SLEEP_MS }), config(zero))).toMatchObject({ reason: 'deadline' });
    const fraction = { deadlineMs: 10, backoff: { initialDelayMs: 0.5, jitter: 'none' as const } };
    expect(decide(failure({ elapsedMs: 9 }), config(fraction))).toMatchObject({ reason: 'deadline' });
    expect(delayOf(decide(failure({ elapsedMs: 8 }), config(fraction)))).toBe(0.5);
  });

  it('waits as long as the server hint when it is longer than the backoff delay', () => {
    const backoff = { initialDelayMs: 100, jitter: 'none' as const };
    expect(delayOf(decide(failure({ hintMs: 5000 }), config({ backoff })))).toBe(5000);
    expect(delayOf(decide(failure({ hintMs: 50 }), config({ backoff })))).toBe(100);
  });

  it('names the backoff as the source of a wait the server hint does not lengthen, the server of one it does', () => {
    const backoff = { initialDelayMs: 100, jitter: 'none' as const };
    expect(decide(failure({ hintMs: 100 }), config({ backoff }))).toEqual({ action: 'wait', delayMs: 100, source: 'backoff' });
    expect(decide(failure({ hintMs: 101 }), config({ backoff }))).toEqual({ action: 'wait', delayMs: 101, source: 'server' });
    expect(decide(failure({ hintMs: undefined }), config({ backoff }))).toEqual({ action: 'wait', delayMs: 100, source: 'backoff' });
  });

  it("counts the limits from the last progress, and the errors the call's attempts and time", () => {
    const progressAt = { attempts: 5, elapsedMs: 9_000 };
    const options = { maxAttempts: 2, deadlineMs: 1000, backoff: { initialDelayMs: 100, multiplier: 2, jitter: 'none' as const } };
    // Attempt 6 is the run's first: 100 ms (n = 0), within 1 s of the progress.
    expect(delayOf(decide(failure({ attempt: 6, elapsedMs: 9_500, progressAt }), config(options)))).toBe(100);
    const out = decide(failure({ attempt: 7, elapsedMs: 9_600, progressAt }), config(options));
    expect(out).toMatchObject({ reason: 'attempts', error: { attempts: 7, elapsedMs: 9600 } });
    expect(decide(failure({ attempt: 6, elapsedMs: 9_950, progressAt }), config(options))).toMatchObject({ reason: 'deadline' });
  });

  it('property: a wait never ends at or past the deadline, and is never negative', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.double({ min: 0, max: 200_000, noNaN: true }),
        fc.integer({ min: 1, max: 200_000 }),
        fc.option(fc.integer({ min: 0, max: 300_000 }), { nil: undefined }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (attempt, elapsedMs, deadlineMs, hintMs, r) => {
          const decision = decide(failure({ attempt, elapsedMs, hintMs, random: r }), config({ deadlineMs }));
          if (decision.action === 'wait') {
            expect(decision.delayMs).toBeGreaterThanOrEqual(0);
            expect(elapsedMs + Math.ceil(Math.max(decision.delayMs, MIN_SLEEP_MS))).toBeLessThan(deadlineMs);
          } else expect(decision.reason).toBe('deadline');
        },
      ),
    );
  });

  it('property: a server hint lengthens the wait, never shortens it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (attempt, hintMs, r) => {
          const options = { deadlineMs: Infinity, maxAttempts: 100 };
          const plain = delayOf(decide(failure({ attempt, random: r }), config(options)));
          const withHint = delayOf(decide(failure({ attempt, random: r, hintMs }), config(options)));
          expect(withHint).toBe(Math.max(plain, hintMs));
        },
      ),
    );
  });

  it('property: a non-idempotent or non-transient failure never waits, whatever the limits', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 20 }), (transient, attempt, maxAttempts) => {
        const error = new Error('x');
        const decision = decide(failure({ error, transient, attempt, idempotent: false }), config({ maxAttempts }));
        expect(decision).toEqual({ action: 'give-up', reason: transient ? 'not-idempotent' : 'not-retryable', error });
      }),
    );
  });

  it('property: never a retry past maxAttempts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 30 }), (attempt, maxAttempts) => {
        const decision = decide(failure({ attempt }), config({ maxAttempts, deadlineMs: Infinity }));
        expect(decision.action === 'wait').toBe(attempt < maxAttempts);
      }),
    );
  });

  it('refuses an rng draw outside [0, 1], naming rng (the loop settles the call with it)', () => {
    expect(() => decide(failure({ random: 2 }), config())).toThrow(/^retry: options\.rng must return a number in \[0, 1\], got 2$/);
  });
});

describe('decide after progress: the limits count from where the current run began', () => {
  it('counts attempts and time since the progress, and numbers the RetryError with the call’s', () => {
    const options = { maxAttempts: 2, deadlineMs: 10_000, backoff: { initialDelayMs: 100, multiplier: 2, jitter: 'none' as const } };
    const progressAt = { attempts: 3, elapsedMs: 50_000 };
    // Attempt 4 is the run's first, 50 s into a call whose deadline is 10 s: wait the first delay.
    expect(decide(failure({ attempt: 4, elapsedMs: 50_100, progressAt }), config(options))).toEqual({
      action: 'wait',
      delayMs: 100,
      source: 'backoff',
    });
    const error = new Error('again');
    const out = decide(failure({ error, attempt: 5, elapsedMs: 50_300, progressAt }), config(options));
    expect(out).toMatchObject({
      action: 'give-up',
      reason: 'attempts',
      error: { reason: 'attempts', attempts: 5, elapsedMs: 50_300, cause: error },
    });
    const late = decide(failure({ attempt: 4, elapsedMs: 59_950, progressAt }), config(options));
    expect(late).toMatchObject({ action: 'give-up', reason: 'deadline', error: { attempts: 4, elapsedMs: 59_950 } });
  });

  it('property: deciding after progress is deciding the run alone, but for the numbers in the RetryError', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 200_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (runAttempt, attemptsBefore, runElapsedMs, elapsedBefore, maxAttempts, deadlineMs, r) => {
          const options = { maxAttempts, deadlineMs };
          const error = new Error('x');
          const alone = decide(failure({ error, attempt: runAttempt, elapsedMs: runElapsedMs, random: r }), config(options));
          const attempt = attemptsBefore + runAttempt;
          const elapsedMs = elapsedBefore + runElapsedMs;
          const progressAt = { attempts: attemptsBefore, elapsedMs: elapsedBefore };
          const after = decide(failure({ error, attempt, elapsedMs, random: r, progressAt }), config(options));
          if (alone.action === 'wait') expect(after).toEqual(alone);
          else
            expect(after).toMatchObject({
              action: 'give-up',
              reason: alone.reason,
              error: { reason: alone.reason, attempts: attempt, elapsedMs, cause: error },
            });
        },
      ),
    );
  });
});

describe('decide: a value retryOnResult rejected (issue 13)', () => {
  it('gives up with a RetryError that holds the value and no cause, for each limit', () => {
    const value = { done: false };
    const attempts = decide(failure({ error: undefined, value, attempt: 3 }), config({ maxAttempts: 3 }));
    expect(attempts).toMatchObject({ action: 'give-up', reason: 'attempts' });
    expect((attempts as { error: RetryError }).error).toMatchObject({ reason: 'attempts', value });
    expect((attempts as { error: RetryError }).error).not.toHaveProperty('cause');
    const deadline = decide(failure({ error: undefined, value, elapsedMs: 9_999 }), config({ deadlineMs: 10_000 }));
    expect((deadline as { error: RetryError }).error).toMatchObject({ reason: 'deadline', value });
    expect((deadline as { error: RetryError }).error).not.toHaveProperty('cause');
    const refused = decide(failure({ error: undefined, value, budgetAllows: false }), config());
    expect((refused as { error: RetryError }).error).toMatchObject({ reason: 'budget', value });
    expect((refused as { error: RetryError }).error).not.toHaveProperty('cause');
  });

  it('waits the backoff delay, as for a transient error', () => {
    expect(delayOf(decide(failure({ error: undefined, value: 1 }), config({ backoff: { jitter: 'none' } })))).toBe(1000);
  });
});
