/**
 * The policies a retryFetch call hands the engine: which failures are worth another attempt
 * (the retry policy, with HTTP's own exceptions), which requests are safe to send again (the
 * idempotency policy, from the request plan) and whether an attempt may send copies (hedging).
 * The engine asks them; it never sees a method or a header.
 */
import { hintExceeds } from '../classify/error-shape.js';
import { notSent } from '../classify/not-sent.js';
import { isTransient } from '../classify/predicates.js';
import { HttpStatusError, ResumeError } from '../errors.js';
import type { AttemptContext, AttemptMode, RetryOptions, RetryPredicate } from '../types.js';
import type { RequestPlan } from './request-plan.js';

/** What the caller said about the policies: retryFetch's options of the same names. */
export interface FetchPolicyOptions {
  /** The longest server hint (Retry-After, a RateLimit reset) worth waiting for (Infinity: no limit but the deadline). */
  readonly maxRetryAfterMs: number;
  /** The caller's retry policy, asked instead of the default classification. */
  readonly retryable?: RetryPredicate | undefined;
  /** The caller's idempotency rule, which replaces the method's. */
  readonly idempotent?: RetryOptions['idempotent'];
  /** The hedging mode asked for. */
  readonly hedge?: AttemptMode | undefined;
  /** The call's attempt limit: at 1, a request is sent once, never copied. */
  readonly maxAttempts?: number | undefined;
}

/** The engine options the policies become; `hedge` only when the call may hedge. */
export interface FetchPolicy {
  readonly retryable: RetryPredicate;
  readonly idempotent: (error: unknown, ctx: AttemptContext) => boolean;
  readonly hedge?: AttemptMode;
}

/** The policies of a call that sends `plan`, under the caller's `options`. */
export function fetchPolicy(plan: Pick<RequestPlan, 'method' | 'idempotent' | 'replayable'>, options: FetchPolicyOptions): FetchPolicy {
  const hedge = hedgeFor(plan.method, options);
  const policy = { retryable: retryableFor(options), idempotent: idempotentFor(plan, options.idempotent) };
  return hedge === undefined ? policy : { ...policy, hedge };
}

/**
 * A resume that the integrity rule refused is never retried (the next answer would be refused
 * alike), nor a response asking for a longer wait than the caller accepts (in any header the
 * engine reads a hint from): that response is the answer, at once. Every other failure is the
 * caller's to judge, else the default classification's.
 */
function retryableFor({ retryable, maxRetryAfterMs }: FetchPolicyOptions): RetryPredicate {
  const transient = retryable ?? isTransient;
  return (error, ctx) => {
    if (error instanceof ResumeError) return false;
    // The hint the engine would wait for, whichever header it came in: not only Retry-After.
    if (error instanceof HttpStatusError && hintExceeds(error, maxRetryAfterMs)) return false;
    return transient(error, ctx);
  };
}

/**
 * Safe to resend: never when the body cannot be read again (a stream); else by the caller's
 * rule, or the method's, or when the failure proves the request never left ({@link notSent}).
 * The engine hands over the failure it judges, so that last clause needs no side channel.
 */
function idempotentFor(
  plan: Pick<RequestPlan, 'idempotent' | 'replayable'>,
  userRule: RetryOptions['idempotent'],
): (error: unknown, ctx: AttemptContext) => boolean {
  const rule = userRule ?? plan.idempotent;
  return (error, ctx) => plan.replayable && ((typeof rule === 'function' ? rule(error, ctx) : rule) || notSent(error));
}

/**
 * A copy is a resend before any failure: only GET and HEAD are copied, and `maxAttempts: 1` is
 * one request, always. (The engine asks the idempotency rule before the first copy.)
 */
function hedgeFor(method: string, { hedge, maxAttempts }: FetchPolicyOptions): AttemptMode | undefined {
  return (method === 'GET' || method === 'HEAD') && maxAttempts !== 1 ? hedge : undefined;
}
