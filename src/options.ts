/**
 * Reads and validates `retry()` options into the complete configuration the loop runs on.
 * Every bad value is rejected here, before any attempt, with an error naming the option.
 */
import { type BackoffPolicy, DEFAULT_BACKOFF, assertBackoffPolicy } from './backoff.js';
import { describe } from './describe.js';
import { type RetryPredicate, isTransient } from './predicates.js';
import type { AttemptContext, AttemptThrottle, RetryBudget, RetryEvent, RetryOptions } from './retry.js';

/**
 * The default overall deadline, in milliseconds (the Python client library's choice for Cloud Storage).
 *
 * @example
 * await retry(call); // gives up DEFAULT_DEADLINE_MS (120 s) after the first attempt began
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
  readonly idempotent: boolean | ((ctx: AttemptContext) => boolean);
  readonly signal: AbortSignal | undefined;
  readonly onRetry: ((event: RetryEvent) => void) | undefined;
  readonly budget: RetryBudget | undefined;
  readonly throttle: AttemptThrottle | undefined;
  readonly rng: () => number;
}

const DEFAULT_CONFIG: RetryConfig = Object.freeze({
  backoff: DEFAULT_BACKOFF,
  maxAttempts: Number.POSITIVE_INFINITY,
  deadlineMs: DEFAULT_DEADLINE_MS,
  attemptTimeoutMs: Number.POSITIVE_INFINITY,
  retryable: isTransient,
  idempotent: true,
  signal: undefined,
  onRetry: undefined,
  budget: undefined,
  throttle: undefined,
  rng: Math.random,
});

// Frozen option objects (every preset returns one) are read once and remembered.
const readFrozen = new WeakMap<object, RetryConfig>();

/** Validates `options` and fills in defaults. Throws a TypeError/RangeError naming the bad option. */
export function readOptions(options: RetryOptions | undefined): RetryConfig {
  if (options === undefined) return DEFAULT_CONFIG;
  const remembered = readFrozen.get(options);
  if (remembered !== undefined) return remembered;
  const config = validate(options);
  if (Object.isFrozen(options)) readFrozen.set(options, config);
  return config;
}

const KNOWN_OPTIONS = new Set([
  'backoff',
  'maxAttempts',
  'deadlineMs',
  'attemptTimeoutMs',
  'retryable',
  'idempotent',
  'signal',
  'onRetry',
  'budget',
  'throttle',
  'rng',
]);

function validate(options: RetryOptions): RetryConfig {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`retry: options must be an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) {
      throw new TypeError(`retry: unknown option ${JSON.stringify(key)} (known: ${[...KNOWN_OPTIONS].join(', ')})`);
    }
  }
  const { maxAttempts, deadlineMs, attemptTimeoutMs, retryable, idempotent, signal, onRetry, budget, throttle, rng } =
    options;

  const backoff = options.backoff === undefined ? DEFAULT_BACKOFF : { ...DEFAULT_BACKOFF, ...options.backoff };
  if (options.backoff !== undefined) {
    if (typeof options.backoff !== 'object' || options.backoff === null) {
      throw new TypeError(`retry: options.backoff must be an object, got ${describe(options.backoff)}`);
    }
    assertBackoffPolicy(backoff, 'retry: options.backoff');
  }
  if (maxAttempts !== undefined && !(maxAttempts === Number.POSITIVE_INFINITY || (Number.isSafeInteger(maxAttempts) && maxAttempts >= 1))) {
    throw new RangeError(`retry: options.maxAttempts must be an integer >= 1 or Infinity, got ${describe(maxAttempts)}`);
  }
  if (deadlineMs !== undefined && !(typeof deadlineMs === 'number' && deadlineMs > 0)) {
    throw new RangeError(`retry: options.deadlineMs must be a number > 0 (Infinity for none), got ${describe(deadlineMs)}`);
  }
  if (attemptTimeoutMs !== undefined && !(typeof attemptTimeoutMs === 'number' && attemptTimeoutMs > 0)) {
    throw new RangeError(`retry: options.attemptTimeoutMs must be a number > 0, got ${describe(attemptTimeoutMs)}`);
  }
  const config: RetryConfig = {
    backoff,
    maxAttempts: maxAttempts ?? DEFAULT_CONFIG.maxAttempts,
    deadlineMs: deadlineMs ?? DEFAULT_CONFIG.deadlineMs,
    attemptTimeoutMs: attemptTimeoutMs ?? DEFAULT_CONFIG.attemptTimeoutMs,
    retryable: optionalFunction('retryable', retryable) ?? isTransient,
    idempotent: idempotent ?? true,
    signal,
    onRetry: optionalFunction('onRetry', onRetry),
    budget,
    throttle,
    rng: optionalFunction('rng', rng) ?? Math.random,
  };
  if (config.maxAttempts === Number.POSITIVE_INFINITY && config.deadlineMs === Number.POSITIVE_INFINITY) {
    throw new RangeError('retry: options.maxAttempts and options.deadlineMs are both Infinity: the loop would never give up');
  }
  if (typeof config.idempotent !== 'boolean' && typeof config.idempotent !== 'function') {
    throw new TypeError(`retry: options.idempotent must be a boolean or a function, got ${describe(idempotent)}`);
  }
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new TypeError(`retry: options.signal must be an AbortSignal, got ${describe(signal)}`);
  }
  if (budget !== undefined && !hasMethods(budget, ['record', 'canRetry'])) {
    throw new TypeError(`retry: options.budget must come from createRetryBudget() (record, canRetry), got ${describe(budget)}`);
  }
  if (throttle !== undefined && !hasMethods(throttle, ['admit', 'record', 'error'])) {
    throw new TypeError(
      `retry: options.throttle must come from createAdaptiveThrottle() (admit, record, error), got ${describe(throttle)}`,
    );
  }
  return config;
}

function optionalFunction<F>(name: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') {
    throw new TypeError(`retry: options.${name} must be a function, got ${describe(value)}`);
  }
  return value;
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function'
  );
}

function hasMethods(value: unknown, names: string[]): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
  );
}
