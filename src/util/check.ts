/**
 * Option checking in one place. Every bad option, in every module and entry point, is reported
 * the same way: `<where>: options.<field> must <rule>, got <value>`, naming the entry point,
 * the field and the value it got. A module describes its fields as a table of rules
 * (`FieldRules`); `checkOptions` / `readChecked` walk the caller's own properties against it,
 * refusing unknown keys (suggesting the closest known one, else listing them) and inherited
 * ones. Rules several entry points share (a signal, a function, a boolean…) are defined once, here.
 */
import { suggest } from './suggest.js';

/**
 * Renders a bad value for an error message: strings quoted, plain objects and arrays as JSON
 * where possible, other objects by their kind (`a Map`, `a Date`: JSON would write a Map as `{}`).
 */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return `a function (${value.name || 'anonymous'})`;
  if (typeof value === 'bigint') return `${value}n`;
  if (value !== null && typeof value === 'object') {
    const tag = tagOf(value);
    if (tag !== 'Object' && tag !== 'Array') return `${/^[AEIOU]/.test(tag) ? 'an' : 'a'} ${tag}`;
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return `[object ${tag}]`;
    }
  }
  return String(value);
}

/** `Object` for a plain object, `Array`, `Map`, `Date`, `Null`, `String`…: what the value says it is. */
function tagOf(value: unknown): string {
  return Object.prototype.toString.call(value).slice(8, -1);
}

/**
 * True for a plain object: one whose fields can be options. An array, a Map, a Date… is an
 * object with no option fields of its own, and reading none from it would silently turn the
 * caller's intent into "all defaults".
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  // The common case first, without building a tag string: a literal's prototype, no own tag.
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    return !Object.hasOwn(value, Symbol.toStringTag);
  }
  return tagOf(value) === 'Object';
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
    ignoreRejection(answer);
    throw new TypeError(`${where}: options.${option} must return a boolean, got a promise`);
  }
  return Boolean(answer);
}

/**
 * When a sync-only option returned a thenable (an `async` predicate, `delay` or `rng`), handles
 * its rejection before the option is refused: nobody will ever read it, and a rejection left
 * unhandled ends a Node process in its default mode. Anything else adopted is simply fulfilled.
 * Never throws, whatever an odd thenable's `then` does.
 */
export function ignoreRejection(value: unknown): void {
  try {
    // Promise.resolve adopts any thenable; a `then` that throws rejects the adopting promise, handled here too.
    Promise.resolve(value).then(undefined, ignore);
  } catch {
    // A promise whose `constructor` getter throws: Promise.resolve reads it, and there is nothing to handle.
  }
}

function ignore(): void {}

/**
 * `rng()`'s draw, checked: a number in [0, 1], else a RangeError naming `subject` (the option or
 * argument the rng came from). It is user code and runs at every draw, so every draw is checked.
 */
export function drawFrom(rng: () => number, subject: string): number {
  const r = rng();
  if (typeof r !== 'number' || !(r >= 0 && r <= 1)) {
    ignoreRejection(r);
    throw mustError(subject, 'return a number in [0, 1]', r, true);
  }
  return r;
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
 * Throws unless `value` is a plain object: `<subject> must be an object` for a primitive or
 * null, `must be a plain object` for an array, a Map, a Date… (see {@link isPlainObject}).
 */
export function checkPlainObject(subject: string, value: unknown, path?: string): asserts value is Record<string, unknown> {
  if (isPlainObject(value)) return;
  // The subject is `where` and `path` joined only here: a call with good options builds no string.
  const named = path === undefined ? subject : `${subject}: ${path}`;
  throw mustError(named, typeof value === 'object' && value !== null ? 'be a plain object' : 'be an object', value);
}

/**
 * Checks `options` against `rules`: throws, naming `where`, for a value that is not a plain
 * object, an unknown key, or a field that breaks its rule. Only own properties are options (a
 * polluted `Object.prototype` sets nothing). Each own value is also written to `into` when
 * given: an object the caller made with every field present, so an options literal per call
 * (as users write `retry()`) costs one small allocation and no per-field lookups. `path` is
 * what the messages call the object: `options`, or a field of it (`options.backoff`), or an
 * argument of another name (`target`, `policy`).
 *
 * @example
 * checkOptions('createThing', options, { size: { ok: isFiniteNumber, rule: 'be a finite number', range: true } });
 */
export function checkOptions(
  where: string,
  options: unknown,
  rules: FieldRules,
  into?: Record<string, unknown>,
  path = 'options',
): asserts options is object {
  checkPlainObject(where, options, path);
  for (const key in options) {
    if (!Object.hasOwn(options, key)) continue;
    if (!Object.hasOwn(rules, key)) throw unknownOption(where, key, rules, path);
    const value: unknown = options[key];
    if (value !== undefined) checkField(where, path, key, rules, value);
    if (into !== undefined) into[key] = value;
  }
}

/**
 * Throws unless `value` passes the rule of `key` in `rules`: `<where>: <path>.<key> must <rule>,
 * got <value>`. For a value read another way than by `checkOptions` (a default merged in, a
 * field that is required: no rule passes undefined).
 */
export function checkField(where: string, path: string, key: string, rules: FieldRules, value: unknown): void {
  const { ok, rule, range } = rules[key] as FieldRule;
  if (!ok(value)) throw mustError(`${where}: ${path}.${key}`, rule, value, range);
}

/** {@link checkedFields} of options, instant()'s marker kept: `readChecked('createThing', options, RULES)`. */
export function readChecked(where: string, options: unknown, rules: FieldRules, path = 'options'): Record<string, unknown> {
  const values = checkedFields(where, options, rules, path);
  // instant()'s marker goes wherever the options go: a preset, an upload, a read-modify-write.
  if ((options as { [INSTANT]?: unknown })[INSTANT] === true) (values as { [INSTANT]?: true })[INSTANT] = true;
  return values;
}

/**
 * `checkOptions`, then the caller's own, defined values by field in an object without a
 * prototype (a field not given, or only inherited, reads as undefined). Without instant()'s
 * marker: for a part of the options (a backoff, a jitter); see {@link readChecked}.
 */
export function checkedFields(where: string, value: unknown, rules: FieldRules, path: string): Record<string, unknown> {
  const values: Record<string, unknown> = Object.create(null);
  checkOptions(where, value, rules, values, path);
  return values;
}

/**
 * The key `instant()` (`tenacious/testing`) sets on options: retry() then decides, reports and
 * counts each wait without sleeping it. Registered (`Symbol.for`) so that a copy of the library
 * bundled twice still reads it. A symbol, not a named option: no production option can turn it
 * on by mistake; a spread (`{ ...instant(options), maxAttempts: 3 }`) and every options reader
 * here keep it.
 */
export const INSTANT: unique symbol = Symbol.for('tenacious.instant') as never;

/**
 * The fields of a bag whose keys are data, not options (HTTP headers, preconditions): its own
 * enumerable fields in an object without a prototype, after {@link checkPlainObject}.
 *
 * @example
 * ownFields('upload: target.headers', { 'x-goog-meta-a': '1' }); // { 'x-goog-meta-a': '1' }
 */
export function ownFields(subject: string, value: unknown): Record<string, unknown> {
  checkPlainObject(subject, value);
  const fields: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(value)) fields[key] = value[key];
  return fields;
}

