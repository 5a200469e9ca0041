/**
 * One hedged attempt (see `hedging()` in hedging.ts): its copies, the moment of the next one,
 * and its one outcome. A hedged attempt is its own timer-queue entry on the engine's clock.
 */
import { callHook } from '../core/hooks.js';
import { retryAfterMsOf } from '../classify/error-shape.js';
import { TimeoutError } from '../errors.js';
import { NOT_QUEUED, type Timed, type TimerQueue, timersOf } from '../runtime/timer-queue.js';
import type { AttemptContext, AttemptHost } from '../types.js';
import { hedgerCallStarted, hedgerCanHedge, hedgerDelay, type hedgerState, hedgerTakeHedge } from '../fleet/hedger.js';

/**
 * Passed to `onHedge` just before an extra copy of an attempt is sent.
 *
 * @example
 * hedging({ delayMs: 50, onHedge: ({ attempt, copy, reason }) => metrics.count('hedge', { attempt, copy, reason }) });
 */
export interface HedgeEvent {
  /** The attempt of the call the copy belongs to (1-based). */
  readonly attempt: number;
  /** The copy about to be sent: 2 for the first hedge of the attempt. */
  readonly copy: number;
  /** `'delay'`: the copies sent were slow; `'error'`: one failed with a transient error. */
  readonly reason: 'delay' | 'error';
  /** The transient error that triggered it, for reason `'error'`. */
  readonly error: unknown;
  /** The hedging delay of this attempt, in milliseconds. */
  readonly delayMs: number;
  /** Milliseconds since the call began. */
  readonly elapsedMs: number;
}

/** The checked settings of a hedging mode. */
export interface Settings {
  readonly delayMs: number | undefined;
  readonly hedger: ReturnType<typeof hedgerState>;
  readonly maxCopies: number;
  readonly onHedge: ((event: HedgeEvent) => void) | undefined;
}

/** One copy of a hedged attempt: the context `fn` receives, and the means to stop it. */
class Copy implements AttemptContext {
  done = false;
  #controller: AbortController | undefined = undefined;
  #stopReason: unknown = undefined;

  /** The hedged attempt, private: the copy is the context user code receives. */
  readonly #owner: { readonly ctx: AttemptContext; progressed(): void };

  constructor(
    owner: { readonly ctx: AttemptContext; progressed(): void },
    readonly copy: number,
    readonly elapsedMs: number,
    readonly remainingMs: number,
  ) {
    this.#owner = owner;
  }

  get attempt(): number {
    return this.#owner.ctx.attempt;
  }

  /** The copies of an attempt are one call's requests. */
  get invocationId(): string {
    return this.#owner.ctx.invocationId;
  }

  /** Progress of any copy is the attempt's. */
  progress(): void {
    this.#owner.progressed();
  }

