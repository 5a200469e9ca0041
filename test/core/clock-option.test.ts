// The `clock` option: one seam through which a call reads time and sets its timers. A clock
// passed in is used as it is, with nothing global touched: its deadline, waits, attempt timeouts
// and hedged copies all move with it, and with nothing else; the gate and the throttle take one
// too. The system clock (the default) still follows fake timers a test installs: the rest of
// the suite runs on that (test/helpers/clock.ts).
import FakeTimers from '@sinonjs/fake-timers';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type RetryClock,
  RetryError,
  createAdaptiveThrottle,
  createRetryAfterGate,
  hedging,
  retry,
  systemClock,
  withRetry,
} from '../../src/index.js';
import { retryFetch } from '../../src/fetch/index.js';
import { queueState } from '../../src/runtime/timer-queue.js';
import { httpError, track, virtualClock } from '../helpers/clock.js';

const constant = (ms: number) => ({ initialDelayMs: ms, multiplier: 1, maxDelayMs: ms, jitter: 'none' }) as const;

afterEach(() => {
  // Nothing a test here did went through the system clock's queue.
  expect(queueState()).toEqual({ queued: 0, timerArmed: false });
});

describe('a call on a clock of its own', () => {
  it('shares one timer queue among the calls on one clock: one timer armed for all their waits', async () => {
    const clock = virtualClock();
    const failing = () =>
      retry(() => Promise.reject(httpError(503)), { clock, maxAttempts: 2, backoff: constant(1000) }).catch(() => 'gave up');
    const calls = [failing(), failing(), failing()];
    await clock.fake.tickAsync(0);
    expect(clock.fake.countTimers()).toBe(1);
    await clock.fake.tickAsync(1000);
    expect(await Promise.all(calls)).toEqual(['gave up', 'gave up', 'gave up']);
  });

  it('waits on that clock alone: the next attempt comes when it is ticked, not before', async () => {
    const clock = virtualClock();
    const times: number[] = [];
    const call = track(
      retry(
        () => {
          times.push(clock.now());
          if (times.length < 3) throw httpError(503);
          return 'ok';
        },
        { clock, backoff: constant(1000) },
      ),
    );
    await clock.fake.tickAsync(999);
    expect(times).toEqual([0]);
    expect(queueState()).toEqual({ queued: 0, timerArmed: false }); // the system clock's queue is untouched
    await clock.fake.tickAsync(1);
    expect(times).toEqual([0, 1000]);
    await clock.fake.tickAsync(1000);
    expect(times).toEqual([0, 1000, 2000]);
    expect(call.state).toBe('resolved');
    expect(call.value).toBe('ok');
    expect(queueState(clock)).toEqual({ queued: 0, timerArmed: false });
  });

  it('keeps its deadline on that clock: the attempt still running at it is abandoned then, to the millisecond', async () => {
    const clock = virtualClock();
    let signal: AbortSignal | undefined;
    const call = track(
      retry(
        (ctx) => {
          signal = ctx.signal;
          return new Promise(() => {});
        },
        { clock, deadlineMs: 5000 },
      ),
    );
    await clock.fake.tickAsync(4999);
    expect(call.state).toBe('pending');
    await clock.fake.tickAsync(1);
    expect(call.state).toBe('rejected');
    expect(call.error).toBeInstanceOf(RetryError);
    expect((call.error as RetryError).reason).toBe('deadline');
    expect((call.error as RetryError).elapsedMs).toBe(5000);
    expect(signal?.aborted).toBe(true);
    expect(clock.fake.countTimers()).toBe(0);
  });

  it('times attempt timeouts and reports elapsed time on that clock', async () => {
    const clock = virtualClock();
    const delays: number[] = [];
    const elapsed: number[] = [];
    let calls = 0;
    const call = track(
      retry(
        () => {
          calls += 1;
          return calls < 3 ? new Promise(() => {}) : 'done';
        },
        {
          clock,
          attemptTimeoutMs: 300,
          backoff: constant(100),
          onRetry: (e) => {
            delays.push(e.delayMs);
            elapsed.push(e.elapsedMs);
          },
          onSuccess: (e) => {
            elapsed.push(e.elapsedMs);
          },
        },
      ),
    );
    await clock.fake.tickAsync(10_000);
    expect(call.value).toBe('done');
    expect(delays).toEqual([100, 100]);
    expect(elapsed).toEqual([300, 700, 800]);
  });

  it('sends hedged copies on that clock', async () => {
    const clock = virtualClock();
    const sent: number[] = [];
    const call = track(
      retry(
        () => {
          sent.push(clock.now());
          return sent.length < 3 ? new Promise(() => {}) : 'third copy';
        },
        { clock, hedge: hedging({ delayMs: 40, maxCopies: 3 }), attemptTimeoutMs: 1000 },
      ),
    );
    await clock.fake.tickAsync(39);
    expect(sent).toEqual([0]);
    await clock.fake.tickAsync(100);
    expect(sent).toEqual([0, 40, 80]);
    expect(call.value).toBe('third copy');
  });

  it('a clock of any origin: one that reads below zero makes no pause of its own (a hedged attempt that failed without a hint waits its backoff)', async () => {
    const fake = FakeTimers.createClock(0);
    const clock: RetryClock = {
      now: () => fake.now - 300_000,
      setTimeout: (run, ms) => fake.setTimeout(run, ms),
      clearTimeout: (handle) => fake.clearTimeout(handle as FakeTimers.TimerId),
    };
    const sentAt: number[] = [];
    const call = track(
      retry(
        () => {
          sentAt.push(fake.now);
          if (sentAt.length < 3) throw httpError(503);
          return 'ok';
        },
        { clock, hedge: hedging({ delayMs: 50 }), backoff: constant(100) },
      ),
    );
    await fake.tickAsync(100);
    // Attempt 1's two copies (the second sent at once when the first failed), then attempt 2.
    expect(sentAt).toEqual([0, 0, 100]);
    expect(call.value).toBe('ok');
    const gate = createRetryAfterGate({ clock, spread: false });
    expect(gate.waitMs()).toBe(0);
  });

  it('two calls on two clocks do not move each other', async () => {
    const a = virtualClock();
    const b = virtualClock();
    let attemptsA = 0;
    let attemptsB = 0;
    const failing = (count: () => void) => () => {
      count();
      throw httpError(503);
    };
    const callA = track(
      retry(
        failing(() => attemptsA++),
        { clock: a, backoff: constant(100), maxAttempts: 3 },
      ),
    );
    const callB = track(
      retry(
        failing(() => attemptsB++),
        { clock: b, backoff: constant(100), maxAttempts: 3 },
      ),
    );
    await a.fake.tickAsync(1000);
    expect(callA.state).toBe('rejected');
    expect(attemptsA).toBe(3);
    expect(callB.state).toBe('pending');
    expect(attemptsB).toBe(1);
    await b.fake.tickAsync(1000);
    expect(callB.state).toBe('rejected');
  });

  it('withRetry and retryFetch take it too', async () => {
    const clock = virtualClock();
    let n = 0;
    const wrapped = withRetry(
      async () => {
        n += 1;
        if (n < 2) throw httpError(503);
        return n;
      },
      { clock, backoff: constant(250) },
    );
    const call = track(wrapped());
    await clock.fake.tickAsync(249);
    expect(call.state).toBe('pending');
    await clock.fake.tickAsync(1);
    expect(call.value).toBe(2);

    const answers = [503, 200];
    const fetchAt: number[] = [];
    const fetched = track(
      retryFetch('http://127.0.0.1:9/x', undefined, {
        clock,
        backoff: constant(500),
        fetch: async () => {
          fetchAt.push(clock.now());
          return new Response('body', { status: answers.shift() });
        },
      }),
    );
    const start = clock.now();
    await clock.fake.tickAsync(1000);
    expect(fetchAt.map((t) => t - start)).toEqual([0, 500]);
    expect((fetched.value as Response).status).toBe(200);
  });

  it('never arms a timer longer than setTimeout holds, on a clock passed in either', async () => {
    const clock = virtualClock();
    const call = track(retry(() => new Promise(() => {}), { clock, deadlineMs: 2 ** 31 + 10 }));
    await clock.fake.tickAsync(10);
    expect(Math.max(...clock.armed)).toBeLessThanOrEqual(2 ** 31 - 1);
    await clock.fake.tickAsync(2 ** 31);
    expect(call.state).toBe('rejected');
  });
});

