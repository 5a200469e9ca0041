/**
 * The `AttemptContext` that `fn` receives, and the two reactions an attempt's outcome goes to.
 * A context knows its call only through `ContextOwner`, so the call's state stays private.
 */
import type { AttemptContext } from '../types.js';

/** What a Context needs of its call. */
export interface ContextOwner {
  signalFor(attempt: number): AbortSignal;
  attemptResolved(ctx: Context, value: unknown): void;
  attemptRejected(ctx: Context, error: unknown): void;
}

export class Context implements AttemptContext {
  readonly #run: ContextOwner;

  /** The call a context belongs to, for the reactions below (users never see it). */
  static ownerOf(ctx: Context): ContextOwner {
    return ctx.#run;
  }

  constructor(
    run: ContextOwner,
    readonly attempt: number,
    readonly elapsedMs: number,
    readonly remainingMs: number,
  ) {
    this.#run = run;
  }

  get signal(): AbortSignal {
    return this.#run.signalFor(this.attempt);
  }
}

/** The reaction to an attempt's value; `this` is the attempt's context. */
export function attemptValue(this: Context, value: unknown): void {
  Context.ownerOf(this).attemptResolved(this, value);
}

/** The reaction to an attempt's failure; `this` is the attempt's context. */
export function attemptError(this: Context, error: unknown): void {
  Context.ownerOf(this).attemptRejected(this, error);
}

/** Swallows the rejection of a promise nobody else will read (an async onRetry hook's). */
export function ignore(): void {}