  get signal(): AbortSignal {
    if (this.#controller !== undefined) return this.#controller.signal;
    // First read after the copy ended: it is over, so its signal is aborted.
    if (this.done) return AbortSignal.abort(this.#stopReason ?? new TimeoutError(`copy ${this.copy} of attempt ${this.attempt} has ended`));
    this.#controller = new AbortController();
    return this.#controller.signal;
  }

  stop(reason: unknown): void {
    this.done = true;
    this.#stopReason = reason;
    this.#controller?.abort(reason);
  }
}

/** One hedged attempt: its copies, the moment of the next one, and its one outcome. */
export class HedgedAttempt<T> implements Timed {
  slot = NOT_QUEUED;
  #settled = false;
  #sent = 0;
  #running: Copy[] = [];
  #lastError: unknown = undefined;
  /** Whether further copies may go out: set by start() before the first copy, read only after it. */
  #safe!: boolean;
  /** The call's timers: the next copy's moment is queued there, on the call's clock. */
  readonly #timers: TimerQueue;
  readonly #startedAt: number;
  readonly #delayMs: number;
  /** The call's deadline as the attempt's context told it: no copy goes out at or after it. */
  #deadlineAt: number;
  /** When the last copy went out. */
  #lastSentAt = 0;

  constructor(
    readonly fn: (ctx: AttemptContext) => T | PromiseLike<T>,
    readonly ctx: AttemptContext,
    readonly host: AttemptHost,
    readonly settings: Settings,
    readonly resolve: (value: T) => void,
    readonly reject: (error: unknown) => void,
  ) {
    this.#timers = timersOf(host.clock);
    this.#startedAt = this.#timers.now();
    const { hedger, delayMs } = settings;
    this.#delayMs = delayMs ?? hedgerDelay(hedger as NonNullable<typeof hedger>);
    this.#deadlineAt = this.#startedAt + ctx.remainingMs;
  }

  /**
   * A copy made progress: it is the attempt's, and the call's limits count afresh from now, to a
   * deadline this mode is not told; the engine still enforces it (it aborts `ctx.signal`).
   */
  progressed(): void {
    this.#deadlineAt = Infinity;
    this.ctx.progress();
    // A copy the old deadline held back may go now, one delay after the last (at once if past).
    if (this.slot === NOT_QUEUED) this.#queueNext(this.#lastSentAt);
  }

  start(): void {
    const { signal } = this.ctx;
    if (signal.aborted) return this.reject(signal.reason);
    // The engine aborts the attempt's signal at its timeout, the deadline or the caller's abort.
    signal.addEventListener('abort', () => this.#fail(signal.reason, signal.reason));
    const { hedger, maxCopies } = this.settings;
    if (hedger !== undefined) hedgerCallStarted(hedger);
    try {
      // Asked once, before the first copy: a copy is a resend before any failure.
      this.#safe = maxCopies > 1 && this.host.mayResend(this.ctx);
    } catch (policyError) {
      return this.#policyFailed(policyError);
    }
    this.#send(this.#startedAt);
  }

  /** Sends the next copy at time `t`. */
  #send(t: number): void {
    const elapsed = t - this.#startedAt;
    this.#lastSentAt = t;
    const copy = new Copy(this, ++this.#sent, this.ctx.elapsedMs + elapsed, this.ctx.remainingMs - elapsed);
    this.#running.push(copy);
    this.#queueNext(t);
    try {
      // Adopted and subscribed to inside the try too: Promise.resolve reads a promise's
      // `constructor`, and hands a native promise back as it is, whose own `then` may throw;
      // thrown from a timer, either would escape and leave the call hung.
      const { fn } = this; // called with no `this`, like a plain attempt's
      Promise.resolve(fn(copy)).then(
        (value) => this.#copySucceeded(copy, value),
        (error: unknown) => this.#copyFailed(copy, error),
      );
    } catch (error) {
      this.#copyFailed(copy, error);
    }
  }

  /** Queues the moment of the next copy, when one may still be sent. */
  #queueNext(t: number): void {
    this.#timers.unschedule(this);
    if (!this.#settled && this.#safe && this.#sent < this.settings.maxCopies) this.#scheduleAt(t + this.#delayMs);
  }

  /** Queues the next copy's moment, unless it falls at or after the deadline (no copy could go). */
  #scheduleAt(at: number): void {
    if (at < this.#deadlineAt) this.#timers.schedule(this, at);
  }

  /** The hedging delay passed with no answer: send a copy, or ask again when it may go. */
  onDue(t: number): void {
    const again = this.#hedge(t, 'delay', undefined);
    if (again > 0) this.#scheduleAt(t + again);
  }

  /**
   * Sends the next copy if the gate, the budget, the allowance and the throttle let it go, and
   * returns 0; 0 too when one of them threw (the attempt fails with it). Otherwise how long until
   * the copy may be asked for again: when the gate's pause ends, or one delay later for the
   * others; Infinity at the deadline.
   */
  #hedge(t: number, reason: 'delay' | 'error', error: unknown): number {
    const { host } = this;
    const { hedger, onHedge } = this.settings;
    // At the deadline the engine is about to end the call: a copy sent now would only be aborted
    // (and would have spent a token and the allowance).
    if (t >= this.#deadlineAt) return Number.POSITIVE_INFINITY;
    const refusedMs = Math.max(1, this.#delayMs);
    try {
      // A server asked every call through the gate to pause: a copy is a request like any other.
      const pause = host.gate?.waitMs(this.#deadlineAt - t) ?? 0;
      if (pause > 0) return pause;
      if (host.budget !== undefined && !host.budget.canRetry()) return refusedMs;
      // The allowance is looked at first and charged last: a copy the throttle refuses is not sent,
      // and must not use up the allowance (nor count in hedger.hedges) that a later copy needs.
      if (hedger !== undefined && !hedgerCanHedge(hedger)) return refusedMs;
      if (host.throttle !== undefined && !host.throttle.admit()) return refusedMs;
      if (hedger !== undefined) hedgerTakeHedge(hedger);
      // An extra request is paid for as a retry is: the bucket drains as hedges go out.
      host.budget?.record(false);
    } catch (policyError) {
      this.#policyFailed(policyError);
      return 0;
    }
    const elapsedMs = this.ctx.elapsedMs + (t - this.#startedAt);
    const { attempt } = this.ctx;
    const copy = this.#sent + 1;
    callHook(onHedge, { attempt, copy, reason, error, delayMs: this.#delayMs, elapsedMs });
    this.host.report({ type: 'hedge', attempt, copy, reason, elapsedMs });
    if (!this.#settled) this.#send(t);
    return 0;
  }

  #copySucceeded(copy: Copy, value: T): void {
    // A copy has one outcome, and only the end of the attempt stops it: a copy that answers
    // after it was done answers after the end.
    if (this.#settled) return;
    const { hedger } = this.settings;
    // How long the first copy took, or at least took: when a hedge wins, the first copy was
    // still running. Censored values all lie above the delay, so a percentile at or below the
    // one the delay is read from stays true (timing the winner from its own start would make
    // the delay ever shorter).
    if (hedger !== undefined) hedger.window.record(this.#timers.now() - this.#startedAt);
    copy.done = true;
    this.#end(new DOMException(`copy ${copy.copy} of attempt ${copy.attempt} won`, 'AbortError'));
    this.resolve(value);
  }

  #copyFailed(copy: Copy, error: unknown): void {
    if (this.#settled) return;
    copy.done = true;
    this.#running.splice(this.#running.indexOf(copy), 1);
    this.#lastError = error;
    const t = this.#timers.now();
    try {
      if (!this.host.isTransient(error, copy)) return this.#fail(error);
    } catch (policyError) {
      return this.#policyFailed(policyError);
    }
    // The server said when to come back: another copy now, or at the next delay, would ignore
    // it, so the moment queued for the next copy is dropped too. The copies running go on; if
    // none wins, the engine waits as long as the error asks.
    if ((retryAfterMsOf(error) ?? 0) > 0) {
      this.#safe = false;
      this.#timers.unschedule(this);
    }
    const more = this.#safe && this.#sent < this.settings.maxCopies;
    if (this.#running.length > 0) {
      // Another copy is still racing: this failure is one copy's, not the attempt's.
      this.host.throttle?.record(false);
      if (more) this.#hedge(t, 'error', error);
      return;
    }
    if (more && this.#hedge(t, 'error', error) === 0) return;
    this.#fail(this.#lastError);
  }

  /** A policy of the call threw: the attempt fails with its error, which the call gives up with. */
  #policyFailed(error: unknown): void {
    this.host.policyFailed(error);
    this.#fail(error);
  }

  /** Fails the attempt with `error`; the copies still running are aborted with `reason`. */
  #fail(error: unknown, reason: unknown = new DOMException('the hedged attempt has failed', 'AbortError')): void {
    // Also after the end (the attempt's signal aborted later): #end finds no copy left, and the
    // promise settled already.
    this.#end(reason);
    this.reject(error);
  }

  /** Ends the attempt: no timer, and every copy still running aborted with `reason`. */
  #end(reason: unknown): void {
    this.#settled = true;
    this.#timers.unschedule(this);
    for (const copy of this.#running) if (!copy.done) copy.stop(reason);
    this.#running = [];
  }
}
