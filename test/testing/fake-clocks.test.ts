// A retrying call under each test framework's fake clock, installed after the library was
// imported, driven by settle(): @sinonjs/fake-timers, vi.useFakeTimers(), and node:test's
// mock.timers (a real `node --test` run of node-test/mock-timers.node.ts).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import FakeTimers from '@sinonjs/fake-timers';
import { mock } from 'node:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import { RetryError, retry } from '../../src/index.js';
import { queueState } from '../../src/runtime/timer-queue.js';
import { scriptedFetch, settle } from '../../src/testing/index.js';

const mockTimers = mock.timers;

afterEach(() => {
  vi.useRealTimers();
  expect(queueState()).toEqual({ queued: 0, timerArmed: false });
});

/** A call that fails twice and then succeeds, waiting 1 s and 2 s (no jitter). */
function flakyCall(): { fetch: ReturnType<typeof scriptedFetch>; call: Promise<Response> } {
  const fetch = scriptedFetch([503, 'ECONNRESET', 200]);
  return { fetch, call: retryFetch('https://api.example.com/', undefined, { fetch, backoff: { jitter: 'none' } }) };
}

describe('@sinonjs/fake-timers', () => {
  it('runs the waits in virtual time', async () => {
    const clock = FakeTimers.install({ now: 0 });
    try {
      const { fetch, call } = flakyCall();
      expect((await settle(call, clock)).status).toBe(200);
      expect(fetch.requests).toHaveLength(3);
      expect(clock.now).toBe(3000);
    } finally {
      clock.uninstall();
    }
  });

  it('faking setTimeout and Date but not performance: the library follows Date', async () => {
    const clock = FakeTimers.install({ now: 0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const { call } = flakyCall();
      expect((await settle(call, clock)).status).toBe(200);
      expect(clock.now).toBe(3000);
    } finally {
      clock.uninstall();
    }
  });

  it('faking Date alone, under real timers: the library keeps to performance, where time passes', async () => {
    const clock = FakeTimers.install({ now: 0, toFake: ['Date'] });
    try {
      let calls = 0;
      const value = await retry(
        () => {
          if (++calls < 2) throw new Error('again');
          return calls;
        },
        { backoff: { initialDelayMs: 2, jitter: 'none' } },
      );
      expect(value).toBe(2);
      expect(Date.now()).toBe(0);
    } finally {
      clock.uninstall();
    }
  });

  it('setting the system time moves Date, not the library: a wait keeps its length, elapsed times stay true', async () => {
    const clock = FakeTimers.install({ now: 0 });
    try {
      const elapsed: number[] = [];
      const call = retry(
        ({ attempt, elapsedMs }) => {
          elapsed.push(elapsedMs);
          if (attempt < 2) throw new Error('again');
          return attempt;
        },
        { backoff: { jitter: 'none' } },
      );
      await clock.tickAsync(0);
      clock.setSystemTime(1_000_000);
      await clock.tickAsync(999);
      expect(elapsed).toEqual([0]);
      await clock.tickAsync(1);
      expect(await call).toBe(2);
      expect(elapsed).toEqual([0, 1000]);
    } finally {
      clock.uninstall();
    }
  });

  it('a function may stand for the clock', async () => {
    const clock = FakeTimers.install({ now: 0 });
    try {
      const { call } = flakyCall();
      const steps: number[] = [];
      const next = async (): Promise<boolean> => {
        steps.push(clock.now);
        await clock.nextAsync();
        return true;
      };
      expect((await settle(call, next)).status).toBe(200);
      expect(steps).toEqual([0, 1000]);
    } finally {
      clock.uninstall();
    }
  });

  it('passes a rejection through', async () => {
    const clock = FakeTimers.install({ now: 0 });
    try {
      const call = retry(
        () => {
          throw new Error('down');
        },
        { maxAttempts: 3, backoff: { jitter: 'none' } },
      );
      const error = await settle(call, clock).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RetryError);
      expect(error).toMatchObject({ reason: 'attempts', attempts: 3 });
      expect(clock.now).toBe(3000);
    } finally {
      clock.uninstall();
    }
  });

  it('says so when the promise waits for something no timer brings, or for ever', async () => {
    const clock = FakeTimers.install({ now: 0 });
    try {
      await expect(settle(new Promise(() => {}), clock)).rejects.toThrow(
        new Error('settle: the promise is pending and no timer is left to run: it waits for something the fake clock does not drive'),
      );
      let ticks = 0;
      const tick = (): void => {
        ticks++;
        setTimeout(tick, 10);
      };
      tick();
      await expect(settle(new Promise(() => {}), clock, { maxTimers: 5 })).rejects.toThrow(
        new Error('settle: the promise is still pending after 5 timers'),
      );
      expect(ticks).toBe(6);
      await expect(settle(new Promise(() => {}), clock, { maxTimers: 0 })).rejects.toThrow('after 0 timers');
      expect(ticks).toBe(6);
      // Settled already: no timer needed, none run.
      expect(await settle(Promise.resolve('now'), clock, { maxTimers: 0 })).toBe('now');
      expect(ticks).toBe(6);
    } finally {
      clock.uninstall();
    }
  });

  it('refuses what is no clock, and a bad maxTimers', async () => {
    for (const bad of [null, 3, {}]) {
      await expect(settle(Promise.resolve(1), bad as never)).rejects.toThrow(TypeError);
    }
    await expect(settle(Promise.resolve(1), null as never)).rejects.toThrow(new TypeError('settle: clock must be a fake clock, got null'));
    await expect(settle(Promise.resolve(1), {} as never)).rejects.toThrow(
      /^settle: clock must be a fake clock: @sinonjs\/fake-timers' clock/,
    );
    for (const bad of [-1, 1.5, Number.NaN, Infinity]) {
      await expect(settle(Promise.resolve(1), () => true, { maxTimers: bad })).rejects.toThrow(
        new RangeError(`settle: options.maxTimers must be a whole number >= 0, got ${bad}`),
      );
    }
  });
});

describe('vi.useFakeTimers()', () => {
  it('runs the waits in virtual time', async () => {
    vi.useFakeTimers({ now: 0 });
    const { fetch, call } = flakyCall();
    expect((await settle(call, vi)).status).toBe(200);
    expect(fetch.requests).toHaveLength(3);
    expect(Date.now()).toBe(3000);
  });

  it('without performance among the faked: the library follows Date', async () => {
    vi.useFakeTimers({ now: 0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { call } = flakyCall();
    expect((await settle(call, vi)).status).toBe(200);
    expect(Date.now()).toBe(3000);
  });

  it('says so when no timer is left', async () => {
    vi.useFakeTimers();
    await expect(settle(new Promise(() => {}), vi)).rejects.toThrow(/no timer is left to run/);
  });
});

describe("node:test's mock.timers", () => {
  it('in this process too: each step runs every timer waiting (runAll)', async () => {
    mockTimers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    try {
      const { fetch, call } = flakyCall();
      expect((await settle(call, mockTimers)).status).toBe(200);
      expect(fetch.requests).toHaveLength(3);
      expect(Date.now()).toBe(3000);
    } finally {
      mockTimers.reset();
    }
  });

  it('runs the waits in virtual time: node --test node-test/mock-timers.node.ts passes', async () => {
    const here = dirname(fileURLToPath(import.meta.url));
    const file = join(here, 'node-test', 'mock-timers.node.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', file], { cwd: join(here, '..', '..') });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(out).toMatch(/^# pass 3$/m);
    expect(out).toMatch(/^# fail 0$/m);
    expect(code).toBe(0);
  });
});
