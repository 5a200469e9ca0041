import { describe } from './describe.js';
import { isFiniteNumber } from './numbers.js';

/**
 * The backoff policy: how long to wait before retry number n. Pure functions only; randomness
 * comes in as an `rng` argument so every schedule can be reproduced.
 */

/**
 * How randomness spreads the delays of many clients apart.
 *
 * - `'none'`: exactly the capped exponential delay `c`.
 * - `'full'`: uniform in `[0, c]` (the AWS "full jitter"; the best at breaking up fleets).
 * - `'equal'`: uniform in `[c/2, c]`, never waits less than half.
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
export type Jitter = 'none' | 'full' | 'equal' | { readonly additiveMs: number; readonly afterCap?: boolean };

/**
 * The shape of a truncated exponential backoff: `initialDelayMs · multiplier^n`, capped.
 *
 * @example
 * // 0.5 s, 1 s, 2 s, … up to 10 s, each delay anywhere between half and all of it
 * const policy: BackoffPolicy = { initialDelayMs: 500, multiplier: 2, maxDelayMs: 10_000, jitter: 'equal' };
 * await retry(call, { backoff: policy });
 */
export interface BackoffPolicy {
  /** Delay before the first retry (n = 0), before jitter, in milliseconds. */
  initialDelayMs: number;
  /** Growth factor per retry; at least 1. */
  multiplier: number;
  /** Cap on any single delay, in milliseconds (Google: typically 32 or 64 s). */
  maxDelayMs: number;
  /** How randomness is applied; see {@link Jitter}. */
  jitter: Jitter;
}

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
 *
 * With `c = min(initialDelayMs · multiplier^attempt, maxDelayMs)`: `'none'` → `c`;
 * `'full'` → `rng()·c`; `'equal'` → `c/2 + rng()·c/2`; `{ additiveMs: J }` →
 * `min(initialDelayMs · multiplier^attempt + rng()·J, maxDelayMs)`;
 * `{ additiveMs: J, afterCap: true }` → `min(initialDelayMs · multiplier^attempt, maxDelayMs − J)
 * + rng()·J`. The result is always a finite number in `[0, maxDelayMs]`, however large
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
 */
export function computeDelay(
  attempt: number,
  policy: BackoffPolicy,
  rng: () => number = Math.random,
): number {
  if (!Number.isSafeInteger(attempt) || attempt < 0) {
    throw new RangeError(`computeDelay: attempt must be an integer >= 0, got ${describe(attempt)}`);
  }
  const checked = readBackoffPolicy(policy, 'policy');
  if (typeof rng !== 'function') {
    throw new TypeError(`computeDelay: rng must be a function returning a number in [0, 1], got ${describe(rng)}`);
  }
  return delayFor(attempt, checked, rng);
}

/**
 * `computeDelay` without input validation, for callers that validated the policy once
 * (retry() does so when it reads its options). The rng's value is still checked: it is
 * user code and runs every time.
 */
export function delayFor(attempt: number, policy: BackoffPolicy, rng: () => number): number {
  const { initialDelayMs, maxDelayMs, jitter } = policy;
  // initialDelayMs · multiplier^n overflows to Infinity for large n (and 0 · Infinity is NaN),
  // so compute the uncapped value carefully and let min() truncate it.
  const uncapped = initialDelayMs === 0 ? 0 : initialDelayMs * policy.multiplier ** attempt;
  const capped = Math.min(uncapped, maxDelayMs);
  if (jitter === 'none') return capped;
  const r = checkedRandom(rng);
  if (jitter === 'full') return r * capped;
  if (jitter === 'equal') {
    // Rounding can push the sum of two halves past the whole for tiny (subnormal) delays.
    const equal = capped / 2 + (r * capped) / 2;
    return Math.min(equal, capped);
  }
  if (jitter.afterCap === true) {
    // Cap the exponential part low enough for the jitter to fit under maxDelayMs, so it is
    // still there at the cap (validation guarantees additiveMs <= maxDelayMs).
    const room = maxDelayMs - jitter.additiveMs;
    const sum = Math.min(uncapped, room) + r * jitter.additiveMs;
    return Math.min(sum, maxDelayMs); // float rounding of (max − J) + J
  }
  const jittered = uncapped + r * jitter.additiveMs;
  return Math.min(jittered, maxDelayMs);
}

function checkedRandom(rng: () => number): number {
  const r = rng();
  if (typeof r !== 'number' || !(r >= 0 && r <= 1)) {
    throw new RangeError(`rng must return a number in [0, 1], got ${describe(r)}`);
  }
  return r;
}

/**
 * Throws a `TypeError`/`RangeError` naming `field.property` unless `policy` is a complete,
 * valid {@link BackoffPolicy}.
 */
