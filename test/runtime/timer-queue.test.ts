// The shared timer queue under retry(), at its edges: clocks installed after import or swapped
// mid-wait, waits past setTimeout's limit, many calls cancelled in any order, zero delays, and
// the adoption microtask that decides whether a first attempt needs a deadline at all.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import FakeTimers from '@sinonjs/fake-timers';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type AttemptContext, createRetryBudget, retry, RetryError } from '../../src/index.js';
import { steadyNow } from '../../src/runtime/clock.js';
import { MAX_TIMER_DELAY, NOT_QUEUED, SYSTEM_TIMERS, type Timed, queueState } from '../../src/runtime/timer-queue.js';
import { httpError, installClock, type InstalledClock, track } from '../helpers/clock.js';

let clock: InstalledClock | undefined;
afterEach(() => {
  const left = queueState();
  // Spies first: one laid over the virtual setTimeout would otherwise put it back after the
  // clock is gone, leaving later test files with a setTimeout that never fires.
  vi.restoreAllMocks();
  clock?.uninstall();
  clock = undefined;
  // Timers stubbed by hand (handClock) go too, or the next test file would run on them.
  vi.unstubAllGlobals();
  // Every test must leave nothing behind in the shared queue.
  expect(left).toEqual({ queued: 0, timerArmed: false });
});

// The system clock's queue, which every call without a `clock` option shares.
const schedule = (item: Timed, dueAt: number): void => SYSTEM_TIMERS.schedule(item, dueAt);
const unschedule = (item: Timed): void => SYSTEM_TIMERS.unschedule(item);

const constant = (ms: number) => ({ initialDelayMs: ms, multiplier: 1, maxDelayMs: ms, jitter: 'none' }) as const;

/** fn that fails `failures` times (with a transient error), then returns 'ok'; records call times. */
function failing(failures: number) {
  const calls: number[] = [];
  const fn = () => {
    calls.push(Date.now());
    return calls.length <= failures ? Promise.reject(httpError(503)) : Promise.resolve('ok');
  };
  return { fn, calls };
}

/** Lets pending microtasks (and only those) run. */
async function microtasks(n = 10): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve();
}

describe('the success path', () => {
  it('reads the clock once per call and arms no timer for calls that settle at once, one by one or all together', async () => {
    clock = installClock();
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const nowSpy = vi.spyOn(globalThis.performance, 'now');
    for (let i = 0; i < 100; i++) expect(await retry(async () => i)).toBe(i);
    const all = await Promise.all(Array.from({ length: 100 }, (_, i) => retry(() => Promise.resolve(i))));
    expect(all).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(setTimeoutSpy).not.toHaveBeenCalled();
    // The deadline counts from the call, so each call reads the clock when it is made; only then.
    expect(nowSpy).toHaveBeenCalledTimes(200);
  });

  it('queues the deadline of a first attempt still running after the adoption microtask, and only then', async () => {
    clock = installClock();
    let finish: ((value: string) => void) | undefined;
    const p = track(retry(() => new Promise<string>((resolve) => (finish = resolve)), { deadlineMs: 5000 }));
    expect(queueState()).toEqual({ queued: 0, timerArmed: false });
    await microtasks();
    expect(queueState()).toEqual({ queued: 1, timerArmed: true });
    finish?.('late but in time');
    await microtasks();
    expect(p.value).toBe('late but in time');
    expect(clock.countTimers()).toBe(0);
  });

  it('regression: the deadlines of calls begun together count from each call, not from after their later work', async () => {
    clock = installClock();
    const settledAt: number[] = [];
    const calls = Array.from({ length: 20 }, (_, i) =>
      retry(
        async () => {
          await undefined;
          clock?.tick(2); // 2 ms of synchronous work in the attempt's first microtask, then it hangs
          return new Promise<never>(() => {});
        },
        { deadlineMs: 100 },
      ).catch((error: unknown) => {
        settledAt[i] = Date.now();
        return error;
      }),
    );
    await clock.tickAsync(200);
    const errors = await Promise.all(calls);
    expect(errors.every((e) => e instanceof RetryError && e.reason === 'deadline')).toBe(true);
    // All started at 0 and settle at 100, though their work ran until 40 (before: 102, one
    // reading shared after the first call's 2 ms; before that, up to 140).
    expect(settledAt).toEqual(Array.from({ length: 20 }, () => 100));
  });

  it('an abort in the same tick as the call, before the adoption microtask, rejects with the reason', async () => {
    clock = installClock();
    const controller = new AbortController();
    let attempts = 0;
    const p = track(
      retry(
        () => {
          attempts++;
          return new Promise<never>(() => {});
        },
        { signal: controller.signal },
      ),
    );
    controller.abort(new Error('changed my mind'));
    await microtasks();
    expect(p.state).toBe('rejected');
    expect((p.error as Error).message).toBe('changed my mind');
    expect(attempts).toBe(1);
    expect(clock.countTimers()).toBe(0);
  });

  it('an outcome reached before the adoption microtask (a synchronous throw that is not retried) is delivered', async () => {
    clock = installClock();
    const forbidden = httpError(403);
    const p = track(
      retry(() => {
        throw forbidden;
      }),
    );
    await microtasks();
    expect(p.error).toBe(forbidden);
  });
});

