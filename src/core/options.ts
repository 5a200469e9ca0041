/**
 * Reads and validates `retry()` options into the complete configuration the loop runs on.
 * Every bad value is rejected here, before any attempt, with an error naming the option.
 */
import { isTransient } from '../classify/predicates.js';
import type {
  AttemptContext,
  AttemptMode,
  CallEvent,
  BackoffPolicy,
  GiveUpEvent,
  RetryEvent,
  RetryOptions,
  RetryPredicate,
  SuccessEvent,
  Telemetry,
  TelemetryCall,
} from '../types.js';
import {
  BOOLEAN,
  FUNCTION,
  type FieldRule,
  type FieldRules,
  INSTANT,
  SIGNAL,
  checkOptions,
  hasMethods,
  isFunction,
} from '../util/check.js';
import { isBag } from '../util/cause-chain.js';
import { CLOCK_RULE } from '../runtime/clock.js';
import { SYSTEM_TIMERS, type TimerQueue, timersOf } from '../runtime/timer-queue.js';
import { DEFAULT_BACKOFF, readBackoffPolicy } from './backoff.js';
import { ATTEMPT_TIMEOUT_RULE, type Fleet, type Schedule, readTimeoutGrowth, whyEndless } from './schedule.js';

/**
 * The default overall deadline, in milliseconds (the Python client library's choice for Cloud Storage).
 *
 * @example
 * await retry(call); // gives up DEFAULT_DEADLINE_MS (120 s) after retry() was called
 */
export const DEFAULT_DEADLINE_MS = 120_000;

/**
 * `RetryOptions` with every default filled in; what the loop reads. The backoff's fields are
 * the config's own (it is a `BackoffPolicy`): a call made with an options literal keeps one
 * object for both, not two.
 */
export interface RetryConfig extends Readonly<BackoffPolicy> {
  readonly maxAttempts: number;
  readonly deadlineMs: number;
  /** `Infinity` when there is no fixed per-attempt limit (none, or a growing one in `schedule`). */
  readonly attemptTimeoutMs: number;
  readonly retryable: RetryPredicate;
  readonly idempotent: boolean | ((error: unknown, ctx: AttemptContext) => boolean);
  readonly retryOnResult: ((value: unknown, ctx: AttemptContext) => boolean) | undefined;
  readonly signal: AbortSignal | undefined;
  readonly onRetry: (event: RetryEvent) => unknown;
  /** undefined when not given: the success path then reads no clock and makes no event. */
  readonly onSuccess: ((event: SuccessEvent) => unknown) | undefined;
  readonly onGiveUp: ((event: GiveUpEvent) => unknown) | undefined;
  /** undefined when not given: no event object is made. */
  readonly onEvent: ((event: CallEvent) => void) | undefined;
  /** The state shared with other calls (a budget, a throttle, a gate); undefined without any, the common case. */
  readonly fleet: Fleet | undefined;
  readonly rng: () => number;
  readonly unref: boolean;
  /** The timers of the `clock` option: the call reads time and queues its waits there. */
  readonly timers: TimerQueue;
  /** How each attempt is made (the `hedge` option, or telemetry's); undefined for one request per attempt. */
  readonly mode: AttemptMode | undefined;
  /**
   * With the `telemetry` option, the checked options themselves (see TelemetrySetup); undefined
   * without one.
   */
  readonly telemetry: TelemetrySetup | undefined;
  /** The schedule options (a growing attempt timeout…); undefined without any, the common case. */
  readonly schedule: Schedule | undefined;
  /** The entry point the options were given to, named by the errors about them. */
  readonly where: string;
}

/**
 * What a call with telemetry keeps of its options: the record validateOptions filled, which
 * holds the telemetry, and the `name` and `service` it is told at each call's start. That record
 * is kept as it is (no copy made, nothing added to a call without telemetry; the bytes of a copy
 * would be in every bundle with retry()), so the telemetry is handed the other checked options
 * too; `TelemetryCall` names only these two.
 */
export interface TelemetrySetup extends TelemetryCall {
  readonly telemetry: Telemetry;
}

/** A name, for telemetry. */
const NAME: FieldRule = { ok: (v) => typeof v === 'string', rule: 'be a string' };

