/**
 * The engine: one call as a state machine (attempting → succeeded | failed, or sleeping and
 * attempting again). It holds no policy: judge.ts has the policies asked (ask.ts) and decide.ts
 * answers.
 * docs/architecture.md draws it. An attempt is plain (`fn` called once) or made by a mode
 * (hedged copies); progress (`ctx.progress()`) starts a new run within the attempt, `reopen` a
 * further run of a succeeded call (a download whose body broke). Limits count from the current
 * run's start; attempt numbers, hooks and errors are the call's. A first attempt that succeeds
 * costs the call, its context, two bound reactions, one clock read and one microtask. No entry
 * point from outside throws, whatever user code does under it.
 */
import { RetryError, TimeoutError, isPermanent } from '../errors.js';
import { type AbortWatcher, unwatchAbort, watchAbort } from '../runtime/abort-watch.js';
import { NOT_QUEUED, type Timed } from '../runtime/timer-queue.js';
import type { AttemptContext, GiveUpReason } from '../types.js';
import { CallState, HOOK_AWAITED, HOOK_RUNNING, NO_HOOK } from './call-state.js';
import { timeoutOf } from './schedule.js';
import { type Context, contextAt, listen } from './context.js';
import { type Judgement, judge, overrun, recordSuccess } from './judge.js';
import { emit, reportGiveUp, reportRetry, reportSuccess } from './hooks.js';
import type { RetryConfig } from './options.js';
import { type Outcome, Returned, errorOf, failure, keptOutcome, limitError, refusedValue } from './outcome.js';
import { ATTEMPTING, FAILED, type Phase, SLEEPING, SUCCEEDED } from './phase.js';

/** What an attempt runs: the caller's `fn`. */
type AttemptFn<T> = (ctx: AttemptContext) => T | PromiseLike<T>;

/**
 * One call of `fn`: a run of attempts, or several (see `reopen` and `progressed`). It is its own
 * timer-queue entry and abort watcher, with private fields no context exposes.
 */
export class Call<T> implements Timed, AbortWatcher {
  /** The returned promise adopts the call (retry.ts): an own `then` is found at once, not after the fields and the prototype. */
  readonly then: Call<T>['handOver'] = handOver;
  slot = NOT_QUEUED;
  #phase: Phase = ATTEMPTING;
  #attempt = 0;
  readonly #startedAt: number; // when the call began, on the call's clock (config.timers)
  #controller: AbortController | undefined = undefined;
  #last: unknown = undefined; // while running, the last failure's error or Returned value (keptOutcome, outcome.ts); once settled, the value or the error
  #resolve: ((value: T) => void) | undefined = undefined; // the returned promise's, once handed over
  #reject: ((error: unknown) => void) | undefined = undefined;
  #config: RetryConfig;
  #state: CallState | undefined = undefined;

  constructor(
    private fn: AttemptFn<T>,
    config: RetryConfig,
    startedAt: number,
  ) {
    this.#config = config;
    this.#startedAt = startedAt;
  }

