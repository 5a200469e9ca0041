// The virtual world a run lives in: a fake clock at 0 (test/helpers/clock.ts), a spy on the
// host's setTimeout for delays past what a timer can hold, Math.random drawn from the world's
// seed (so a run replays exactly), unhandled rejections collected, and the driver's own timers
// tracked so that what is left at the end is the library's.
import { getEventListeners } from 'node:events';
import type { RetryClock } from '../../src/index.js';
import { queueState } from '../../src/runtime/timer-queue.js';
import { type InstalledClock, installClock } from '../helpers/clock.js';
import type { WorldRecord } from './record.js';

/** The longest delay a host timer holds (Node, browsers: a signed 32-bit count of ms). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface Harness {
  readonly clock: InstalledClock;
  /**
   * The same virtual time as a clock passed in (the `clock` option of a call, a gate, a
   * throttle): the engine then queues on its own queue for it, nothing global.
   */
  readonly injected: RetryClock;
  /** Virtual milliseconds since the run began. */
  now(): number;
  /** A timer of the driver's own (a start, an abort, a latency), not counted as the library's. */
  later(ms: number, run: () => void): void;
  /** A draw in [0, 1) from the world's randoms. */
  draw(): number;
  /** Advances until `done()` or the horizon; then runs the driver's cleanup and one more turn. */
  runUntil(done: () => boolean, horizonMs: number, cleanup: () => void): Promise<void>;
  /** Uninstalls everything; records the library's leftovers when `clean`. */
  close(clean: boolean, signals: readonly AbortSignal[]): Promise<void>;
}

/** A seeded stream over `randoms` (mixed with the index, so a short list does not repeat too soon). */
function drawer(randoms: readonly number[]): () => number {
  let i = 0;
  return () => {
    const base = randoms[i % randoms.length] as number;
    const mixed = (base + 0.6180339887498949 * Math.floor(i / randoms.length)) % 1;
    i += 1;
    return mixed;
  };
}

export function openHarness(record: WorldRecord, randoms: readonly number[]): Harness {
  const before = queueState();
  const clock = installClock();
  const fakeSetTimeout = globalThis.setTimeout;
  const spy = ((fn: () => void, ms?: number, ...args: unknown[]) => {
    if (typeof ms === 'number' && ms > MAX_TIMER_MS) record.hugeTimers.push(ms);
    return (fakeSetTimeout as (...a: unknown[]) => unknown)(fn, ms, ...args);
  }) as typeof setTimeout;
  globalThis.setTimeout = spy;
  const realRandom = Math.random;
  const draw = drawer(randoms);
  Math.random = drawer([...randoms].reverse());
  const own = new Set<unknown>();
  const onUnhandled = (reason: unknown): void => {
    record.unhandled.push(reason);
  };
  process.on('unhandledRejection', onUnhandled);
  const now = (): number => clock.now;
  const injected: RetryClock = {
    now,
    setTimeout: (callback, ms) => spy(callback, ms),
    clearTimeout: (handle) => clock.clearTimeout(handle as never),
  };
  // The fake clock rethrows what a timer callback threw: in a real process, an uncaught exception.
  const tick = async (ms: number): Promise<void> => {
    try {
      await clock.tickAsync(ms);
    } catch (error) {
      record.direct.push({ invariant: 'no-uncaught-exception', detail: `a timer callback threw at ${now()} ms: ${String(error)}` });
    }
  };
  return {
    clock,
    injected,
    now,
    draw,
    later(ms, run) {
      const id: unknown = fakeSetTimeout(() => {
        own.delete(id);
        run();
      }, ms);
      own.add(id);
    },
    async runUntil(done, horizonMs, cleanup) {
      while (!done() && now() < horizonMs) {
        // Small steps while things happen, so that a run that ends early stops early.
        await tick(Math.min(1000, horizonMs - now()));
      }
      cleanup();
      await tick(0);
      // Hooks may be slow (5 s) and late outcomes arrive up to a few seconds after an abandoned attempt.
      await tick(10_000);
    },
    async close(clean, signals) {
      try {
        for (const id of own) clearTimeout(id as ReturnType<typeof setTimeout>);
        own.clear();
        if (clean && before.queued === 0 && !before.timerArmed) {
          const state = queueState();
          const own = queueState(injected);
          const listeners = signals.reduce((sum, signal) => sum + getEventListeners(signal, 'abort').length, 0);
          record.leftover = {
            queued: state.queued + own.queued,
            timerArmed: state.timerArmed || own.timerArmed,
            timers: clock.countTimers(),
            listeners,
          };
        }
        // Rejections are reported one macrotask late.
        await new Promise((resolve) => setImmediate(resolve));
      } finally {
        process.off('unhandledRejection', onUnhandled);
        Math.random = realRandom;
        globalThis.setTimeout = fakeSetTimeout;
        clock.uninstall();
      }
    },
  };
}