describe('clocks', () => {
  it('follows a virtual clock installed after the module was imported', async () => {
    // The module was imported at the top of this file, long before this clock exists.
    clock = installClock();
    const { fn, calls } = failing(2);
    const p = track(retry(fn, { backoff: constant(30_000) }));
    await clock.tickAsync(60_000);
    expect(calls).toEqual([0, 30_000, 60_000]);
    expect(p.value).toBe('ok');
  });

  it('a wait begun under one virtual clock finishes under the next with the time it had left', async () => {
    clock = installClock();
    const first = failing(1);
    const p1 = track(retry(first.fn, { backoff: constant(10_000) }));
    await clock.tickAsync(4000);
    clock.uninstall(); // its pending timer is gone with it
    clock = installClock(); // time 0 again
    // The queue notices the new clock at its next use.
    const second = failing(1);
    const p2 = track(retry(second.fn, { backoff: constant(20_000) }));
    await clock.tickAsync(5999);
    expect(first.calls).toEqual([0]);
    await clock.tickAsync(1);
    expect(first.calls).toEqual([0, 6000]);
    expect(p1.value).toBe('ok');
    await clock.tickAsync(14_000);
    expect(second.calls).toEqual([0, 20_000]);
    expect(p2.value).toBe('ok');
  });

  it('a real timer armed before a virtual clock is installed is cleared with the real clearTimeout', async () => {
    const realSetTimeout = vi.spyOn(globalThis, 'setTimeout');
    const realClearTimeout = vi.spyOn(globalThis, 'clearTimeout');
    const first = failing(1);
    const p1 = track(retry(first.fn, { backoff: constant(60_000) }));
    await microtasks(); // the first attempt fails and its sleep arms a real timer
    expect(realSetTimeout).toHaveBeenCalledTimes(1);
    // A minute, less the real time spent between the failure and arming (a loaded machine may
    // take a millisecond or more there).
    expect(realSetTimeout.mock.calls[0]?.[1]).toBeGreaterThan(59_000);
    expect(realSetTimeout.mock.calls[0]?.[1]).toBeLessThanOrEqual(60_000);
    const realTimer = realSetTimeout.mock.results[0]?.value;

    // The clock is laid over the spies: it must go first, or it would put them back when it goes.
    clock = installClock();
    try {
      const second = failing(1);
      const p2 = track(retry(second.fn, { backoff: constant(1000) }));
      await clock.tickAsync(0);
      expect(realClearTimeout).toHaveBeenCalledWith(realTimer);
      expect(realSetTimeout).toHaveBeenCalledTimes(1); // everything since runs on the virtual clock
      await clock.tickAsync(1000);
      expect(p2.value).toBe('ok');
      // The rest of the first call's minute (less the real milliseconds already spent, under one
      // second even on a loaded machine) runs on virtual time, from where the real clock stood.
      await clock.tickAsync(58_000);
      expect(first.calls).toHaveLength(1);
      await clock.tickAsync(1000);
      expect(first.calls).toHaveLength(2);
      expect(p1.value).toBe('ok');
    } finally {
      clock?.uninstall();
      clock = undefined;
    }
  });
});

