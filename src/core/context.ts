/**
 * The `AttemptContext` that `fn` receives, and the two reactions an attempt's outcome goes to.
 * A context knows its call only through `ContextOwner`, so the call's state stays private.
 */
import type { AttemptContext } from '../types.js';

/** What a Context needs of its call. */
export interface ContextOwner {
  signalFor(attempt: number): AbortSignal;
  state(): { invocationId(): string };
  progressed(ctx: Context): void;
  attemptResolved(ctx: Context, value: unknown): void;
  attemptRejected(ctx: Context, error: unknown): void;
}

export class Context implements AttemptContext {
  readonly #call: ContextOwner;

  /** The call a context belongs to, for the reactions below (users never see it). */
  static ownerOf(ctx: Context): ContextOwner {
    return ctx.#call;
  }

  constructor(
    call: ContextOwner,
    readonly attempt: number,
    readonly elapsedMs: number,
    readonly remainingMs: number,
  ) {
    this.#call = call;
  }

  get signal(): AbortSignal {
    return this.#call.signalFor(this.attempt);
  }

  get invocationId(): string {
    return this.#call.state().invocationId();
  }

  /** A plain attempt is one request: its only copy. */
  get copy(): number {
    return 1;
  }

  progress(): void {
    this.#call.progressed(this);
  }
}

/**
 * The context of attempt `attempt` at time `t`, of a call begun at `startedAt` whose current
 * run began at `runStartedAt` (the deadline counts from there).
 */
export function contextAt(
  owner: ContextOwner,
  attempt: number,
  t: number,
  startedAt: number,
  runStartedAt: number,
  deadlineMs: number,
): Context {
  // At the call's start, a literal 0 and the deadline itself, not computed doubles to allocate.
  // Stryker disable next-line ConditionalExpression: equivalent when false (the computed values are the same 0 and deadline); true is the EqualityOperator mutant's case, still tested
  if (t === startedAt) return new Context(owner, attempt, 0, deadlineMs);
  return new Context(owner, attempt, t - startedAt, deadlineMs - (t - runStartedAt));
}

/** The reaction to an attempt's value; `this` is the attempt's context. */
function attemptValue(this: Context, value: unknown): void {
  Context.ownerOf(this).attemptResolved(this, value);
}

/** The reaction to an attempt's failure; `this` is the attempt's context. */
function attemptError(this: Context, error: unknown): void {
  Context.ownerOf(this).attemptRejected(this, error);
}

/**
 * Subscribes the attempt's two reactions to what fn returned. An outcome that arrives after the
 * attempt was abandoned (timeout, deadline, abort) is ignored, but it is always listened to,
 * settled call or not: a promise fn returns must never become an unhandled rejection. The
 * reactions are shared functions bound to the context: two small objects, where closures would
 * also need a scope of their own.
 */
export function listen(result: unknown, ctx: Context): void {
  const onValue = attemptValue.bind(ctx);
  const onError = attemptError.bind(ctx);
  try {
    // A promise is subscribed to at once. Anything else is adopted first: a plain value, or a
    // foreign thenable, which could call back twice, or synchronously.
    if (result instanceof Promise) result.then(onValue, onError);
    else Promise.resolve(result).then(onValue, onError);
  } catch (error) {
    // A Promise subclass or Proxy whose `then` throws: the attempt failed with that error.
    onError(error);
  }
}

/** Swallows the rejection of a promise nobody else will read (an async hook's). */
export function ignore(): void {}
