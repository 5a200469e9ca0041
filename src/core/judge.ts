/**
 * The judgement of one attempt's outcome, between the engine (call.ts) and the pure decision
 * (decide.ts): it asks the policies about the outcome (ask.ts), records it with the throttle
 * and the budget, reads the server's hint (and tells the gate), asks the budget, the rng and
 * the `delay` option when another attempt is possible, hands the facts to decide(), and keeps
 * the wait decided in the call's state for a decorrelated jitter. User code may abort the
 * caller's signal, which settles the call: `settled` says so, and then nothing more is asked
 * or recorded.
 */
import { TimeoutError } from '../errors.js';
import type { AttemptContext } from '../types.js';
import { retryAfterMsOf } from '../classify/error-shape.js';
import { chosenDelay, verdictOn } from './ask.js';
import type { CallState } from './call-state.js';
import { type Decision, type Facts, type Progress, backoffOf, giveUpBefore, waitOrGiveUp } from './decide.js';
import type { RetryConfig } from './options.js';
import { type Outcome, errorOf, refusedValue } from './outcome.js';
import { timeoutOf } from './schedule.js';

/** What follows an outcome: decide()'s answer, `accept` the value as the answer, or nothing (`settled`: the call already is). */
export type Judgement = Decision | { readonly action: 'accept' } | { readonly action: 'settled' };

/** How an attempt ended, and where the call stood, as judge() needs it. */
export interface AttemptEnd {
  /** Its error, or the value retryOnResult is to judge. */
  readonly outcome: Outcome;
  /** The retry policy's answer about the error, when a mode asked it already. */
  readonly known: boolean | undefined;
  /** The call's attempt (1-based) and milliseconds since the call began. */
  readonly attempt: number;
  readonly elapsedMs: number;
  /** Where the last progress left the call, if any. */
  readonly progressAt: Progress | undefined;
  /** The call's state, made for a call with schedule options, whose state it keeps. */
  readonly state: CallState | undefined;
}

/** Facts while judge() gathers them. */
type Gathered = { -readonly [K in keyof Facts]: Facts[K] };

/**
 * Judges how attempt `ctx` ended under `config`. A value retryOnResult refuses fails with no
 * error but was served (so says the throttle); for an operation that must not be sent again, it
 * is the answer. Throws what the policies throw: the engine fails the call with it.
 */
export function judge(config: RetryConfig, ctx: AttemptContext, end: AttemptEnd, settled: () => boolean): Judgement {
  const { outcome, state } = end;
  const verdict = verdictOn(config, ctx, outcome, end.known, settled);
  if (verdict === undefined) return SETTLED;
  const { transient } = verdict;
  if (outcome.ok && !verdict.idempotent) return ACCEPT;
  // Only transient failures say the server is struggling; the rest count as served.
  const { fleet } = config;
  fleet?.throttle?.record(outcome.ok || !transient);
  if (transient) fleet?.budget?.record(false);
  const error = errorOf(outcome);
  // A hedged attempt waits the longest any of its copies was asked for, whichever error it failed with.
  const hintLeftMs = state?.host?.hintLeft();
  const hintMs = hintLeftMs === undefined ? retryAfterMsOf(error) : Math.max(retryAfterMsOf(error) ?? 0, hintLeftMs);
  // The server asked for a pause: every call through the gate takes it, this one given up or not.
  if (transient && hintMs !== undefined) fleet?.gate?.hold(hintMs);
  if (verdict.uncounted) (state as CallState).uncounted++;
  const { attempt, progressAt } = end;
  // Waits instant() skipped count as time passed: the deadline ends the call where the real wait would.
  const elapsedMs = end.elapsedMs + (state?.skippedMs ?? 0);
  const facts: Gathered = {
    ...verdict,
    outcome,
    attempt,
    elapsedMs,
    progressAt,
    uncountedSoFar: state?.uncounted,
    previousDelayMs: state?.previousDelayMs,
    budgetAllows: undefined,
    random: undefined,
    hintMs,
    chosenMs: undefined,
  };
  const stop = giveUpBefore(facts, config);
  if (stop !== undefined) return stop;
  // Another attempt is possible: the facts the delay needs, each asked once.
  const { jitter, schedule } = config;
  const budgetAllows = fleet?.budget?.canRetry();
  facts.budgetAllows = budgetAllows;
  if (budgetAllows !== false && jitter !== 'none') facts.random = config.rng();
  const delay = schedule?.delay;
  if (delay !== undefined && budgetAllows !== false) {
    const remainingMs = config.deadlineMs - (elapsedMs - (progressAt?.elapsedMs ?? 0));
    const computedDelayMs = backoffOf(facts, config);
    facts.chosenMs = chosenDelay(delay, config.where, {
      attempt,
      error,
      value: refusedValue(outcome),
      elapsedMs,
      remainingMs,
      computedDelayMs,
    });
    if (settled()) return SETTLED;
  }
  const decision = waitOrGiveUp(facts, config);
  // The wait a decorrelated jitter draws the next one from: the sleep itself, hint included.
  // Stryker disable next-line ConditionalExpression: equivalent: a give-up fails the call, and a failed call never runs again (only a succeeded one reopens)
  if (state !== undefined && decision.action === 'wait') {
    state.previousDelayMs = decision.delayMs;
    if (schedule?.instant) state.skippedMs += decision.delayMs;
  }
  return decision;
}

const SETTLED = { action: 'settled' } as const;
const ACCEPT = { action: 'accept' } as const;

/**
 * The error of attempt `attempt` still running at its limit: the deadline (`atDeadline`) or
 * its timeout (that of the run's attempt `n`, on which a growing timeout depends). Only the
 * deadline's remembers the previous error (as the final cause); an attempt timeout must not, or
 * a stale Retry-After on that error would stretch the next delay.
 */
export function overrun(attempt: number, atDeadline: boolean, config: RetryConfig, lastError: unknown, n: number): TimeoutError {
  return atDeadline
    ? new TimeoutError(`attempt ${attempt} was still running at the deadline after ${config.deadlineMs} ms`, { cause: lastError })
    : new TimeoutError(`attempt ${attempt} timed out after ${timeoutOf(config, n)} ms`);
}

/** Records a success with the budget and the throttle; what either threw, if anything. */
export function recordSuccess(config: RetryConfig): { readonly error: unknown } | undefined {
  const fleet = config.fleet;
  try {
    fleet?.budget?.record(true);
    fleet?.throttle?.record(true);
    return undefined;
  } catch (error) {
    return { error };
  }
}
