/**
 * What an attempt mode (fleet/hedging.ts) may ask of the call it runs in: the call's policies,
 * through one object per attempt. The retry policy's answer about an error is remembered, so
 * that when the attempt then fails with that error the engine does not ask the policy twice.
 */
import type { AttemptContext, AttemptHost, AttemptThrottle, CallEvent, RetryBudget } from '../types.js';
import { emit } from './hooks.js';
import { answerOf } from '../util/check.js';
import { isWorthRetrying } from './decide.js';
import type { RetryConfig } from './options.js';

/** The host of one attempt made by a mode. */
export class CallHost implements AttemptHost {
  #askedAbout: unknown = undefined;
  // Stryker disable next-line BooleanLiteral: equivalent; known() reads it only after isTransient() or policyFailed() set it with #askedAbout
  #answer = false;

  constructor(readonly config: RetryConfig) {}

  get budget(): RetryBudget | undefined {
    return this.config.fleet?.budget;
  }
  get throttle(): AttemptThrottle | undefined {
    return this.config.fleet?.throttle;
  }

  isTransient(error: unknown, ctx: AttemptContext): boolean {
    const answer = isWorthRetrying(this.config, ctx, error);
    this.#askedAbout = error;
    this.#answer = answer;
    return answer;
  }

  policyFailed(error: unknown): void {
    // Remembered as not worth another try: the engine gives up with it, unchanged.
    this.#askedAbout = error;
    this.#answer = false;
  }

  mayResend(ctx: AttemptContext): boolean {
    const { idempotent, where } = this.config;
    return typeof idempotent === 'function' ? answerOf(where, 'idempotent', idempotent(undefined, ctx)) : idempotent;
  }

  report(event: CallEvent): void {
    emit(this.config, event);
  }

  /** The answer about `error` if the mode asked already, once; else undefined. */
  known(error: unknown): boolean | undefined {
    if (error === undefined || this.#askedAbout !== error) return undefined;
    this.#askedAbout = undefined;
    return this.#answer;
  }
}
