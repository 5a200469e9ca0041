/**
 * The Retry-After gate: one pause shared by every call to a host. When a server answers one
 * call with `Retry-After` (or gRPC pushback, or a 429's RateLimit reset), it means every
 * request from this client, not that call's alone: the calls through the gate wait until the
 * pause ends before their next attempt, first attempts included, instead of each sending a
 * request to learn the same thing by failing.
 */
import { type FieldRules, mustError, readChecked } from '../util/check.js';
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
  const { maxHoldMs = Infinity } = readChecked('createRetryAfterGate', options, RULES) as RetryAfterGateOptions;
  // When the pause ends, on the engine's clock; 0 while none was asked for.
  let openAt = 0;
  return {
    maxHoldMs,
    waitMs: () => Math.max(0, openAt - steadyNow()),
    hold(ms: number): void {
      // NaN would never end a pause; a negative one is no pause. Either is a bug worth naming.
      if (!(typeof ms === 'number' && ms >= 0)) throw mustError('gate.hold(ms): ms', 'be a number >= 0', ms, true);
      openAt = Math.max(openAt, steadyNow() + Math.min(ms, maxHoldMs));
    },
  };
}

const RULES: FieldRules = {
  maxHoldMs: { ok: (v) => typeof v === 'number' && v >= 0, rule: 'be a number >= 0 (Infinity for no cap)', range: true },
};
