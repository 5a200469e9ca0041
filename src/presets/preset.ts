/**
 * What the IAM and Cloud Storage presets share: their options read by the one reader
 * (`util/check.ts`) under the entry point's own name, the caller's overrides merged into the
 * preset's values field by field, the result frozen and validated once, up front.
 *
 * A preset is data: a frozen `RetryOptions`. Validating it here with retry()'s own validator,
 * told the preset's name, means a bad or misspelled field fails where it was written (at
 * `iam({...})`, naming `iam`, not at some later `retry()`), and, because retry() remembers the
 * validated form of a frozen options object, every retry() that is given this preset skips
 * validation altogether.
 *
 * @internal
 */
import { BACKOFF_RULES, defaultCap } from '../core/backoff.js';
import { RETRY_RULES } from '../core/options.js';
import { readOptions } from '../core/read-options.js';
import type { BackoffPolicy, Jitter, RetryOptions, RetryPredicate } from '../types.js';
import { type FieldRule, type FieldRules, INSTANT, describe, isFiniteNumber, readChecked } from '../util/check.js';

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
 * preset's jitter through an inherited read. A jitter is never null: the backoff's rules refuse it.
 */
export function freezeBackoff(policy: BackoffPolicy): FrozenBackoff {
  const { jitter } = policy;
  return Object.freeze({
    ...policy,
    jitter: typeof jitter === 'object' ? Object.freeze(Object.assign(Object.create(null), jitter)) : jitter,
  });
}

/** The preset's `maxDelayMs` shorthand: any finite number > 0 (see the README for why). */
const MAX_DELAY: FieldRule = {
  ok: (v) => isFiniteNumber(v) && v > 0,
  rule: 'be a finite number > 0 (Google suggests 32000 or 64000)',
  range: true,
};

/**
 * The rules of an entry point that builds a preset: retry()'s, the `maxDelayMs` shorthand, and
 * the entry point's own (which may also replace one of retry()'s, e.g. to refuse it).
 *
 * @example
 * const IAM_RULES = presetRules({ retryNotFound: BOOLEAN });
 */
export function presetRules(own: FieldRules): FieldRules {
  return { ...RETRY_RULES, maxDelayMs: MAX_DELAY, ...own };
}

/** Every RetryOptions field but backoff, which merges field by field. */
const OVERRIDABLE = /* @__PURE__ */ Object.keys(RETRY_RULES).filter((key) => key !== 'backoff');

/**
 * Whether `fields` (read with {@link presetRules}) leave a preset as it is; instant()'s marker
 * (tenacious/testing) makes a preset of its own, never one of the shared ones.
 */
export function overridesNothing(fields: Readonly<Record<string, unknown>>): boolean {
  return (
    (fields as { [INSTANT]?: true })[INSTANT] === undefined &&
    fields.maxDelayMs === undefined &&
    fields.backoff === undefined &&
    OVERRIDABLE.every((key) => fields[key] === undefined)
  );
}

/**
 * Builds a preset from `fields`, the options `where` read with {@link presetRules} (a field
 * not given reads as undefined): `base` (one of the preset's shared, validated objects)
 * overridden field by field, with `maxDelayMs` as a shorthand for `backoff.maxDelayMs`. With
 * nothing to override, `base` itself is returned. Otherwise the result is frozen, backoff and
 * jitter included, and validated by retry()'s own validator under `where` and `path` (what
 * `where` calls its options), which remembers it for retry().
 */
export function buildPreset(
  where: string,
  base: PresetRetryOptions,
  fields: Readonly<Record<string, unknown>>,
  path = 'options',
): PresetRetryOptions {
  if (overridesNothing(fields)) return base;
  const { maxDelayMs, backoff } = fields;
  const overrides = OVERRIDABLE.filter((key) => fields[key] !== undefined);
  const merged: Record<string | symbol, unknown> = { ...base };
  for (const key of overrides) merged[key] = fields[key];
  // instant() (tenacious/testing), read with the options (readChecked), goes on to retry().
  if ((fields as { [INSTANT]?: true })[INSTANT]) merged[INSTANT] = true;
  merged.backoff = mergeBackoff(where, path, base.backoff, backoff, maxDelayMs as number | undefined);
  const preset = Object.freeze(merged) as unknown as PresetRetryOptions;
  readOptions(preset, where, path);
  return preset;
}

/** The preset's backoff with the caller's fields (checked by the backoff's own rules) over it. */
function mergeBackoff(
  where: string,
  path: string,
  base: Readonly<BackoffPolicy>,
  override: unknown,
  maxDelayMs: number | undefined,
): FrozenBackoff {
  const fields = override === undefined ? undefined : readChecked(where, override, BACKOFF_RULES, `${path}.backoff`);
  const explicitMax = fields?.maxDelayMs;
  if (maxDelayMs !== undefined && explicitMax !== undefined && explicitMax !== maxDelayMs) {
    throw new TypeError(
      `${where}: ${path}.maxDelayMs (${describe(maxDelayMs)}) and ${path}.backoff.maxDelayMs (${describe(explicitMax)}) disagree; give one of them`,
    );
  }
  const policy: Record<string, unknown> = { ...base };
  for (const key of Object.keys(BACKOFF_RULES)) {
    if (fields?.[key] !== undefined) policy[key] = fields[key];
  }
  const merged = policy as unknown as BackoffPolicy;
  if (fields?.jitter === undefined) merged.jitter = scaledJitter(base, merged.initialDelayMs);
  // The shorthand, else the backoff's own (they agree when both are given), else the preset's
  // cap as a default, which follows a larger start of the caller's, as retry()'s does.
  merged.maxDelayMs =
    maxDelayMs ?? (explicitMax as number | undefined) ?? defaultCap(base.maxDelayMs, merged.initialDelayMs, fields?.jitter);
  return freezeBackoff(merged);
}

/**
 * A preset's additive jitter for another first delay. Google's formula adds "up to 1 s" to a
 * 1 s first wait: the random part is as large as the first delay. Kept at 1 s under a 50 ms
 * first delay and a 200 ms cap, it would swamp the schedule (every wait 200 ms, no backoff
 * left); so it scales with the first delay, unless the caller chose a jitter. The presets and
 * the CLI's `--initial-delay` scale it the same way, here.
 *
 * @example
 * scaledJitter({ initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: { additiveMs: 1000 } }, 50); // { additiveMs: 50 }
 */
export function scaledJitter(base: Readonly<BackoffPolicy>, initialDelayMs: number): Jitter {
  const { jitter } = base;
  if (typeof jitter !== 'object' || base.initialDelayMs <= 0 || initialDelayMs === base.initialDelayMs) return jitter;
  return { ...jitter, additiveMs: (jitter.additiveMs * initialDelayMs) / base.initialDelayMs };
}
