/**
 * Number checks for values that may be anything (options, fields read off errors). Like
 * `Number.isFinite` and `Number.isInteger`, they never coerce, and they tell the compiler that a
 * value that passed is a number, so no separate `typeof` test is needed.
 *
 * @internal
 */

/** True for a finite number: not NaN, not ±Infinity, not a numeric string. */
export function isFiniteNumber(value: unknown): value is number {
  return Number.isFinite(value);
}

/** True for a number with no fractional part: not NaN, not ±Infinity, not a numeric string. */
export function isInteger(value: unknown): value is number {
  return Number.isInteger(value);
}