describe('waits past setTimeout’s 2^31 − 1 ms limit', () => {
  it('sleeps 3·10^9 ms in steps no timer overflows, waking exactly on time', async () => {
    clock = installClock();
    const delays: number[] = [];
    const fakeSetTimeout = globalThis.setTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((handler: () => void, delay: number) => {
      delays.push(delay);
      return fakeSetTimeout(handler, delay);
    }) as typeof setTimeout);
    const { fn, calls } = failing(1);
    const p = track(retry(fn, { backoff: constant(3e9), deadlineMs: Number.POSITIVE_INFINITY, maxAttempts: 2 }));
    await clock.tickAsync(3e9 - 1);
    expect(calls).toEqual([0]);
    await clock.tickAsync(1);
    expect(calls).toEqual([0, 3e9]);
    expect(p.value).toBe('ok');
    expect(delays.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...delays)).toBeLessThanOrEqual(MAX_TIMER_DELAY);
  });

  it('keeps a 30-day deadline on a hung attempt to the millisecond', async () => {
    clock = installClock();
    const days30 = 30 * 24 * 3600 * 1000;
    const p = track(retry(() => new Promise<never>(() => {}), { deadlineMs: days30 }));
    await clock.tickAsync(days30 - 1);
    expect(p.state).toBe('pending');
    await clock.tickAsync(1);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).elapsedMs).toBe(days30);
  });
});

describe('a zero-delay retry loop', () => {
  it('takes one timer turn per retry, so other timers run in between', async () => {
    clock = installClock();
    let attempts = 0;
    const seenByOthers: number[] = [];
    const p = track(
      retry(
        () => {
          attempts++;
          throw httpError(503);
        },
        { backoff: constant(0), maxAttempts: 50 },
      ),
    );
    expect(attempts).toBe(1);
    await microtasks(50);
    expect(attempts).toBe(1); // no retry without a timer turn
    setTimeout(() => seenByOthers.push(attempts), 0);
    setTimeout(() => seenByOthers.push(attempts), 0);
    await clock.runAllAsync();
    expect(attempts).toBe(50);
    expect((p.error as RetryError).reason).toBe('attempts');
    // The other timers ran early, between retries, not after the loop had finished.
    expect(Math.max(...seenByOthers)).toBeLessThanOrEqual(3);
  });
});

