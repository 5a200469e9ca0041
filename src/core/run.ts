/**
 * The engine: one call as a state machine. It holds no policy: after a failed attempt it
 * records the outcome where the caller asked (throttle, budget) and asks decide() what follows.
 *
 *                  start                      reopen (a further run)
 *                    │                            │
 *                    ▼          value (hooks ok)  │
 *   ┌──────────▶ attempting ─────────────────────▶ succeeded
 *   │                │  │
 *   │     failed or  │  │ give up (decide), deadline overrun, caller's abort,
 *   │     overran,   │  │ a hook or policy that throws
 *   │   decide: wait │  └─────────────────────────▶ failed ◀── caller's abort
 *   │                ▼                                  ▲
 *   └─ sleep ended ─ sleeping ──────────────────────────┘
 *                             deadline reached while asleep
 *
 * An attempt is plain (`fn` called once) or made by a mode (mode.ts: hedged copies); either
 * way it settles once and is judged here. A call is one run of attempts, or several: progress
 * (`ctx.progress()`, an upload's bytes persisted) starts a new run within the attempt, and a
 * succeeded call can be reopened for a further run (a download whose body broke). The limits
 * (deadlineMs, maxAttempts, attemptTimeoutMs) count from the start of the current run; the
 * attempt numbers, the hooks and the errors are the call's.
 *
 * `succeeded` and `failed` are final for a run; every entry point checks `#settled()` first.
 * The common case, a first attempt that succeeds, costs the run, its context, two small bound
 * reactions, one clock read and one microtask: no timer, no AbortController.
 *
 * Every entry point from outside (the adoption job, the timer, the caller's abort, an attempt's
 * outcome) either settles the call or leaves it running; none throws, whatever user code does
 * under it, so one call's failure can never reach another call.
 */
import { RetryError, TimeoutError } from '../errors.js';
import { type AbortWatcher, unwatchAbort, watchAbort } from '../runtime/abort-watch.js';
import { steadyNow } from '../runtime/clock.js';
import { NOT_QUEUED, type Timed, schedule, unschedule } from '../runtime/timer-queue.js';
import type { AttemptContext, AttemptHost, AttemptThrottle, GiveUpReason, RetryBudget } from '../types.js';
import { answerOf } from '../util/check.js';
import { Context, listen } from './context.js';
import { decide, isIdempotent, isWorthRetrying } from './decide.js';
import { callHook, reportGiveUp, reportSuccess } from './hooks.js';
import type { RetryConfig } from './options.js';
import { ATTEMPTING, FAILED, type Phase, SLEEPING, SUCCEEDED } from './phase.js';

/** What a call needs beyond its first run, made on first need. */
interface RunState {
  /** Attempts made before the current run began. */
  base: number;
  /** When the current run began, on the steadyNow() clock. */
  startedAt: number;
  /** The error a mode asked the retry policy about, and its answer (asked once per error). */
  askedAbout: unknown;
  answer: boolean;
}

/**
 * The state of one call: its own timer-queue entry and abort watcher (a call allocates no timer,
 * listener or bound function of its own), in private fields the attempt context never exposes.
 */
export class Run<T> implements Timed, AbortWatcher, AttemptHost {
  dueAt = 0;
  slot = NOT_QUEUED;
  #phase: Phase = ATTEMPTING;
  #attempt = 0;
  /** When the call began, on the steadyNow() clock. */
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
  #fn: (ctx: AttemptContext) => T | PromiseLike<T>;
  #config: RetryConfig;
  #more: RunState | undefined = undefined;

  constructor(fn: (ctx: AttemptContext) => T | PromiseLike<T>, config: RetryConfig, startedAt: number) {
    this.#fn = fn;
    this.#config = config;
    this.#startedAt = startedAt;
  }

  /** options.unref, read by the timer queue (a getter: a field would cost every call 8 bytes). */
  get unref(): boolean {
    return this.#config.unref;
  }
  /** The call's budget, for a mode's extra copies. */
  get budget(): RetryBudget | undefined {
    return this.#config.budget;
  }
  /** The call's throttle, for a mode's extra copies. */
  get throttle(): AttemptThrottle | undefined {
    return this.#config.throttle;
  }

