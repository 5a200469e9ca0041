/**
 * The shapes of a call's schedule: the backoff's jitter, and the options that reshape the
 * schedule beyond its backoff (a growing attempt timeout, the `delay` option); types only,
 * re-exported by types.ts.
 */

/**
 * How randomness spreads the delays of many clients apart.
 *
 * - `'none'`: exactly the capped exponential delay `c`.
 * - `'full'`: uniform in `[0, c]` (the AWS "full jitter"; the best at breaking up fleets).
 * - `'equal'`: uniform in `[c/2, c]`, never waits less than half.
 * - `'decorrelated'`: AWS's "decorrelated jitter", each wait uniform in
 *   `[initialDelayMs, min(3 · previous wait, maxDelayMs)]` (the first wait's previous is
 *   `initialDelayMs`; `multiplier` plays no part). The call carries the previous wait: the one
 *   its last sleep lasted, a server's hint or the `delay` option included.
 * - `{ additiveMs }`: Google's documented formula, `min(base + rng()·additiveMs, maxDelayMs)`:
 *   the random part is added first and the sum truncated, so at the cap every client waits
 *   exactly `maxDelayMs`, and a fleet that reached the cap together retries in lockstep
 *   (`npm run sim` measures it: bursts several times higher than with full jitter).
 * - `{ additiveMs, afterCap: true }`: the same formula with the jitter kept after the cap,
 *   `min(base, maxDelayMs − additiveMs) + rng()·additiveMs`: equal to Google's formula while
 *   `base ≤ maxDelayMs − additiveMs`, and uniform in `[maxDelayMs − additiveMs, maxDelayMs]` at
 *   the cap, so no two clients wait exactly the same. `additiveMs` must not exceed
 *   `maxDelayMs`. Prefer `'full'` unless you need never to wait less than `2^n`: 1 s of jitter
 *   at a 32 s cap breaks the lockstep but spreads a burst only slowly.
 *
 * @example
 * // Google's formula, without the lockstep at the cap: at most 32 s, at least 31 s there.
 * retry(call, { backoff: { maxDelayMs: 32_000, jitter: { additiveMs: 1000, afterCap: true } } });
 */
export type Jitter = 'none' | 'full' | 'equal' | 'decorrelated' | { readonly additiveMs: number; readonly afterCap?: boolean };

/**
 * An attempt timeout that grows from attempt to attempt, as Google's client libraries configure
 * it (`initial_rpc_timeout_millis`, `rpc_timeout_multiplier`, `max_rpc_timeout_millis`): attempt
 * n (1-based, counted from the last progress) may run `min(initialMs · multiplier^(n−1), maxMs)`
 * milliseconds, and never past the deadline. `initialMs` > 0 and finite, `multiplier` ≥ 1 and
 * finite, `maxMs` ≥ `initialMs` (`Infinity` for no cap: the deadline is then the only bound).
 *
 * @example
 * // 5 s, then 7.5 s, 11.25 s, … up to 30 s per attempt, within the 120 s deadline
 * await retry(call, { attemptTimeoutMs: { initialMs: 5_000, multiplier: 1.5, maxMs: 30_000 } });
 */
export interface AttemptTimeoutGrowth {
  /** The first attempt's limit, in milliseconds: finite, > 0. */
  readonly initialMs: number;
  /** How much longer each attempt may run than the one before: finite, >= 1. */
  readonly multiplier: number;
  /** The longest limit, in milliseconds: >= initialMs, or Infinity for none but the deadline. */
  readonly maxMs: number;
}

/**
 * What the `delay` option is told before each sleep, to pick the wait.
 *
 * @example
 * // Twice the computed wait for a 503, the computed one otherwise
 * const delay = ({ error, computedDelayMs }: DelayContext) => (httpStatus(503)(error) ? 2 * computedDelayMs : undefined);
 */
export interface DelayContext {
  /** The attempt that just failed, 1-based (every attempt counts here, see `countsAsAttempt`). */
  readonly attempt: number;
  /** What it failed with; `undefined` for a value `retryOnResult` refused. */
  readonly error: unknown;
  /** The value `retryOnResult` refused, if that is how it failed. */
  readonly value: unknown;
  /** Milliseconds since `retry()` was called. */
  readonly elapsedMs: number;
  /** Milliseconds left before the deadline (counted from the last progress). */
  readonly remainingMs: number;
  /** The wait the backoff computed (its jitter drawn), before any server hint. */
  readonly computedDelayMs: number;
}
