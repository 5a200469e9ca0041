/**
 * Reading a configuration document that Google's tools wrote (a gRPC service config, a GAPIC
 * client config): every error names the path in the document (`methodConfig[0].retryPolicy.
 * maxAttempts`) and the value found there, and a misspelled key is answered with the key it
 * was probably meant to be. The messages follow the one options reader's form (util/check.ts):
 * `<where>: <path> must <rule>, got <value>`. Pure.
 *
 * @internal
 */
import { GrpcStatus, type GrpcStatusName } from '../classify/error-shape.js';
import { describe, isPlainObject, mustError } from '../util/check.js';
import { suggest } from '../util/suggest.js';

/** `a.b`, `[0]` for an index, and a plain key at the root. */
export function pathOf(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

/** The error for a bad value at `path`: `<where>: <path> must <rule>, got <value>`. */
export function docError(where: string, path: string, rule: string, value: unknown, range = false): Error {
  return mustError(`${where}: ${path === '' ? 'the document' : path}`, rule, value, range);
}

/** proto3 JSON reads `max_attempts` as `maxAttempts`: both spellings name one field. */
function camel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * The fields of the object at `path`, keyed by the names in `known` (proto3 JSON's snake_case
 * spelling of a camelCase field is read too, when `camelCase`). Throws unless `value` is a plain
 * object, and for a key that is not known: with the closest known key when there is one.
 */
export function readFields(
  where: string,
  path: string,
  value: unknown,
  known: readonly string[],
  camelCase = false,
): Record<string, unknown> {
  if (!isPlainObject(value)) throw docError(where, path, 'be an object', value);
  const fields: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(value)) {
    const name = camelCase ? camel(key) : key;
    if (!known.includes(name)) throw unknownKey(where, path, key, known);
    fields[name] = value[key];
  }
  return fields;
}

/**
 * An object whose keys are the document's own names (interfaces, methods, parameter sets), not
 * fields: any key goes, in a copy without a prototype so that an inherited name finds nothing.
 */
export function readMap(where: string, path: string, value: unknown): Record<string, unknown> {
  // Object(value): a value that is no object is refused by readFields before its keys are read.
  return readFields(where, path, value, Object.keys(Object(value)));
}

/** `unknown field "maxAttemps" in methodConfig[0].retryPolicy (did you mean "maxAttempts"?)`. */
function unknownKey(where: string, path: string, key: string, known: readonly string[]): TypeError {
  const close = suggest(key, known);
  const within = path === '' ? 'at the top of the document' : `in ${path}`;
  const hint = close === undefined ? `known: ${known.join(', ')}` : `did you mean ${JSON.stringify(close)}?`;
  return new TypeError(`${where}: unknown field ${JSON.stringify(key)} ${within} (${hint})`);
}

/**
 * A name looked up among `names` (an interface, a method, a parameter set): the entry, or an
 * error naming what was asked for, where, and the closest name there is.
 */
export function lookUp<T>(where: string, path: string, what: string, name: string, entries: Readonly<Record<string, T>>): T {
  if (Object.hasOwn(entries, name)) return entries[name] as T;
  const names = Object.keys(entries);
  const close = suggest(name, names);
  const hint =
    close === undefined ? (names.length === 0 ? 'there are none' : `known: ${names.join(', ')}`) : `did you mean ${JSON.stringify(close)}?`;
  throw new TypeError(`${where}: no ${what} ${describe(name)} in ${path} (${hint})`);
}

const CODE_NAMES = /* @__PURE__ */ Object.keys(GrpcStatus) as GrpcStatusName[];

/**
 * A list of gRPC status codes: names (`"UNAVAILABLE"`, in any case, as grpc-js reads them) or
 * numbers 0 to 16. A name that is none of the 17 gets the closest one.
 */
export function readStatusCodes(where: string, path: string, value: unknown): number[] {
  if (!Array.isArray(value)) throw docError(where, path, 'be a list of gRPC status codes', value);
  return value.map((code: unknown, i) => {
    const at = pathOf(path, i);
    if (typeof code === 'number') {
      if (Number.isInteger(code) && code >= 0 && code <= 16) return code;
      throw docError(where, at, 'be a gRPC status code from 0 to 16', code, true);
    }
    if (typeof code !== 'string') throw docError(where, at, 'be a gRPC status code name or number', code);
    const upper = code.toUpperCase();
    if (Object.hasOwn(GrpcStatus, upper)) return GrpcStatus[upper as GrpcStatusName];
    const close = suggest(code, CODE_NAMES);
    const hint = close === undefined ? '' : ` (did you mean ${JSON.stringify(close)}?)`;
    throw new TypeError(`${where}: ${at} must be a gRPC status code name such as "UNAVAILABLE", got ${describe(code)}${hint}`);
  });
}

/** A finite number at `path` that passes `ok`, else an error with `rule` (a RangeError for a number out of range). */
export function readNumber(where: string, path: string, value: unknown, ok: (n: number) => boolean, rule: string): number {
  // Number.isFinite is false for anything that is not a number.
  if (!Number.isFinite(value) || !ok(value as number)) throw docError(where, path, rule, value, typeof value === 'number');
  return value as number;
}