describe('many concurrent calls, cancelled in any order', () => {
  it('each settles at its own time (success or its abort), on one shared timer, leaving nothing behind', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            failures: fc.integer({ min: 0, max: 4 }),
            // Even delays and odd cancel times: no call succeeds and aborts in the same millisecond.
            delayMs: fc.integer({ min: 1, max: 500 }).map((n) => 2 * n),
            cancelAtMs: fc.option(
              fc.integer({ min: 0, max: 1200 }).map((n) => 2 * n + 1),
              { nil: undefined },
            ),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        async (calls) => {
          clock = installClock();
          const settled: Array<{ at: number; value?: unknown; error?: unknown }> = [];
          const controllers = calls.map(() => new AbortController());
          calls.forEach((call, i) => {
            let attempt = 0;
            const fn = (_ctx: AttemptContext) => (++attempt <= call.failures ? Promise.reject(httpError(503)) : Promise.resolve(i));
            retry(fn, { backoff: constant(call.delayMs), signal: controllers[i]?.signal }).then(
              (value) => (settled[i] = { at: Date.now(), value }),
              (error: unknown) => (settled[i] = { at: Date.now(), error }),
            );
          });
          const cancels = [...new Set(calls.flatMap((c) => (c.cancelAtMs === undefined ? [] : [c.cancelAtMs])))].sort((a, b) => a - b);
          for (const at of cancels) {
            await clock.tickAsync(at - clock.now);
            expect(clock.countTimers()).toBeLessThanOrEqual(1);
            calls.forEach((call, i) => {
              if (call.cancelAtMs === at) controllers[i]?.abort(`cancel ${i}`);
            });
          }
          await clock.tickAsync(5000);
          calls.forEach((call, i) => {
            const doneAt = call.failures * call.delayMs;
            const cancelled = call.cancelAtMs !== undefined && call.cancelAtMs < doneAt;
            expect(settled[i]).toEqual(cancelled ? { at: call.cancelAtMs, error: `cancel ${i}` } : { at: doneAt, value: i });
          });
          expect(queueState()).toEqual({ queued: 0, timerArmed: false });
          expect(clock.countTimers()).toBe(0);
          clock.uninstall();
          clock = undefined;
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('regressions of issue 12: one call cannot take another down', () => {
  it('defect 4: a throw under the shared timer settles only that call; the others due in the same tick still run', async () => {
    clock = installClock();
    const broken = new RangeError('throttle rng out of range');
    let admits = 0;
    const throttle = {
      admit: () => {
        if (++admits > 1) throw broken;
        return true;
      },
      record: () => {},
      error: () => new Error('never asked'),
    };
    const a = track(retry(() => Promise.reject(httpError(503)), { throttle, backoff: constant(100) }));
    const b = failing(1);
    const pb = track(retry(b.fn, { backoff: constant(100) }));
    // Both sleep until 100; a's second attempt starts first and its throttle throws.
    await clock.tickAsync(100);
    expect(a.state).toBe('rejected');
    expect(a.error).toBe(broken);
    expect(pb.value).toBe('ok');
  });

  it('defect 7: a call settled by another call’s code in the tick where both were due is skipped', async () => {
    clock = installClock();
    const controller = new AbortController();
    const budget = createRetryBudget();
    let judgedForB = 0;
    const hang = () => new Promise<never>(() => {});
    const a = track(
      retry(hang, {
        attemptTimeoutMs: 100,
        maxAttempts: 2,
        backoff: constant(100),
        // a's retry cancels b, whose attempt timeout falls due in this same tick
        onRetry: () => controller.abort(new Error('b cancelled')),
      }),
    );
    const b = track(
      retry(hang, {
        attemptTimeoutMs: 100,
        signal: controller.signal,
        budget,
        retryable: () => {
          judgedForB++;
          return true;
        },
      }),
    );
    await clock.tickAsync(100);
    expect(b.state).toBe('rejected');
    expect((b.error as Error).message).toBe('b cancelled');
    // No phantom TimeoutError judged after b settled, no token spent for it.
    expect(judgedForB).toBe(0);
    expect(budget.tokens).toBe(10);
    await clock.tickAsync(300);
    expect((a.error as RetryError).reason).toBe('attempts');
  });

  it('defect 12: a call waiting when the virtual clock is uninstalled still settles, on the real timers', async () => {
    clock = installClock();
    const { fn } = failing(1);
    const p = track(retry(fn, { backoff: constant(20) }));
    await clock.tickAsync(0); // attempt 1 has failed: the call sleeps 20 ms on the virtual clock
    expect(queueState()).toEqual({ queued: 1, timerArmed: true });
    clock.uninstall();
    clock = undefined;
    // From here time is real: the sleep's remaining 20 ms pass on the host's timers, with no
    // other retry() to re-arm the queue (before: it waited for ever).
    await vi.waitFor(() => expect(p.state).toBe('resolved'), { timeout: 5000, interval: 10 });
    expect(p.value).toBe('ok');
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

describe('steadyNow', () => {
  it('follows performance.now without drift while the clock stays the same', () => {
    const before = steadyNow() - performance.now();
    for (let i = 0; i < 1000; i++) steadyNow();
    const after = steadyNow() - performance.now();
    expect(Math.abs(after - before)).toBeLessThan(1);
  });

  it('continues from the real time when a virtual clock is installed and has already moved', () => {
    const before = steadyNow();
    const clock = FakeTimers.install({ now: 0, toFake: ['performance'] });
    try {
      clock.tick(5000); // the virtual clock reads 5000 when steadyNow first meets it
      const after = steadyNow();
      expect(after - before).toBeGreaterThanOrEqual(0);
      expect(after - before).toBeLessThan(50);
      clock.tick(100);
      expect(steadyNow() - after).toBe(100);
    } finally {
      clock.uninstall();
    }
  });

  it('continues when only performance.now is replaced, on the same object', () => {
    const before = steadyNow();
    vi.spyOn(performance, 'now').mockImplementation(() => 7);
    const after = steadyNow();
    expect(after - before).toBeGreaterThanOrEqual(0);
    expect(after - before).toBeLessThan(50);
  });

  it('continues when only the performance object is replaced, sharing its now function', () => {
    function now(this: { t: number }): number {
      return this.t;
    }
    vi.stubGlobal('setTimeout', () => 0); // a virtual clock's timers: globalThis.performance is followed
    vi.stubGlobal('performance', { t: 100, now });
    const first = steadyNow();
    vi.stubGlobal('performance', { t: 500, now });
    expect(steadyNow()).toBe(first);
  });
});

describe('unref: waits that do not keep the process alive', () => {
  /** The handles the queue's timer got from setTimeout, newest last (the spy calls through). */
  function timerHandles(): () => { hasRef(): boolean } | undefined {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    return () => spy.mock.results.at(-1)?.value as { hasRef(): boolean } | undefined;
  }

  it('unrefs the shared timer while only unref calls wait, and refs it while any other call waits', async () => {
    clock = installClock();
    const lastTimer = timerHandles();
    const quiet = failing(2);
    const loud = failing(1);
    const unrefd = track(retry(quiet.fn, { backoff: constant(1000), unref: true }));
    await microtasks();
    expect(queueState().timerArmed).toBe(true);
    expect(lastTimer()?.hasRef()).toBe(false);
    const refd = track(retry(loud.fn, { backoff: constant(500) }));
    await microtasks();
    expect(lastTimer()?.hasRef()).toBe(true);
    await clock.tickAsync(500); // the ref'd call retries and succeeds; only the unref'd one waits
    expect(refd.state).toBe('resolved');
    expect(lastTimer()?.hasRef()).toBe(false);
    await clock.tickAsync(1500);
    expect(unrefd).toMatchObject({ state: 'resolved', value: 'ok' });
    expect(queueState()).toEqual({ queued: 0, timerArmed: false });
  });

  it('keeps the timer ref’d by default', async () => {
    clock = installClock();
    const lastTimer = timerHandles();
    const p = track(retry(failing(1).fn, { backoff: constant(1000) }));
    await microtasks();
    expect(lastTimer()?.hasRef()).toBe(true);
    await clock.tickAsync(1000);
    expect(p.state).toBe('resolved');
  });

  it('refs the timer exactly while a queued item is not unref, whatever the order of scheduling and removal', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ unref: fc.boolean(), dueAt: fc.integer({ min: 1, max: 10_000 }), removeAt: fc.nat() }), {
          minLength: 1,
          maxLength: 12,
        }),
        (specs) => {
          clock = installClock();
          const lastTimer = timerHandles();
          try {
            const items: Timed[] = specs.map((spec) => ({ slot: NOT_QUEUED, unref: spec.unref, onDue: () => {} }));
            const check = () => {
              const queued = items.filter((item) => item.slot >= 0);
              if (queued.length === 0) return expect(queueState().timerArmed).toBe(false);
              expect(lastTimer()?.hasRef()).toBe(queued.some((item) => item.unref !== true));
            };
            items.forEach((item, i) => {
              schedule(item, (specs[i] as { dueAt: number }).dueAt);
              check();
            });
            const order = [...items.keys()].sort(
              (a, b) => (specs[a] as { removeAt: number }).removeAt - (specs[b] as { removeAt: number }).removeAt,
            );
            for (const i of order) {
              unschedule(items[i] as Timed);
              check();
            }
          } finally {
            vi.restoreAllMocks();
            clock.uninstall();
            clock = undefined;
          }
        },
      ),
    );
  });

  it('lets a Node process exit while only unref calls wait, and not before a ref’d call ends', async () => {
    const index = fileURLToPath(new URL('../../src/index.ts', import.meta.url));
    const script = `
      import { retry } from ${JSON.stringify(index)};
      const state = { unrefd: 'pending', refd: 'pending' };
      const busy = () => Promise.reject(Object.assign(new Error('busy'), { status: 503 }));
      retry(busy, { unref: true, backoff: { initialDelayMs: 60_000, maxDelayMs: 60_000, jitter: 'none' }, deadlineMs: 600_000 }).then(
        () => (state.unrefd = 'resolved'), () => (state.unrefd = 'rejected'));
      let n = 0;
      retry(() => (++n === 1 ? busy() : 'ok'), { backoff: { initialDelayMs: 50, jitter: 'none' } }).then(
        () => (state.refd = 'resolved'), () => (state.refd = 'rejected'));
      process.on('exit', () => console.log(JSON.stringify(state)));
    `;
    // The child would wait a minute for the unref'd call's sleep if that kept it alive; the
    // test's own timeout (20 s) fails the test long before.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      timeout: 15_000,
    });
    expect(JSON.parse(stdout.trim())).toEqual({ unrefd: 'pending', refd: 'resolved' });
  });
});