/** Every option of `retry()` and what it must be; also the list an unknown option is shown. */
export const RETRY_RULES = {
  // A function passes here, and readBackoffPolicy refuses it as not a plain object.
  backoff: { ok: isBag, rule: 'be an object' },
  maxAttempts: {
    ok: (v) => v === Infinity || (Number.isSafeInteger(v) && (v as number) >= 1),
    rule: 'be a safe integer >= 1 or Infinity',
    range: true,
  },
  deadlineMs: { ok: (v) => typeof v === 'number' && v > 0, rule: 'be a number > 0 (Infinity for none)', range: true },
  attemptTimeoutMs: ATTEMPT_TIMEOUT_RULE,
  retryable: FUNCTION,
  idempotent: { ok: (v) => typeof v === 'boolean' || isFunction(v), rule: 'be a boolean or a function' },
  retryOnResult: FUNCTION,
  delay: FUNCTION,
  countsAsAttempt: FUNCTION,
  signal: SIGNAL,
  onRetry: FUNCTION,
  onSuccess: FUNCTION,
  onGiveUp: FUNCTION,
  onEvent: FUNCTION,
  budget: { ok: (v) => hasMethods(v, ['record', 'canRetry']), rule: 'come from createRetryBudget() (record, canRetry)' },
  throttle: { ok: (v) => hasMethods(v, ['admit', 'record', 'error']), rule: 'come from createAdaptiveThrottle() (admit, record, error)' },
  gate: { ok: (v) => hasMethods(v, ['waitMs', 'hold']), rule: 'come from createRetryAfterGate() (waitMs, hold)' },
  rng: FUNCTION,
  unref: BOOLEAN,
  clock: CLOCK_RULE,
  hedge: { ok: (v) => hasMethods(v, ['run']), rule: 'come from hedging() (e.g. hedge: hedging({ delayMs: 50 }))' },
  telemetry: FUNCTION,
  name: NAME,
  service: NAME,
} satisfies FieldRules;

/**
 * Checks `options` and fills in defaults, uncached; `where` names the caller in the errors
 * (`withRetry` checks its options once, when wrapping), `path` what it calls the options.
 */
export function validateOptions(options: RetryOptions, where: string, path = 'options'): RetryConfig {
  return configOf(checkFields(options, where, path), options, where, path);
}

/** Every option of `retry()`, each field present (undefined when not given). */
export type Fields = { [K in keyof Required<RetryOptions>]: RetryOptions[K] | undefined };

/** Checks `options` against RETRY_RULES (errors name `where` and `path`) and returns their values by field. */
export function checkFields(options: RetryOptions, where: string, path: string): Fields {
  const o = noFields();
  checkOptions(where, options, RETRY_RULES, o, path);
  return o;
}

/**
 * The config of `options` whose every field passed RETRY_RULES already, as part of a wider
 * table (retryFetch's FETCH_RULES) or because the library made it (a wrapped predicate): no
 * rule is asked again. Only the backoff's and a growing timeout's own fields are read here, as
 * they are for any options.
 */
export function configOfChecked<T>(options: RetryOptions<T>, where: string): RetryConfig {
  const given = options as RetryOptions;
  const o = noFields();
  // Own fields only, as the check reads them: a polluted Object.prototype sets nothing.
  for (const key in o) if (Object.hasOwn(given, key)) o[key as keyof Fields] = given[key as keyof Fields] as never;
  return configOf(o, given, where, 'options');
}

/** Every field present from the start, each undefined: one object shape, filled by the checker. */
function noFields(): Fields {
  // A copy of one object (a clone V8 makes in one step, of the same shape), not 24 fields written out.
  return { ...NO_FIELDS };
}

const NO_FIELDS: Fields = /* @__PURE__ */ Object.fromEntries(Object.keys(RETRY_RULES).map((key) => [key, undefined])) as Fields;