  #settled(): boolean {
    return this.#phase >= SUCCEEDED;
  }

  /** When the current run began: the limits count from there. */
  #runStart(): number {
    return this.#more?.startedAt ?? this.#startedAt;
  }

  #state(): RunState {
    this.#more ??= { base: 0, startedAt: this.#startedAt, askedAbout: undefined, answer: false };
    return this.#more;
  }

  start(): void {
    try {
      this.#watch();
      if (!this.#settled()) this.#runAttempt(this.#startedAt);
    } catch (error) {
      // A throttle that throws, a signal whose addEventListener throws: that call fails.
      this.#fail(error, 'not-retryable');
    }
  }

  #watch(): void {
    const { signal } = this.#config;
    if (signal === undefined) return;
    if (signal.aborted) return this.#fail(signal.reason, 'aborted');
    watchAbort(signal, this);
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

  /**
   * A further run of a succeeded call, made of `fn`'s attempts: `broken` is how the call's
   * answer failed after all (judged as the run's first failed attempt), or undefined to send
   * the next attempt at once. `signal` replaces the call's; onSuccess and onGiveUp, which ran
   * when the call settled, do not run again. The attempt numbers go on from the call's; with
   * `progressed` (the answer delivered something a retry keeps) the limits count afresh.
   */
  reopen(fn: (ctx: AttemptContext) => T | PromiseLike<T>, broken: unknown, signal: AbortSignal | undefined, progressed: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#fn = fn;
      this.#config = { ...this.#config, signal, onSuccess: undefined, onGiveUp: undefined };
      this.#resolve = resolve;
      this.#reject = reject;
      this.#phase = ATTEMPTING;
      const t = steadyNow();
      if (progressed) {
        // The run that ends in `broken` began with the attempt that made the progress.
        const state = this.#state();
        state.startedAt = t;
        state.base = broken === undefined ? this.#attempt : this.#attempt - 1;
      }
      try {
        this.#watch();
        if (this.#settled()) return;
        if (broken === undefined) return this.#runAttempt(t);
        this.#judge(broken, new Context(this, this.#attempt, t - this.#startedAt, this.#config.deadlineMs - (t - this.#runStart())), t);
      } catch (error) {
        this.#fail(error, 'not-retryable');
      }
    });
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
    const ctx = new Context(this, attempt, elapsedMs, config.deadlineMs - (t - this.#runStart()));
    // A later attempt starts from a timer, with the clock read: queue its limit before anything
    // (fn, or a thenable calling back at once) can settle the attempt.
    if (attempt > 1) this.#queueStop(t);
    let result: T | PromiseLike<T>;
    try {
      const { hedge } = config;
      result = hedge === undefined ? this.#fn(ctx) : hedge.run(this.#fn, ctx, this);
    } catch (error) {
      // fn may have aborted the caller's signal, which settled the call: its outcome comes too late.
      if (this.#settled()) return;
      return this.#judge(error, ctx, steadyNow());
    }
    // Listened to even once abandoned: a promise fn returns must never be an unhandled rejection.
    listen(result, ctx);
  }

  /** Whether `ctx` is the attempt running now (a late outcome of an abandoned one is ignored). */
  #isCurrent(ctx: AttemptContext): boolean {
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

  /** The running attempt made progress: a new run begins, and its limits count from now. */
  progressed(ctx: AttemptContext): void {
    if (!this.#isCurrent(ctx)) return;
    const t = steadyNow();
    const state = this.#state();
    state.base = this.#attempt - 1;
    state.startedAt = t;
    // The first attempt's limit may not be queued yet (`then` queues it); a later one's is.
    if (this.slot !== NOT_QUEUED) {
      unschedule(this);
      this.#queueStop(t);
    }
  }

  /** Queues the running attempt's limit: its timeout, or the deadline when that comes first. */
  #queueStop(attemptStart: number): void {
    const deadline = this.#runStart() + this.#config.deadlineMs;
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
    if (t - this.#runStart() >= this.#config.deadlineMs) {
      const elapsedMs = t - this.#startedAt;
      return this.#fail(new RetryError('deadline', this.#attempt, elapsedMs, this.#lastError, this.#lastValue), 'deadline', elapsedMs);
    }
    this.#runAttempt(t);
  }

  #attemptOverran(t: number): void {
    const config = this.#config;
    const atDeadline = this.#stopIsDeadline;
    const elapsedMs = t - this.#startedAt;
    // Only the deadline's timeout remembers the previous error (as the final cause); an attempt
    // timeout must not, or a stale Retry-After on that error would stretch the next delay.
    const timeout = atDeadline
      ? new TimeoutError(`attempt ${this.#attempt} was still running at the deadline after ${config.deadlineMs} ms`, {
          cause: this.#lastError,
        })
      : new TimeoutError(`attempt ${this.#attempt} timed out after ${config.attemptTimeoutMs} ms`);
    this.#controller?.abort(timeout);
    // An abandoned attempt says nothing about the server: the deadline records nothing.
    if (atDeadline) return this.#fail(new RetryError('deadline', this.#attempt, elapsedMs, timeout), 'deadline', elapsedMs);
    // A listener on the attempt's signal may have aborted the caller's signal meanwhile.
    if (this.#settled()) return;
    this.#judge(timeout, new Context(this, this.#attempt, elapsedMs, config.deadlineMs - (t - this.#runStart())), t);
  }

  /** Called when the caller's signal aborts. The attempt it cut short is recorded nowhere. */
  onCallerAbort(reason: unknown): void {
    if (this.#settled()) return;
    this.#controller?.abort(reason);
    this.#fail(reason, 'aborted');
  }

  /** AttemptHost: the retry policy's answer for a mode, remembered for the attempt's judgement. */
  isTransient(error: unknown, ctx: AttemptContext): boolean {
    const answer = isWorthRetrying(this.#config, ctx, error);
    const state = this.#state();
    state.askedAbout = error;
    state.answer = answer;
    return answer;
  }

  /** AttemptHost: whether the idempotency rule lets the request go out again (no failure yet). */
  mayResend(ctx: AttemptContext): boolean {
    const { idempotent } = this.#config;
    return typeof idempotent === 'function' ? answerOf(this.#config.where, 'idempotent', idempotent(ctx, undefined)) : idempotent;
  }

  /** Whether the retry policy calls `error` transient: a mode's answer when it asked already. */
  #transient(error: unknown, ctx: AttemptContext, returned: { value: unknown } | undefined): boolean {
    const state = this.#more;
    if (returned === undefined && state !== undefined && state.askedAbout === error && error !== undefined) {
      state.askedAbout = undefined;
      return state.answer;
    }
    return isWorthRetrying(this.#config, ctx, error, returned);
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
      const transient = this.#transient(error, ctx, returned);
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
      const run = this.#more;
      decision = decide(
        { error, value: this.#lastValue, transient, attempt: this.#attempt, elapsedMs, idempotent },
        config,
        undefined,
        run === undefined ? undefined : { attempts: run.base, elapsedMs: run.startedAt - this.#startedAt },
      );
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
