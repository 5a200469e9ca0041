/**
 * Reads and validates `retry()` options into the complete configuration the loop runs on.
 * Every bad value is rejected here, before any attempt, with an error naming the option.
 */
import { type BackoffPolicy, DEFAULT_BACKOFF, notAnOptionsObject, readBackoffPolicy } from './backoff.js';
import { describe } from './describe.js';
import { type RetryPredicate, isTransient } from './predicates.js';
import type { AttemptContext, AttemptThrottle, GiveUpEvent, RetryBudget, RetryEvent, RetryOptions, SuccessEvent } from './retry.js';

/**
 * The default overall deadline, in milliseconds (the Python client library's choice for Cloud Storage).
 *
 * @example
 * await retry(call); // gives up DEFAULT_DEADLINE_MS (120 s) after retry() was called
 */
export const DEFAULT_DEADLINE_MS = 120_000;

/** `RetryOptions` with every default filled in; what the loop reads. */
export interface RetryConfig {
  readonly backoff: BackoffPolicy;
  readonly maxAttempts: number;
  readonly deadlineMs: number;
  /** `Infinity` when there is no per-attempt limit. */
  readonly attemptTimeoutMs: number;
  readonly retryable: RetryPredicate;
  readonly idempotent: boolean | ((ctx: AttemptContext, error: unknown) => boolean);
  readonly retryOnResult: ((value: unknown, ctx: AttemptContext) => boolean) | undefined;
  readonly signal: AbortSignal | undefined;
  readonly onRetry: (event: RetryEvent) => void;
  /** undefined when not given: the success path then skips the clock read and the event. */
  readonly onSuccess: ((event: SuccessEvent) => unknown) | undefined;
  readonly onGiveUp: ((event: GiveUpEvent) => unknown) | undefined;
  readonly budget: RetryBudget | undefined;
  readonly throttle: AttemptThrottle | undefined;
  readonly rng: () => number;
  readonly unref: boolean;
}

// Frozen option objects (every preset returns one) are read once and remembered; the last
// one used is also kept aside, since a program tends to reuse the same preset call after call.
const readFrozen = new WeakMap<object, RetryConfig>();
let lastFrozen: object | undefined;
let lastConfig: RetryConfig;

/** Validates `options` and fills in defaults. Throws a TypeError/RangeError naming the bad option. */
export function readOptions(options: RetryOptions | undefined): RetryConfig {
  if (options === undefined) return DEFAULT_CONFIG;
  if (options === lastFrozen) return lastConfig;
  // Checked first: an unfrozen object is read afresh on every call (it may have changed).
  if (!Object.isFrozen(options)) return validate(options);
  let config = readFrozen.get(options);
  if (config === undefined) {
    config = validate(options);
    readFrozen.set(options, config);
  }
  lastFrozen = options;
  lastConfig = config;
  return config;
}

// A lookup object rather than a Set: `key in KNOWN` needs no allocation per call.
const KNOWN = {
  __proto__: null,
  backoff: 1,
  maxAttempts: 1,
  deadlineMs: 1,
  attemptTimeoutMs: 1,
  retryable: 1,
  idempotent: 1,
  retryOnResult: 1,
  signal: 1,
  onRetry: 1,
  onSuccess: 1,
  onGiveUp: 1,
  budget: 1,
  throttle: 1,
  rng: 1,
  unref: 1,
} as unknown as Record<string, 1>;

/** `retry: options<field> must <expected>, got <value>`, the shape of every option error. */
function invalid(Kind: typeof TypeError, field: string, expected: string, value: unknown): Error {
  return new Kind(`retry: options${field} must ${expected}, got ${describe(value)}`);
}