/** The config of checked fields `o`, read from `options` (for instant()'s marker) under `where` and `path`. */
export function configOf(o: Fields, options: RetryOptions, where: string, path: string): RetryConfig {
  const timeout = o.attemptTimeoutMs;
  const growth = typeof timeout === 'object' ? readTimeoutGrowth(timeout, where, `${path}.attemptTimeoutMs`) : undefined;
  const backoff = o.backoff === undefined ? DEFAULT_BACKOFF : readBackoffPolicy(o.backoff, where, `${path}.backoff`, DEFAULT_BACKOFF);
  const { delay, countsAsAttempt, budget, throttle, gate } = o;
  // Set by instant() (tenacious/testing): only `true` turns it on.
  const instant = (options as { [INSTANT]?: unknown })[INSTANT] === true || undefined;
  // A decorrelated jitter needs the previous wait, which the call keeps for a schedule.
  const scheduled = growth || delay || countsAsAttempt || backoff.jitter === 'decorrelated' || instant;
  // In makeConfig's order (a spread or another order made a temporary whose numbers V8 boxed,
  // and the config kept those boxes: +25 B per config, bench/memory.ts).
  const config = makeConfig({
    initialDelayMs: backoff.initialDelayMs,
    multiplier: backoff.multiplier,
    maxDelayMs: backoff.maxDelayMs,
    jitter: backoff.jitter,
    maxAttempts: o.maxAttempts ?? Infinity,
    deadlineMs: o.deadlineMs ?? DEFAULT_DEADLINE_MS,
    attemptTimeoutMs: growth === undefined ? ((timeout as number | undefined) ?? Infinity) : Infinity,
    retryable: o.retryable ?? isTransient,
    idempotent: o.idempotent ?? true,
    retryOnResult: o.retryOnResult as RetryConfig['retryOnResult'],
    signal: o.signal,
    onRetry: o.onRetry ?? ignoreEvent,
    onSuccess: o.onSuccess as RetryConfig['onSuccess'],
    onGiveUp: o.onGiveUp,
    onEvent: o.onEvent,
    fleet: budget || throttle || gate ? { budget, throttle, gate } : undefined,
    rng: o.rng ?? Math.random,
    unref: o.unref ?? false,
    timers: o.clock === undefined ? SYSTEM_TIMERS : timersOf(o.clock),
    mode: o.hedge,
    telemetry: o.telemetry && (o as TelemetrySetup),
    schedule: scheduled ? { timeout: growth, delay, countsAsAttempt, instant } : undefined,
    where,
  });
  const endless = whyEndless(config, path);
  if (endless !== undefined) throw new RangeError(`${where}: ${endless}: the loop would never give up`);
  return config;
}

// One constructor for every config, the default included, so the loop's property reads
// always meet objects of one shape: the same fields in the same order.
function makeConfig(fields: RetryConfig): RetryConfig {
  return {
    initialDelayMs: fields.initialDelayMs,
    multiplier: fields.multiplier,
    maxDelayMs: fields.maxDelayMs,
    jitter: fields.jitter,
    maxAttempts: fields.maxAttempts,
    deadlineMs: fields.deadlineMs,
    attemptTimeoutMs: fields.attemptTimeoutMs,
    retryable: fields.retryable,
    idempotent: fields.idempotent,
    retryOnResult: fields.retryOnResult,
    signal: fields.signal,
    onRetry: fields.onRetry,
    onSuccess: fields.onSuccess,
    onGiveUp: fields.onGiveUp,
    onEvent: fields.onEvent,
    fleet: fields.fleet,
    rng: fields.rng,
    unref: fields.unref,
    timers: fields.timers,
    mode: fields.mode,
    telemetry: fields.telemetry,
    schedule: fields.schedule,
    where: fields.where,
  };
}

// V8 gives a field that has only ever held numbers a mutable box of its own in every object
// (16 bytes each, Infinity included). One config whose numbers are all undefined, made before
// any other, turns those fields into plain references for good: a config made per call (from
// options whose values change at each call, a signal of its own…) then stores Infinity and the
// caller's numbers without copying them.
makeConfig({} as RetryConfig);

/** The configuration of `retry(fn)` without options. */
export const DEFAULT_CONFIG = /* @__PURE__ */ validateOptions({}, 'retry');

/** The default onRetry: every sleep reports to a hook, so the loop has no case without one. */
function ignoreEvent(): void {}
