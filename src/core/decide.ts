/**
 * What follows a failed attempt, as a pure function of facts (google-cloud-cpp's backoff policy:
 * a status in, a delay or a stop out): give up (and why), or wait this long. No clock, no timer,
 * no state and no user code: judge.ts asks the policies (ask.ts), the budget and the rng (only
 * those the answer needs) and brings their answers and the times; the engine (call.ts) acts on
 * the decision; the tests ask it questions directly.
 *
 * It is read in two steps, each once: `giveUpBefore` needs only the policies' verdict and the
 * counts; when it finds no reason to stop, judge.ts gathers the rest and `waitOrGiveUp` answers.
 * `decide` is both in one.
 */
import type { RetryErrorReason } from '../errors.js';
import { delayFor } from './backoff.js';
import type { Verdict } from './ask.js';
import type { RetryConfig } from './options.js';
import { type Outcome, errorOf, limitError } from './outcome.js';

/** The shortest real sleep: timers fire no sooner than 1 ms later. */
export const MIN_SLEEP_MS = 1;

/**
 * Why decide() gives up: the error is not transient, or the operation not safe to resend (the
 * call rejects with the error itself), or a limit was reached (it rejects with a RetryError).
 * The engine itself adds the caller's abort and the throttle's refusal (see `GiveUpReason`).
 */
export type DecidedReason = 'not-retryable' | 'not-idempotent' | RetryErrorReason;

/**
 * The answer for one failed attempt: `wait` that many milliseconds and try again, or give up
 * and reject with `error` (the attempt's own error, or a RetryError wrapping it).
 */
export type Decision =
  | { readonly action: 'wait'; readonly delayMs: number; readonly source: 'backoff' | 'server' }
  | { readonly action: 'give-up'; readonly reason: DecidedReason; readonly error: unknown };

/** The failed attempt and what was asked about it, as decide() needs them. */
export interface Facts extends Verdict {
  /** How it failed: an error, or a value `retryOnResult` refused (a RetryError carries it). */
  readonly outcome: Outcome;
  /** 1-based. */
  readonly attempt: number;
  /** Milliseconds from the call to the failure. */
  readonly elapsedMs: number;
  /** Where the call's last progress left it; undefined when it made none. */
  readonly progressAt?: Progress | undefined;
  /** Failures of the current run that `countsAsAttempt` did not count, this one included; undefined for none. */
  readonly uncountedSoFar?: number | undefined;
  /** The run's previous wait, read by a decorrelated jitter; undefined before its first. */
  readonly previousDelayMs?: number | undefined;
  /** The retry budget's answer (`canRetry()`); undefined when the call has no budget. */
  readonly budgetAllows?: boolean | undefined;
  /** A draw of the call's rng for the jitter; undefined for jitter 'none'. */
  readonly random?: number | undefined;
  /** How long the server asked to wait (Retry-After, gRPC pushback), in milliseconds. */
  readonly hintMs?: number | undefined;
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
 * Decides what follows `facts` under `config`. In order: not transient or not idempotent →
 * give up with the error itself; out of attempts or refused by the budget → RetryError;
 * otherwise the backoff delay (or the one the `delay` option chose, `chosenMs`), lengthened
 * (never shortened) by the server's hint, unless that sleep would end at or past the deadline,
 * which gives up now instead. Throws a RangeError for a `random` outside [0, 1] (naming `rng`,
 * whose draw it is).
 */
export function decide(facts: Facts, config: RetryConfig): Decision {
  return giveUpBefore(facts, config) ?? waitOrGiveUp(facts, config);
}

/**
 * The give-up that needs no more facts: not transient or not idempotent (the error itself), or
 * out of attempts (a RetryError); undefined when the budget, the rng and the hint are needed.
 */
export function giveUpBefore(facts: Facts, config: RetryConfig): Decision | undefined {
  if (!facts.transient) return giveUp('not-retryable', errorOf(facts.outcome));
  if (!facts.idempotent) return giveUp('not-idempotent', errorOf(facts.outcome));
  // The limits count from the last progress; the errors say the call's attempts and time.
  // Failures countsAsAttempt did not count leave maxAttempts untouched (and the backoff not).
  if (facts.attempt - (facts.progressAt?.attempts ?? 0) - (facts.uncountedSoFar ?? 0) >= config.maxAttempts) {
    return limit('attempts', facts);
  }
  return undefined;
}

/** What follows a failure `giveUpBefore` found no reason to stop at: the budget's refusal, the deadline, or the wait. */
export function waitOrGiveUp(facts: Facts, config: RetryConfig): Decision {
  if (facts.budgetAllows === false) return limit('budget', facts);
  const { hintMs } = facts;
  const backoffMs = facts.chosenMs ?? backoffOf(facts, config);
  // Without a hint, `undefined > backoffMs` is false.
  const hinted = (hintMs as number) > backoffMs;
  const delayMs = hinted ? (hintMs as number) : backoffMs;
  // A sleep lasts whole timer turns: at least one (1 ms) even for a zero delay, and a
  // fractional delay (jitter makes them) is rounded up to the next millisecond.
  const runElapsedMs = facts.elapsedMs - (facts.progressAt?.elapsedMs ?? 0);
  if (runElapsedMs + Math.ceil(Math.max(delayMs, MIN_SLEEP_MS)) >= config.deadlineMs) return limit('deadline', facts);
  return { action: 'wait', delayMs, source: hinted ? 'server' : 'backoff' };
}

/**
 * The backoff's wait after `facts`, before any hint: retry number n counts from the last
 * progress (every failure, counted or not, grows it), the jitter drawn from `facts.random`.
 */
export function backoffOf(facts: Facts, config: RetryConfig): number {
  const n = facts.attempt - (facts.progressAt?.attempts ?? 0) - 1;
  return delayFor(n, config, () => facts.random as number, `${config.where}: options.rng`, facts.previousDelayMs);
}

function limit(reason: RetryErrorReason, facts: Facts): Decision {
  return giveUp(reason, limitError(reason, facts.attempt, facts.elapsedMs, facts.outcome));
}

function giveUp(reason: DecidedReason, error: unknown): Decision {
  return { action: 'give-up', reason, error };
}