describe('the queue’s own contract, items scheduled directly', () => {
  /** An item that records the times it was called at. */
  function item(unref?: boolean): Timed & { calls: number[] } {
    const calls: number[] = [];
    return { slot: NOT_QUEUED, unref, calls, onDue: (t) => calls.push(t) };
  }

  it('calls the items in the order of their due times, each at its time, whatever was removed before', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.boolean(), { maxLength: 40 }),
        (dueTimes, removed) => {
          clock = installClock();
          try {
            const start = steadyNow();
            const order: number[] = [];
            const items = dueTimes.map((due) => {
              const it: Timed = { slot: NOT_QUEUED, onDue: (t) => order.push(t - start) };
              schedule(it, start + due);
              return it;
            });
            items.forEach((it, i) => {
              if (removed[i]) unschedule(it);
            });
            clock.tick(1000);
            expect(order).toEqual(dueTimes.filter((_, i) => !removed[i]).sort((a, b) => a - b));
            expect(queueState()).toEqual({ queued: 0, timerArmed: false });
          } finally {
            clock.uninstall();
            clock = undefined;
          }
        },
      ),
    );
  });

  it('moves a queued item rather than queueing it twice: one call at its new time, none once it is removed', () => {
    clock = installClock();
    const start = steadyNow();
    const moved = item();
    schedule(moved, start + 50);
    schedule(moved, start + 100);
    expect(queueState().queued).toBe(1);
    clock.tick(100);
    expect(moved.calls).toEqual([start + 100]);
    const gone = item();
    schedule(gone, start + 150);
    schedule(gone, start + 200);
    unschedule(gone);
    expect(queueState()).toEqual({ queued: 0, timerArmed: false });
    clock.tick(200);
    expect(gone.calls).toEqual([]);
  });

  it('does not call an item that an earlier item of the same tick removed or moved, and calls a moved one at its new time', () => {
    clock = installClock();
    const start = steadyNow();
    const removed = item();
    const moved = item();
    const first: Timed = {
      slot: NOT_QUEUED,
      onDue: () => {
        unschedule(removed);
        schedule(moved, start + 50);
      },
    };
    // All due already: the one timer turn that follows takes all three.
    schedule(first, start - 3);
    schedule(removed, start - 2);
    schedule(moved, start - 1);
    clock.tick(0);
    expect(removed.calls).toEqual([]);
    expect(moved.calls).toEqual([]);
    clock.tick(50);
    expect(moved.calls).toEqual([start + 50]);
    expect(removed.calls).toEqual([]);
  });

  it('calls every item of a tick though some throw, then throws the first error from the timer, and still calls later items', () => {
    clock = installClock();
    const start = steadyNow();
    const first = new Error('first');
    const second = new Error('second');
    const throwing = (error: Error): Timed => ({
      slot: NOT_QUEUED,
      onDue: () => {
        throw error;
      },
    });
    const after = item();
    const later = item();
    schedule(throwing(first), start - 3);
    schedule(throwing(second), start - 2);
    schedule(after, start - 1);
    schedule(later, start + 10);
    expect(() => clock?.tick(0)).toThrow(first);
    expect(after.calls).toEqual([start]);
    clock.tick(10);
    expect(later.calls).toEqual([start + 10]);
  });

  it('keeps the armed timer for an item due no earlier than it, and arms anew only for an earlier one', () => {
    clock = installClock();
    const start = steadyNow();
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const items = [item(), item(), item(), item()];
    schedule(items[0] as Timed, start + 100);
    schedule(items[1] as Timed, start + 100);
    schedule(items[2] as Timed, start + 200);
    expect(setTimeoutSpy.mock.calls.map((call) => call[1])).toEqual([100]);
    schedule(items[3] as Timed, start + 50);
    expect(setTimeoutSpy.mock.calls.map((call) => call[1])).toEqual([100, 50]);
    expect(clock.countTimers()).toBe(1);
    for (const it of items) unschedule(it);
  });
});

