/**
 * `instanceof` for the library's errors across copies of the library. An app that loads both
 * the ESM and the CommonJS build (the dual-package hazard), or two versions, has two
 * `RetryError` classes; an error thrown by one is not an instance of the other. So each error
 * carries its class name under a key from the global symbol registry, which every copy shares,
 * and the classes' `Symbol.hasInstance` accepts an error with their brand.
 *
 * The brand is set in the constructor, not declared on the prototype: a class member with a
 * computed key would keep every error class in bundles that do not use it.
 */
const BRAND = Symbol.for('tenacious.error');

/**
 * Marks `error` as an instance of the library's class `name` (a hidden, read-only property).
 *
 * @example
 * constructor() { super('…'); brand(this, 'RetryError'); }
 */
export function brand(error: object, name: string): void {
  Object.defineProperty(error, BRAND, { value: name });
}

/**
 * True when `value` was made by the library's class `name`, in this copy of the library or in
 * another. Never throws (a hostile Proxy answers false).
 *
 * @example
 * hasBrand(error, 'RetryError');
 */
export function hasBrand(value: unknown, name: string): boolean {
  try {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === name;
  } catch {
    return false;
  }
}

const ordinaryInstanceOf = Function.prototype[Symbol.hasInstance];

/**
 * The `Symbol.hasInstance` of a branded class `base` named `name`, called with `cls` (the class
 * on the right of `instanceof`: `base` or a subclass). The ordinary answer first; then, for the
 * library's own class only, the brand, so an error from another copy counts. A user's subclass
 * keeps the ordinary meaning (another subclass's instance is not one of it).
 *
 * @example
 * static [Symbol.hasInstance](value: unknown): boolean { return isInstance(this, RetryError, 'RetryError', value); }
 */
export function isInstance(cls: unknown, base: unknown, name: string, value: unknown): boolean {
  return ordinaryInstanceOf.call(cls, value) || (cls === base && hasBrand(value, name));
}
