/**
 * Reads and validates `hedge()` options, before any attempt, with errors that name the option
 * and the value it got (the same shape as `retry()`'s).
 *
 * @internal
 */
import { describe, isFiniteNumber } from '../util/check.js';
import { type Hedger, hedgerState } from './hedger.js';
import { DEFAULT_DEADLINE_MS } from '../core/options.js';
import { isTransient } from '../classify/predicates.js';
import type { AttemptContext, RetryBudget, RetryPredicate } from '../types.js';

/**
 * Passed to `onHedge` just before an extra attempt starts.
 *
 * @example
 * hedge(call, { delayMs: 50, onHedge: ({ attempt, reason }) => metrics.count('hedge', { attempt, reason }) });
 */
export interface HedgeEvent {
  /** The attempt about to start (2 for the first hedge). */
  readonly attempt: number;
  /** `'delay'`: the earlier attempts were slow; `'error'`: one failed with a transient error. */
  readonly reason: 'delay' | 'error';
  /** The transient error that triggered it, for reason `'error'`. */
  readonly error: unknown;
  /** The hedging delay of this call, in milliseconds. */
  readonly delayMs: number;
  /** Milliseconds since the first attempt started. */
  readonly elapsedMs: number;
}

/**
 * Options of `hedge()`. Either `delayMs` or `hedger` sets the hedging delay; bad values throw
 * before anything runs.
 *
 * @example
 * const options: HedgeOptions = { hedger: createHedger(), maxAttempts: 2, deadlineMs: 5_000 };
 * const page = await hedge(({ signal }) => fetch(url, { signal }), options);
 */
export interface HedgeOptions {
  /** A fixed hedging delay in milliseconds (>= 0). Takes precedence over the hedger's adaptive one. */
  delayMs?: number;
  /** Shared adaptive delay and extra-load limit (see `createHedger`). */
  hedger?: Hedger;
  /** Attempts in all, the first included, so also the most in flight at once. Default 2. */
  maxAttempts?: number;
  /** Overall time limit from the first attempt's start, in milliseconds. Default 120 000. */
  deadlineMs?: number;
  /** Is this error transient? A transient error starts the next attempt at once; any other ends the call. Default `isTransient`. */
  retryable?: RetryPredicate;
  /** Is the operation safe to send twice? Default `true`. Asked once, with the first attempt's context, before it starts; when false, exactly one attempt is made. */
  idempotent?: boolean | ((ctx: AttemptContext) => boolean);
  /** Aborting it rejects at once with `signal.reason` and aborts every attempt. */
  signal?: AbortSignal;
  /** Called before each extra attempt; an exception it throws is ignored. */
  onHedge?: (event: HedgeEvent) => void;
  /** A retry budget shared with other calls: each extra attempt costs a token, as a failure does. */
  budget?: RetryBudget;
}

/** `HedgeOptions` with every default filled in. */
export interface HedgeConfig {
  readonly delayMs: number | undefined;
  readonly hedger: ReturnType<typeof hedgerState>;
  readonly maxAttempts: number;
  readonly deadlineMs: number;
  readonly retryable: RetryPredicate;
  readonly idempotent: boolean | ((ctx: AttemptContext) => boolean);
  readonly signal: AbortSignal | undefined;
  readonly onHedge: ((event: HedgeEvent) => void) | undefined;
  readonly budget: RetryBudget | undefined;
}

const KNOWN = ['delayMs', 'hedger', 'maxAttempts', 'deadlineMs', 'retryable', 'idempotent', 'signal', 'onHedge', 'budget'];

function invalid(Kind: typeof TypeError, field: string, rule: string, value: unknown): Error {
  return new Kind(`hedge: options.${field} must ${rule}, got ${describe(value)}`);
}

function isFn(value: unknown): value is (...args: never[]) => unknown {
  return typeof value === 'function';
}

function hasMethods(value: unknown, names: string[]): boolean {
  return typeof value === 'object' && value !== null && names.every((n) => isFn((value as Record<string, unknown>)[n]));
}

/** Validates `options` and fills in defaults. Throws a TypeError/RangeError naming the bad option. */
export function readHedgeOptions(options: unknown): HedgeConfig {
  if (typeof options !== 'object' || options === null) throw new TypeError(`hedge: options must be an object, got ${describe(options)}`);
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) throw new TypeError(`hedge: unknown option ${JSON.stringify(key)} (known: ${KNOWN.join(', ')})`);
  }
  // Own properties only: an option inherited from a prototype is not an option.
  const o = options as Record<string, unknown>;
  const own = (key: string): unknown => (Object.hasOwn(o, key) ? o[key] : undefined);
  const delayMs = own('delayMs');
  const hedger = own('hedger');
  const maxAttempts = own('maxAttempts') ?? 2;
  const deadlineMs = own('deadlineMs') ?? DEFAULT_DEADLINE_MS;
  const retryable = own('retryable') ?? isTransient;
  const idempotent = own('idempotent') ?? true;
  const signal = own('signal');
  const onHedge = own('onHedge');
  const budget = own('budget');
  if (delayMs !== undefined && !(isFiniteNumber(delayMs) && delayMs >= 0)) {
    throw invalid(RangeError, 'delayMs', 'be a finite number >= 0', delayMs);
  }
  const state = hedgerState(hedger);
  if (hedger !== undefined && state === undefined) throw invalid(TypeError, 'hedger', 'come from createHedger()', hedger);
  if (delayMs === undefined && hedger === undefined) {
    throw new TypeError('hedge: options.delayMs or options.hedger must be given (the hedging delay), got neither');
  }
  if (!(Number.isSafeInteger(maxAttempts) && (maxAttempts as number) >= 1)) {
    throw invalid(RangeError, 'maxAttempts', 'be an integer >= 1', maxAttempts);
  }
  if (!(typeof deadlineMs === 'number' && deadlineMs > 0)) {
    throw invalid(RangeError, 'deadlineMs', 'be a number > 0 (Infinity for none)', deadlineMs);
  }
  if (!isFn(retryable)) throw invalid(TypeError, 'retryable', 'be a function', retryable);
  if (typeof idempotent !== 'boolean' && !isFn(idempotent)) throw invalid(TypeError, 'idempotent', 'be a boolean or a function', idempotent);
  if (signal !== undefined && !hasMethods(signal, ['addEventListener', 'removeEventListener'])) {
    throw invalid(TypeError, 'signal', 'be an AbortSignal', signal);
  }
  if (onHedge !== undefined && !isFn(onHedge)) throw invalid(TypeError, 'onHedge', 'be a function', onHedge);
  if (budget !== undefined && !hasMethods(budget, ['record', 'canRetry'])) {
    throw invalid(TypeError, 'budget', 'come from createRetryBudget() (record, canRetry)', budget);
  }
  return {
    delayMs: delayMs as number | undefined,
    hedger: state,
    maxAttempts: maxAttempts as number,
    deadlineMs,
    retryable: retryable as RetryPredicate,
    idempotent: idempotent as HedgeConfig['idempotent'],
    signal: signal as AbortSignal | undefined,
    onHedge: onHedge as HedgeConfig['onHedge'],
    budget: budget as RetryBudget | undefined,
  };
}
