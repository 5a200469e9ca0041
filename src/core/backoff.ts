import type { BackoffPolicy, Jitter } from '../types.js';
import { describe, isFiniteNumber, mustError, notAnOptionsObject } from '../util/check.js';

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
export function computeDelay(attempt: number, policy: BackoffPolicy, rng: () => number = Math.random): number {
  if (!Number.isSafeInteger(attempt) || attempt < 0) {
    throw mustError('computeDelay: attempt', 'be an integer >= 0', attempt, true);
  }
  const checked = readBackoffPolicy(policy, 'policy');
  if (typeof rng !== 'function') {
    throw mustError('computeDelay: rng', 'be a function returning a number in [0, 1]', rng);
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
    throw mustError('rng', 'return a number in [0, 1]', r, true);
  }
  return r;
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
    throw mustError(field, 'be an object', policy);
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
    throw mustError(`${field}.initialDelayMs`, 'be a finite number >= 0', initialDelayMs, true);
  }
  if (!isFiniteNumber(multiplier) || multiplier < 1) {
    throw mustError(`${field}.multiplier`, 'be a finite number >= 1', multiplier, true);
  }
  if (!isFiniteNumber(maxDelayMs) || maxDelayMs < initialDelayMs) {
    throw mustError(`${field}.maxDelayMs`, `be a finite number >= initialDelayMs (${describe(initialDelayMs)})`, maxDelayMs, true);
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
      throw mustError(`${field}.jitter.additiveMs`, 'be a finite number >= 0', additiveMs, true);
    }
    // afterCap is always set, so that reading it never reaches a prototype.
    if (afterCap === undefined || afterCap === false) return { additiveMs, afterCap: false };
    if (afterCap !== true) {
      throw mustError(`${field}.jitter.afterCap`, 'be a boolean', afterCap);
    }
    if (additiveMs > maxDelayMs) {
      throw mustError(`${field}.jitter.additiveMs`, `be <= maxDelayMs (${describe(maxDelayMs)}) with afterCap`, additiveMs, true);
    }
    return { additiveMs, afterCap };
  }
  throw mustError(`${field}.jitter`, "be 'none', 'full', 'equal' or { additiveMs: number }", jitter);
}

const BACKOFF_KEYS = new Set(['initialDelayMs', 'multiplier', 'maxDelayMs', 'jitter']);
