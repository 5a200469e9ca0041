/**
 * The Retry-After gate: one pause shared by every call to a host. When a server answers one
 * call with `Retry-After` (or gRPC pushback, or a 429's RateLimit reset), it means every
 * request from this client, not that call's alone: the calls through the gate wait until the
 * pause ends before their next attempt, first attempts included, instead of each sending a
 * request to learn the same thing by failing.
 */
import { BOOLEAN, FUNCTION, type FieldRules, drawFrom, mustError, readChecked } from '../util/check.js';
import { CLOCK_RULE, systemClock } from '../runtime/clock.js';
import type { RetryClock, RetryGate } from '../types.js';

/**
 * Options of {@link createRetryAfterGate}.
 *
 * @example
 * // A server's pause holds the fleet at most 30 s; calls whose deadline is sooner give up.
 * const gate = createRetryAfterGate({ maxHoldMs: 30_000 });
 */
export interface RetryAfterGateOptions {
  /**
   * The longest pause one hint may impose, in milliseconds (a longer one is cut to it). Default
   * 64 000: the longest wait Google's truncated exponential backoff lets one client make
   * (`maximum_backoff`, "typically 32 or 64 seconds"), so a server's far-off date or absurd
   * number holds the fleet no longer than one client would back off, and a call with the
   * default 120 s deadline outlives one whole pause. `Infinity` takes the server's word, however
   * far: a `Retry-After` date a year away then fails every call through the gate at once for a
   * year.
   */
  maxHoldMs?: number;
  /**
   * Spread the calls' return: each call held by a pause waits, on top of what is left of it, a
   * random part of the pause's length (full jitter), so the held calls do not all come back in
   * the same millisecond and meet the same limit again. Default true; false returns them all
   * the moment the pause ends.
   */
  spread?: boolean;
  /** Source of randomness in [0, 1) for the spread. Default `Math.random`. */
  rng?: () => number;
  /**
   * The clock a pause is timed on. Default `systemClock` (which follows fake timers a test
   * installs). Calls through the gate may run on other clocks: it tells them how long is left.
   */
  clock?: RetryClock;
}

/*
 * The default `maxHoldMs`: 64 s, the larger of the two `maximum_backoff` values Google's pages
 * give ("typically 32 or 64 seconds": Cloud Storage, "Truncated exponential backoff",
 * https://cloud.google.com/storage/docs/retry-strategy#exponential-backoff), and about half the
 * default deadline (120 s), so that a call with that deadline outlives one whole pause. Without
 * a cap, one `Retry-After` date far in the future (a server's clock gone wrong, a quota reset
 * next month) would fail every call through the gate at once until the process restarts; with
 * it, the fleet sends one request a pause, which learns whether the server still means it.
 */
const DEFAULT_MAX_HOLD_MS = 64_000;

/** A sleep lasts whole timer turns: a call sent back this close to its deadline could not start before it. */
const TIMER_TURN_MS = 1;

/**
 * A {@link RetryGate} whose pause can be read, e.g. for metrics or tests.
 *
 * @example
 * const gate = createRetryAfterGate();
 * setInterval(() => metrics.gauge('api.paused_ms', gate.waitMs()), 10_000);
 */
export interface RetryAfterGate extends RetryGate {
  /** The cap given by `maxHoldMs` (default 64 000). */
  readonly maxHoldMs: number;
}

/**
 * Creates a gate to share among the calls to one host (`retry(fn, { gate })`,
 * `retryFetch(url, init, { gate })`): one gate per host is the pattern, since a pause is what
 * that host asked for. A pause only ever extends: a shorter hint during a longer pause changes
 * nothing, a longer one than `maxHoldMs` (default 64 s) is cut to it. Each call's deadline and
 * signal bound its wait: a call whose deadline comes before the pause ends fails at once with
 * `RetryError` `'deadline'`; one whose deadline comes after it waits, its share of the spread
 * cut to what its deadline leaves. Every request of a call is held, the copies of a hedged
 * attempt included.
 *
 * `hold(ms)` takes what a server said: any number >= 0, `Infinity` included (a `Retry-After` of
 * hundreds of digits is too large for a double), cut to `maxHoldMs`. It throws a `RangeError`
 * only for what no server can say (`NaN`, a negative number, a non-number): a bug in the code
 * that called it.
 *
 * Throws a `RangeError`/`TypeError` naming the option for a `maxHoldMs` that is not a number
 * >= 0, or an unknown option.
 *
 * @example
 * const gate = createRetryAfterGate(); // one per host
 * const pages = await Promise.all(
 *   ids.map((id) => retryFetch(`https://api.example.com/items/${id}`, undefined, { gate })),
 * );
 */
export function createRetryAfterGate(options: RetryAfterGateOptions = {}): RetryAfterGate {
  const {
    maxHoldMs = DEFAULT_MAX_HOLD_MS,
    spread = true,
    rng = Math.random,
    clock = systemClock,
  } = readChecked('createRetryAfterGate', options, RULES) as RetryAfterGateOptions;
  // When the pause ends, on the gate's clock (-Infinity while none was asked for: a clock of any
  // origin may read below 0), and how long the pause that set it was: the span over which the
  // held calls come back.
  let openAt = Number.NEGATIVE_INFINITY;
  let pauseMs = 0;
  return {
    maxHoldMs,
    waitMs(remainingMs = Infinity): number {
      const left = openAt - clock.now();
      if (left <= 0) return 0;
      if (!spread) return left;
      // The spread keeps held calls from coming back in lockstep; it must not fail a call the
      // pause itself leaves time for. Scaled, not clamped: calls with little time left still
      // come back spread over what they have, not piled up against their deadlines. A pause for
      // ever (maxHoldMs Infinity) leaves no room (NaN or -Infinity): no draw, no Infinity × 0.
      const room = Math.min(pauseMs, remainingMs - left - TIMER_TURN_MS);
      return room > 0 ? left + drawFrom(rng, 'createRetryAfterGate: options.rng') * room : left;
    },
    hold(ms: number): void {
      // A negative pause or NaN is no hint a server can give (the parsers read none), so it is
      // a caller's bug worth naming; Infinity is a server's number too large for a double.
      if (!(typeof ms === 'number' && ms >= 0)) throw mustError('gate.hold(ms): ms', 'be a number >= 0 (Infinity for "forever")', ms, true);
      const pause = Math.min(ms, maxHoldMs);
      const until = clock.now() + pause;
      if (until <= openAt) return;
      openAt = until;
      pauseMs = pause;
    },
  };
}

const RULES: FieldRules = {
  maxHoldMs: { ok: (v) => typeof v === 'number' && v >= 0, rule: 'be a number >= 0 (Infinity for no cap)', range: true },
  spread: BOOLEAN,
  rng: FUNCTION,
  clock: CLOCK_RULE,
};