describe('the gate and the throttle on a clock', () => {
  it('a gate times its pause on its clock, and calls on another clock wait what is left of it', async () => {
    const clock = virtualClock();
    const gate = createRetryAfterGate({ clock, spread: false });
    gate.hold(2000);
    expect(gate.waitMs()).toBe(2000);
    await clock.fake.tickAsync(500);
    expect(gate.waitMs()).toBe(1500);
    const other = virtualClock();
    const sentAt: number[] = [];
    const call = track(retry(() => sentAt.push(other.now()), { clock: other, gate }));
    await other.fake.tickAsync(1499);
    expect(sentAt).toEqual([]);
    // The pause is the gate's: ended on its clock, the call goes at its next look.
    clock.fake.tick(1500);
    await other.fake.tickAsync(1);
    expect(sentAt).toEqual([1500]);
    expect(call.state).toBe('resolved');
  });

  it('a throttle counts its window on its clock', () => {
    const clock = virtualClock();
    const throttle = createAdaptiveThrottle({ clock, windowMs: 1000, minRequests: 0 });
    for (let i = 0; i < 5; i++) throttle.record(false);
    expect(throttle.requests).toBe(5);
    clock.fake.tick(500);
    expect(throttle.requests).toBe(5);
    clock.fake.tick(520);
    expect(throttle.requests).toBe(0);
  });
});

describe('a clock that is not one', () => {
  it.each([
    ['null', null],
    ['a sinon clock as it is (its now is a number)', FakeTimers.createClock(0)],
    ['an object without clearTimeout', { now: () => 0, setTimeout: () => 0 }],
  ])('%s: retry() rejects naming options.clock; the gate and the throttle throw naming it', async (_, clock) => {
    await expect(retry(() => 1, { clock: clock as never })).rejects.toThrow(
      /^retry: options\.clock must be a clock with now\(\), setTimeout\(\) and clearTimeout\(\)/,
    );
    expect(() => createRetryAfterGate({ clock: clock as never })).toThrow(/createRetryAfterGate: options\.clock must be a clock/);
    expect(() => createAdaptiveThrottle({ clock: clock as never })).toThrow(/createAdaptiveThrottle: options\.clock must be a clock/);
  });

  it('systemClock is the default, frozen, never goes back, and its timers fire and clear', async () => {
    expect(Object.isFrozen(systemClock)).toBe(true);
    const before = systemClock.now();
    const fired = await new Promise<string>((resolve) => {
      const cleared = systemClock.setTimeout(() => resolve('the cleared one'), 0);
      systemClock.clearTimeout(cleared);
      systemClock.setTimeout(() => resolve('the other one'), 0);
    });
    expect(fired).toBe('the other one');
    expect(systemClock.now()).toBeGreaterThanOrEqual(before);
  });
});
