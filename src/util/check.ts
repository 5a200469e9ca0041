/**
 * Option checking in one place. Every bad option, in every module, is reported the same way:
 * `<where>: options.<field> must <rule>, got <value>`, naming the field and showing the value
 * it got. A module describes its fields as a table of rules (`FieldRules`); `checkOptions`
 * walks the caller's own properties against it, refusing unknown keys and inherited ones.
 */

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

/** True for a function. */
export function isFunction(value: unknown): value is (...args: never[]) => unknown {
  return typeof value === 'function';
}

/** True for an object that has a function under each of `names` (a budget, a throttle, a signal…). */
export function hasMethods(value: unknown, names: readonly string[]): boolean {
  return typeof value === 'object' && value !== null && names.every((name) => isFunction((value as Record<string, unknown>)[name]));
}

/**
 * The error for a bad value: `<subject> must <rule>, got <value>`. A `TypeError` when the value
 * is of the wrong kind, a `RangeError` (`range: true`) when it is a number out of range.
 */
export function mustError(subject: string, rule: string, value: unknown, range = false): Error {
  const message = `${subject} must ${rule}, got ${describe(value)}`;
  return range ? new RangeError(message) : new TypeError(message);
}

/**
 * What a predicate option (`retryable`, `idempotent`…) answered, as a boolean. A promise (an
 * async predicate) is refused with a TypeError naming `<where>: options.<option>`: it would
 * count as `true` whatever it resolves to, and resend what the caller meant to keep.
 */
export function answerOf(where: string, option: string, answer: unknown): boolean {
  if (typeof (answer as PromiseLike<unknown> | null | undefined)?.then === 'function') {
    throw new TypeError(`${where}: options.${option} must return a boolean, got a promise`);
  }
  return Boolean(answer);
}

/** One field's rule: the test a value must pass, the words after "must", and the error kind. */
export interface FieldRule {
  readonly ok: (value: unknown) => boolean;
  /** e.g. `'be a finite number >= 0'`, `'come from createRetryBudget()'`. */
  readonly rule: string;
  /** A number out of range (RangeError) rather than a value of the wrong kind (TypeError). */
  readonly range?: boolean;
}

/** A module's option table: every field it accepts, with its rule. */
export type FieldRules = Readonly<Record<string, FieldRule>>;

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

/**
 * Checks `options` against `rules`: throws, naming `where`, for a value that is not a plain
 * object, an unknown key, or a field that breaks its rule. Only own properties are options (a
 * polluted `Object.prototype` sets nothing). Each own value is also written to `into` when
 * given: an object the caller made with every field present, so an options literal per call
 * (as users write `retry()`) costs one small allocation and no per-field lookups.
 *
 * @example
 * checkOptions('createThing', options, { size: { ok: isFiniteNumber, rule: 'be a finite number', range: true } });
 */
export function checkOptions(
  where: string,
  options: unknown,
  rules: FieldRules,
  into?: Record<string, unknown>,
): asserts options is object {
  if (typeof options !== 'object' || options === null) throw mustError(`${where}: options`, 'be an object', options);
  const kind = notAnOptionsObject(options);
  if (kind !== undefined) throw new TypeError(`${where}: options must be a plain object, got ${kind}`);
  for (const key in options) {
    if (!Object.hasOwn(options, key)) continue;
    const rule = Object.hasOwn(rules, key) ? rules[key] : undefined;
    if (rule === undefined) throw unknownOption(where, key, rules);
    const value: unknown = (options as Record<string, unknown>)[key];
    if (value !== undefined && !rule.ok(value)) throw mustError(`${where}: options.${key}`, rule.rule, value, rule.range);
    if (into !== undefined) into[key] = value;
  }
}

/** The value of `key` if `object` has it as its own property; an inherited one does not count. */
export function ownValue(object: object, key: string): unknown {
  return Object.hasOwn(object, key) ? (object as Record<string, unknown>)[key] : undefined;
}

/**
 * `checkOptions`, then the own, defined values by field in an object without a prototype (a
 * field the caller did not give reads as undefined, whatever `Object.prototype` holds).
 */
export function readChecked(where: string, options: unknown, rules: FieldRules): Record<string, unknown> {
  checkOptions(where, options, rules);
  const values: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(rules)) values[key] = ownValue(options, key);
  return values;
}

/** `<where>: unknown option "<key>" (known: a, b, c)`. */
export function unknownOption(where: string, key: string, rules: FieldRules): TypeError {
  return new TypeError(`${where}: unknown option ${JSON.stringify(key)} (known: ${Object.keys(rules).join(', ')})`);
}

/** Rules many modules share. */
export const FUNCTION: FieldRule = { ok: isFunction, rule: 'be a function' };

/** A boolean option. */
export const BOOLEAN: FieldRule = { ok: (v) => typeof v === 'boolean', rule: 'be a boolean' };
