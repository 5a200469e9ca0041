// The deadline is a promise: a call settles no later than deadlineMs after retry() was called.
// It gives up at once when the next sleep would end at or past the deadline (a zero or
// fractional delay costs whole timer turns), abandons an attempt still running at it, counts
// from the call (fn's synchronous part and the caller's included), and never starts an attempt
// on a timer that fired late. A call with no limit to wait for arms no timer.
import { describe, expect, it, vi } from 'vitest';
import { type GiveUpEvent, RetryError, type RetryEvent, TimeoutError, httpStatus, retry } from '../../src/index.js';
import { constant, hang, noJitter, script } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

describe('giving up before a sleep that would pass the deadline', () => {
  it('gives up at once when the next delay would end past the deadline', async () => {
    const { fn, calls } = script(...Array.from({ length: 10 }, () => httpError(503)));
    const p = track(retry(fn, { deadlineMs: 10_000, backoff: noJitter }));
    await clock.tickAsync(7000);
    // Attempts at 0, 1 s, 3 s, 7 s; the next would start at 15 s, past the 10 s deadline.
    expect(calls).toEqual([0, 1000, 3000, 7000]);
    expect(p.state).toBe('rejected');
    const error = p.error as RetryError;
    expect(error.reason).toBe('deadline');
    expect(error.elapsedMs).toBe(7000);
    expect(error.attempts).toBe(4);
  });

  it('a zero delay counts as one timer turn against the deadline', async () => {
    const first = httpError(503);
    let calls = 0;
    const events: RetryEvent[] = [];
    const p = track(
      retry(
        () => {
          calls++;
          return calls === 1 ? new Promise((_, reject) => setTimeout(() => reject(first), 197)) : Promise.resolve('late');
        },
        { deadlineMs: 198, backoff: { ...noJitter, initialDelayMs: 0, maxDelayMs: 0 }, onRetry: (e) => events.push(e) },
      ),
    );
    await clock.tickAsync(300);
    // The retry could only start at 198 ms, the deadline: give up at 197 ms, with no onRetry.
    expect(calls).toBe(1);
    expect(events).toHaveLength(0);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).elapsedMs).toBe(197);
  });

  it('a fractional delay counts as the whole milliseconds its timer waits', async () => {
    const events: RetryEvent[] = [];
    let calls = 0;
    const p = track(
      retry(
        () => {
          calls++;
          return new Promise((_, reject) => setTimeout(() => reject(httpError(503)), 2));
        },
        {
          deadlineMs: 4,
          // Equal jitter with a draw of 0: half of 3 ms, 1.5 ms, which the timer waits as 2.
          backoff: { initialDelayMs: 3, multiplier: 1, maxDelayMs: 3, jitter: 'equal' },
          rng: () => 0,
          onRetry: (e) => events.push(e),
        },
      ),
    );
    await clock.tickAsync(10);
    // Failed at 2 ms; the retry could start only at 4 ms, the deadline: give up at 2 ms, with no onRetry.
    expect(calls).toBe(1);
    expect(events).toHaveLength(0);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).elapsedMs).toBe(2);
  });
});

