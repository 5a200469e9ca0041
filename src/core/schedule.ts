/**
 * The options that reshape a call's schedule beyond its backoff: a growing attempt timeout,
 * the `delay` option, `countsAsAttempt`; and a decorrelated jitter, which needs the previous
 * wait. Beside them, the state a call shares with others (its `Fleet`). They are read once with the options into one object, absent from a call without them,
 * so that such a call pays one config field and no work per attempt. A call with one keeps its
 * state (the previous wait, the failures not counted) in its `Runs`.
 */
import type { AttemptContext, AttemptThrottle, AttemptTimeoutGrowth, DelayContext, RetryBudget, RetryGate } from '../types.js';
import { type FieldRules, atLeast, checkField, checkedFields, isFiniteNumber, isPlainObject, mustError } from '../util/check.js';

/** What a call's schedule options hold once read; undefined in the config when none was given. */
export interface Schedule {
  /** The growing attempt timeout; undefined for a fixed one (the config's `attemptTimeoutMs`). */
  readonly timeout: AttemptTimeoutGrowth | undefined;
  /** The `delay` option, asked by judge.ts before each sleep. */
  readonly delay: ((ctx: DelayContext) => number | undefined) | undefined;
  /** The `countsAsAttempt` option, asked by judge.ts about each failure to be retried. */
  readonly countsAsAttempt: ((error: unknown, ctx: AttemptContext) => boolean) | undefined;
  /** `tenacious/testing`'s `instant()`: each wait is decided, reported and counted, not slept. */
  readonly instant?: true | undefined;
}

/**
 * What a call shares with other calls, once read: the `budget`, `throttle` and `gate` options,
 * grouped so that a call with none of them (most calls) pays one config field for the three.
 */
export interface Fleet {
  readonly budget: RetryBudget | undefined;
  readonly throttle: AttemptThrottle | undefined;
  /** Asked by call.ts before each attempt, told each hint by judge.ts. */
  readonly gate: RetryGate | undefined;
}

/** The fields of a growing attempt timeout; all three are required. */
const GROWTH_RULES: FieldRules = {
  initialMs: { ok: (v) => isFiniteNumber(v) && v > 0, rule: 'be a finite number > 0', range: true },
  multiplier: /* @__PURE__ */ atLeast(1),
  // Infinity: no cap of its own, the deadline bounds each attempt.
  maxMs: { ok: (v) => typeof v === 'number' && v > 0, rule: 'be a number >= initialMs (Infinity for no cap)', range: true },
};

/** `attemptTimeoutMs`'s rule: a fixed limit, or a growth checked field by field by readTimeout. */
export const ATTEMPT_TIMEOUT_RULE = {
  ok: (v: unknown) => (typeof v === 'number' && v > 0) || isPlainObject(v),
  rule: 'be a number > 0 or { initialMs, multiplier, maxMs }',
  range: true,
};

/**
 * Reads a growing attempt timeout into a fresh object of its three checked fields. Throws a
 * TypeError/RangeError naming `<where>: <path>.<field>` and the value it got.
 */
export function readTimeoutGrowth(growth: object, where: string, path: string): AttemptTimeoutGrowth {
  const given = checkedFields(where, growth, GROWTH_RULES, path);
  for (const key of Object.keys(GROWTH_RULES)) checkField(where, path, key, GROWTH_RULES, given[key]);
  const { initialMs, multiplier, maxMs } = given as unknown as AttemptTimeoutGrowth;
  if (maxMs < initialMs) throw mustError(`${where}: ${path}.maxMs`, `be >= initialMs (${initialMs})`, maxMs, true);
  return { initialMs, multiplier, maxMs };
}

/**
 * Why options would never give up, for their RangeError (`path` names them); undefined when they
 * end. Failures `countsAsAttempt` leaves uncounted never reach `maxAttempts`, so with it only the
 * deadline ends a call: without one it is refused, not capped by a count of the library's own,
 * which the caller would discover only by being cut off (docs/schedules.md).
 */
export function whyEndless(
  config: { readonly maxAttempts: number; readonly deadlineMs: number; readonly schedule: Schedule | undefined },
  path: string,
): string | undefined {
  if (config.deadlineMs !== Infinity) return undefined;
  if (config.maxAttempts === Infinity) return `${path}.maxAttempts and ${path}.deadlineMs are both Infinity`;
  if (config.schedule?.countsAsAttempt !== undefined) return `${path}.countsAsAttempt needs a finite ${path}.deadlineMs, got Infinity`;
  return undefined;
}

/**
 * The time limit of attempt `n` (1-based, counted from the last progress) under `config`: the
 * fixed `attemptTimeoutMs`, or the growth's `min(initialMs · multiplier^(n−1), maxMs)` (a power
 * that overflows to Infinity is capped like any other).
 */
export function timeoutOf(
  config: { readonly attemptTimeoutMs: number; readonly schedule: Pick<Schedule, 'timeout'> | undefined },
  n: number,
): number {
  const growth = config.schedule?.timeout;
  if (growth === undefined) return config.attemptTimeoutMs;
  return Math.min(growth.initialMs * growth.multiplier ** (n - 1), growth.maxMs);
}
