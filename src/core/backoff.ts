import type { BackoffPolicy, Jitter } from '../types.js';
import {
  BOOLEAN,
  checkField,
  type FieldRules,
  atLeast,
  drawFrom,
  isFiniteNumber,
  isPlainObject,
  mustError,
  checkedFields,
} from '../util/check.js';

/**
 * The backoff policy: how long to wait before retry number n. Pure functions only; randomness
 * comes in as an `rng` argument so every schedule can be reproduced.
 */

/**
 * The default backoff of `retry()`: 1 s doubling up to 32 s, full jitter.
 *
 * @example
 * computeDelay(3, DEFAULT_BACKOFF, () => 0.5); // 4000: half of min(1000·2³, 32000)
 */
export const DEFAULT_BACKOFF: Readonly<BackoffPolicy> = Object.freeze({
  initialDelayMs: 1000,
  multiplier: 2,
  maxDelayMs: 32_000,
  jitter: 'full',
});

/**
 * Milliseconds to wait before retry number `attempt` (0 before the first retry).
 * `previousDelayMs` is the wait before the previous retry, read only by jitter
 * `'decorrelated'`, the one stateful kind: its caller carries the previous wait, so the
 * function stays pure (leave it out before the first retry).
 *
 * With `c = min(initialDelayMs · multiplier^attempt, maxDelayMs)`: `'none'` → `c`;
 * `'full'` → `rng()·c`; `'equal'` → `c/2 + rng()·c/2`; `{ additiveMs: J }` →
 * `min(initialDelayMs · multiplier^attempt + rng()·J, maxDelayMs)`;
 * `{ additiveMs: J, afterCap: true }` → `min(initialDelayMs · multiplier^attempt, maxDelayMs − J)
 * + rng()·J`; `'decorrelated'` → uniform in `[initialDelayMs, min(3 · previousDelayMs, maxDelayMs)]`
 * (AWS's "decorrelated jitter"; `previousDelayMs` defaults to `initialDelayMs`, and `attempt`
 * and `multiplier` play no part). The result is always a finite number in `[0, maxDelayMs]`, however large
 * `attempt` is.
 *
 * Throws a `TypeError` or `RangeError` naming the field for a bad attempt, policy or rng value.
 *
 * @example
 * // Google Cloud's formula: min(2^n + random_fraction, 32) seconds
 * const policy = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: { additiveMs: 1000 } };
 * computeDelay(0, policy, () => 0.25); // 1250
 * computeDelay(9, policy, () => 0.25); // 32000 (512 s truncated to the cap)
 * // The same with the jitter kept after the cap: 31 s plus a quarter of 1 s
 * computeDelay(9, { ...policy, jitter: { additiveMs: 1000, afterCap: true } }, () => 0.25); // 31250
 * // Decorrelated: after a wait of 4 s, the next is uniform in [1 s, 12 s]
 * computeDelay(0, { ...policy, jitter: 'decorrelated' }, () => 0.5, 4000); // 6500
 */
export function computeDelay(attempt: number, policy: BackoffPolicy, rng: () => number = Math.random, previousDelayMs?: number): number {
  if (!Number.isSafeInteger(attempt) || attempt < 0) {
    throw mustError('computeDelay: attempt', 'be an integer >= 0', attempt, true);
  }
  const checked = readBackoffPolicy(policy, 'computeDelay', 'policy');
  if (typeof rng !== 'function') {
    throw mustError('computeDelay: rng', 'be a function returning a number in [0, 1]', rng);
  }
  if (previousDelayMs !== undefined && !(isFiniteNumber(previousDelayMs) && previousDelayMs >= 0)) {
    const range = typeof previousDelayMs === 'number';
    throw mustError('computeDelay: previousDelayMs', 'be a finite number >= 0 or undefined', previousDelayMs, range);
  }
  return delayFor(attempt, checked, rng, 'computeDelay: rng', previousDelayMs);
}

/**
 * `computeDelay` without input validation, for callers that validated the policy once
 * (retry() does so when it reads its options). The rng's value is still checked: it is
 * user code and runs every time; `rngName` is what its error calls it.
 */
export function delayFor(attempt: number, policy: BackoffPolicy, rng: () => number, rngName: string, previousDelayMs?: number): number {
  const { initialDelayMs, maxDelayMs, jitter } = policy;
  if (jitter === 'decorrelated') {
    // Capped before the draw: 3 · a huge previous wait overflows, and 0 · Infinity is NaN.
    const high = Math.max(initialDelayMs, Math.min(3 * (previousDelayMs ?? initialDelayMs), maxDelayMs));
    return Math.min(initialDelayMs + drawFrom(rng, rngName) * (high - initialDelayMs), high); // float rounding past `high`
  }
  // initialDelayMs · multiplier^n overflows to Infinity for large n (and 0 · Infinity is NaN),
  // so compute the uncapped value carefully and let min() truncate it.
  const uncapped = initialDelayMs === 0 ? 0 : initialDelayMs * policy.multiplier ** attempt;
  const capped = Math.min(uncapped, maxDelayMs);
  if (jitter === 'none') return capped;
  const r = drawFrom(rng, rngName);
  if (jitter === 'full') return r * capped;
  // Rounding can push the sum of two halves past the whole for tiny (subnormal) delays.
  if (jitter === 'equal') return Math.min(capped / 2 + (r * capped) / 2, capped);
  const { additiveMs, afterCap } = jitter;
  // After the cap, the exponential part is capped low enough for the jitter to fit under
  // maxDelayMs, so it is still there at the cap (validation guarantees additiveMs <= maxDelayMs;
  // a validated jitter's afterCap is a boolean). The last min() is float rounding of (max − J) + J.
  return Math.min((afterCap ? Math.min(uncapped, maxDelayMs - additiveMs) : uncapped) + r * additiveMs, maxDelayMs);
}

