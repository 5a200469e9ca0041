/**
 * The Identity and Access Management preset: what Google's IAM retry guidance says to retry,
 * how long to wait, and when to stop, as a frozen `RetryOptions`; and `iamReadModifyWrite`,
 * which reruns a whole read → modify → write of a policy when another writer got there first.
 *
 * Source: IAM, "Retry failed requests" (https://cloud.google.com/iam/docs/retry-strategy).
 */
import type { RetryPredicate } from '../types.js';
import { networkError, timedOut } from '../classify/network.js';
import { aborted, anyOf, grpcCode, httpStatus, oneRetryLayer } from '../classify/predicates.js';
import type { AttemptContext, RetryOptions } from '../types.js';
import { readOptions } from '../core/read-options.js';
import { startCall } from '../core/retry.js';
import { BOOLEAN, type FieldRules, mustError, readChecked } from '../util/check.js';
import { type PresetRetryOptions, buildPreset, freezeBackoff, presetRules } from './preset.js';

/**
 * What every {@link iam} call may pass: any `RetryOptions` field to override, and the
 * `maxDelayMs` shorthand.
 *
 * @example
 * const common: IamCommonOptions = { maxDelayMs: 64_000, maxAttempts: 8 };
 */
export interface IamCommonOptions extends Omit<RetryOptions, 'retryable'> {
  /**
   * Shorthand for `backoff.maxDelayMs`, the cap on any one wait. Default 32 000 (IAM's page:
   * "typically 32 or 64 seconds"); any finite value > 0 is accepted.
   */
  maxDelayMs?: number;
}

/**
 * Options of {@link iam}: `retryNotFound` or your own `retryable` (not both: your predicate
 * replaces the preset's, so the flag would do nothing, and `iam()` throws), plus any
 * `RetryOptions` field to override.
 *
 * @example
 * const options: IamOptions = { retryNotFound: true, maxDelayMs: 64_000, maxAttempts: 8 };
 * await retry(call, iam(options));
 */
export type IamOptions =
  | (IamCommonOptions & {
      /**
       * Also retry HTTP 404 / gRPC NOT_FOUND. IAM is eventually consistent: a service account or
       * role created a moment ago may not be visible yet. Default `false`: a 404 usually means
       * the name is wrong, and retrying it only delays the error by the whole deadline.
       */
      retryNotFound?: boolean | undefined;
      retryable?: undefined;
    })
  | (IamCommonOptions & {
      retryNotFound?: undefined;
      /** Your own classification, replacing the preset's. */
      retryable: RetryPredicate;
    });

/** IAM's backoff: `min(2^n + random_fraction, 32)` seconds, i.e. 1 s × 2 up to 32 s plus up to 1 s. */
const IAM_BACKOFF = /* @__PURE__ */ freezeBackoff({
  initialDelayMs: 1000,
  multiplier: 2,
  maxDelayMs: 32_000,
  jitter: { additiveMs: 1000 },
});

/** IAM's example deadline for a pipeline that is not time-critical: 300 s. */
const IAM_DEADLINE_MS = 300_000;

/*
 * HTTP 500/502/503/504 and their gRPC counterparts (INTERNAL and UNKNOWN → 500, UNAVAILABLE →
 * 503, DEADLINE_EXCEEDED → 504), dropped connections, and timeouts (a timed-out attempt is
 * DEADLINE_EXCEEDED seen from the client). Not 409: alone, ABORTED means "re-read first" (see
 * iamReadModifyWrite) and ALREADY_EXISTS means "done already". Not 429: the page lists only
 * the 5xx, and retries of a quota error spend the quota the page warns about.
 */
const IAM_TRANSIENT = /* @__PURE__ */ anyOf(
  /* @__PURE__ */ httpStatus(500, 502, 503, 504),
  /* @__PURE__ */ grpcCode('INTERNAL', 'UNKNOWN', 'UNAVAILABLE', 'DEADLINE_EXCEEDED'),
  networkError,
  timedOut,
);
const IAM_TRANSIENT_OR_NOT_FOUND = /* @__PURE__ */ anyOf(
  IAM_TRANSIENT,
  /* @__PURE__ */ httpStatus(404),
  /* @__PURE__ */ grpcCode('NOT_FOUND'),
);

