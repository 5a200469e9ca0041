// Edges of retry(), its options and its abort handling that the main tests (test/retry.test.ts,
// test/options.test.ts, test/timer-queue.test.ts, the fuzz) leave open, found by mutation testing.
import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { type AttemptContext, RetryError, type RetryOptions, TimeoutError, retry } from '../../src/retry.js';
import { httpStatus } from '../../src/predicates.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

const constant = (ms: number) => ({ initialDelayMs: ms, multiplier: 1, maxDelayMs: ms, jitter: 'none' }) as const;

describe('RetryError messages', () => {
  it('say why the loop stopped, how many attempts it made, and the cause', () => {
    expect(new RetryError('deadline', 1, 0.4, new Error('boom')).message).toBe('gave up after 1 attempt in 0 ms (deadline reached): boom');
    expect(new RetryError('budget', 2, 1500, new Error('busy')).message).toBe('gave up after 2 attempts in 1500 ms (retry budget exhausted): busy');
    expect(new RetryError('attempts', 3, 10, 'a string').message).toBe('gave up after 3 attempts in 10 ms (out of attempts)');
  });
});

describe('what fn returns', () => {
  it('a value that is not a promise settles with one clock read (the call\'s) and no timer, whatever its type', async () => {
    const nowSpy = vi.spyOn(globalThis.performance, 'now');
    const timerSpy = vi.spyOn(globalThis, 'setTimeout');
    try {
      const plain = { a: 1 };
      const fnValue = (): number => 1;
      expect(await retry(() => 42)).toBe(42);
      expect(await retry(() => plain)).toBe(plain);
      expect(await retry(() => null)).toBeNull();
      expect(await retry(() => fnValue)).toBe(fnValue);
      expect(await retry(() => ({ then: 'not a function' }))).toEqual({ then: 'not a function' });
      expect(nowSpy).toHaveBeenCalledTimes(5);
      expect(timerSpy).not.toHaveBeenCalled();
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('a promise is subscribed to at once, with its own then: a lazy promise starts its work inside retry()', async () => {
    const calls: string[] = [];
    class Lazy<T> extends Promise<T> {
      override then<A = T, B = never>(
        onValue?: ((value: T) => A | PromiseLike<A>) | null,
        onError?: ((reason: unknown) => B | PromiseLike<B>) | null,
      ): Promise<A | B> {
        calls.push('then');
        return super.then(onValue, onError);
      }
    }
    const p = retry(() => Lazy.resolve('lazy') as Promise<string>);
    expect(calls).toEqual(['then']);
    await expect(p).resolves.toBe('lazy');
  });

  it('a thenable that rejects (object or function) is a failed attempt, and retried', async () => {
    let calls = 0;
    const objectThenable = (): PromiseLike<string> => ({
      then: (resolve, reject) => (++calls === 1 ? reject?.(httpError(503)) : resolve?.('object')),
    } as PromiseLike<string>);
    const p = track(retry(objectThenable, { backoff: constant(100) }));
    await clock.tickAsync(100);
    expect(p.value).toBe('object');
    expect(calls).toBe(2);

    let fnCalls = 0;
    const functionThenable = (): PromiseLike<string> =>
      Object.assign(() => undefined, {
        then: (resolve: (v: string) => void, reject: (e: unknown) => void) => (++fnCalls === 1 ? reject(httpError(503)) : resolve('function')),
      }) as unknown as PromiseLike<string>;
    const q = track(retry(functionThenable, { backoff: constant(100) }));
    await clock.tickAsync(100);
    expect(q.value).toBe('function');
    expect(fnCalls).toBe(2);
  });

  it('a thenable that calls back synchronously, on a later attempt too, is adopted like a promise', async () => {
    const starts: number[] = [];
    const failsAtOnce = (): PromiseLike<never> => {
      starts.push(Date.now());
      return { then: (_resolve, reject) => reject?.(httpError(503)) } as PromiseLike<never>;
    };
    const p = track(retry(failsAtOnce, { backoff: constant(100), maxAttempts: 3 }));
    await clock.tickAsync(1000);
    expect(p.state).toBe('rejected');
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect(starts).toEqual([0, 100, 200]);
  });
});

describe('abandoned attempts', () => {
  it('ignores the value of an attempt that timed out, even while a later attempt runs', async () => {
    const finishes = [150, 200]; // attempt 1 runs 0–100 (then times out), attempt 2 runs 110–200
    const values = ['late first', 'second'];
    let n = 0;
    const fn = () => {
      const i = n++;
      return new Promise<string>((resolve) => setTimeout(() => resolve(values[i] as string), (finishes[i] as number) - Date.now()));
    };
    const p = track(retry(fn, { attemptTimeoutMs: 100, backoff: constant(10) }));
    await clock.tickAsync(200);
    expect(p.value).toBe('second');
  });

  it('ignores the error of an attempt that timed out, even while a later attempt runs', async () => {
    // Attempt 1 times out at 100 and fails late, at 150; attempt 2 runs from 110 to 190.
    let calls = 0;
    const fn = () =>
      ++calls === 1
        ? new Promise<string>((_, reject) => setTimeout(() => reject(httpError(503)), 150))
        : new Promise<string>((resolve) => setTimeout(() => resolve(`attempt ${calls}`), 80));
    const p = track(retry(fn, { attemptTimeoutMs: 100, backoff: constant(10) }));
    await clock.tickAsync(190);
    expect(p.value).toBe('attempt 2');
    expect(calls).toBe(2);
  });

  it('gives an ended attempt an aborted signal, read first after a later attempt began', async () => {
    const contexts: AttemptContext[] = [];
    let lateSignal: AbortSignal | undefined;
    const fn = (ctx: AttemptContext) => {
      contexts.push(ctx);
      if (ctx.attempt === 1) return Promise.reject(httpError(503));
      lateSignal = (contexts[0] as AttemptContext).signal; // attempt 1's, first read now
      return new Promise<string>((resolve) => setTimeout(() => resolve('ok'), 10));
    };
    const p = track(retry(fn, { backoff: constant(100) }));
    await clock.tickAsync(110);
    expect(p.value).toBe('ok');
    expect(lateSignal?.aborted).toBe(true);
    expect(lateSignal?.reason).toBeInstanceOf(TimeoutError);
    expect((lateSignal?.reason as Error).message).toBe('attempt 1 has ended');
    expect(contexts[1]?.signal.aborted).toBe(true);
  });
});

describe('timeouts and the deadline', () => {
  it('names the limit in the TimeoutError: the attempt timeout, or the deadline', async () => {
    const errors: unknown[] = [];
    const hang = () => new Promise<never>(() => {});
    const p = track(
      retry(hang, { attemptTimeoutMs: 100, deadlineMs: 250, backoff: constant(10), onRetry: ({ error }) => errors.push(error) }),
    );
    await clock.tickAsync(250);
    expect((errors[0] as Error).message).toBe('attempt 1 timed out after 100 ms');
    expect(p.error).toBeInstanceOf(RetryError);
    expect(((p.error as RetryError).cause as Error).message).toBe('attempt 3 was still running at the deadline after 250 ms');
  });

  it('gives up at the deadline with RetryError, whatever the predicate says of timeouts, and asks it nothing then', async () => {
    const asked: unknown[] = [];
    const only503 = httpStatus(503);
    let n = 0;
    const fn = () => (++n === 1 ? Promise.reject(httpError(503)) : new Promise<never>(() => {}));
    const budget = { record: vi.fn(), canRetry: () => true };
    const p = track(
      retry(fn, {
        backoff: constant(100),
        deadlineMs: 1000,
        budget,
        retryable: (error) => {
          asked.push(error);
          return only503(error);
        },
      }),
    );
    await clock.tickAsync(1000);
    expect(p.error).toBeInstanceOf(RetryError);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect(asked).toHaveLength(1);
    expect(budget.record.mock.calls).toEqual([[false]]);
  });

  it('asks the predicate about a timed-out attempt with that attempt\'s context', async () => {
    const seen: Array<Pick<AttemptContext, 'attempt' | 'elapsedMs' | 'remainingMs'>> = [];
    const p = track(
      retry(() => new Promise<never>(() => {}), {
        attemptTimeoutMs: 100,
        deadlineMs: 1000,
        maxAttempts: 1,
        retryable: (_error, ctx) => {
          seen.push({ attempt: ctx?.attempt ?? -1, elapsedMs: ctx?.elapsedMs ?? -1, remainingMs: ctx?.remainingMs ?? -1 });
          return true;
        },
      }),
    );
    await clock.tickAsync(100);
    expect(p.state).toBe('rejected');
    expect(seen).toEqual([{ attempt: 1, elapsedMs: 100, remainingMs: 900 }]);
  });

  it('does not start an attempt when a late wake-up comes exactly at the deadline', async () => {
    let calls = 0;
    const p = track(
      retry(
        () => {
          calls++;
          return Promise.reject(httpError(503));
        },
        { backoff: constant(500), deadlineMs: 1000 },
      ),
    );
    await clock.tickAsync(0);
    clock.jump(1000); // the 500 ms wake-up fires late, at 1000
    await clock.tickAsync(0);
    expect(calls).toBe(1);
    expect(p.error).toMatchObject({ reason: 'deadline', attempts: 1 });
  });
});

describe('the caller aborting from policy code', () => {
  it('settles the call once when the predicate aborts the caller\'s signal: no sleep, no further attempt', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    let calls = 0;
    const p = track(
      retry(
        () => {
          calls++;
          return Promise.reject(httpError(503));
        },
        {
          signal: controller.signal,
          backoff: constant(100),
          retryable: () => {
            controller.abort(reason);
            return true;
          },
        },
      ),
    );
    await clock.tickAsync(1000);
    expect(p.error).toBe(reason);
    expect(calls).toBe(1);
  });

  it('rejects with the abort reason, not a RetryError, when the next delay would pass the deadline', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const p = track(
      retry(
        () => {
          throw httpError(503); // synchronously: the call has not been handed its settle functions yet
        },
        {
          signal: controller.signal,
          backoff: constant(5000),
          deadlineMs: 1000,
          retryable: () => {
            controller.abort(reason);
            return true;
          },
        },
      ),
    );
    await clock.tickAsync(0);
    expect(p.error).toBe(reason);
  });
});

describe('a caller signal shared by several calls', () => {
  it('still aborts the calls that remain when one of them has ended', async () => {
    const controller = new AbortController();
    const reason = new Error('shutdown');
    const quick = track(retry(() => new Promise<string>((resolve) => setTimeout(() => resolve('done'), 10)), { signal: controller.signal }));
    const slow = track(retry(() => new Promise<never>(() => {}), { signal: controller.signal }));
    await clock.tickAsync(10);
    expect(quick.value).toBe('done');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort(reason);
    await clock.tickAsync(0);
    expect(slow.error).toBe(reason);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('options', () => {
  it('retries transient errors with no options at all (idempotent by default)', async () => {
    let n = 0;
    const p = track(retry(() => (++n === 1 ? Promise.reject(httpError(503)) : Promise.resolve('second'))));
    await clock.tickAsync(1000);
    expect(p.value).toBe('second');
  });

  it('reads an options object afresh on each call unless it is frozen', async () => {
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

  it('lists every known option for an unknown one', () => {
    expect(() => retry(() => 1, { retries: 3 } as RetryOptions)).toThrow(
      'retry: unknown option "retries" (known: backoff, maxAttempts, deadlineMs, attemptTimeoutMs, retryable, idempotent, retryOnResult, signal, onRetry, onSuccess, onGiveUp, budget, throttle, rng, unref)',
    );
  });

  it.each([
    ['x', 'retry: options must be an object, got "x"'],
    [{ backoff: null }, 'retry: options.backoff must be an object, got null'],
    [{ deadlineMs: '1000' }, 'retry: options.deadlineMs must be a number > 0 (Infinity for none), got "1000"'],
    [{ attemptTimeoutMs: '100' }, 'retry: options.attemptTimeoutMs must be a number > 0, got "100"'],
    [{ signal: null }, 'retry: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got null'],
    [{ signal: {} }, 'retry: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got {}'],
    [{ signal: { aborted: false } }, 'retry: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got {"aborted":false}'],
    [{ signal: { addEventListener() {} } }, 'retry: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got {}'],
    [{ budget: null }, 'retry: options.budget must come from createRetryBudget() (record, canRetry), got null'],
    [{ throttle: null }, 'retry: options.throttle must come from createAdaptiveThrottle() (admit, record, error), got null'],
  ])('refuses %j, naming it', (options, message) => {
    expect(() => retry(() => 1, options as RetryOptions)).toThrow(message);
  });

  it('refuses signals and budgets that are functions, however they are dressed', () => {
    const signalLike = Object.assign(() => undefined, { aborted: false, addEventListener() {}, removeEventListener() {} });
    expect(() => retry(() => 1, { signal: signalLike as unknown as AbortSignal })).toThrow(/^retry: options\.signal must be an AbortSignal/);
    const budgetLike = Object.assign(() => undefined, { record() {}, canRetry: () => true });
    expect(() => retry(() => 1, { budget: budgetLike })).toThrow(/^retry: options\.budget must come from createRetryBudget\(\)/);
  });
});
