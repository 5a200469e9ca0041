/**
 * The system clock: the default of every call's `clock` option (types.ts `RetryClock`, the one
 * seam through which the engine reads time and sets timers). Its time and timers are the host's
 * globals, looked up at each use, never fixed at import, so that virtual clocks
 * (`@sinonjs/fake-timers`, `vi.useFakeTimers()`, `node:test`'s `mock.timers`) installed later
 * take effect. Following globals that a test swaps is this clock's job alone: a clock passed in
 * is used as it is (runtime/timer-queue.ts).
 */
import type { RetryClock } from '../types.js';
import { type FieldRule, hasMethods } from '../util/check.js';

type Clock = { now(): number };
let clockSource: Clock | undefined;
let clockNow: Clock['now'] | undefined;
let clockOffset = 0;

// The clocks and timers found when this module loaded: a different one later is a virtual clock's.
const hostPerformance: Clock = globalThis.performance;
const hostPerformanceNow = hostPerformance.now;
const hostDateNow = Date.now;
/** The host's own setTimeout (undefined where there is none); the timer queue's backstop runs on it. */
export const hostSetTimeout: typeof setTimeout | undefined = globalThis.setTimeout;

/**
 * The clock that moves with the timers. While the host's own `setTimeout` is installed, that is
 * the host's `performance` object, whose `now` is still read at each call (@sinonjs/fake-timers
 * also patches it there, in Node): reading `globalThis.performance` costs an accessor call in
 * Node, about a tenth of a `retry()` that succeeds at once, and a clock replaced without the
 * timers could not time the waits anyway. Once a virtual clock replaced `setTimeout`, it is
 * `globalThis.performance`, unless that clock replaced `setTimeout` and `Date` and left
 * `performance` alone, as `node:test`'s `mock.timers` does (it fakes timers and `Date` only)
 * and `vi.useFakeTimers({ toFake })` without `'performance'`: then only `Date.now()` advances
 * when the fake timers fire, and a wait measured on `performance.now()` would never end. A
 * `Date` mocked under real timers (`vi.setSystemTime` alone) may stand still, so it is not
 * followed.
 */
function clockOf(): Clock {
  // The one comparison every call pays where no virtual clock is installed.
  if (globalThis.setTimeout === hostSetTimeout) return hostPerformance;
  const performance: Clock = globalThis.performance;
  if (performance.now !== hostPerformanceNow) return performance;
  const date: Clock = globalThis.Date;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent when Date is the host's: then both are the host's real clocks, which move together
  return date.now !== hostDateNow ? date : performance;
}

/**
 * The clock of the queue and of `retry()`: `performance.now()` (or `Date.now()`, see
 * `clockOf`), except that when another clock takes over (a virtual clock installed or removed
 * while calls are waiting), time continues from where the previous clock stands instead of
 * jumping to the new one's origin, so waits in progress keep their remaining time and elapsed
 * times stay true. The offset is a whole number so that virtual times stay exact.
 */
export function steadyNow(): number {
  const source = clockOf();
  const read = source.now;
  const raw = read.call(source);
  if (source !== clockSource || read !== clockNow) {
    // The previous clock is asked through the function it had: @sinonjs/fake-timers also
    // patches `now` on Node's own performance object, and a removed virtual clock still
    // answers, frozen at the time it had.
    if (clockSource !== undefined) clockOffset = Math.ceil((clockNow as Clock['now']).call(clockSource) + clockOffset - raw);
    clockSource = source;
    clockNow = read;
  }
  return raw + clockOffset;
}

/**
 * The default clock of every call, gate and throttle: the host's `performance.now()` and
 * `setTimeout`/`clearTimeout`, looked up at each use. When a test installs fake timers
 * (`@sinonjs/fake-timers`, `vi.useFakeTimers()`, `node:test`'s `mock.timers`), it follows them,
 * and time continues where it stood when they are installed or removed, so waits in progress
 * keep their remaining time. Wrap it to observe what a call does with time.
 *
 * @example
 * const logged: RetryClock = { ...systemClock, setTimeout: (f, ms) => (console.log('timer', ms), systemClock.setTimeout(f, ms)) };
 */
export const systemClock: RetryClock = /* @__PURE__ */ Object.freeze({
  now: steadyNow,
  setTimeout: (callback: () => void, ms: number): unknown => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle: unknown): void => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
});

/** The `clock` option of a call, a gate or a throttle. */
export const CLOCK_RULE: FieldRule = {
  ok: (v) => hasMethods(v, ['now', 'setTimeout', 'clearTimeout']),
  rule: 'be a clock with now(), setTimeout() and clearTimeout() (e.g. systemClock)',
};