export function assertBackoffPolicy(policy: unknown, field: string): asserts policy is BackoffPolicy {
  readBackoffPolicy(policy, field);
}

/**
 * `'an array'`, `'a Map'`… for a value that is an object but not a bag of named options,
 * undefined for one that is. Such values have no own option fields, so without this check
 * they would pass as "all defaults" and the caller's intent would be silently lost.
 */
export function notAnOptionsObject(value: object): string | undefined {
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Map) return 'a Map';
  if (value instanceof Set) return 'a Set';
  return undefined;
}

/** The value of `key` if `object` has it as its own property; an inherited one does not count. */
function own(object: object, key: string): unknown {
  return Object.hasOwn(object, key) ? (object as Record<string, unknown>)[key] : undefined;
}

/**
 * Validates `policy` and returns it as a fresh object holding only what was checked: its own
 * fields (a field inherited from a prototype is not part of it), missing ones taken from
 * `defaults` when given. Throws a `TypeError`/`RangeError` naming `field.property`. Used by
 * `computeDelay` and by option validation.
 */
export function readBackoffPolicy(policy: unknown, field: string, defaults?: BackoffPolicy): BackoffPolicy {
  if (typeof policy !== 'object' || policy === null) {
    throw new TypeError(`${field} must be an object, got ${describe(policy)}`);
  }
  const kind = notAnOptionsObject(policy);
  if (kind !== undefined) throw new TypeError(`${field} must be a plain object, got ${kind}`);
  for (const key of Object.keys(policy)) {
    if (!BACKOFF_KEYS.has(key)) {
      throw new TypeError(`${field}.${key} is not a backoff option (expected one of ${[...BACKOFF_KEYS].join(', ')})`);
    }
  }
  const pick = (key: keyof BackoffPolicy): unknown => {
    const value = own(policy, key);
    return value === undefined && defaults !== undefined ? defaults[key] : value;
  };
  const initialDelayMs = pick('initialDelayMs');
  const multiplier = pick('multiplier');
  const maxDelayMs = pick('maxDelayMs');
  const jitter = pick('jitter');
  if (!isFiniteNumber(initialDelayMs) || initialDelayMs < 0) {
    throw new RangeError(`${field}.initialDelayMs must be a finite number >= 0, got ${describe(initialDelayMs)}`);
  }
  if (!isFiniteNumber(multiplier) || multiplier < 1) {
    throw new RangeError(`${field}.multiplier must be a finite number >= 1, got ${describe(multiplier)}`);
  }
  if (!isFiniteNumber(maxDelayMs) || maxDelayMs < initialDelayMs) {
    throw new RangeError(
      `${field}.maxDelayMs must be a finite number >= initialDelayMs (${describe(initialDelayMs)}), got ${describe(maxDelayMs)}`,
    );
  }
  return { initialDelayMs, multiplier, maxDelayMs, jitter: readJitter(jitter, field, maxDelayMs) };
}

function readJitter(jitter: unknown, field: string, maxDelayMs: number): Jitter {
  if (jitter === 'none' || jitter === 'full' || jitter === 'equal') return jitter;
  if (typeof jitter === 'object' && jitter !== null && notAnOptionsObject(jitter) === undefined) {
    // A misspelled field (`afterCapp`) would otherwise be ignored, and the caller would get
    // the lockstep at the cap that they asked to avoid.
    for (const key of Object.keys(jitter)) {
      if (key !== 'additiveMs' && key !== 'afterCap') {
        throw new TypeError(`${field}.jitter.${key} is not a jitter option (expected additiveMs, afterCap)`);
      }
    }
    const additiveMs = own(jitter, 'additiveMs');
    const afterCap = own(jitter, 'afterCap');
    if (!isFiniteNumber(additiveMs) || additiveMs < 0) {
      throw new RangeError(`${field}.jitter.additiveMs must be a finite number >= 0, got ${describe(additiveMs)}`);
    }
    // afterCap is always set, so that reading it never reaches a prototype.
    if (afterCap === undefined || afterCap === false) return { additiveMs, afterCap: false };
    if (afterCap !== true) {
      throw new TypeError(`${field}.jitter.afterCap must be a boolean, got ${describe(afterCap)}`);
    }
    if (additiveMs > maxDelayMs) {
      throw new RangeError(
        `${field}.jitter.additiveMs must be <= maxDelayMs (${describe(maxDelayMs)}) with afterCap, got ${describe(additiveMs)}`,
      );
    }
    return { additiveMs, afterCap };
  }
  throw new TypeError(
    `${field}.jitter must be 'none', 'full', 'equal' or { additiveMs: number }, got ${describe(jitter)}`,
  );
}

const BACKOFF_KEYS = new Set(['initialDelayMs', 'multiplier', 'maxDelayMs', 'jitter']);
