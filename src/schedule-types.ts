/**
 * The shapes of the options that reshape a call's schedule beyond its backoff (a growing
 * attempt timeout…); types only, re-exported by types.ts.
 */

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
  readonly initialMs: number;
  readonly multiplier: number;
  readonly maxMs: number;
}
