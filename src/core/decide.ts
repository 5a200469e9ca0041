/**
 * What follows a failed attempt, as a pure function of facts: give up (and why), or wait this
 * long. No clock, no timer, no state and no user code: judge.ts asks the policies, the budget
 * and the rng (only those the answer needs) and brings their answers and the times; the loop
 * (run.ts) acts on the decision; the tests ask it questions directly.
 */
import { RetryError, type RetryErrorReason, isPermanent } from '../errors.js';
import { delayFor } from './backoff.js';
import type { AttemptContext } from '../types.js';
import type { RetryConfig } from './options.js';
import { answerOf } from '../util/check.js';

/** The shortest real sleep: timers fire no sooner than 1 ms later. */
export const MIN_SLEEP_MS = 1;

/**
 * Why decide() gives up: the error is not transient, or the operation not safe to resend (the
 * call rejects with the error itself), or a limit was reached (it rejects with a RetryError).
 * The loop itself adds the caller's abort and the throttle's refusal (see `GiveUpReason`).
 */
export type DecidedReason = 'not-retryable' | 'not-idempotent' | RetryErrorReason;

/**
 * The answer for one failed attempt: `wait` that many milliseconds and try again, or give up
 * and reject with `error` (the attempt's own error, or a RetryError wrapping it).
 */
export type Decision =
  | { readonly action: 'wait'; readonly delayMs: number; readonly source: 'backoff' | 'server' }
  | { readonly action: 'give-up'; readonly reason: DecidedReason; readonly error: unknown };

/** The failed attempt, as decide() needs it. */
export interface FailedAttempt {
  /** What it failed with (undefined for a value `retryOnResult` rejected). */
  readonly error: unknown;
  /** The value `retryOnResult` rejected, if that is how it failed: a RetryError carries it. */
  readonly value?: unknown;
  /** Whether the retry policy called the error transient (asked by the loop, which records it). */
  readonly transient: boolean;
  /** 1-based. */
  readonly attempt: number;
  /** Milliseconds from the call to the failure. */
  readonly elapsedMs: number;
  /** Whether the operation may be sent again (`config.idempotent`, answered for this attempt). */
  readonly idempotent: boolean;
  /** The retry budget's answer (`canRetry()`); undefined when the call has no budget. */
  readonly budgetAllows?: boolean | undefined;
  /** A draw of the call's rng for the jitter; undefined for jitter 'none'. */
  readonly random?: number | undefined;
  /** How long the server asked to wait (Retry-After, gRPC pushback), in milliseconds. */
  readonly hintMs?: number | undefined;
  /** Where the call's last progress left it; undefined when it made none. */
  readonly progressAt?: Progress | undefined;
  /** Failures of the current run that `countsAsAttempt` did not count; undefined for none. */
  readonly uncounted?: number | undefined;
  /** The run's previous wait, read by a decorrelated jitter; undefined before its first. */
  readonly previousDelayMs?: number | undefined;
  /** The wait the `delay` option picked, instead of the backoff's; undefined without one. */
  readonly chosenMs?: number | undefined;
}

/**
 * Where the call's last progress left it (see `AttemptContext.progress`): the attempts made
 * and the milliseconds spent before the current run began. The limits count from there.
 */
export interface Progress {
  readonly attempts: number;
  readonly elapsedMs: number;
}

/**
 * The give-up that needs no more facts: not transient or not idempotent (the error itself), or
 * out of attempts (a RetryError); undefined when the budget, the rng and the hint are needed.
 */
export function earlyGiveUp(failed: FailedAttempt, config: RetryConfig): Decision | undefined {
  const { error, attempt, elapsedMs, value } = failed;
  if (!failed.transient) return giveUp('not-retryable', error);
  if (!failed.idempotent) return giveUp('not-idempotent', error);
  // The limits count from the last progress; the errors say the call's attempts and time.
  // Failures countsAsAttempt did not count leave maxAttempts untouched (and the backoff not).
  if (attempt - (failed.progressAt?.attempts ?? 0) - (failed.uncounted ?? 0) >= config.maxAttempts) {
    return giveUp('attempts', new RetryError('attempts', attempt, elapsedMs, error, value));
  }
  return undefined;
}

/**
 * Decides what follows `failed` under `config`. In order: not transient or not idempotent →
 * give up with the error itself; out of attempts or refused by the budget → RetryError;
 * otherwise the backoff delay (or the one the `delay` option chose, `chosenMs`), lengthened
 * (never shortened) by the server's hint, unless that sleep would end at or past the deadline,
 * which gives up now instead. Throws a RangeError for a `random` outside [0, 1] (naming `rng`,
 * whose draw it is).
 */
export function decide(failed: FailedAttempt, config: RetryConfig): Decision {
  const early = earlyGiveUp(failed, config);
  if (early !== undefined) return early;
  const { error, attempt, elapsedMs, value, progressAt, hintMs } = failed;
  if (failed.budgetAllows === false) return giveUp('budget', new RetryError('budget', attempt, elapsedMs, error, value));
  const backoffMs = failed.chosenMs ?? backoffOf(failed, config);
  // Without a hint, `undefined > backoffMs` is false.
  const hinted = (hintMs as number) > backoffMs;
  const delayMs = hinted ? (hintMs as number) : backoffMs;
  // A sleep lasts whole timer turns: at least one (1 ms) even for a zero delay, and a
  // fractional delay (jitter makes them) is rounded up to the next millisecond.
  const runElapsedMs = elapsedMs - (progressAt?.elapsedMs ?? 0);
  if (runElapsedMs + Math.ceil(Math.max(delayMs, MIN_SLEEP_MS)) >= config.deadlineMs) {
    return giveUp('deadline', new RetryError('deadline', attempt, elapsedMs, error, value));
  }
  return { action: 'wait', delayMs, source: hinted ? 'server' : 'backoff' };
}

/**
 * The backoff's wait after `failed`, before any hint: retry number n counts from the last
 * progress (every failure, counted or not, grows it), the jitter drawn from `failed.random`.
 */
export function backoffOf(failed: FailedAttempt, config: RetryConfig): number {
  const n = failed.attempt - (failed.progressAt?.attempts ?? 0) - 1;
  return delayFor(n, config, () => failed.random as number, `${config.where}: options.rng`, failed.previousDelayMs);
}

/**
 * Asks `config.idempotent` whether the operation may be sent again after `error` (undefined
 * for a value retryOnResult rejected). User code: it may throw, as decide()'s callees may.
 */
export function isIdempotent(config: RetryConfig, ctx: AttemptContext, error: unknown): boolean {
  const { idempotent } = config;
  return typeof idempotent === 'function' ? answerOf(config.where, 'idempotent', idempotent(error, ctx)) : idempotent;
}

/**
 * Asks the retry policy whether a failed attempt is worth another: `retryable` for an error,
 * `retryOnResult` for a value (`returned`). User code: it may throw, as decide()'s callees may.
 */
export function isWorthRetrying(config: RetryConfig, ctx: AttemptContext, error: unknown, returned?: { value: unknown }): boolean {
  if (returned === undefined) {
    // `throw permanent(e)` from fn: not worth another try, whatever the predicate would say.
    if (isPermanent(error)) return false;
    return answerOf(config.where, 'retryable', config.retryable(error, ctx));
  }
  return answerOf(config.where, 'retryOnResult', (config.retryOnResult as NonNullable<RetryConfig['retryOnResult']>)(returned.value, ctx));
}

function giveUp(reason: DecidedReason, error: unknown): Decision {
  return { action: 'give-up', reason, error };
}
