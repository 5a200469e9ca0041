// settle() driving calls that run on a clock passed in (the `clock` option): a sinon clock that
// is created, not installed, so nothing global changes and these tests can share a process with
// real clients (the runs under each framework's installed fake timers: fake-clocks.test.ts).
// Every shape of clock settle() accepts is built over that one clock.
import type FakeTimers from '@sinonjs/fake-timers';
import { afterEach, describe, expect, it } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import { type RetryClock, RetryError, retry } from '../../src/index.js';
import { queueState } from '../../src/runtime/timer-queue.js';
import { type FakeClock, scriptedFetch, settle } from '../../src/testing/index.js';
import { virtualClock } from '../helpers/clock.js';

let made: RetryClock[] = [];
function clockFor(): { fake: FakeTimers.Clock; clock: RetryClock } {
  const clock = virtualClock();
  made.push(clock);
  return { fake: clock.fake, clock };
}
afterEach(() => {
  for (const clock of made) expect(queueState(clock)).toEqual({ queued: 0, timerArmed: false });
  made = [];
});

/** A fetch that fails twice, then answers 200: two waits, 1 s and 2 s, without jitter. */
function flaky(clock: RetryClock) {
  const fetch = scriptedFetch([503, 'ECONNRESET', 200]);
  return { fetch, call: retryFetch('https://api.example.com/', undefined, { fetch, clock, backoff: { jitter: 'none' } }) };
}

/** The shapes settle() accepts, each over the created clock `fake`. */
function shapes(fake: FakeTimers.Clock): Array<[string, FakeClock]> {
  return [
    ['a sinon clock', fake],
    ["vitest's vi", { advanceTimersToNextTimerAsync: () => fake.nextAsync(), getTimerCount: () => fake.countTimers() }],
    // runToLast: the timers waiting now, as mock.timers' runAll() runs them (not the ones they arm).
    ["node:test's mock.timers", { runAll: () => fake.runToLast() }],
    [
      'a function',
      async () => {
        if (fake.countTimers() === 0) return false;
        await fake.nextAsync();
        return true;
      },
    ],
  ];
}

describe('settle() over a clock passed in', () => {
  it.each([0, 1, 2, 3])('runs the waits at their virtual times, whatever the clock’s shape (%i)', async (index) => {
    const { fake, clock } = clockFor();
    const [, shape] = shapes(fake)[index] as [string, FakeClock];
    const { fetch, call } = flaky(clock);
    expect((await settle(call, shape)).status).toBe(200);
    expect(fetch.requests).toHaveLength(3);
    expect(fake.now).toBe(3000);
  });

  it('runs one timer per step: a function clock is asked once per wait', async () => {
    const { fake, clock } = clockFor();
    const { call } = flaky(clock);
    const steps: number[] = [];
    const next = async (): Promise<boolean> => {
      steps.push(fake.now);
      await fake.nextAsync();
      return true;
    };
    expect((await settle(call, next)).status).toBe(200);
    expect(steps).toEqual([0, 1000]);
  });

  it('passes a rejection through, at its virtual time', async () => {
    const { fake, clock } = clockFor();
    const call = retry(
      () => {
        throw new Error('down');
      },
      { clock, maxAttempts: 3, backoff: { jitter: 'none' } },
    );
    const error = await settle(call, fake).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect(fake.now).toBe(3000);
  });

  it('resolves a promise settled already without running a timer', async () => {
    const { fake } = clockFor();
    let ran = 0;
    fake.setTimeout(() => ran++, 5);
    expect(await settle(Promise.resolve('now'), fake, { maxTimers: 0 })).toBe('now');
    expect(await settle(Promise.resolve('now'), fake)).toBe('now');
    expect(ran).toBe(0);
    expect(fake.countTimers()).toBe(1);
  });

  it('says so when no timer is left, for the sinon and vitest shapes and a function', async () => {
    const { fake } = clockFor();
    const message = 'settle: the promise is pending and no timer is left to run: it waits for something the fake clock does not drive';
    for (const [, shape] of shapes(fake).filter(([name]) => name !== "node:test's mock.timers")) {
      await expect(settle(new Promise(() => {}), shape)).rejects.toThrow(new Error(message));
    }
  });

  it('gives up after maxTimers timers, having run exactly that many', async () => {
    const { fake } = clockFor();
    let ticks = 0;
    const tick = (): void => {
      ticks++;
      fake.setTimeout(tick, 10);
    };
    tick();
    await expect(settle(new Promise(() => {}), fake, { maxTimers: 5 })).rejects.toThrow(
      new Error('settle: the promise is still pending after 5 timers'),
    );
    expect(ticks).toBe(6);
    await expect(settle(new Promise(() => {}), fake, { maxTimers: 0 })).rejects.toThrow(
      new Error('settle: the promise is still pending after 0 timers'),
    );
    expect(ticks).toBe(6);
    // The default is 10 000.
    await expect(settle(new Promise(() => {}), fake)).rejects.toThrow(new Error('settle: the promise is still pending after 10000 timers'));
    expect(ticks).toBe(10_006);
    fake.reset();
  });

  it('a mock.timers shape runs every timer due at each step', async () => {
    const { fake, clock } = clockFor();
    let steps = 0;
    const call = retry(
      ({ attempt }) => {
        if (attempt < 3) throw new Error('again');
        return attempt;
      },
      { clock, backoff: { jitter: 'none' } },
    );
    const runAll = {
      runAll: () => {
        steps++;
        fake.runToLast();
      },
    };
    expect(await settle(call, runAll)).toBe(3);
    expect(steps).toBe(2);
  });

  it('refuses what is no clock, and a bad maxTimers, naming them', async () => {
    for (const bad of [null, 3, 'clock', undefined]) {
      await expect(settle(Promise.resolve(1), bad as never)).rejects.toThrow(
        new TypeError(`settle: clock must be a fake clock, got ${String(bad)}`),
      );
    }
    await expect(settle(Promise.resolve(1), {} as never)).rejects.toThrow(
      new TypeError(
        "settle: clock must be a fake clock: @sinonjs/fake-timers' clock (nextAsync), vitest's vi (advanceTimersToNextTimerAsync), node:test's mock.timers (runAll) or a function",
      ),
    );
    for (const bad of [-1, 1.5, Number.NaN, Infinity, '3']) {
      await expect(settle(Promise.resolve(1), () => true, { maxTimers: bad as never })).rejects.toThrow(
        new RangeError(`settle: options.maxTimers must be a whole number >= 0, got ${String(bad)}`),
      );
    }
  });
});