/**
 * Every field of a backoff policy, with its rule; `maxDelayMs` is also checked against
 * `initialDelayMs`, and an additive jitter by its own rules, in `readBackoffPolicy`.
 */
export const BACKOFF_RULES: FieldRules = {
  initialDelayMs: /* @__PURE__ */ atLeast(0),
  multiplier: /* @__PURE__ */ atLeast(1),
  maxDelayMs: { ok: isFiniteNumber, rule: 'be a finite number >= initialDelayMs', range: true },
  jitter: { ok: (v) => isJitterName(v) || isPlainObject(v), rule: "be 'none', 'full', 'equal', 'decorrelated' or { additiveMs: number }" },
};

/** The fields of an additive jitter; `additiveMs` is required. */
const JITTER_RULES: FieldRules = { additiveMs: /* @__PURE__ */ atLeast(0), afterCap: BOOLEAN };

const isJitterName = (v: unknown): v is 'none' | 'full' | 'equal' | 'decorrelated' =>
  v === 'none' || v === 'full' || v === 'equal' || v === 'decorrelated';

/**
 * Validates `policy` and returns it as a fresh object holding only what was checked: its own
 * fields (a field inherited from a prototype is not part of it), missing ones taken from
 * `defaults` when given (without defaults every field is required); a missing `maxDelayMs`
 * follows a larger start (see {@link defaultCap}). Throws a
 * `TypeError`/`RangeError` naming `<where>: <path>.<field>` and the value. Used by
 * `computeDelay` (`computeDelay: policy`) and by option validation (`retry: options.backoff`).
 */
export function readBackoffPolicy(policy: unknown, where: string, path: string, defaults?: BackoffPolicy): BackoffPolicy {
  const given = checkedFields(where, policy, BACKOFF_RULES, path);
  // A field left out takes its default; without defaults, it breaks its rule (undefined passes none).
  const pick = (key: keyof BackoffPolicy): unknown => {
    const value = given[key] ?? defaults?.[key];
    checkField(where, path, key, BACKOFF_RULES, value);
    return value;
  };
  const initialDelayMs = pick('initialDelayMs') as number;
  const multiplier = pick('multiplier') as number;
  // A cap the caller left out is a default, and a default must not undercut what they did set.
  const setCap = defaults === undefined || given.maxDelayMs !== undefined ? (pick('maxDelayMs') as number) : undefined;
  const jitterGiven = pick('jitter');
  const maxDelayMs = setCap ?? defaultCap((defaults as BackoffPolicy).maxDelayMs, initialDelayMs, jitterGiven);
  if (maxDelayMs < initialDelayMs) {
    throw mustError(`${where}: ${path}.maxDelayMs`, `be a finite number >= initialDelayMs (${initialDelayMs})`, maxDelayMs, true);
  }
  const jitter = readJitter(jitterGiven, where, `${path}.jitter`, maxDelayMs);
  // Each decorrelated wait is drawn up from the last: from 0 it would stay 0.
  if (jitter === 'decorrelated' && initialDelayMs === 0) {
    throw mustError(`${where}: ${path}.initialDelayMs`, "be > 0 with jitter 'decorrelated'", 0, true);
  }
  return { initialDelayMs, multiplier, maxDelayMs, jitter };
}

/**
 * The cap of a policy whose caller left `maxDelayMs` out: the default, raised to what they did
 * set, their first delay (`initialDelayMs: 60_000` alone waits 60 s, rather than being refused
 * under a 32 s cap they never chose) and the random part of an after-cap jitter. `jitter` is
 * read as given (an odd one is refused later, by its own rules). Used by `retry()` and the presets.
 *
 * @example
 * defaultCap(32_000, 60_000, 'full'); // 60000
 * defaultCap(32_000, 1000, { additiveMs: 40_000, afterCap: true }); // 40000
 */
export function defaultCap(defaultMaxMs: number, initialDelayMs: number, jitter: unknown): number {
  const { additiveMs, afterCap } = Object(jitter) as { additiveMs?: unknown; afterCap?: unknown };
  const random = afterCap === true && isFiniteNumber(additiveMs) ? additiveMs : 0;
  return Math.max(defaultMaxMs, initialDelayMs, random);
}

/** A jitter checked by the rules above: a name, or an additive jitter read by its own table. */
function readJitter(jitter: unknown, where: string, path: string, maxDelayMs: number): Jitter {
  if (isJitterName(jitter)) return jitter;
  // A misspelled field (`afterCapp`) is refused by the table: ignored, it would give the caller
  // the lockstep at the cap that they asked to avoid.
  const { additiveMs, afterCap } = checkedFields(where, jitter, JITTER_RULES, path);
  checkField(where, path, 'additiveMs', JITTER_RULES, additiveMs);
  if (afterCap === true && (additiveMs as number) > maxDelayMs) {
    throw mustError(`${where}: ${path}.additiveMs`, `be <= maxDelayMs (${maxDelayMs}) with afterCap`, additiveMs, true);
  }
  // afterCap is always set, so that reading it never reaches a prototype.
  return { additiveMs: additiveMs as number, afterCap: afterCap === true };
}
