/**
 * What an attempt mode (modes/hedging.ts) may ask of the call it runs in: the call's policies
 * (asked through ask.ts, as the engine asks them), through one object per attempt. The retry policy's answer about an error is remembered, so
 * that when the attempt then fails with that error the engine does not ask the policy twice;
 * so is the latest moment a server asked the attempt's copies to come back, which the engine
 * waits for whichever copy's error the attempt fails with.
 */
import type { AttemptContext, AttemptHost, AttemptThrottle, CallEvent, RetryBudget, RetryClock, RetryGate } from '../types.js';
import { retryAfterMsOf } from '../classify/error-shape.js';
import { emit } from './hooks.js';
import { isWorthRetrying, mayResend } from './ask.js';
import { failure } from './outcome.js';
import type { RetryConfig } from './options.js';

/** The host of one attempt made by a mode. */
export class CallHost implements AttemptHost {
  #askedAbout: unknown = undefined;
  // Stryker disable next-line BooleanLiteral: equivalent; known() reads it only after isTransient() or policyFailed() set it with #askedAbout
  #answer = false;
  /** When the latest-ending pause a server asked of a copy ends, on the call's clock (of any origin: -Infinity for none). */
  #hintedUntil = Number.NEGATIVE_INFINITY;

  constructor(readonly config: RetryConfig) {}

  get budget(): RetryBudget | undefined {
    return this.config.fleet?.budget;
  }
  get throttle(): AttemptThrottle | undefined {
    return this.config.fleet?.throttle;
  }
  get gate(): RetryGate | undefined {
    return this.config.fleet?.gate;
  }
  get clock(): RetryClock {
    return this.config.timers.clock;
  }

  isTransient(error: unknown, ctx: AttemptContext): boolean {
    const answer = isWorthRetrying(this.config, ctx, failure(error));
    this.#askedAbout = error;
    this.#answer = answer;
    if (answer) this.#heard(retryAfterMsOf(error));
    return answer;
  }

  /**
   * A copy's transient failure carried a server's hint: the gate hears it now, while other
   * copies may still run, as it would from a plain attempt's failure; the attempt's wait
   * remembers it, whichever error the attempt fails with in the end.
   */
  #heard(hintMs: number | undefined): void {
    if (hintMs === undefined) return;
    this.#hintedUntil = Math.max(this.#hintedUntil, this.config.timers.now() + hintMs);
    this.config.fleet?.gate?.hold(hintMs);
  }

  /** What is left now of the longest pause a server asked of this attempt's copies; undefined when none is. */
  hintLeft(): number | undefined {
    const left = this.#hintedUntil - this.config.timers.now();
    return left > 0 ? left : undefined;
  }

  policyFailed(error: unknown): void {
    // Remembered as not worth another try: the engine gives up with it, unchanged.
    this.#askedAbout = error;
    this.#answer = false;
  }

  mayResend(ctx: AttemptContext): boolean {
    return mayResend(this.config, ctx, undefined);
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
