/**
 * One `retry()` call as a state machine. It holds no policy: after a failed attempt it records
 * the outcome where the caller asked (throttle, budget) and asks decide() what follows.
 *
 *                  start
 *                    │
 *                    ▼          value (hooks ok)
 *   ┌──────────▶ attempting ─────────────────────▶ succeeded
 *   │                │  │
 *   │     failed or  │  │ give up (decide), deadline overrun, caller's abort,
 *   │     overran,   │  │ a hook or policy that throws
 *   │   decide: wait │  └─────────────────────────▶ failed ◀── caller's abort
 *   │                ▼                                  ▲
 *   └─ sleep ended ─ sleeping ──────────────────────────┘
 *                             deadline reached while asleep
 *
 * `succeeded` and `failed` are final; every entry point checks `#settled()` first. The common
 * case, a first attempt that succeeds, costs the run, its context, two small bound reactions,
 * one clock read and one microtask: no timer, no AbortController.
 *
 * Every entry point from outside (the adoption job, the timer, the caller's abort, an attempt's
 * outcome) either settles the call or leaves it running; none throws, whatever user code does
 * under it, so one call's failure can never reach another call.
 */
import { RetryError, TimeoutError, isPermanent } from '../errors.js';
import { type AbortWatcher, unwatchAbort, watchAbort } from '../runtime/abort-watch.js';
import { steadyNow } from '../runtime/clock.js';
import { NOT_QUEUED, type Timed, schedule, unschedule } from '../runtime/timer-queue.js';
import type { AttemptContext, GiveUpReason } from '../types.js';
import { Context, listen } from './context.js';
import { decide, isIdempotent, isWorthRetrying } from './decide.js';
import { callHook, reportGiveUp, reportSuccess } from './hooks.js';
import { ATTEMPTING, FAILED, type Phase, SLEEPING, SUCCEEDED } from './phase.js';
import type { RetryConfig } from './options.js';

/**
 * The state of one call: its own timer-queue entry and abort watcher (a call allocates no timer,
 * listener or bound function of its own), in private fields the attempt context never exposes.
 */
export class Run<T> implements Timed, AbortWatcher {
  dueAt = 0;
  slot = NOT_QUEUED;
  #phase: Phase = ATTEMPTING;
  #attempt = 0;
  /** When retry() was called, on the steadyNow() clock. */
  readonly #startedAt: number;
  /** Whether the limit queued for the running attempt is the deadline (else its timeout). */
  #stopIsDeadline = false;
  #controller: AbortController | undefined = undefined;
  /** The last failed attempt's error, or the value retryOnResult rejected, while the call runs. */
  #lastError: unknown = undefined;
  #lastValue: unknown = undefined;
  /** Once settled: the value (succeeded) or the error (failed). */
  #outcome: unknown = undefined;
  /** The returned promise's settle functions, once the engine has handed them over. */
  #resolve: ((value: T) => void) | undefined = undefined;
  #reject: ((error: unknown) => void) | undefined = undefined;
  readonly #fn: (ctx: AttemptContext) => T | PromiseLike<T>;
  readonly #config: RetryConfig;

  constructor(fn: (ctx: AttemptContext) => T | PromiseLike<T>, config: RetryConfig, startedAt: number) {
    this.#fn = fn;
    this.#config = config;
    this.#startedAt = startedAt;
  }

  /** options.unref, read by the timer queue (a getter: a field would cost every call 8 bytes). */
  get unref(): boolean {
    return this.#config.unref;
  }

