/**
 * The Retry-After gate: one pause shared by every call to a host. When a server answers one
 * call with `Retry-After` (or gRPC pushback, or a 429's RateLimit reset), it means every
 * request from this client, not that call's alone: the calls through the gate wait until the
 * pause ends before their next attempt, first attempts included, instead of each sending a
 * request to learn the same thing by failing.
 */
import { BOOLEAN, FUNCTION, type FieldRules, drawFrom, mustError, readChecked } from '../util/check.js';
import { steadyNow } from '../runtime/clock.js';
import type { RetryGate } from '../types.js';

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
   * `Infinity`: the server's word; each call's deadline bounds what it waits anyway.
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
}

/**
 * A {@link RetryGate} whose pause can be read, e.g. for metrics or tests.
 *
 * @example
 * const gate = createRetryAfterGate();
 * setInterval(() => metrics.gauge('api.paused_ms', gate.waitMs()), 10_000);
 */
export interface RetryAfterGate extends RetryGate {
  /** The cap given by `maxHoldMs`. */
  readonly maxHoldMs: number;
}

/**
 * Creates a gate to share among the calls to one host (`retry(fn, { gate })`,
 * `retryFetch(url, init, { gate })`): one gate per host is the pattern, since a pause is what
 * that host asked for. A pause only ever extends: a shorter hint during a longer pause changes
 * nothing. Each call's deadline and signal bound its wait: a call whose deadline comes before
 * the pause ends fails at once with `RetryError` `'deadline'`.
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
    maxHoldMs = Infinity,
    spread = true,
    rng = Math.random,
  } = readChecked('createRetryAfterGate', options, RULES) as RetryAfterGateOptions;
  // When the pause ends, on the engine's clock (0 while none was asked for), and how long the
  // pause that set it was: the span over which the held calls come back.
  let openAt = 0;
  let pauseMs = 0;
  return {
    maxHoldMs,
    waitMs(): number {
      const left = openAt - steadyNow();
      if (left <= 0) return 0;
      return spread ? left + drawFrom(rng, 'createRetryAfterGate: options.rng') * pauseMs : left;
    },
    hold(ms: number): void {
      // NaN or Infinity would never end a pause (and spread it by NaN); a negative one is no
      // pause. Each is a bug worth naming: a server's hint is always a finite number.
      if (!(Number.isFinite(ms) && ms >= 0)) throw mustError('gate.hold(ms): ms', 'be a finite number >= 0', ms, true);
      const pause = Math.min(ms, maxHoldMs);
      const until = steadyNow() + pause;
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
};