/**
 * Timers made by hand on a virtual clock, installed on globalThis with vi.stubGlobal, for a fresh
 * copy of the queue module (`freshQueue`), which takes the timers present at its import as the
 * host's own. The handles are Node's objects, numbers (browsers, Deno) or objects without
 * ref/unref; every delay armed is recorded.
 */
function handClock(handles: 'node' | 'number' | 'bare object' = 'node') {
  const clock = FakeTimers.createClock(0);
  const delays: number[] = [];
  const own = new Map<unknown, unknown>();
  let nextId = 1;
  const timers = {
    setTimeout: (handler: () => void, delay: number): unknown => {
      delays.push(delay);
      const timer = clock.setTimeout(handler, delay);
      if (handles === 'node') return timer;
      const handle = handles === 'number' ? nextId++ : {};
      own.set(handle, timer);
      return handle;
    },
    clearTimeout: (handle: unknown) => clock.clearTimeout((handles === 'node' ? handle : own.get(handle)) as FakeTimers.TimerId),
    performance: { now: () => clock.now },
  };
  return {
    clock,
    delays,
    install(): void {
      vi.stubGlobal('setTimeout', timers.setTimeout);
      vi.stubGlobal('clearTimeout', timers.clearTimeout);
      vi.stubGlobal('performance', timers.performance);
    },
  };
}

