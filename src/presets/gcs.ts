/**
 * The Cloud Storage preset: which errors Cloud Storage's retry strategy calls transient, its
 * truncated exponential backoff and deadline, and whether the request at hand is safe to send
 * again (from the operation idempotency table in `gcs-table.ts`), as a frozen
 * `RetryOptions`.
 *
 * Sources: Cloud Storage, "Truncated exponential backoff"
 * (https://cloud.google.com/storage/docs/retry-strategy#exponential-backoff) and "Retry strategy"
 * (https://cloud.google.com/storage/docs/retry-strategy).
 */
import { networkError, timedOut } from '../classify/network.js';
import { anyOf, errorReason, grpcCode, httpStatus, oneRetryLayer } from '../classify/predicates.js';
import type { RetryOptions } from '../types.js';
import { type FieldRule, type FieldRules, isPlainObject, readChecked } from '../util/check.js';
import { type LiteralMemo, emptyMemo, holdsLiteral, rememberLiteral } from '../util/literal-memo.js';
import { type GcsRetryStrategy, gcsIsIdempotent, isGcsStrategy } from './gcs-idempotency.js';
import type { GcsOperation, GcsPreconditions } from './gcs-table.js';
import { type PresetRetryOptions, buildPreset, freezeBackoff, overridesNothing, presetRules } from './preset.js';

export { type GcsIdempotency, type GcsRetryStrategy, gcsIdempotency, gcsIsIdempotent, gcsPreconditionMet } from './gcs-idempotency.js';
export { GCS_OPERATIONS, type GcsOperation, type GcsPreconditions } from './gcs-table.js';

/**
 * What every {@link gcs} call may pass: any `RetryOptions` field to override (except
 * `idempotent`, which is one of the three ways to decide safety, see {@link GcsOptions}),
 * and the `maxDelayMs` shorthand.
 *
 * @example
 * const common: GcsCommonOptions = { maxDelayMs: 32_000, deadlineMs: 60_000 };
 * await retry(() => file.download(), gcs({ ...common, operation: 'objects.get' }));
 */
export interface GcsCommonOptions extends Omit<RetryOptions, 'idempotent'> {
  /**
   * Shorthand for `backoff.maxDelayMs`, the cap on any one wait. Default 64 000 (Cloud
   * Storage: "typically 32 or 64 seconds"); any finite value > 0 is accepted.
   */
  maxDelayMs?: number;
}

/**
 * `gcs()` judges from the operation: the JSON API method the retried call makes and the
 * preconditions it carries, under a strategy.
 *
 * @example
 * const options: GcsByOperation = { operation: 'objects.delete', preconditions: { generation } };
 */
export interface GcsByOperation extends GcsCommonOptions {
  /**
   * The JSON API method the retried call makes, e.g. `'objects.get'`, `'objects.insert'`,
   * `'buckets.setIamPolicy'`. Decides, with `preconditions` and `strategy`, whether a failed
   * request may be resent.
   */
  operation: GcsOperation;
  /** The preconditions this request carries (`ifGenerationMatch: 0` counts). */
  preconditions?: GcsPreconditions | undefined;
  /**
   * `'conditional'` (default): follow the idempotency table; a conditionally idempotent
   * operation is retried only with its precondition. `'always'`: retry every operation.
   * `'never'`: retry nothing.
   */
  strategy?: GcsRetryStrategy | undefined;
  /** Decided by the operation: giving both throws. */
  idempotent?: never;
}

/**
 * `gcs()` without an operation: the caller decides, for every request, with `strategy`
 * `'always'` (resend everything) or `'never'` (resend nothing).
 *
 * @example
 * const options: GcsByStrategy = { strategy: 'always' };
 */
export interface GcsByStrategy extends GcsCommonOptions {
  operation?: never;
  preconditions?: never;
  /** `'conditional'` needs an operation to look up. */
  strategy: 'always' | 'never';
  idempotent?: never;
}

/**
 * `gcs()` without an operation: the caller's own `idempotent`, a boolean or a function of the
 * attempt, decides.
 *
 * @example
 * const options: GcsByIdempotent = { idempotent: (_error, { attempt }) => attempt < 3 };
 */
export interface GcsByIdempotent extends GcsCommonOptions {
  operation?: never;
  preconditions?: never;
  strategy?: never;
  /** Whether the request may be resent. */
  idempotent: NonNullable<RetryOptions['idempotent']>;
}

/**
 * Options of {@link gcs}: one way to decide whether a request may be resent (an `operation`,
 * a `strategy` of `'always'` or `'never'`, or your own `idempotent`), plus any `RetryOptions`
 * field to override. The type refuses what `gcs()` would throw for: no way to decide, or two.
 *
 * @example
 * const options: GcsOptions = { operation: 'objects.delete', preconditions: { generation }, deadlineMs: 60_000 };
 * await retry(() => file.delete(), gcs(options));
 */
