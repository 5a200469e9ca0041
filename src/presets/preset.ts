/**
 * What the IAM and Cloud Storage presets share: merging a caller's overrides into the preset's
 * values field by field, freezing the result, and validating it once, up front.
 *
 * A preset is data: a frozen `RetryOptions`. Validating it here with retry()'s own validator
 * means a bad or misspelled field fails where it was written (at `iam({...})`, not at some
 * later `retry()`), and, because retry() remembers the validated form of a frozen options
 * object, every retry() that is given this preset skips validation altogether.
 *
 * @internal
 */
import type { BackoffPolicy } from '../types.js';
import { describe } from '../util/check.js';
import { isFiniteNumber } from '../util/check.js';
import { readOptions } from '../core/options.js';
import type { RetryPredicate } from '../types.js';
import type { RetryOptions } from '../types.js';

/**
 * What `iam()` and `gcs()` return: `RetryOptions` in which the preset's choices are always
 * present, so they can be read and composed without a non-null assertion.
 *
 * @example
 * const withQuota: RetryOptions = { ...iam(), retryable: anyOf(iam().retryable, httpStatus(429)) };
 */
export interface PresetRetryOptions extends Readonly<RetryOptions> {
  readonly backoff: Readonly<BackoffPolicy>;
  readonly deadlineMs: number;
  readonly retryable: RetryPredicate;
}

/** A frozen backoff policy, its jitter object frozen too. */
export type FrozenBackoff = Readonly<BackoffPolicy>;

/**
 * Freezes a backoff policy and, when the jitter is an object, a copy of it that has no
 * prototype: `Object.prototype.afterCap = true` set by some other code must not reach a
 * preset's jitter through an inherited read.
 */
export function freezeBackoff(policy: BackoffPolicy): FrozenBackoff {
  const { jitter } = policy;
  return Object.freeze({
    ...policy,
    jitter: typeof jitter === 'object' && jitter !== null ? Object.freeze(Object.assign(Object.create(null), jitter)) : jitter,
  });
}

/**
 * An options object's own enumerable fields, copied into an object without a prototype, so
 * that nothing set on `Object.prototype` (pollution, or a careless polyfill) is read as an
 * option. Throws a TypeError naming `where` for anything but a plain object: an array, a Map,
 * a Date… has no option fields, and reading none from it would silently drop what the caller
 * meant.
 */
export function ownFields(where: string, value: unknown): Record<string, unknown> {
  assertPlainObject(where, value);
  const fields: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(value)) fields[key] = value[key];
  return fields;
}

/** Throws a TypeError naming `where` unless `value` is a plain object (see {@link ownFields}). */
function assertPlainObject(where: string, value: unknown): asserts value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Object.prototype.toString.call(value) !== '[object Object]') {
    throw new TypeError(`${where} must be an object, got ${describeBag(value)}`);
  }
}

/** describe() writes a Map as `{}`; name the kind of object instead. */
function describeBag(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return describe(value);
  return `a ${Object.prototype.toString.call(value).slice(8, -1)}`;
}

/**
 * Throws a TypeError unless `options` is undefined or a plain object; returns its own fields
 * (see {@link ownFields}) split into the preset's own options (`ownKeys`) and the
 * `RetryOptions` overrides. `name` is the preset's name, used in messages.
 */
export function optionsBag(
  name: string,
  options: unknown,
  ownKeys: readonly string[],
): { own: Record<string, unknown>; overrides: Record<string, unknown> } {
  const own: Record<string, unknown> = Object.create(null);
  const overrides: Record<string, unknown> = Object.create(null);
  if (options === undefined) return { own, overrides };
  // Called for every preset a program builds, often once per request: the message is built
  // only when it is needed, and the own keys are read straight from the caller's object.
  if (typeof options !== 'object' || options === null || Object.prototype.toString.call(options) !== '[object Object]') {
    assertPlainObject(`${name}: options`, options);
  }
  const fields = options as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (ownKeys.includes(key)) own[key] = fields[key];
    else overrides[key] = fields[key];
  }
  return { own, overrides };
}

/** True when no field of `bag` is set (fields set to `undefined` count as absent, as in retry()). */
function isEmpty(bag: Record<string, unknown>): boolean {
  return Object.keys(bag).every((key) => bag[key] === undefined);
}

/** Checks the preset's `maxDelayMs` shorthand: any finite number > 0 (see the README for why). */
function checkMaxDelay(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (!isFiniteNumber(value) || value <= 0) {
    throw new RangeError(
      `${name}: options.maxDelayMs must be a finite number > 0 (Google suggests 32000 or 64000), got ${describe(value)}`,
    );
  }
  return value;
}