describe('abandoning an attempt still running at the deadline', () => {
  it('abandons a hung first attempt exactly at the deadline and aborts its signal', async () => {
    let signal: AbortSignal | undefined;
    const p = track(
      retry(
        (ctx) => {
          signal = ctx.signal;
          return hang();
        },
        { deadlineMs: 5000 },
      ),
    );
    await clock.tickAsync(4999);
    expect(p.state).toBe('pending');
    expect(signal?.aborted).toBe(false);
    await clock.tickAsync(1);
    expect(p.state).toBe('rejected');
    const error = p.error as RetryError;
    expect(error.reason).toBe('deadline');
    expect(error.elapsedMs).toBe(5000);
    expect(error.cause).toBeInstanceOf(TimeoutError);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBe(error.cause);
  });

  it('abandons a hung later attempt at the deadline and swallows its late outcome', async () => {
    let rejectLate: ((e: Error) => void) | undefined;
    let calls = 0;
    const first = httpError(503);
    const onGiveUp = vi.fn((_event: GiveUpEvent) => {});
    const onRetry = vi.fn();
    const p = track(
      retry(
        () => {
          calls++;
          if (calls === 1) return Promise.reject(first);
          return new Promise<never>((_resolve, reject) => {
            rejectLate = reject;
          });
        },
        { deadlineMs: 3000, backoff: noJitter, onGiveUp, onRetry },
      ),
    );
    await clock.tickAsync(3000);
    const error = p.error as RetryError;
    expect(error.reason).toBe('deadline');
    expect(error.elapsedMs).toBe(3000);
    // The abandoned attempt's timeout remembers what failed before it.
    expect((error.cause as TimeoutError).cause).toBe(first);
    // A late rejection of the abandoned attempt is nobody's unhandled rejection (test/setup
    // fails the test if it is), and changes nothing: no retry, no second hook.
    expect(rejectLate).toBeTypeOf('function');
    rejectLate?.(new Error('late'));
    await clock.tickAsync(10_000);
    expect(calls).toBe(2);
    expect(p.error).toBe(error);
    expect(onRetry).toHaveBeenCalledTimes(1);
    expect(onGiveUp).toHaveBeenCalledTimes(1);
  });

  it('gives up at the deadline with RetryError, whatever the predicate says of timeouts, and asks it nothing then', async () => {
    const asked: unknown[] = [];
    const only503 = httpStatus(503);
    let n = 0;
    const fn = () => (++n === 1 ? Promise.reject(httpError(503)) : hang());
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
});

describe('the deadline counts from the call', () => {
  it('fn’s synchronous part included', async () => {
    const p = track(
      retry(
        () => {
          clock.tick(300); // 300 ms of synchronous work, then it hangs
          return hang();
        },
        { deadlineMs: 100 },
      ),
    );
    // Settles on the first timer turn after the work, not 100 ms after it (before: at 400).
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect(p.error).toBeInstanceOf(RetryError);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).elapsedMs).toBe(300);
  });

  it('the caller’s own synchronous code after it included', async () => {
    const p = track(retry(hang, { deadlineMs: 100 }));
    clock.tick(60); // the caller keeps the thread 60 ms before the first microtask
    await clock.tickAsync(40);
    expect(p.state).toBe('rejected');
    expect((p.error as RetryError).elapsedMs).toBe(100);
  });
});

describe('a sleep whose timer fires late', () => {
  it('past the deadline: gives up instead of starting an attempt', async () => {
    const first = httpError(503);
    let calls = 0;
    const p = track(
      retry(
        () => {
          calls++;
          return calls === 1 ? Promise.reject(first) : Promise.resolve('too late');
        },
        { deadlineMs: 1500, backoff: noJitter },
      ),
    );
    await clock.tickAsync(0);
    // A busy event loop: the 1000 ms sleep's timer only runs at 1600 ms.
    clock.jump(1600);
    await clock.tickAsync(0);
    expect(calls).toBe(1);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).cause).toBe(first);
    expect((p.error as RetryError).elapsedMs).toBe(1600);
  });

  it('exactly at the deadline: does not start an attempt either', async () => {
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

describe('timers', () => {
  it('a hung attempt with neither timeout nor deadline left open arms no timer of its own', async () => {
    let finish: ((v: string) => void) | undefined;
    const p = track(
      retry(() => new Promise<string>((resolve) => (finish = resolve)), { deadlineMs: Number.POSITIVE_INFINITY, maxAttempts: 3 }),
    );
    await clock.tickAsync(60_000);
    expect(clock.countTimers()).toBe(0);
    finish?.('done');
    await clock.tickAsync(0);
    expect(p.value).toBe('done');
  });

  it('runs many concurrent calls on one shared timer, each waking at its own time', async () => {
    const results = Array.from({ length: 100 }, (_, i) => {
      const { fn } = script(httpError(503));
      return track(retry(fn, { backoff: { ...noJitter, initialDelayMs: 100 + i, maxDelayMs: 1000 } }));
    });
    const resolved = () => results.filter((r) => r.state === 'resolved').length;
    await clock.tickAsync(0);
    expect(clock.countTimers()).toBe(1);
    await clock.tickAsync(99);
    expect(resolved()).toBe(0);
    await clock.tickAsync(1); // t = 100: the first sleep ends
    expect(resolved()).toBe(1);
    expect(clock.countTimers()).toBe(1);
    await clock.tickAsync(49); // t = 149: sleeps of 100 to 149 ms
    expect(resolved()).toBe(50);
    await clock.tickAsync(50); // t = 199: all of them
    expect(resolved()).toBe(100);
    expect(results.every((r) => r.value === 'ok')).toBe(true);
  });
});

describe('onGiveUp at the deadline', () => {
  it('a sleep whose timer fires at or past the deadline tells onGiveUp the reason "deadline", once', async () => {
    const events: GiveUpEvent[] = [];
    const p = track(
      retry(() => Promise.reject(httpError(503)), {
        backoff: constant(500),
        deadlineMs: 1000,
        onGiveUp: (event) => void events.push(event),
      }),
    );
    await clock.tickAsync(0);
    clock.jump(1000);
    await clock.tickAsync(0);
    expect(events).toEqual([{ reason: 'deadline', error: p.error, attempts: 1, elapsedMs: 1000 }]);
  });
});
