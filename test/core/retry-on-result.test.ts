// retryOnResult: a value the predicate rejects counts as a transient failure, under the same
// backoff, deadline, budget and hooks; giving up rejects with a RetryError holding that value.
import fc from 'fast-check';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { type AttemptContext, RetryError, type RetryEvent, computeDelay, createRetryBudget, retry, withRetry } from '../../src/index.js';
import { iam } from '../../src/google/index.js';
import { noJitter } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

/** A long-running operation as Google's APIs return it: `done` false until it finishes. */
interface Operation {
  name: string;
  done: boolean;
  response?: { size: number };
}

/** fn returning the operations given, in order (the last one again once they run out); records call times. */
function poll(...operations: Operation[]) {
  const calls: number[] = [];
  const fn = vi.fn(async (_ctx: AttemptContext) => {
    calls.push(Date.now());
    return operations.length > 1 ? (operations.shift() as Operation) : (operations[0] as Operation);
  });
  return { fn, calls };
}

const running = (n: number): Operation => ({ name: `operations/${n}`, done: false });
const finished: Operation = { name: 'operations/1', done: true, response: { size: 42 } };
const notDone = (op: Operation) => !op.done;

describe('retryOnResult', () => {
  it('calls again while the predicate says so, on the backoff schedule, and resolves with the first value it accepts', async () => {
    const { fn, calls } = poll(running(1), running(2), finished);
    const p = track(retry(fn, { backoff: noJitter, retryOnResult: notDone }));
    await clock.tickAsync(3000);
    expect(p).toMatchObject({ state: 'resolved', value: finished });
    expect(calls).toEqual([0, 1000, 3000]);
  });

  it('gives the predicate the value and the attempt context', async () => {
    const seen: Array<[unknown, number]> = [];
    const p = track(
      retry((ctx) => ctx.attempt, {
        backoff: noJitter,
        retryOnResult: (value, ctx) => {
          seen.push([value, ctx.attempt]);
          return value < 2;
        },
      }),
    );
    await clock.tickAsync(1000);
    expect(p).toMatchObject({ state: 'resolved', value: 2 });
    expect(seen).toEqual([
      [1, 1],
      [2, 2],
    ]);
  });

  it('out of attempts: rejects with RetryError "attempts" whose value is the last value and cause undefined', async () => {
    const last = running(3);
    const { fn } = poll(running(1), running(2), last);
    const onGiveUp = vi.fn();
    const p = track(retry(fn, { backoff: noJitter, maxAttempts: 3, retryOnResult: notDone, onGiveUp }));
    await clock.tickAsync(3000);
    expect(p.state).toBe('rejected');
    const error = p.error as RetryError;
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3, elapsedMs: 3000 });
    expect(error.value).toBe(last);
    expect(error.cause).toBeUndefined();
    expect(error.message).toBe('gave up after 3 attempts in 3000 ms (out of attempts): retryOnResult rejected the last value');
    expect(onGiveUp).toHaveBeenCalledWith({ reason: 'attempts', error, attempts: 3, elapsedMs: 3000 });
  });

  it('out of time: rejects with RetryError "deadline" holding the last value', async () => {
    const { fn } = poll(running(1));
    const p = track(retry(fn, { backoff: noJitter, deadlineMs: 5000, retryOnResult: notDone }));
    await clock.tickAsync(5000); // attempts at 0, 1000, 3000; the next wait (4000) would end past 5000
    expect(p.state).toBe('rejected');
    expect(p.error).toMatchObject({ reason: 'deadline', attempts: 3, value: running(1) });
    expect(p.error).not.toHaveProperty('cause');
  });

  it('held past the deadline by an async onRetry: the RetryError holds the last value, or the last error even when it looks like an outcome', async () => {
    const hanging = () => new Promise<void>(() => {});
    const { fn } = poll(running(1));
    const held = track(retry(fn, { backoff: noJitter, deadlineMs: 5000, retryOnResult: notDone, onRetry: hanging }));
    // An error shaped like the engine's own outcome of a value: still an error.
    const thrown = { ok: true, value: 'not a value' };
    const failing = track(
      retry(() => Promise.reject(thrown), { backoff: noJitter, deadlineMs: 5000, retryable: () => true, onRetry: hanging }),
    );
    await clock.tickAsync(5000);
    expect(held.error).toMatchObject({ reason: 'deadline', attempts: 1, value: running(1) });
    expect(held.error).not.toHaveProperty('cause');
    expect(failing.error).toMatchObject({ reason: 'deadline', attempts: 1 });
    expect((failing.error as RetryError).cause).toBe(thrown);
    expect(failing.error).not.toHaveProperty('value');
  });

  it('spends the retry budget like a transient error, and gives up with "budget" when it is empty', async () => {
    const budget = createRetryBudget({ maxTokens: 4, tokenRatio: 0.1 });
    const { fn } = poll(running(1));
    const p = track(retry(fn, { backoff: noJitter, budget, retryOnResult: notDone }));
    await clock.tickAsync(10_000);
    expect(p.error).toMatchObject({ reason: 'budget', value: running(1) });
    expect(p.error).not.toHaveProperty('cause');
    expect(fn).toHaveBeenCalledTimes(2); // 4 → 3 (retry allowed, 3 > 2) → 2 (refused)
  });

  it('tells onRetry the value it is retrying, with no error', async () => {
    const events: RetryEvent[] = [];
    const p = track(
      retry(poll(running(1), finished).fn, { backoff: noJitter, retryOnResult: notDone, onRetry: (e) => void events.push(e) }),
    );
    await clock.tickAsync(1000);
    expect(p.state).toBe('resolved');
    expect(events).toEqual([{ attempt: 1, error: undefined, value: running(1), delayMs: 1000, elapsedMs: 0 }]);
  });

  it('mixes with errors: a transient error, then a value to retry, then success; the RetryError keeps only the last outcome', async () => {
    let n = 0;
    const fn = async () => {
      n++;
      if (n === 1) throw httpError(503);
      return n;
    };
    const p = track(retry(fn, { backoff: noJitter, retryOnResult: (v) => v < 3 }));
    await clock.tickAsync(3000);
    expect(p).toMatchObject({ state: 'resolved', value: 3 });

    let m = 0;
    const busy = httpError(503);
    const q = track(
      retry(async () => (++m === 1 ? 0 : Promise.reject(busy)), { backoff: noJitter, maxAttempts: 2, retryOnResult: () => true }),
    );
    await clock.tickAsync(1000);
    expect(q.error).toMatchObject({ reason: 'attempts', cause: busy });
    expect(q.error).not.toHaveProperty('value');
  });

  it('rejects with the predicate’s own error when it throws', async () => {
    const bug = new Error('predicate bug');
    await expect(
      retry(async () => 1, {
        retryOnResult: () => {
          throw bug;
        },
      }),
    ).rejects.toBe(bug);
  });

  it('does not resend a non-idempotent operation: its value is the answer', async () => {
    const { fn } = poll(running(1), finished);
    await expect(retry(fn, { idempotent: false, retryOnResult: notDone })).resolves.toEqual(running(1));
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('is checked as a function', async () => {
    await expect(retry(async () => 1, { retryOnResult: true as never })).rejects.toThrow(
      new TypeError('retry: options.retryOnResult must be a function, got true'),
    );
  });

  it('types the predicate’s value as fn’s', async () => {
    const getOperation = withRetry(async (name: string): Promise<Operation> => ({ name, done: true }), {
      retryOnResult: (op) => !op.done,
    });
    await expect(getOperation('operations/9')).resolves.toEqual({ name: 'operations/9', done: true });
    // retry() infers the value's type for the predicate from fn; a preset's options still fit.
    const op = await retry(async () => ({ name: 'x', done: true }), { retryOnResult: (o) => !o.done });
    expectTypeOf(op).toEqualTypeOf<{ name: string; done: boolean }>();
    const viaPreset = await retry(async () => 5, { ...iam(), retryOnResult: (n) => n < 5 });
    expectTypeOf(viaPreset).toEqualTypeOf<number>();
    // @ts-expect-error: the predicate's value is fn's value, a number here
    await retry(async () => 5, { retryOnResult: (s: string) => s === '' }).catch(() => {});
  });

  it('waits exactly the backoff delays while polling (property: any policy, any number of polls)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 6 }),
        async (initialDelayMs, multiplier, polls) => {
          const backoff = { initialDelayMs, multiplier, maxDelayMs: initialDelayMs * 8, jitter: 'none' } as const;
          const start = Date.now();
          const calls: number[] = [];
          const p = track(
            retry(
              () => {
                calls.push(Date.now() - start);
                return calls.length;
              },
              { backoff, deadlineMs: Infinity, maxAttempts: 10, retryOnResult: (n) => n <= polls },
            ),
          );
          await clock.tickAsync(200_000);
          expect(p).toMatchObject({ state: 'resolved', value: polls + 1 });
          let t = 0;
          const expected = [0];
          for (let n = 0; n < polls; n++) {
            t += computeDelay(n, backoff);
            expected.push(t);
          }
          expect(calls).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });
});