/**
 * `<where>: unknown option "<key>" (did you mean "<name>"?)` when one known name is close (as the
 * service-config readers and the CLI answer a typo), else `(known: a, b, c)`: two dozen names
 * hide the one the caller meant. With ` in <path>` for a nested object
 * (`retry: unknown option "initialDelay" in options.backoff (did you mean "initialDelayMs"?)`).
 */
export function unknownOption(where: string, key: string, rules: FieldRules, path: string): TypeError {
  const within = path === 'options' ? '' : ` in ${path}`;
  const known = Object.keys(rules);
  const close = suggest(key, known);
  const hint = close === undefined ? `known: ${known.join(', ')}` : `did you mean ${JSON.stringify(close)}?`;
  return new TypeError(`${where}: unknown option ${JSON.stringify(key)}${within} (${hint})`);
}

/** A function option (a predicate, a hook, an rng, a fetch). */
export const FUNCTION: FieldRule = { ok: isFunction, rule: 'be a function' };

/** A boolean option. */
export const BOOLEAN: FieldRule = { ok: (v) => typeof v === 'boolean', rule: 'be a boolean' };

/**
 * `maxRetryAfterMs`, the longest server-asked wait worth waiting for, in every entry that takes
 * it (retryFetch, the undici, axios, gRPC and TanStack Query adapters). `hintExceeds` is its test.
 *
 * @example
 * checkOptions('myAdapter', options, { ...RETRY_RULES, maxRetryAfterMs: MAX_RETRY_AFTER_RULE });
 */
export const MAX_RETRY_AFTER_RULE: FieldRule = {
  ok: (v) => typeof v === 'number' && v >= 0,
  rule: 'be a number >= 0 (Infinity for none)',
  range: true,
};

/**
 * An `AbortSignal`, or anything that has what the engine uses of one: its state, and a listener
 * it can add and remove again (a signal that cannot remove its listener would keep every call
 * that ever saw it alive).
 */
export const SIGNAL: FieldRule = {
  ok: (v) => hasMethods(v, ['addEventListener', 'removeEventListener']) && typeof (v as AbortSignal).aborted === 'boolean',
  rule: 'be an AbortSignal (aborted, addEventListener, removeEventListener)',
};

/**
 * A finite number >= `min` (a RangeError otherwise).
 *
 * @example
 * const RULES = { delayMs: atLeast(0) }; // "must be a finite number >= 0"
 */
export function atLeast(min: number): FieldRule {
  return { ok: (v) => isFiniteNumber(v) && v >= min, rule: `be a finite number >= ${min}`, range: true };
}

/**
 * A safe integer >= `min` (a count: copies, requests).
 *
 * @example
 * const RULES = { maxCopies: wholeAtLeast(1) }; // "must be a safe integer >= 1"
 */
export function wholeAtLeast(min: number): FieldRule {
  return { ok: (v) => Number.isSafeInteger(v) && (v as number) >= min, rule: `be a safe integer >= ${min}`, range: true };
}

/**
 * An option this entry point refuses though its type family has it, saying why; any value
 * but `undefined` breaks it (`gcsResumableUpload: options.retryOnResult must be left out (…)`).
 *
 * @example
 * const RULES = { ...RETRY_RULES, retryOnResult: leftOut('a 308 is progress, not a value to retry') };
 */
export function leftOut(why: string): FieldRule {
  // Stryker disable next-line ArrowFunction: undefined fails as false does; the rule's one reader, checkField, asks !ok(value)
  return { ok: () => false, rule: `be left out (${why})` };
}