/**
 * Builds a preset: `base` (one of the preset's shared, validated objects) overridden field by
 * field by `overrides` (any `RetryOptions`; fields set to `undefined` count as absent, as in
 * retry()), with `maxDelayMs` as a shorthand for `backoff.maxDelayMs`. With nothing to
 * override, `base` itself is returned. Otherwise the result is frozen, backoff and jitter
 * included, and validated by retry()'s own validator, whose errors are re-issued under the
 * preset's name. `ownKeys` are the preset's own option names, listed in the message for an
 * unknown option.
 */
export function buildPreset(
  name: string,
  ownKeys: readonly string[],
  base: PresetRetryOptions,
  overrides: Record<string, unknown>,
  maxDelayMs: unknown,
): PresetRetryOptions {
  const max = checkMaxDelay(name, maxDelayMs);
  if (max === undefined && isEmpty(overrides)) return base;
  const backoff = mergeBackoff(name, base.backoff, overrides.backoff, max);
  const merged: Record<string, unknown> = { ...base };
  for (const key of Object.keys(overrides)) {
    if (overrides[key] !== undefined) merged[key] = overrides[key];
  }
  merged.backoff = backoff;
  return validated(name, ownKeys, Object.freeze(merged) as unknown as PresetRetryOptions);
}

/**
 * Validates a frozen preset with retry()'s validator (which also remembers it, so the first
 * retry() that gets it does no work) and returns it.
 */
function validated(name: string, ownKeys: readonly string[], preset: PresetRetryOptions): PresetRetryOptions {
  try {
    readOptions(preset);
  } catch (error) {
    throw renamed(name, ownKeys, error);
  }
  return preset;
}

function mergeBackoff(
  name: string,
  base: Partial<BackoffPolicy> | undefined,
  override: unknown,
  maxDelayMs: number | undefined,
): FrozenBackoff {
  const fields = override === undefined ? {} : ownFields(`${name}: options.backoff`, override);
  const explicitMax = fields.maxDelayMs;
  if (maxDelayMs !== undefined && explicitMax !== undefined && explicitMax !== maxDelayMs) {
    throw new TypeError(
      `${name}: options.maxDelayMs (${describe(maxDelayMs)}) and options.backoff.maxDelayMs (${describe(explicitMax)}) disagree; give one of them`,
    );
  }
  const policy: Record<string, unknown> = { ...base };
  if (maxDelayMs !== undefined) policy.maxDelayMs = maxDelayMs;
  // Unknown backoff fields are copied too, so the validator reports them by name.
  for (const key of Object.keys(fields)) {
    if (fields[key] !== undefined) policy[key] = fields[key];
  }
  if (fields.jitter === undefined) policy.jitter = scaledJitter(base, policy.initialDelayMs);
  return freezeBackoff(policy as unknown as BackoffPolicy);
}

/**
 * The preset's additive jitter for another first delay. Google's formula adds "up to 1 s" to
 * a 1 s first wait: the random part is as large as the first delay. Kept at 1 s under a 50 ms
 * first delay and a 200 ms cap, it would swamp the schedule (every wait 200 ms, no backoff
 * left); so it scales with the first delay, unless the caller chose a jitter. A first delay
 * the validator will refuse leaves the jitter as it was, so the error names that field.
 */
function scaledJitter(base: Partial<BackoffPolicy> | undefined, initialDelayMs: unknown): unknown {
  const jitter = base?.jitter;
  const baseInitial = base?.initialDelayMs;
  if (typeof jitter !== 'object' || jitter === null || baseInitial === undefined || baseInitial <= 0) return jitter;
  if (!isFiniteNumber(initialDelayMs) || initialDelayMs < 0 || initialDelayMs === baseInitial) return jitter;
  return { ...jitter, additiveMs: (jitter.additiveMs * initialDelayMs) / baseInitial };
}

/** retry()'s validation error, re-issued under the preset's name (same class, original as cause). */
function renamed(name: string, ownKeys: readonly string[], error: unknown): unknown {
  if (!(error instanceof TypeError || error instanceof RangeError)) return error;
  // Stryker disable next-line Regex: equivalent. Every message of retry()'s validator starts with "retry: ", so the first match is at the start anyway.
  let message = error.message.replace(/^retry: /, `${name}: `);
  if (/unknown option/.test(message)) message += `; ${name}() also takes ${ownKeys.join(', ')}`;
  const Type = error instanceof RangeError ? RangeError : TypeError;
  return new Type(message, { cause: error });
}
