/**
 * The judgement of one attempt's outcome, between the engine (run.ts) and the pure decision
 * (decide.ts): it asks the call's policies (user code: `retryable` or `retryOnResult`, then
 * `idempotent`, then `countsAsAttempt`), records the outcome with the throttle and the budget,
 * reads the server's hint (and tells the gate), asks the budget, the rng and the `delay` option
 * when another attempt is possible, hands the facts to decide(), and keeps the wait decided in
 * the call's runs for a decorrelated jitter: user code runs here, once each, never in decide().
 * User code may abort the caller's signal, which settles the call: `settled` says so, and then
 * nothing more is asked or recorded.
 */
import { TimeoutError } from '../errors.js';
import type { AttemptContext } from '../types.js';
import { retryAfterMsOf } from '../classify/error-shape.js';
import {
  type Decision,
  type FailedAttempt,
  type Progress,
  backoffOf,
  decide,
  earlyGiveUp,
  isIdempotent,
  isWorthRetrying,
} from './decide.js';
import type { Runs } from './runs.js';
import type { RetryConfig } from './options.js';
import { chosenDelay, timeoutOf, uncounted } from './schedule.js';

/** What follows an outcome: decide()'s answer, `accept` the value as the answer, or nothing (`settled`: the call already is). */
export type Judgement = Decision | { readonly action: 'accept' } | { readonly action: 'settled' };

/** One attempt's outcome as judge() needs it. */
export interface Outcome {
  /** What it failed with (undefined for a value). */
  readonly error: unknown;
  /** The value it resolved with, when retryOnResult is to judge it. */
  readonly returned: { readonly value: unknown } | undefined;
  /** The retry policy's answer about `error`, when a mode asked it already. */
  readonly known: boolean | undefined;
  /** The call's attempt (1-based) and milliseconds since the call began. */
  readonly attempt: number;
  readonly elapsedMs: number;
  /** Where the last progress left the call, if any. */
  readonly progressAt: Progress | undefined;
  /** The call's runs, made for a call with schedule options, whose state they keep. */
  readonly runs: Runs | undefined;
}

/**
 * Judges `outcome` under `config`. A value retryOnResult rejects fails with no error but was
 * served (so says the throttle); for an operation that must not be sent again, it is the answer.
 * Throws what the policies throw: the engine fails the call with it.
 */
export function judge(config: RetryConfig, ctx: AttemptContext, outcome: Outcome, settled: () => boolean): Judgement {
  const { error, returned } = outcome;
  const transient = outcome.known ?? isWorthRetrying(config, ctx, error, returned);
  // It may have aborted the caller's signal, which settled the call: nothing is recorded.
  if (settled()) return SETTLED;
  // Stryker disable next-line BooleanLiteral: equivalent; decide() reads it only for a transient failure, which sets it below
  let idempotent = false;
  if (returned !== undefined) {
    idempotent = transient && isIdempotent(config, ctx, error);
    if (settled()) return SETTLED;
    if (!idempotent) return ACCEPT;
  }
  // Only transient failures say the server is struggling; the rest count as served.
  const { fleet } = config;
  fleet?.throttle?.record(returned !== undefined || !transient);
  if (transient) {
    fleet?.budget?.record(false);
    if (returned === undefined) idempotent = isIdempotent(config, ctx, error);
  }
  const { attempt, progressAt, runs } = outcome;
  // Waits instant() skipped count as time passed: the deadline ends the call where the real wait would.
  const elapsedMs = outcome.elapsedMs + (runs?.skippedMs ?? 0);
  const { jitter, schedule, where } = config;
  const budget = fleet?.budget;
  // A hedged attempt waits the longest any of its copies was asked for, whichever error it failed with.
  const hintLeftMs = runs?.host?.hintLeft();
  const hintMs = hintLeftMs === undefined ? retryAfterMsOf(error) : Math.max(retryAfterMsOf(error) ?? 0, hintLeftMs);
  // The server asked for a pause: every call through the gate takes it, this one given up or not.
  if (transient && hintMs !== undefined) fleet?.gate?.hold(hintMs);
  // Only a failure that would be retried may leave maxAttempts untouched.
  if (schedule !== undefined && transient && idempotent) {
    if (uncounted(schedule, where, error, ctx)) (runs as Runs).uncounted++;
    if (settled()) return SETTLED;
  }
  const value = returned?.value;
  const previousDelayMs = runs?.previousDelayMs;
  const failed: FailedAttempt = {
    error,
    value,
    transient,
    attempt,
    elapsedMs,
    idempotent,
    progressAt,
    uncounted: runs?.uncounted,
    previousDelayMs,
  };
  if (earlyGiveUp(failed, config) !== undefined) return decide(failed, config);
  // Another attempt is possible: the facts the delay needs, each asked once.
  const budgetAllows = budget?.canRetry();
  const random = budgetAllows === false || jitter === 'none' ? undefined : config.rng();
  const facts: FailedAttempt = { ...failed, budgetAllows, random, hintMs };
  const delay = schedule?.delay;
  let chosenMs: number | undefined;
  if (delay !== undefined && budgetAllows !== false) {
    const remainingMs = config.deadlineMs - (elapsedMs - (progressAt?.elapsedMs ?? 0));
    chosenMs = chosenDelay(delay, where, { attempt, error, value, elapsedMs, remainingMs, computedDelayMs: backoffOf(facts, config) });
    if (settled()) return SETTLED;
  }
  const decision = decide({ ...facts, chosenMs }, config);
  // The wait a decorrelated jitter draws the next one from: the sleep itself, hint included.
  // Stryker disable next-line ConditionalExpression: equivalent: a give-up fails the call, and a failed call never runs again (only a succeeded one reopens)
  if (runs !== undefined && decision.action === 'wait') {
    runs.previousDelayMs = decision.delayMs;
    if (schedule?.instant) runs.skippedMs += decision.delayMs;
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