/** A copy of the queue module of its own, imported now: its host timers are the ones installed now. */
async function freshQueue() {
  vi.resetModules();
  const fresh = await import('../../src/runtime/timer-queue.js');
  return {
    schedule: (item: Timed, dueAt: number) => fresh.SYSTEM_TIMERS.schedule(item, dueAt),
    unschedule: (item: Timed) => fresh.SYSTEM_TIMERS.unschedule(item),
    queueState: () => fresh.queueState(),
  };
}

/** An item for a fresh queue, recording the times it was called at. */
function recorder(unref?: boolean): Timed & { calls: number[] } {
  const calls: number[] = [];
  return { slot: NOT_QUEUED, unref, calls, onDue: (t) => calls.push(t) };
}

describe('runtimes whose timers are not Node’s', () => {
  /**
   * A ref'd item due at 50 and an unref one due at 100; once the first ran, a ref'd one is queued
   * and removed again. Returns the items.
   */
  function refChanges(host: ReturnType<typeof handClock>, queue: Awaited<ReturnType<typeof freshQueue>>) {
    const loud = recorder();
    const quiet = recorder(true);
    const briefly = recorder();
    queue.schedule(loud, 50);
    queue.schedule(quiet, 100);
    host.clock.tick(50);
    queue.schedule(briefly, 200);
    queue.unschedule(briefly);
    host.clock.tick(50);
    expect(queue.queueState()).toEqual({ queued: 0, timerArmed: false });
    return { loud, quiet, briefly };
  }

  it.each(['number', 'bare object'] as const)(
    'waits, and refs and unrefs nothing, where timer handles are %ss with no ref/unref and there is no Deno',
    async (handles) => {
      const host = handClock(handles);
      host.install();
      const queue = await freshQueue();
      const { loud, quiet, briefly } = refChanges(host, queue);
      expect([loud.calls, quiet.calls, briefly.calls]).toEqual([[50], [100], []]);
    },
  );

  it('tells Deno.refTimer/unrefTimer of the armed timer exactly when whether it keeps the process alive changes', async () => {
    const host = handClock('number');
    host.install();
    const told: Array<[string, unknown]> = [];
    vi.stubGlobal('Deno', { refTimer: (id: unknown) => told.push(['ref', id]), unrefTimer: (id: unknown) => told.push(['unref', id]) });
    const queue = await freshQueue();
    const { loud, quiet } = refChanges(host, queue);
    expect([loud.calls, quiet.calls]).toEqual([[50], [100]]);
    // Timer 1 (for 50) is ref'd as armed; timer 2 (for 100) waits for the unref item alone, then
    // for a ref'd one too while it is queued. Nothing about a timer that is not armed.
    expect(told).toEqual([
      ['unref', 2],
      ['ref', 2],
      ['unref', 2],
    ]);
  });
});

