/**
 * The interface of the one seam through which the engine reads time and sets timers. The
 * default, `systemClock`, is in runtime/clock.ts; any object with these methods will do.
 */

/**
 * A clock: what the engine needs of time (Polly's `TimeProvider`, google-cloud-cpp's `Sleeper`).
 * Every wait, deadline and attempt timeout of the calls given it is read and timed here, and the
 * gate and the throttle take one too. A virtual clock for tests needs only these three methods.
 *
 * @example
 * // An @sinonjs/fake-timers clock that is not installed: nothing global changes.
 * const fake = FakeTimers.createClock(0);
 * const clock: RetryClock = { now: () => fake.now, setTimeout: (f, ms) => fake.setTimeout(f, ms), clearTimeout: (h) => fake.clearTimeout(h as never) };
 * const call = retry(fn, { clock });
 * await fake.tickAsync(10_000);
 */
export interface RetryClock {
  /** Milliseconds on a clock that never goes back; any origin. */
  now(): number;
  /** Calls `callback` once, `ms` milliseconds from now (0 to 2^31 − 1); returns what `clearTimeout` takes. */
  setTimeout(callback: () => void, ms: number): unknown;
  /** Cancels a timer that `setTimeout` returned, if it has not fired. */
  clearTimeout(handle: unknown): void;
}