function validate(options: RetryOptions): RetryConfig {
  if (typeof options !== 'object' || options === null) throw invalid(TypeError, '', 'be an object', options);
  const kind = notAnOptionsObject(options);
  if (kind !== undefined) throw new TypeError(`retry: options must be a plain object, got ${kind}`);
  // Only own properties are options: a field inherited from a prototype (Object.prototype
  // polluted with `idempotent: true`, say) must not turn a POST into one sent three times.
  // for…in visits inherited keys too, so each key is checked; every value is read once.
  let backoffOption: unknown;
  let maxAttempts: unknown;
  let deadlineMs: unknown;
  let attemptTimeoutMs: unknown;
  let retryable: unknown;
  let idempotent: unknown;
  let signal: unknown;
  let onRetry: unknown;
  let retryOnResult: unknown;
  let onSuccess: unknown;
  let onGiveUp: unknown;
  let budget: unknown;
  let throttle: unknown;
  let rng: unknown;
  let unref: unknown;
  for (const key in options) {
    if (!Object.hasOwn(options, key)) continue;
    const value: unknown = options[key as keyof RetryOptions];
    switch (key) {
      case 'backoff': backoffOption = value; break;
      case 'maxAttempts': maxAttempts = value; break;
      case 'deadlineMs': deadlineMs = value; break;
      case 'attemptTimeoutMs': attemptTimeoutMs = value; break;
      case 'retryable': retryable = value; break;
      case 'idempotent': idempotent = value; break;
      case 'signal': signal = value; break;
      case 'onRetry': onRetry = value; break;
      case 'retryOnResult': retryOnResult = value; break;
      case 'onSuccess': onSuccess = value; break;
      case 'onGiveUp': onGiveUp = value; break;
      case 'budget': budget = value; break;
      case 'throttle': throttle = value; break;
      case 'rng': rng = value; break;
      case 'unref': unref = value; break;
      default:
        throw new TypeError(`retry: unknown option ${JSON.stringify(key)} (known: ${Object.keys(KNOWN).join(', ')})`);
    }
  }

  let backoff = DEFAULT_BACKOFF;
  if (backoffOption !== undefined) {
    if (typeof backoffOption !== 'object' || backoffOption === null) {
      throw invalid(TypeError, '.backoff', 'be an object', backoffOption);
    }
    backoff = readBackoffPolicy(backoffOption, 'retry: options.backoff', DEFAULT_BACKOFF);
  }
  if (maxAttempts !== undefined && !(maxAttempts === Infinity || (Number.isSafeInteger(maxAttempts) && (maxAttempts as number) >= 1))) {
    throw invalid(RangeError, '.maxAttempts', 'be an integer >= 1 or Infinity', maxAttempts);
  }
  if (deadlineMs !== undefined && !(typeof deadlineMs === 'number' && deadlineMs > 0)) {
    throw invalid(RangeError, '.deadlineMs', 'be a number > 0 (Infinity for none)', deadlineMs);
  }
  if (attemptTimeoutMs !== undefined && !(typeof attemptTimeoutMs === 'number' && attemptTimeoutMs > 0)) {
    throw invalid(RangeError, '.attemptTimeoutMs', 'be a number > 0', attemptTimeoutMs);
  }
  if (unref !== undefined && typeof unref !== 'boolean') throw invalid(TypeError, '.unref', 'be a boolean', unref);
  const config = makeConfig(
    backoff,
    (maxAttempts as number | undefined) ?? Infinity,
    (deadlineMs as number | undefined) ?? DEFAULT_DEADLINE_MS,
    (attemptTimeoutMs as number | undefined) ?? Infinity,
    optionalFunction('retryable', retryable as RetryPredicate | undefined) ?? isTransient,
    (idempotent as RetryConfig['idempotent'] | undefined) ?? true,
    optionalFunction('retryOnResult', retryOnResult as RetryConfig['retryOnResult']),
    signal as AbortSignal | undefined,
    optionalFunction('onRetry', onRetry as RetryConfig['onRetry'] | undefined) ?? ignoreEvent,
    optionalFunction('onSuccess', onSuccess as RetryConfig['onSuccess']),
    optionalFunction('onGiveUp', onGiveUp as RetryConfig['onGiveUp']),
    budget as RetryBudget | undefined,
    throttle as AttemptThrottle | undefined,
    optionalFunction('rng', rng as (() => number) | undefined) ?? Math.random,
    (unref as boolean | undefined) ?? false,
  );
  if (config.maxAttempts === Infinity && config.deadlineMs === Infinity) {
    throw new RangeError('retry: options.maxAttempts and options.deadlineMs are both Infinity: the loop would never give up');
  }
  if (typeof config.idempotent !== 'boolean' && typeof config.idempotent !== 'function') {
    throw invalid(TypeError, '.idempotent', 'be a boolean or a function', idempotent);
  }
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw invalid(TypeError, '.signal', 'be an AbortSignal (aborted, addEventListener, removeEventListener)', signal);
  }
  if (budget !== undefined && !hasMethods(budget, ['record', 'canRetry'])) {
    throw invalid(TypeError, '.budget', 'come from createRetryBudget() (record, canRetry)', budget);
  }
  if (throttle !== undefined && !hasMethods(throttle, ['admit', 'record', 'error'])) {
    throw invalid(TypeError, '.throttle', 'come from createAdaptiveThrottle() (admit, record, error)', throttle);
  }
  return config;
}

// One constructor for every config, the default included, so the loop's property reads
// always meet objects of the same shape.
function makeConfig(
  backoff: BackoffPolicy,
  maxAttempts: number,
  deadlineMs: number,
  attemptTimeoutMs: number,
  retryable: RetryPredicate,
  idempotent: RetryConfig['idempotent'],
  retryOnResult: RetryConfig['retryOnResult'],
  signal: AbortSignal | undefined,
  onRetry: (event: RetryEvent) => void,
  onSuccess: RetryConfig['onSuccess'],
  onGiveUp: RetryConfig['onGiveUp'],
  budget: RetryBudget | undefined,
  throttle: AttemptThrottle | undefined,
  rng: () => number,
  unref: boolean,
): RetryConfig {
  return { backoff, maxAttempts, deadlineMs, attemptTimeoutMs, retryable, idempotent, retryOnResult, signal, onRetry, onSuccess, onGiveUp, budget, throttle, rng, unref };
}

/** The configuration of `retry(fn)` without options. */
export const DEFAULT_CONFIG = /* @__PURE__ */ makeConfig(
  DEFAULT_BACKOFF,
  Infinity,
  DEFAULT_DEADLINE_MS,
  Infinity,
  isTransient,
  true,
  undefined,
  undefined,
  ignoreEvent,
  undefined,
  undefined,
  undefined,
  undefined,
  Math.random,
  false,
);

/** The default onRetry: every sleep reports to a hook, so the loop has no case without one. */
function ignoreEvent(): void {}

function optionalFunction<F>(name: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw invalid(TypeError, `.${name}`, 'be a function', value);
  return value;
}

/** Has what retry() uses of a signal: its state, and a listener it can add and remove again. */
function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function' &&
    typeof (value as AbortSignal).removeEventListener === 'function'
  );
}

function hasMethods(value: unknown, names: string[]): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
  );
}
