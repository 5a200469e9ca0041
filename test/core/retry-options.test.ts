// retry()'s options as the engine uses them: the defaults, an options object read on each call,
// and the messages that name a bad option or a bad answer from one (test/core/options.test.ts
// has the rest of the option rules).
import { describe, expect, it, vi } from 'vitest';
import { type RetryOptions, retry } from '../../src/index.js';
import { constant } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

describe('defaults and reading', () => {
  it('retries transient errors with no options at all (idempotent by default)', async () => {
    let n = 0;
    const p = track(retry(() => (++n === 1 ? Promise.reject(httpError(503)) : Promise.resolve('second'))));
    await clock.tickAsync(1000);
    expect(p.value).toBe('second');
    expect(n).toBe(2);
  });

  it('reads an options object that is not frozen afresh on each call', async () => {
    const options: RetryOptions = { maxAttempts: 1, backoff: constant(10) };
    const fail = () => Promise.reject(httpError(503));
    const first = track(retry(fail, options));
    await clock.tickAsync(0);
    expect(first.error).toMatchObject({ attempts: 1 });
    options.maxAttempts = 2;
    const second = track(retry(fail, options));
    await clock.tickAsync(10);
    expect(second.error).toMatchObject({ attempts: 2 });
  });
});

describe('messages naming the option', () => {
  it('rejects with a TypeError naming the option when a predicate is async, and sends nothing again', async () => {
    const fn = vi.fn(async () => {
      throw httpError(503);
    });
    const reasons: string[] = [];
    const p = retry(fn, { retryable: (async () => false) as never, onGiveUp: ({ reason }) => void reasons.push(reason) });
    await expect(p).rejects.toThrow(new TypeError('retry: options.retryable must return a boolean, got a promise'));
    expect(fn).toHaveBeenCalledTimes(1);
    expect(reasons).toEqual(['not-retryable']);
    expect(clock.countTimers()).toBe(0);
  });

  // Regression: the refused promise was left without a handler, and its later rejection was
  // unhandled (Node's default mode ends the process for that).
  it.each([
    ['retryable', 'retry: options.retryable must return a boolean, got a promise'],
    ['idempotent', 'retry: options.idempotent must return a boolean, got a promise'],
    ['countsAsAttempt', 'retry: options.countsAsAttempt must return a boolean, got a promise'],
    ['retryOnResult', 'retry: options.retryOnResult must return a boolean, got a promise'],
    ['delay', 'retry: options.delay must return a finite number >= 0 or undefined, got a Promise'],
    // Any draw that is not a number in [0, 1] is a RangeError, a promise included.
    ['rng', 'retry: options.rng must return a number in [0, 1], got a Promise', RangeError],
  ])(
    'refuses an async %s whose promise rejects later, and that rejection is never unhandled',
    async (option, message, kind = TypeError) => {
      const unhandled: unknown[] = [];
      const record = (reason: unknown): void => void unhandled.push(reason);
      process.on('unhandledRejection', record);
      try {
        const late = new Error(`${option} rejected late`);
        const rejectLater = () => new Promise<never>((_, reject) => setTimeout(() => reject(late), 50));
        const fn = option === 'retryOnResult' ? async () => 'pending' : () => Promise.reject(httpError(503));
        const p = track(retry(fn, { [option]: rejectLater, maxAttempts: 3, deadlineMs: 10_000 } as RetryOptions));
        await clock.tickAsync(0);
        expect(p.error).toEqual(new kind(message));
        await clock.tickAsync(50); // the refused promise rejects now
        // Node reports an unhandled rejection a macrotask after it happened (setImmediate is real here).
        await new Promise((resolve) => setImmediate(resolve));
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', record);
      }
    },
  );

  it('lists every known option for an unknown one', async () => {
    await expect(retry(() => 1, { retries: 3 } as RetryOptions)).rejects.toThrow(
      'retry: unknown option "retries" (known: backoff, maxAttempts, deadlineMs, attemptTimeoutMs, retryable, idempotent, retryOnResult, delay, countsAsAttempt, signal, onRetry, onSuccess, onGiveUp, onEvent, budget, throttle, gate, rng, unref, clock, hedge, telemetry, name, service)',
    );
  });

  it.each([
    ['x', 'retry: options must be an object, got "x"'],
    [{ backoff: null }, 'retry: options.backoff must be an object, got null'],
    [{ deadlineMs: '1000' }, 'retry: options.deadlineMs must be a number > 0 (Infinity for none), got "1000"'],
    [{ attemptTimeoutMs: '100' }, 'retry: options.attemptTimeoutMs must be a number > 0 or { initialMs, multiplier, maxMs }, got "100"'],
    [{ signal: null }, 'retry: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got null'],
    [{ signal: {} }, 'retry: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got {}'],
    [
      { signal: { aborted: false } },
      'retry: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got {"aborted":false}',
    ],
    [
      { signal: { addEventListener() {} } },
      'retry: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got {}',
    ],
    [{ budget: null }, 'retry: options.budget must come from createRetryBudget() (record, canRetry), got null'],
    [{ throttle: null }, 'retry: options.throttle must come from createAdaptiveThrottle() (admit, record, error), got null'],
  ])('refuses %j, naming it', async (options, message) => {
    await expect(retry(() => 1, options as RetryOptions)).rejects.toThrow(message);
  });

  it('refuses signals and budgets that are functions, however they are dressed', async () => {
    const signalLike = Object.assign(() => undefined, { aborted: false, addEventListener() {}, removeEventListener() {} });
    await expect(retry(() => 1, { signal: signalLike as unknown as AbortSignal })).rejects.toThrow(
      /^retry: options\.signal must be an AbortSignal/,
    );
    const budgetLike = Object.assign(() => undefined, { record() {}, canRetry: () => true });
    await expect(retry(() => 1, { budget: budgetLike })).rejects.toThrow(/^retry: options\.budget must come from createRetryBudget\(\)/);
  });
});
