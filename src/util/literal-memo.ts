/**
 * "The same options as last time": a reader of options that is handed a new object at each call
 * (a literal written in the call: `retry(fn, { maxAttempts: 5 })`, `gcs({ operation })`)
 * remembers the last one it read, key by key, and compares the next one with it instead of
 * reading it again. Compared by value at every call, so an object changed in between is read
 * anew. retry()'s options reader (core/read-options.ts) and gcs() (presets/gcs.ts) each keep one.
 */
import { INSTANT, isPlainObject } from './check.js';

/**
 * The last literal a reader remembered: its enumerable keys as `for…in` listed them, each
 * followed by the value the reader read there (key, value, key, value…). One array per reader,
 * reused from one literal to the next, so that remembering allocates nothing on the common path.
 *
 * @example
 * const memo: LiteralMemo = []; // holds `{}`: empty options match it (emptyMemo() holds nothing)
 */
export type LiteralMemo = unknown[];

/**
 * A memo that holds no literal, not even `{}` (which an empty array holds): for a reader that has
 * nothing to give back before the first literal it remembers.
 *
 * @example
 * const memo = emptyMemo(); // holdsLiteral(memo, {}) is false until rememberLiteral(memo, …)
 */
export function emptyMemo(): LiteralMemo {
  // One key that no options have: `for…in` lists strings only.
  return [undefined];
}

/**
 * Remembers `options` in `memo`, in place of what it held: each enumerable key `for…in` lists,
 * in order, with the value `read` holds for it. `read` is what the reader made of the options
 * (its checked fields), so that a getter is not called again. A key inherited from a polluted
 * `Object.prototype` is remembered too, and makes every later comparison fail (see
 * {@link holdsLiteral}): such options are read at every call.
 *
 * @example
 * rememberLiteral(memo, options, checkFields(options, 'retry', 'options'));
 */
export function rememberLiteral(memo: LiteralMemo, options: object, read: Readonly<Record<string, unknown>>): void {
  memo.length = 0;
  for (const key in options) memo.push(key, read[key]);
}

/**
 * Whether `options` is a plain object whose enumerable keys are `memo`'s, in the same order,
 * each its own and holding the value remembered there (`===`): then what the reader made of
 * the remembered literal holds for `options` too. Anything else (another order, a key more or
 * less, a Map) is read again, which costs time, never a wrong answer. An inherited key never
 * matches: a reader of own fields does not read it, so a polluted `Object.prototype` holding
 * the remembered value must not pass for the literal's own field. The marker of instant() (a
 * symbol, which `for…in` does not list) never matches either: options that carry it are read
 * at every call.
 *
 * @example
 * if (holdsLiteral(memo, options)) return lastConfig;
 */
export function holdsLiteral(memo: LiteralMemo, options: unknown): boolean {
  if (!isPlainObject(options) || (options as { [INSTANT]?: unknown })[INSTANT] !== undefined) return false;
  let i = 0;
  for (const key in options) {
    // Own last: inherited keys exist only on a polluted prototype, and the check is paid once per key that matched.
    if (memo[i] !== key || memo[i + 1] !== options[key] || !Object.hasOwn(options, key)) return false;
    i += 2;
  }
  return i === memo.length;
}