  #settled(): boolean {
    return this.#phase >= SUCCEEDED;
  }

  start(): void {
    try {
      const { signal } = this.#config;
      if (signal !== undefined) {
        if (signal.aborted) return this.#fail(signal.reason, 'aborted');
        watchAbort(signal, this);
      }
      this.#runAttempt(this.#startedAt);
    } catch (error) {
      // A throttle that throws, a signal whose addEventListener throws: that call fails.
      this.#fail(error, 'not-retryable');
    }
  }

  /**
   * Called by the engine a microtask after `retry()` returned. An attempt that settled at once
   * has done so by now (its reaction was queued first), so only a first attempt that is really
   * still running queues its limit; the common case touches no timer.
   */
  then(resolve: (value: T) => void, reject: (error: unknown) => void): void {
    if (this.#phase === SUCCEEDED) return resolve(this.#outcome as T);
    if (this.#phase === FAILED) return reject(this.#outcome);
    this.#resolve = resolve;
    this.#reject = reject;
    if (this.#phase === ATTEMPTING && this.slot === NOT_QUEUED) this.#queueStop(this.#startedAt);
  }

  /** Starts the next attempt at time `t`. */
  #runAttempt(t: number): void {
    const config = this.#config;
    const { throttle } = config;
    if (throttle !== undefined && !throttle.admit()) return this.#fail(throttle.error(), 'throttled');
    const attempt = ++this.#attempt;
    this.#phase = ATTEMPTING;
    this.#controller = undefined;
    // A literal 0 for the first attempt: a computed 0.0 would be a separately allocated number.
    const elapsedMs = attempt === 1 ? 0 : t - this.#startedAt;
    const ctx = new Context(this, attempt, elapsedMs, config.deadlineMs - elapsedMs);
    // A later attempt starts from a timer, with the clock read: queue its limit before anything
    // (fn, or a thenable calling back at once) can settle the attempt.
    if (attempt > 1) this.#queueStop(t);
    let result: T | PromiseLike<T>;
    try {
      result = this.#fn(ctx);
    } catch (error) {
      // fn may have aborted the caller's signal, which settled the call: its outcome comes too late.
      if (this.#settled()) return;
      return this.#judge(error, ctx, steadyNow());
    }
    // Listened to even once abandoned: a promise fn returns must never be an unhandled rejection.
    listen(result, ctx);
  }

  /** Whether `ctx` is the attempt running now (a late outcome of an abandoned one is ignored). */
  #isCurrent(ctx: Context): boolean {
    return this.#attempt === ctx.attempt && this.#phase === ATTEMPTING;
  }

  /** Attempt `ctx.attempt` resolved with `value`: the answer, unless retryOnResult is to judge it. */
  attemptResolved(ctx: Context, value: T): void {
    if (!this.#isCurrent(ctx)) return;
    if (this.#config.retryOnResult === undefined) this.#succeed(value);
    else this.#judge(undefined, ctx, steadyNow(), { value });
  }
  /** Attempt `ctx.attempt` failed with `error`. */
  attemptRejected(ctx: Context, error: unknown): void {
    if (this.#isCurrent(ctx)) this.#judge(error, ctx, steadyNow());
  }

  /** Queues the running attempt's limit: its timeout, or the deadline when that comes first. */
  #queueStop(attemptStart: number): void {
    const deadline = this.#startedAt + this.#config.deadlineMs;
    const timeout = attemptStart + this.#config.attemptTimeoutMs;
    this.#stopIsDeadline = deadline <= timeout;
    schedule(this, this.#stopIsDeadline ? deadline : timeout);
  }

  /** The timer: a sleep ended, or the running attempt reached its limit. */
  onDue(t: number): void {
    try {
      if (this.#phase === SLEEPING) this.#sleepEnded(t);
      else if (this.#phase === ATTEMPTING) this.#attemptOverran(t);
      // Settled already (the timer queue skips such calls too): nothing is due.
    } catch (error) {
      // Whatever the call's own code threw settles that call, and no other.
      this.#fail(error, 'not-retryable');
    }
  }

  #sleepEnded(t: number): void {
    // A timer can fire late; an attempt started at or past the deadline could only overrun it.
    const elapsedMs = t - this.#startedAt;
    if (elapsedMs >= this.#config.deadlineMs)
      return this.#fail(new RetryError('deadline', this.#attempt, elapsedMs, this.#lastError, this.#lastValue), 'deadline', elapsedMs);
    this.#runAttempt(t);
  }

  #attemptOverran(t: number): void {
    const config = this.#config;
    const atDeadline = this.#stopIsDeadline;
    // Only the deadline's timeout remembers the previous error (as the final cause); an attempt
    // timeout must not, or a stale Retry-After on that error would stretch the next delay.
    const timeout = atDeadline
      ? new TimeoutError(`attempt ${this.#attempt} was still running at the deadline after ${config.deadlineMs} ms`, {
          cause: this.#lastError,
        })
      : new TimeoutError(`attempt ${this.#attempt} timed out after ${config.attemptTimeoutMs} ms`);
    this.#controller?.abort(timeout);
    // An abandoned attempt says nothing about the server: the deadline records nothing.
    if (atDeadline)
      return this.#fail(new RetryError('deadline', this.#attempt, t - this.#startedAt, timeout), 'deadline', t - this.#startedAt);
    // A listener on the attempt's signal may have aborted the caller's signal meanwhile.
    if (this.#settled()) return;
    const elapsedMs = t - this.#startedAt;
    this.#judge(timeout, new Context(this, this.#attempt, elapsedMs, config.deadlineMs - elapsedMs), t);
  }

  /** Called when the caller's signal aborts. The attempt it cut short is recorded nowhere. */
  onCallerAbort(reason: unknown): void {
    if (this.#settled()) return;
    this.#controller?.abort(reason);
    this.#fail(reason, 'aborted');
  }

  /**
   * After a failed attempt, or a value for retryOnResult (`returned`): records the outcome, asks
   * decide(), gives up or sleeps. A rejected value fails with no error but was served (so says
   * the throttle); for an operation that must not be sent again, it is the answer.
   */
  #judge(error: unknown, ctx: AttemptContext, t: number, returned?: { value: unknown }): void {
    unschedule(this);
    this.#lastError = error;
    this.#lastValue = returned?.value;
    const config = this.#config;
    const elapsedMs = t - this.#startedAt;
    let decision: ReturnType<typeof decide>;
    try {
      // Issue 22: `throw permanent(e)` is not transient, and no predicate is asked (#fail unwraps it).
      const transient = !isPermanent(error) && isWorthRetrying(config, ctx, error, returned);
      // It may have aborted the caller's signal, which settled the call: nothing is recorded.
      if (this.#settled()) return;
      let idempotent = false;
      if (returned !== undefined) {
        idempotent = transient && isIdempotent(config, ctx, error);
        if (this.#settled()) return;
        if (!idempotent) return this.#succeed(returned.value as T);
      }
      // Only transient failures say the server is struggling; the rest count as served.
      config.throttle?.record(returned !== undefined || !transient);
      if (transient) {
        config.budget?.record(false);
        if (returned === undefined) idempotent = isIdempotent(config, ctx, error);
      }
      decision = decide({ error, value: this.#lastValue, transient, attempt: this.#attempt, elapsedMs, idempotent }, config);
    } catch (policyError) {
      // A predicate, budget or rng that throws is a bug in the caller's code: surface it.
      return this.#fail(policyError, 'not-retryable');
    }
    if (decision.action === 'give-up') return this.#fail(decision.error, decision.reason, elapsedMs);
    // That code may also have aborted the caller's signal, which settled the call already.
    if (this.#settled()) return;
    const { delayMs } = decision;
    callHook(config.onRetry, { attempt: this.#attempt, error, value: this.#lastValue, delayMs, elapsedMs });
    if (this.#settled()) return;
    this.#phase = SLEEPING;
    schedule(this, t + delayMs);
  }

  #succeed(value: T): void {
    // Settled first: an abort that the hooks below raise comes after the success, too late.
    this.#settle(SUCCEEDED, value);
    const { budget, throttle } = this.#config;
    if (budget !== undefined || throttle !== undefined) {
      try {
        budget?.record(true);
        throttle?.record(true);
      } catch (error) {
        // Nobody has seen the success yet: the call fails with the hook's error instead.
        this.#phase = FAILED;
        this.#outcome = error;
        this.#reject?.(error);
        return reportGiveUp(this.#config, 'not-retryable', error, this.#attempt, this.#startedAt);
      }
    }
    this.#resolve?.(value);
    reportSuccess(this.#config, this.#attempt, this.#startedAt, value);
  }

  /** Settles the call with `error`, unless settled already (the first outcome wins); tells onGiveUp. */
  #fail(error: unknown, reason: GiveUpReason, elapsedMs?: number): void {
    if (this.#settled()) return;
    if (isPermanent(error)) error = error.cause; // Issue 22: the call rejects with e itself.
    this.#settle(FAILED, error);
    this.#reject?.(error);
    reportGiveUp(this.#config, reason, error, this.#attempt, this.#startedAt, elapsedMs);
  }

  #settle(phase: typeof SUCCEEDED | typeof FAILED, outcome: unknown): void {
    this.#phase = phase;
    this.#outcome = outcome;
    this.#lastError = undefined;
    this.#lastValue = undefined;
    // Most calls never queued anything (a first attempt that settled at once): skip the call.
    if (this.slot !== NOT_QUEUED) unschedule(this);
    const { signal } = this.#config;
    if (signal === undefined) return;
    try {
      unwatchAbort(signal, this);
    } catch {
      // A signal-like object whose removeEventListener throws: the call is settled all the same.
    }
  }

  /** The signal of attempt `attempt`, created on first use. */
  signalFor(attempt: number): AbortSignal {
    if (attempt !== this.#attempt || this.#phase !== ATTEMPTING) {
      // Asked after the attempt ended: it is over, so its signal is aborted.
      return AbortSignal.abort(new TimeoutError(`attempt ${attempt} has ended`));
    }
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }
}
