/**
 * Reads and validates `hedge()` options, before any attempt, with errors that name the option
 * and the value it got (the same shape as `retry()`'s).
 *
 * @internal
 */
import { FUNCTION, type FieldRules, readChecked, hasMethods, isFiniteNumber, isFunction } from '../util/check.js';
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
  /** Called before each extra attempt; an exception it throws, or an async one's rejection, is ignored. */
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

const RULES: FieldRules = {
  delayMs: { ok: (v) => isFiniteNumber(v) && v >= 0, rule: 'be a finite number >= 0', range: true },
  hedger: { ok: (v) => hedgerState(v) !== undefined, rule: 'come from createHedger()' },
  maxAttempts: { ok: (v) => Number.isSafeInteger(v) && (v as number) >= 1, rule: 'be a safe integer >= 1', range: true },
  deadlineMs: { ok: (v) => typeof v === 'number' && v > 0, rule: 'be a number > 0 (Infinity for none)', range: true },
  retryable: FUNCTION,
  idempotent: { ok: (v) => typeof v === 'boolean' || isFunction(v), rule: 'be a boolean or a function' },
  signal: { ok: (v) => hasMethods(v, ['addEventListener', 'removeEventListener']), rule: 'be an AbortSignal' },
  onHedge: FUNCTION,
  budget: { ok: (v) => hasMethods(v, ['record', 'canRetry']), rule: 'come from createRetryBudget() (record, canRetry)' },
};

/** Validates `options` and fills in defaults. Throws a TypeError/RangeError naming the bad option. */
export function readHedgeOptions(options: unknown): HedgeConfig {
  const o = readChecked('hedge', options, RULES) as HedgeOptions;
  const { delayMs, hedger, signal, onHedge, budget } = o;
  if (delayMs === undefined && hedger === undefined) {
    throw new TypeError('hedge: options.delayMs or options.hedger must be given (the hedging delay), got neither');
  }
  const maxAttempts = o.maxAttempts ?? 2;
  const deadlineMs = o.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const retryable = o.retryable ?? isTransient;
  const idempotent = o.idempotent ?? true;
  const state = hedgerState(hedger);
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