export type GcsOptions = GcsByOperation | GcsByStrategy | GcsByIdempotent;

/** Cloud Storage's backoff: `min(2^n + random_number_milliseconds/1000, 64)` seconds. */
const GCS_BACKOFF = /* @__PURE__ */ freezeBackoff({
  initialDelayMs: 1000,
  multiplier: 2,
  maxDelayMs: 64_000,
  jitter: { additiveMs: 1000 },
});

/** The retry-strategy page's example deadline: 600 s. */
const GCS_DEADLINE_MS = 600_000;

/*
 * 408, 429 and every 5xx (Cloud Storage's pages say "HTTP 5xx", not a list; ApiError carries the
 * status in its numeric `code`); their gRPC counterparts for the gRPC API (DEADLINE_EXCEEDED,
 * RESOURCE_EXHAUSTED, INTERNAL, UNKNOWN, UNAVAILABLE); socket timeouts and dropped
 * connections; and the `errors[].reason` values that mark a transient failure whatever the
 * status (Google APIs have answered rate limits with 403 `userRateLimitExceeded`), with the
 * socket-level reasons that Cloud Storage's own Node client retries (its
 * `RETRYABLE_ERR_FN_DEFAULT`). No spread arguments: they would keep a bundler from dropping
 * this when the preset is unused.
 */
const GCS_TRANSIENT = /* @__PURE__ */ anyOf(
  /* @__PURE__ */ httpStatus(408, 429, '5xx'),
  /* @__PURE__ */ grpcCode('DEADLINE_EXCEEDED', 'RESOURCE_EXHAUSTED', 'INTERNAL', 'UNKNOWN', 'UNAVAILABLE'),
  networkError,
  timedOut,
  /* @__PURE__ */ errorReason(
    'rateLimitExceeded',
    'userRateLimitExceeded',
    'backendError',
    'internalError',
    'econnreset',
    'epipe',
    'eai_again',
    'unexpected connection closure',
    'socket connection timeout',
  ),
);

/**
 * The preconditions a request carries, as a field of gcs() or of an upload's target: their
 * values are checked where they are used (a generation must be an int64…); null means none.
 *
 * @internal
 */
export const PRECONDITIONS: FieldRule = {
  ok: (v) => v === null || isPlainObject(v),
  rule: 'be a plain object such as { ifGenerationMatch: 0 }',
};

/** The strategy, as a field of gcs() or of an upload's target. @internal */
export const STRATEGY: FieldRule = { ok: isGcsStrategy, rule: "be 'always', 'conditional' or 'never'" };

/** What gcs() reads: retry()'s options, `maxDelayMs`, and how to decide whether to resend. */
const GCS_RULES: FieldRules = /* @__PURE__ */ presetRules({
  // Which names exist is checked by the table, which suggests the nearest for a misspelled one.
  operation: { ok: (v) => typeof v === 'string', rule: "be a JSON API method name such as 'objects.get'" },
  preconditions: PRECONDITIONS,
  strategy: STRATEGY,
});

// `service` is OpenTelemetry's `gcp.client.service` for the call's telemetry (Cloud Storage's is 'storage').
const presetFor = (idempotent: boolean): PresetRetryOptions =>
  Object.freeze({
    backoff: GCS_BACKOFF,
    deadlineMs: GCS_DEADLINE_MS,
    retryable: oneRetryLayer(GCS_TRANSIENT),
    idempotent,
    service: 'storage',
  });

// Built once: `retry(fn, gcs({ operation: 'objects.get' }))` is a table lookup and a shared
// frozen object, validated by the first retry() that gets it (constants, checked by a test).
// The pure marks let a bundler drop all of this from an app that never uses the Cloud Storage
// preset.
const GCS_SAFE = /* @__PURE__ */ presetFor(true);
const GCS_UNSAFE = /* @__PURE__ */ presetFor(false);

/**
 * Retry options for Cloud Storage requests, as a frozen `RetryOptions` to pass to `retry()`:
 *
 * - retries HTTP 408, 429 and every 5xx; gRPC DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, INTERNAL,
 *   UNKNOWN, UNAVAILABLE; socket timeouts and dropped connections (ECONNRESET, ETIMEDOUT,
 *   EPIPE, EAI_AGAIN, "socket hang up", undici's socket and timeout errors); and
 *   `errors[].reason` rateLimitExceeded, userRateLimitExceeded, backendError, internalError;
 * - waits `min(2^n + random_number_milliseconds/1000, 64)` s: backoff 1 s × 2 up to 64 s,
 *   jitter `{ additiveMs: 1000 }`; stops after 600 s;
 * - resends only what is safe: `idempotent` comes from the operation's row in the Cloud
 *   Storage idempotency table, the request's `preconditions`, and the `strategy`.
 *
 * Without an `operation` there is nothing to judge safety by: `strategy: 'always'` retries
 * (your call), `strategy: 'never'` does not, `idempotent` decides if you pass it, and otherwise
 * `gcs()` throws rather than guess.
 *
 * Every field can be overridden: pass any `RetryOptions` field (`backoff` merges field by
 * field). Everything is validated here, so a misspelled option or operation throws at this
 * call.
 *
 * @example
 * // Create-if-absent: ifGenerationMatch 0 makes the upload safe to resend.
 * await retry(
 *   () => bucket.file('report.csv').save(csv, { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } }),
 *   gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 } }),
 * );
 *
 * @throws {TypeError | RangeError} for an unknown operation, option or strategy, a bad value,
 *   no way to decide idempotency, or options that contradict each other.
 */