/** What iam() and iamReadModifyWrite() read: retry()'s options, `maxDelayMs` and `retryNotFound`. */
const IAM_RULES: FieldRules = /* @__PURE__ */ presetRules({ retryNotFound: BOOLEAN });

// `service` is OpenTelemetry's `gcp.client.service` for the call's telemetry.
const presetFor = (retryable: RetryPredicate): PresetRetryOptions =>
  Object.freeze({ backoff: IAM_BACKOFF, deadlineMs: IAM_DEADLINE_MS, retryable: oneRetryLayer(retryable), service: 'iam' });

// The presets without overrides are built once and shared: they are frozen, and retry() keeps
// their validated form, so `retry(fn, iam())` costs no validation after the first call. (They
// are constants, checked by a test rather than at every import.) The pure marks let a
// bundler drop all of this from an app that never uses the IAM preset.
const IAM = /* @__PURE__ */ presetFor(IAM_TRANSIENT);
const IAM_WITH_NOT_FOUND = /* @__PURE__ */ presetFor(IAM_TRANSIENT_OR_NOT_FOUND);
const IAM_READ_MODIFY_WRITE = /* @__PURE__ */ presetFor(/* @__PURE__ */ anyOf(IAM_TRANSIENT, aborted));
const IAM_READ_MODIFY_WRITE_WITH_NOT_FOUND = /* @__PURE__ */ presetFor(/* @__PURE__ */ anyOf(IAM_TRANSIENT_OR_NOT_FOUND, aborted));

/**
 * Retry options for calls to the IAM API (and other Google APIs that follow its guidance), as
 * a frozen `RetryOptions` to pass to `retry()`:
 *
 * - retries HTTP 500, 502, 503, 504; gRPC INTERNAL, UNKNOWN, UNAVAILABLE, DEADLINE_EXCEEDED;
 *   dropped connections and timeouts; with `retryNotFound`, also 404 / NOT_FOUND;
 * - never a lone 409: for 409 ABORTED use {@link iamReadModifyWrite};
 * - waits `min(2^n + random_fraction, 32)` s: backoff 1 s × 2 up to 32 s, jitter
 *   `{ additiveMs: 1000 }`; stops after 300 s.
 *
 * Every field can be overridden: pass any `RetryOptions` field (`backoff` merges field by
 * field). Everything is validated here, so a misspelled option throws at this call.
 *
 * @example
 * const policy = await retry(
 *   ({ signal }) => iamClient.request({ url, method: 'POST', signal, retry: false }),
 *   iam({ retryNotFound: true, maxDelayMs: 64_000 }),
 * );
 *
 * @throws {TypeError | RangeError} for an unknown option or a bad value, naming it.
 */
export function iam(options?: IamOptions): PresetRetryOptions {
  return iamPreset('iam', options, IAM, IAM_WITH_NOT_FOUND);
}

/**
 * iam() and iamReadModifyWrite() read the same options, each under its own name (`where`),
 * into one of their shared presets.
 */
function iamPreset(
  where: string,
  options: IamOptions | undefined,
  plain: PresetRetryOptions,
  withNotFound: PresetRetryOptions,
): PresetRetryOptions {
  if (options === undefined) return plain;
  const fields = readChecked(where, options, IAM_RULES);
  const { retryNotFound } = fields;
  if (retryNotFound !== undefined && fields.retryable !== undefined) {
    // The caller's predicate replaces the preset's, so the flag would silently do nothing.
    throw new TypeError(`${where}: options.retryNotFound has no effect when options.retryable is given; drop one of them`);
  }
  return buildPreset(where, retryNotFound === true ? withNotFound : plain, fields);
}

