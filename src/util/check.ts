// Error messages name the field and the value it got; this renders the value.

/** Renders a bad value for an error message: strings quoted, objects as JSON where possible. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return `a function (${value.name || 'anonymous'})`;
  if (typeof value === 'bigint') return `${value}n`;
  // null too: JSON writes it as null.
  if (typeof value === 'object') {
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
  return String(value);
}
/** True for a finite number: not NaN, not ±Infinity, not a numeric string. */
export function isFiniteNumber(value: unknown): value is number {
  return Number.isFinite(value);
}

/** True for a number with no fractional part: not NaN, not ±Infinity, not a numeric string. */
export function isInteger(value: unknown): value is number {
  return Number.isInteger(value);
}
