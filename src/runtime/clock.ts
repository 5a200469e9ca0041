/**
 * The clocks of the library. Both are looked up on `globalThis` at each call, never at import,
 * so virtual clocks (`@sinonjs/fake-timers`, `vi.useFakeTimers()`, `node:test`'s `mock.timers`)
 * installed later take effect.
 */

/** `performance.now()`, looked up at each call so that a virtual clock installed later counts. */
export function now(): number {
  return globalThis.performance.now();
}

type Clock = { now(): number };
let clockSource: Clock | undefined;
let clockNow: Clock['now'] | undefined;
let clockOffset = 0;

// The clocks and timers found when this module loaded: a different one later is a virtual clock's.
const hostPerformanceNow = globalThis.performance.now;
const hostDateNow = Date.now;
/** The host's own setTimeout (undefined where there is none); the timer queue's backstop runs on it. */
export const hostSetTimeout: typeof setTimeout | undefined = globalThis.setTimeout;

/**
 * The clock that moves with the timers: `performance`, unless a virtual clock replaced
 * `setTimeout` and `Date` and left `performance` alone. `node:test`'s `mock.timers` does (it
 * fakes timers and `Date` only), as does `vi.useFakeTimers({ toFake })` without `'performance'`:
 * then only `Date.now()` advances when the fake timers fire, and a wait measured on
 * `performance.now()` would never end. A `Date` mocked under real timers (`vi.setSystemTime`
 * alone) may stand still, so it is not followed.
 */
function clockOf(performance: Clock, date: Clock): Clock {
  // The host's timers first: the one comparison every call pays where no virtual clock is installed.
  if (globalThis.setTimeout === hostSetTimeout || performance.now !== hostPerformanceNow) return performance;
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
  const source = clockOf(globalThis.performance, globalThis.Date);
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