/**
 * The three steps of a read-modify-write; see {@link iamReadModifyWrite}.
 *
 * @example
 * const steps: ReadModifyWriteSteps<Policy, Policy> = {
 *   read: ({ signal }) => getIamPolicy(resource, { signal }),
 *   modify: (policy) => (hasViewer(policy) ? undefined : withViewer(policy)),
 *   write: (policy, { signal }) => setIamPolicy(resource, policy, { signal }),
 * };
 */
export interface ReadModifyWriteSteps<P, R> {
  /** Reads the current value (e.g. `getIamPolicy`), with its etag. */
  read: (ctx: AttemptContext) => P | PromiseLike<P>;
  /** Returns the value to write, or `undefined` when nothing needs to change (then nothing is written). */
  modify: (current: P) => P | undefined | Promise<P | undefined>;
  /** Writes the value (e.g. `setIamPolicy` carrying the etag that was read). */
  write: (next: P, ctx: AttemptContext) => R | PromiseLike<R>;
}

/**
 * Runs `read` → `modify` → `write` as one unit under one deadline, and reruns the **whole
 * unit** when the write loses a race: HTTP 409 whose status is `ABORTED`, or gRPC ABORTED
 * (the etag it carried is stale, so resending the same write would fail again). The
 * {@link iam} transient errors of any step rerun the unit too. A 409 `ALREADY_EXISTS` is not
 * retried.
 *
 * Resolves with `write`'s result, or `undefined` when `modify` returned `undefined` (nothing to
 * change: nothing is written). `read` and `write` receive the attempt's context; pass its
 * `signal` on to the client.
 *
 * `options` are those of {@link iam} (backoff 1 s × 2 up to 32 s, jitter `{ additiveMs: 1000 }`,
 * deadline 300 s, `retryNotFound`, and any `RetryOptions` field). A `retryable` given here
 * replaces the whole classification, ABORTED included.
 *
 * @example
 * await iamReadModifyWrite({
 *   read: ({ signal }) => getIamPolicy(resource, { signal }),
 *   modify: (policy) => addBinding(policy, 'roles/viewer', 'user:ada@example.com'), // undefined if present
 *   write: (policy, { signal }) => setIamPolicy(resource, policy, { signal }), // policy.etag guards it
 * });
 *
 * The returned promise rejects with a `TypeError`/`RangeError`, before anything runs (as
 * retry()'s does), when `steps` does not hold three functions or an option is bad (as in {@link iam}).
 */
export function iamReadModifyWrite<P, R>(steps: ReadModifyWriteSteps<P, R>, options?: IamOptions): Promise<R | undefined> {
  let preset: PresetRetryOptions;
  try {
    checkSteps(steps);
    preset = iamPreset('iamReadModifyWrite', options, IAM_READ_MODIFY_WRITE, IAM_READ_MODIFY_WRITE_WITH_NOT_FOUND);
  } catch (error) {
    return Promise.reject(error);
  }
  // Called as methods, so steps given as an object with methods keep their `this`.
  const unit = async (ctx: AttemptContext): Promise<R | undefined> => {
    const current = await steps.read(ctx);
    const next = await steps.modify(current);
    if (next === undefined) return undefined;
    return steps.write(next, ctx);
  };
  // The preset was read when it was made: its config is found, not read again.
  return startCall(unit, readOptions(preset, 'iamReadModifyWrite')).settled;
}

/**
 * The steps are not options but the unit's code: an object with methods is welcome (a class
 * instance's come from its prototype), so they are read as properties, not as own fields.
 */
function checkSteps(steps: unknown): void {
  if (typeof steps !== 'object' || steps === null)
    throw mustError('iamReadModifyWrite: steps', 'be an object { read, modify, write }', steps);
  for (const key of ['read', 'modify', 'write']) {
    const step = (steps as Record<string, unknown>)[key];
    if (typeof step !== 'function') throw mustError(`iamReadModifyWrite: steps.${key}`, 'be a function', step);
  }
}