  /** options.unref, read by the timer queue (a getter: a field would cost every call 8 bytes). */
  get unref(): boolean {
    return this.#config.unref;
  }
  #settled(): boolean {
    // Stryker disable next-line EqualityOperator: once succeeded, nothing asks: the signal is unwatched, the timer unqueued, late outcomes not current
    return this.#phase >= SUCCEEDED; // succeeded and failed are final, for a run
  }

  #runStart(): number {
    return this.#state?.startedAt ?? this.#startedAt; // the limits count from there
  }

  /** What the call keeps beyond the common case (call-state.ts), made on first need. */
  state(): CallState {
    this.#state ??= new CallState(this.#startedAt);
    return this.#state;
  }

  /** The context of the current attempt at time `t`. */
  #contextAt(t: number): Context {
    return contextAt(this, this.#attempt, t, this.#startedAt, this.#runStart(), this.#config.deadlineMs);
  }

  start(): void {
    this.#begin(this.#startedAt, undefined);
  }

  /** A run begins at `t`: watch the caller's signal, then send, or judge how the last answer failed (`broken`). */
  #begin(t: number, broken: unknown): void {
    const { signal } = this.#config;
    try {
      if (signal?.aborted) return this.#fail(signal.reason, 'aborted');
      if (signal !== undefined) watchAbort(signal, this);
      if (broken === undefined) this.#runAttempt(t);
      else this.#judge(failure(broken), this.#contextAt(t), t);
    } catch (error) {
      this.#fail(error, 'not-retryable'); // a throttle, a signal-like object that throws
    }
  }

  /** `then`, a microtask after the call: only a first attempt still running by then queues its limit. */
  handOver(resolve: (value: T) => void, reject: (error: unknown) => void): void {
    if (this.#phase === SUCCEEDED) return resolve(this.#last as T);
    if (this.#phase === FAILED) return reject(this.#last);
    this.#resolve = resolve;
    this.#reject = reject;
    if (this.slot === NOT_QUEUED) this.#queueStop(this.#runStart()); // not sleeping: attempt 1 runs
  }

  /**
   * A further run of a succeeded call, of `fn`'s attempts: `broken` is how its answer failed after all
   * (the run's first failure), or undefined to send at once. `signal` replaces the call's; onSuccess
   * and onGiveUp ran already. With `progressed` the limits count afresh from there.
   */
  reopen(fn: AttemptFn<T>, broken: unknown, signal: AbortSignal | undefined, progressed: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.fn = fn;
      this.#config = { ...this.#config, signal, onSuccess: undefined, onGiveUp: undefined };
      this.#resolve = resolve;
      this.#reject = reject;
      this.#phase = ATTEMPTING;
      const t = this.#config.timers.now();
      if (progressed) this.state().begin(t, broken === undefined ? this.#attempt : this.#attempt - 1);
      emit(this.#config, { type: 'resume', attempt: this.#attempt, error: broken, elapsedMs: t - this.#startedAt });
      this.#begin(t, broken);
    });
  }

  /** Starts the next attempt at time `t`. */
  #runAttempt(t: number): void {
    const config = this.#config;
    const gate = config.fleet?.gate; // a server asked every call through it to pause; its spread fits the deadline left
    const pause = gate === undefined ? 0 : gate.waitMs(this.#runStart() + config.deadlineMs - t);
    if (pause > 0) return this.#attemptAt(t, t + pause);
    const throttle = config.fleet?.throttle;
    if (throttle !== undefined && !throttle.admit()) return this.#fail(throttle.error(), 'throttled');
    const attempt = ++this.#attempt;
    this.#phase = ATTEMPTING;
    this.#controller = undefined;
    const ctx = this.#contextAt(t);
    // Stryker disable next-line ConditionalExpression: emit() checks onEvent too; this spares making the event
    if (config.onEvent !== undefined) emit(config, { type: 'attempt', attempt, elapsedMs: ctx.elapsedMs });
    // An attempt started after the hand-over (from a timer: a retry, or a first attempt a gate's
    // pause held) has its limit queued before fn can settle it; a first attempt sent at once
    // gets it from the hand-over.
    if (this.#resolve !== undefined) this.#queueStop(t);
    const { fn } = this; // called with no `this`: a method call would hand fn the call
    let result: T | PromiseLike<T>;
    try {
      result = config.mode === undefined ? fn(ctx) : config.mode.run(fn, ctx, this.state().hostFor(config));
    } catch (error) {
      if (this.#settled()) return; // fn aborted the caller's signal: its outcome comes too late
      return this.#judge(failure(error), ctx, this.#config.timers.now());
    }
    listen(result, ctx); // even once abandoned: never an unhandled rejection
  }

  /** Whether `ctx` is the attempt running now (a late outcome of an abandoned one is ignored). */
  #isCurrent(ctx: AttemptContext): boolean {
    return this.#attempt === ctx.attempt && this.#phase === ATTEMPTING;
  }

  /** Attempt `ctx.attempt` resolved with `value`: the answer, unless retryOnResult is to judge it. */
  attemptResolved(ctx: Context, value: T): void {
    if (!this.#isCurrent(ctx)) return;
    if (this.#config.retryOnResult === undefined) this.#succeed(value);
    else this.#judge(new Returned(value), ctx, this.#config.timers.now());
  }
  /** Attempt `ctx.attempt` failed with `error`. */
  attemptRejected(ctx: Context, error: unknown): void {
    if (this.#isCurrent(ctx)) this.#judge(failure(error), ctx, this.#config.timers.now());
  }

  /** The running attempt made progress: a new run begins, its limits counted from now. */
  progressed(ctx: AttemptContext): void {
    if (!this.#isCurrent(ctx)) return;
    const t = this.#config.timers.now();
    this.state().begin(t, this.#attempt - 1);
    emit(this.#config, { type: 'progress', attempt: this.#attempt, elapsedMs: t - this.#startedAt });
    // A first attempt's limit may not be queued yet: `then` queues it, from the new run.
    // Stryker disable next-line ConditionalExpression: queued here instead, it is the same limit
    if (this.slot === NOT_QUEUED) return;
    this.#config.timers.unschedule(this);
    this.#queueStop(t);
  }

  /** Queues the running attempt's limit: its timeout, or the deadline when that comes first. */
  #queueStop(attemptStart: number): void {
    const config = this.#config;
    // Stryker disable next-line ConditionalExpression: equivalent: timeoutOf gives the fixed attemptTimeoutMs without schedule options too; this spares the common call its work
    const timeout = config.schedule === undefined ? config.attemptTimeoutMs : timeoutOf(config, this.#attempt - (this.#state?.base ?? 0));
    config.timers.schedule(this, Math.min(this.#runStart() + config.deadlineMs, attemptStart + timeout));
  }

  /** The timer: a sleep ended, or the running attempt reached its limit (settled: nothing is due). */
  onDue(t: number): void {
    try {
      if (this.#phase === SLEEPING) this.#wake(t);
      else this.#attemptOverran(t); // a settled call is unqueued: an attempt is running
    } catch (error) {
      this.#fail(error, 'not-retryable'); // the call's own code threw: that call settles, no other
    }
  }

  /**
   * A wait ended at `t`. An async `onRetry` still running holds the next attempt until it
   * settles (a token refreshed, a connection reopened: what p-retry's `onFailedAttempt` is
   * awaited for), as long as the deadline allows: the deadline is queued, and it ends the call.
   */
  #wake(t: number): void {
    const state = this.#state;
    const deadlineAt = this.#runStart() + this.#config.deadlineMs;
    // At or past the deadline too: the deadline queued is then already due, and gives up.
    if (state?.hook === HOOK_RUNNING) {
      state.hook = HOOK_AWAITED;
      return this.#config.timers.schedule(this, deadlineAt);
    }
    this.#attemptAt(t, t);
  }

  /** An async `onRetry` is running while the call waits: the next attempt waits for it too (see `#wake`). */
  #holdFor(hook: Promise<unknown>): void {
    const state = this.state();
    state.hook = HOOK_RUNNING;
    hook.then(() => {
      const awaited = state.hook === HOOK_AWAITED;
      state.hook = NO_HOOK;
      // Settled during the wait: the wait's own timer starts the attempt. Settled past the deadline, or aborted: nothing to do.
      if (!awaited || this.#phase !== SLEEPING) return;
      this.#config.timers.unschedule(this);
      const t = this.#config.timers.now();
      try {
        this.#attemptAt(t, t);
      } catch (error) {
        this.#fail(error, 'not-retryable'); // the call's own code threw (a throttle, a gate)
      }
    });
  }

  /** At `t`, the next attempt is due at `startAt` (now, or after a gate's pause); at or past the deadline (a timer can fire late), it gives up now. */
  #attemptAt(t: number, startAt: number): void {
    if (startAt - this.#runStart() >= this.#config.deadlineMs) {
      const elapsedMs = t - this.#startedAt;
      return this.#fail(limitError('deadline', this.#attempt, elapsedMs, keptOutcome(this.#last)), 'deadline', elapsedMs);
    }
    if (startAt === t) return this.#runAttempt(t);
    this.#phase = SLEEPING;
    this.#config.timers.schedule(this, startAt);
  }

  #attemptOverran(t: number): void {
    // A timer never fires early: at or past the deadline, the deadline is what was due (or came meanwhile).
    const atDeadline = t >= this.#runStart() + this.#config.deadlineMs;
    const elapsedMs = t - this.#startedAt;
    const timeout = overrun(
      this.#attempt,
      atDeadline,
      this.#config,
      errorOf(keptOutcome(this.#last)),
      this.#attempt - (this.#state?.base ?? 0),
    );
    this.#controller?.abort(timeout);
    // An abandoned attempt says nothing about the server: the deadline records nothing.
    if (atDeadline) return this.#fail(new RetryError('deadline', this.#attempt, elapsedMs, timeout), 'deadline', elapsedMs);
    if (this.#settled()) return; // a listener on the attempt's signal aborted the caller's
    this.#judge(failure(timeout), this.#contextAt(t), t);
  }

  /** Called when the caller's signal aborts; only an unsettled call is watched. The attempt it cut short is recorded nowhere. */
  onCallerAbort(reason: unknown): void {
    this.#controller?.abort(reason);
    this.#fail(reason, 'aborted');
  }

  /** After a failed attempt, or a value for retryOnResult: judge, then give up, accept or sleep. */
  #judge(outcome: Outcome, ctx: AttemptContext, t: number): void {
    this.#config.timers.unschedule(this);
    // The attempt's outcome is in: progress a hook or a predicate reports from here is late (it
    // would restart the limits after every failure, and the call would never end).
    this.#phase = SLEEPING;
    this.#last = outcome.ok ? outcome : outcome.error;
    const config = this.#config;
    const elapsedMs = t - this.#startedAt;
    // Stryker disable next-line ConditionalExpression: equivalent: a state made now (no progress, no uncounted failure, no previous wait) tells judge what none does; it spares a call without schedule options the object
    const state = config.schedule === undefined ? this.#state : this.state(); // schedule options keep their state there
    const error = errorOf(outcome);
    const known = state?.host?.known(error);
    let judgement: Judgement;
    try {
      const progressAt = state?.progressAt(this.#startedAt);
      judgement = judge(config, ctx, { outcome, known, attempt: this.#attempt, elapsedMs, progressAt, state }, () => this.#settled());
    } catch (policyError) {
      return this.#fail(policyError, 'not-retryable'); // a bug in the caller's code: surface it
    }
    if (judgement.action === 'accept') return this.#succeed((outcome as { value: T }).value);
    if (judgement.action === 'give-up') return this.#fail(judgement.error, judgement.reason, elapsedMs);
    if (this.#settled()) return; // the policies aborted the caller's signal (judge may have said `settled`)
    const { delayMs, source } = judgement as Extract<Judgement, { action: 'wait' }>;
    const value = refusedValue(outcome);
    const hook = reportRetry(config, { attempt: this.#attempt, error, value, delayMs, elapsedMs }, source);
    if (this.#settled()) return;
    config.timers.schedule(this, config.schedule?.instant ? t : t + delayMs); // instant(): decided and reported, not slept
    if (hook !== undefined) this.#holdFor(hook);
  }

  #succeed(value: T): void {
    // Settled first: an abort that the hooks below raise comes after the success, too late.
    this.#settle(SUCCEEDED, value);
    const broken = recordSuccess(this.#config);
    if (broken !== undefined) {
      this.#phase = ATTEMPTING; // nobody has seen the success: the call fails with that error instead
      return this.#fail(broken.error, 'not-retryable');
    }
    this.#resolve?.(value);
    reportSuccess(this.#config, this.#attempt, this.#startedAt, value);
  }

  /** Settles the call with `error`, unless settled already (the first outcome wins); tells onGiveUp. */
  #fail(error: unknown, reason: GiveUpReason, elapsedMs?: number): void {
    if (this.#settled()) return;
    if (isPermanent(error)) error = error.cause; // `throw permanent(e)`: the call rejects with e itself
    this.#settle(FAILED, error);
    this.#reject?.(error);
    reportGiveUp(this.#config, reason, error, this.#attempt, this.#startedAt, elapsedMs);
  }

  #settle(phase: typeof SUCCEEDED | typeof FAILED, outcome: unknown): void {
    this.#phase = phase;
    this.#last = outcome;
    // Stryker disable next-line ConditionalExpression: unschedule() of an entry not queued changes nothing; most calls never queued one
    if (this.slot !== NOT_QUEUED) this.#config.timers.unschedule(this);
    // Stryker disable next-line ConditionalExpression: equivalent: unwatchAbort(undefined) does nothing; most calls have no signal, and skip the call
    if (this.#config.signal !== undefined) unwatchAbort(this.#config.signal, this);
  }

  /** The signal of attempt `attempt`, created on first use; asked after the attempt ended, an aborted one. */
  signalFor(attempt: number): AbortSignal {
    if (attempt !== this.#attempt || this.#phase !== ATTEMPTING) {
      return AbortSignal.abort(new TimeoutError(`attempt ${attempt} has ended`));
    }
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }
}

const handOver = Call.prototype.handOver;
