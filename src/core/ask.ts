/**
 * Every question a call asks its caller's policies, in one place: whether an outcome is worth
 * another attempt (`retryable` for an error, `retryOnResult` for a value), whether the
 * operation may be sent again (`idempotent`), whether a failure counts against `maxAttempts`
 * (`countsAsAttempt`) and how long to wait (`delay`). The engine asks through judge.ts, a mode
 * through its host (host.ts); nothing else calls user predicates, and each answer is checked
 * here (a promise is refused by name: it would count as `true`).
 *
 * User code may throw, and may abort the caller's signal, which settles the call: `verdictOn`
 * then stops asking.
 */
import { isPermanent } from '../errors.js';
import type { AttemptContext, DelayContext } from '../types.js';
import { answerOf, ignoreRejection, mustError } from '../util/check.js';
import type { RetryConfig } from './options.js';
import type { Outcome } from './outcome.js';

/** What the policies answered about one failed attempt. */
export interface Verdict {
  /** Worth another attempt: a transient error, or a value `retryOnResult` refused. */
  readonly transient: boolean;
  /** May be sent again (asked only about a transient outcome; false otherwise). */
  readonly idempotent: boolean;
  /** `countsAsAttempt` said this failure leaves `maxAttempts` untouched (asked only of one to be retried). */
  readonly uncounted: boolean;
}

/**
 * Asks the policies about `outcome`, each at most once and only what the answer needs, in
 * order: retryable (unless a mode already asked: `known`), idempotent, countsAsAttempt.
 * Undefined when one of them settled the call (`settled()`): nothing more is asked.
 */
export function verdictOn(
  config: RetryConfig,
  ctx: AttemptContext,
  outcome: Outcome,
  known: boolean | undefined,
  settled: () => boolean,
): Verdict | undefined {
  const transient = known ?? isWorthRetrying(config, ctx, outcome);
  if (settled()) return undefined;
  if (!transient) return NOT_TRANSIENT;
  const error = outcome.ok ? undefined : outcome.error;
  const idempotent = mayResend(config, ctx, error);
  if (settled()) return undefined;
  if (!idempotent) return NOT_IDEMPOTENT;
  const counts = config.schedule?.countsAsAttempt;
  // Only a failure that would be retried may leave maxAttempts untouched.
  if (counts === undefined) return RETRY;
  const answer = counts(error, ctx);
  answerOf(config.where, 'countsAsAttempt', answer);
  // Only `false` itself: an answer of undefined (a predicate that forgot to return) counts.
  return settled() ? undefined : { transient, idempotent, uncounted: answer === false };
}

const NOT_TRANSIENT: Verdict = { transient: false, idempotent: false, uncounted: false };
const NOT_IDEMPOTENT: Verdict = { transient: true, idempotent: false, uncounted: false };
const RETRY: Verdict = { transient: true, idempotent: true, uncounted: false };

/**
 * Whether `outcome` is worth another attempt: `retryable` for an error (never one thrown as
 * `permanent(e)`), `retryOnResult` for a value.
 */
export function isWorthRetrying(config: RetryConfig, ctx: AttemptContext, outcome: Outcome): boolean {
  if (outcome.ok) {
    return answerOf(config.where, 'retryOnResult', (config.retryOnResult as NonNullable<RetryConfig['retryOnResult']>)(outcome.value, ctx));
  }
  const { error } = outcome;
  // `throw permanent(e)` from fn: not worth another try, whatever the predicate would say.
  if (isPermanent(error)) return false;
  return answerOf(config.where, 'retryable', config.retryable(error, ctx));
}

/** Whether the operation may be sent again after `error` (undefined: a refused value, or before any failure). */
export function mayResend(config: RetryConfig, ctx: AttemptContext, error: unknown): boolean {
  const { idempotent } = config;
  return typeof idempotent === 'function' ? answerOf(config.where, 'idempotent', idempotent(error, ctx)) : idempotent;
}

/**
 * The wait the `delay` option picks for `ctx`: its number, or the computed delay for
 * undefined. Anything else (a promise, NaN, a negative or infinite number) throws a
 * TypeError/RangeError naming `<where>: options.delay` and the value, and the call rejects with
 * it, as with a predicate that throws.
 */
export function chosenDelay(delay: (ctx: DelayContext) => number | undefined, where: string, ctx: DelayContext): number {
  const ms: unknown = delay(ctx);
  if (ms === undefined) return ctx.computedDelayMs;
  if (typeof ms === 'number' && ms >= 0 && ms < Infinity) return ms;
  ignoreRejection(ms);
  throw mustError(`${where}: options.delay`, 'return a finite number >= 0 or undefined', ms, typeof ms === 'number');
}