export function gcs(options: GcsOptions): PresetRetryOptions {
  // The common call, as the README writes it per call: gcs({ operation }) again. Options that
  // hold what this operation's last remembered ones held get their preset without being read
  // and judged again (util/literal-memo.ts); one per operation, so operations in turn all do.
  const shared = SHARED.get((options as { operation?: unknown } | undefined)?.operation);
  if (shared !== undefined && holdsLiteral(shared.literal, options)) return shared.last;
  const fields = readChecked('gcs', options === undefined ? {} : options, GCS_RULES);
  const preset = gcsPreset('gcs', fields);
  // Only for a shared preset (nothing overridden): options with overrides get their own at each
  // call. Not with preconditions: they decide the answer, and may change under one reference.
  if (overridesNothing(fields) && fields.preconditions === undefined) {
    const entry = SHARED.get(fields.operation) as Shared; // made by gcsPreset, which shared the preset
    rememberLiteral(entry.literal, options, fields);
    entry.last = preset;
  }
  return preset;
}

/**
 * By operation (`undefined`: none, under a strategy; the table is finite): the presets that
 * override nothing, one per answer, and the last gcs() options that got one, with that preset.
 */
type Shared = { safe?: PresetRetryOptions; unsafe?: PresetRetryOptions; readonly literal: LiteralMemo; last: PresetRetryOptions };
const SHARED = new Map<unknown, Shared>();

/**
 * The Cloud Storage preset for `fields`, options that `where` read already with rules that
 * include gcs()'s (`path` is what it calls them): the uploads build theirs here, so that their
 * errors name them, not gcs().
 *
 * @internal
 */
export function gcsPreset(where: string, fields: Readonly<Record<string, unknown>>, path = 'options'): PresetRetryOptions {
  // A caller's own `idempotent` (boolean or function) is among the overrides and wins.
  const safe = decideIdempotent(where, path, fields);
  const base = safe ? GCS_SAFE : GCS_UNSAFE;
  const { operation } = fields;
  // Nothing but the operation's own: one shared preset per operation and answer, so that
  // retry() keeps validating it once, as it does a shared preset.
  const sharing = overridesNothing(fields);
  const shared = sharing ? SHARED.get(operation) : undefined;
  const known = safe ? shared?.safe : shared?.unsafe;
  if (known !== undefined) return known;
  // The operation names the call for its telemetry (the span), unless the caller named it.
  const preset = buildPreset(where, base, { ...fields, name: fields.name ?? operation }, path);
  if (sharing) {
    // A new entry's literal holds nothing: its `last` is not given before gcs() remembers options.
    const entry = shared ?? { literal: emptyMemo(), last: preset };
    SHARED.set(operation, entry);
    if (safe) entry.safe = preset;
    else entry.unsafe = preset;
  }
  return preset;
}

/** The table's answer, or `true` as a placeholder when the caller passes `idempotent` (it wins). */
function decideIdempotent(where: string, path: string, fields: Readonly<Record<string, unknown>>): boolean {
  const { operation, preconditions } = fields;
  const chosen = fields.strategy as GcsRetryStrategy | undefined;
  if (fields.idempotent !== undefined) {
    if (operation !== undefined || preconditions !== undefined || chosen !== undefined) {
      throw new TypeError(
        `${where}: ${path}.idempotent decides by itself whether to resend; drop it, or drop operation, preconditions and strategy`,
      );
    }
    // Stryker disable next-line BooleanLiteral: equivalent. The caller's idempotent replaces the base preset's, so either base gives the same options.
    return true;
  }
  if (operation !== undefined) {
    return gcsIsIdempotent(operation as GcsOperation, preconditions as GcsPreconditions | undefined, chosen ?? 'conditional');
  }
  if (preconditions !== undefined) {
    throw new TypeError(`${where}: ${path}.preconditions mean nothing without ${path}.operation (e.g. 'objects.insert')`);
  }
  if (chosen === 'always') return true;
  if (chosen === 'never') return false;
  throw new TypeError(
    `${where}: ${path}.operation is required under strategy 'conditional' (the default): name the JSON API method, ` +
      "e.g. gcs({ operation: 'objects.get' }), so the preset can tell whether the request is safe to resend; " +
      "or decide yourself with strategy: 'always' or idempotent: true",
  );
}