describe('the backstop behind a timer on a clock that is not the host’s', () => {
  it('arms one host timer per wait on the host’s own timers, and no backstop', async () => {
    const host = handClock();
    host.install();
    const queue = await freshQueue();
    const wait = recorder();
    queue.schedule(wait, 100);
    expect(host.delays).toEqual([100]);
    expect(host.clock.countTimers()).toBe(1);
    host.clock.tick(100);
    expect(wait.calls).toEqual([100]);
    expect(host.clock.countTimers()).toBe(0);
  });

  it('looks first when the wait would end (within a second), then once a second, and goes with the timer', async () => {
    const host = handClock();
    host.install();
    const queue = await freshQueue();
    const virtual = handClock();
    virtual.install();
    const soon = recorder();
    queue.schedule(soon, 20);
    expect(virtual.delays).toEqual([20]);
    expect(host.delays).toEqual([20]);
    host.clock.tick(20); // the virtual clock is still installed: look again in a second
    expect(host.delays).toEqual([20, 1000]);
    virtual.clock.tick(20);
    expect(soon.calls).toEqual([20]);
    expect(host.clock.countTimers()).toBe(0); // the backstop went with the timer
    const late = recorder();
    queue.schedule(late, 5020);
    expect(host.delays).toEqual([20, 1000, 1000]);
    queue.unschedule(late);
    expect(host.clock.countTimers()).toBe(0);
    expect(queue.queueState()).toEqual({ queued: 0, timerArmed: false });
  });

  it.each(['node', 'number'] as const)(
    'resumes a wait whose virtual clock was removed on the host’s timers (%s handles)',
    async (handles) => {
      const host = handClock(handles);
      host.install();
      const queue = await freshQueue();
      const virtual = handClock();
      virtual.install();
      const wait = recorder();
      queue.schedule(wait, 20);
      host.install(); // the virtual clock is removed; its timer never fires
      host.clock.tick(19);
      expect(wait.calls).toEqual([]);
      // The backstop looked at 20 and re-armed on the host for the 20 ms the wait had left.
      host.clock.tick(21);
      expect(wait.calls).toHaveLength(1);
      expect(queue.queueState()).toEqual({ queued: 0, timerArmed: false });
      expect(host.clock.countTimers()).toBe(0);
    },
  );

  it('works on timers installed after it was imported where there were none, without a backstop', async () => {
    vi.stubGlobal('setTimeout', undefined);
    vi.stubGlobal('clearTimeout', undefined);
    const queue = await freshQueue();
    const later = handClock();
    later.install();
    const wait = recorder();
    const dropped = recorder();
    queue.schedule(wait, 20);
    queue.schedule(dropped, 30);
    queue.unschedule(dropped);
    later.clock.tick(30);
    expect([wait.calls, dropped.calls]).toEqual([[20], []]);
    expect(queue.queueState()).toEqual({ queued: 0, timerArmed: false });
  });
});
