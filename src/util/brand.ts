/**
 * `instanceof` for the library's errors across copies of the library. An app that loads both
 * the ESM and the CommonJS build (the dual-package hazard), or two versions, has two
 * `RetryError` classes; an error thrown by one is not an instance of the other. So each error
 * carries its class name under a key from the global symbol registry, which every copy shares,
 * and the classes' `Symbol.hasInstance` accepts an error with their brand.
 *
 * Every error class of the library extends `BrandedError` and states its name once, as a `name`
 * getter that returns a string literal: the brand is that string, not the class's own name,
 * which a minifier may rename. Nothing in a class body refers to the class itself: esbuild
 * would then rename the class to `_RetryError` (its inner binding), the name `util.inspect`
 * and `console.error` print.
 *
 * The brand is set in the constructor, not declared on the prototype: a class member with a
 * computed key would keep every error class in bundles that do not use it.
 */
import { isBag } from './cause-chain.js';

const BRAND = Symbol.for('tenacious.error');

/**
 * True when `value` was made by the library's class `name`, in this copy of the library or in
 * another. Never throws (a hostile Proxy answers false).
 *
 * @example
 * hasBrand(error, 'RetryError');
 */
export function hasBrand(value: unknown, name: string): boolean {
  try {
    return isBag(value) && (value as Record<symbol, unknown>)[BRAND] === name;
  } catch {
    return false;
  }
}

/**
 * The base of every error class of the library: sets the brand and an own `name`, and answers
 * `instanceof` across copies. Not exported by the package: users see the classes built on it.
 *
 * @example
 * class RetryError extends BrandedError {
 *   override get name(): 'RetryError' { return 'RetryError'; }
 * }
 */
export abstract class BrandedError extends Error {
  /** The class's name, a string literal (see the module comment). */
  abstract override get name(): string;

  /** `cause` becomes the standard `Error` cause only when there is one: no `cause: undefined` field. */
  constructor(message?: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    // The getter of the library's class. A user's subclass with a `name` field sets its own
    // after this, and keeps the brand of the library's class; one that overrides the getter
    // brands its errors with its own name, which no other copy knows. An own, writable `name`
    // too, as `Error.prototype`'s is: code that assigns one (a subclass compiled without define
    // semantics, a logger) must not hit a getter-only property.
    const { name } = this as Error;
    Object.defineProperties(this, { name: { value: name, writable: true, configurable: true }, [BRAND]: { value: name } });
  }

  /** True for an instance of this class, or an error of the same library class from any copy of the library. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return isInstance(this, value);
  }
}

const ordinaryInstanceOf = Function.prototype[Symbol.hasInstance];

/**
 * `value instanceof cls`, where `cls` is a library class or a user's subclass of one. The
 * ordinary answer first; then, for the library's own classes only (those directly on
 * `BrandedError`), the brand, so an error from another copy counts. A user's subclass keeps the
 * ordinary meaning (another subclass's instance is not one of it). Never throws: a hostile
 * Proxy whose prototype trap throws is no instance of anything.
 */
function isInstance(cls: unknown, value: unknown): boolean {
  try {
    return (
      ordinaryInstanceOf.call(cls, value) ||
      (Object.getPrototypeOf(cls) === BrandedError && hasBrand(value, (cls as typeof BrandedError).prototype.name))
    );
  } catch {
    return false;
  }
}
