/**
 * The retry loop: runs attempts, asks the policies, sleeps, and keeps its promises about the
 * deadline, abort and unsafe operations. This is the only module that touches time.
 *
 * The loop is written as a small state machine (attempt → sleep → attempt) rather than an
 * async function so that the common case, a first attempt that succeeds, costs two small
 * objects, a `then`, one clock read and one microtask: no timer, no AbortController.
 */
import { type AbortWatcher, unwatchAbort, watchAbort } from './abort-watch.js';
import { type BackoffPolicy, delayFor } from './backoff.js';
import { retryAfterMsOf } from './errors.js';
import { brand, hasBrand, isInstance } from './util/brand.js';
import { DEFAULT_CONFIG, type RetryConfig, readOptions } from './options.js';
import type { RetryPredicate } from './predicates.js';
import { NOT_QUEUED, type Timed, schedule, steadyNow, unschedule } from './timer-queue.js';

/**
 * What `fn` learns about the attempt it is running.
 *
 * @example
 * await retry(async ({ attempt, signal, remainingMs }) => {
 *   console.log(`attempt ${attempt}, ${remainingMs} ms left`);
 *   return fetch(url, { signal });
 * });
 */
export interface AttemptContext {
  /** 1 for the first attempt, 2 for the first retry, … */
  readonly attempt: number;
  /**
   * Aborts when this attempt must stop: its attempt timeout or the overall deadline passed
   * (reason: a `TimeoutError`), or the caller's signal aborted (reason: the caller's). Pass it
   * to fetch, gaxios, grpc-js… so abandoned attempts free their sockets. Created on first read.
   */
  readonly signal: AbortSignal;
  /** Milliseconds since `retry()` was called (0 for the first attempt). */
  readonly elapsedMs: number;
  /** Milliseconds left before the deadline. */
  readonly remainingMs: number;
}

/**
 * Passed to `onRetry` before each sleep.
 *
 * @example
 * retry(call, {
 *   onRetry: ({ attempt, error, delayMs }) => console.warn(`attempt ${attempt} failed (${error}); retrying in ${delayMs} ms`),
 * });
 */
export interface RetryEvent {
  /** The attempt that just failed (1-based). */
  readonly attempt: number;
  /** What it failed with; `undefined` when it returned a value that `retryOnResult` rejected. */
  readonly error: unknown;
  /** The value `retryOnResult` rejected, when the attempt returned one. */
  readonly value?: unknown;
  /** How long the loop will now wait, in milliseconds. */
  readonly delayMs: number;
  /** Milliseconds since `retry()` was called. */
  readonly elapsedMs: number;
}

/**
 * Every way a call can end without a value, as `onGiveUp` reports it: out of attempts, time or
 * budget (the call rejects with a `RetryError` of that reason), an error that is not retryable
 * or an operation that is not idempotent (it rejects with the error itself), the caller's abort
 * (`signal.reason`), or the adaptive throttle's refusal (its `ThrottledError`).
 *
 * @example
 * const onGiveUp = ({ reason }: GiveUpEvent) => metrics.count(`retry_gave_up_${reason}`);
 */
export type GiveUpReason = RetryErrorReason | 'not-retryable' | 'not-idempotent' | 'aborted' | 'throttled';

/**
 * Passed to `onSuccess` once, when the call resolves.
 *
 * @example
 * retry(call, { onSuccess: ({ attempts, elapsedMs }) => metrics.record('retry_attempts', attempts, { elapsedMs }) });
 */
export interface SuccessEvent<T = unknown> {
  /** Attempts made, the first included. */
  readonly attempts: number;
  /** Whole milliseconds from the moment `retry()` was called. */
  readonly elapsedMs: number;
  /** What the call resolves with. */
  readonly value: T;
}

/**
 * Passed to `onGiveUp` once, when the call rejects.
 *
 * @example
 * retry(call, { onGiveUp: ({ reason, attempts, error }) => log.warn(`gave up (${reason}) after ${attempts} attempts`, error) });
 */
export interface GiveUpEvent {
  /** Why the call ended without a value. */
  readonly reason: GiveUpReason;
  /** What the call rejects with. */
  readonly error: unknown;
  /** Attempts made, the first included (0 when the signal had aborted before the first). */
  readonly attempts: number;
  /** Whole milliseconds from the moment `retry()` was called. */
  readonly elapsedMs: number;
}

/**
 * Limits retries across many calls (see `createRetryBudget`). `retry()` reports every
 * attempt's outcome and asks before each retry.
 *
 * @example
 * const budget: RetryBudget = createRetryBudget({ maxTokens: 10, tokenRatio: 0.1 });
 * await Promise.all(urls.map((url) => retry(() => fetchJson(url), { budget })));
 */
export interface RetryBudget {
  /** An attempt succeeded (`true`) or failed with an error worth retrying (`false`). */
  record(success: boolean): void;
  /** Whether a retry may be sent now. */
  canRetry(): boolean;
}

/**
 * Rejects attempts on the client when the server is overloaded (see
 * `createAdaptiveThrottle`). Asked before every attempt, told how each one went.
 *
 * @example
 * const throttle: AttemptThrottle = createAdaptiveThrottle({ k: 2 });
 * await retry(() => callBackend(), { throttle });
 */
export interface AttemptThrottle {
  /** Whether to send the next attempt; `false` fails the call with `error()`. */
  admit(): boolean;
  /**
   * The server accepted the attempt (anything but a transient failure) or not. Not called for
   * an attempt the caller aborted or that the deadline abandoned: it says nothing about the server.
   */
  record(accepted: boolean): void;
  /** The error a refused attempt fails with; it is not retried. */
  error(): Error;
}

/**
 * Options of `retry()`. Every field is optional; bad values throw before anything runs.
 *
 * @example
 * const options: RetryOptions = {
 *   backoff: { initialDelayMs: 200, maxDelayMs: 5_000 },
 *   maxAttempts: 6,
 *   deadlineMs: 20_000,
 *   attemptTimeoutMs: 3_000,
 *   retryable: anyOf(httpStatus(429, 503), networkError),
 * };
 * await retry(call, options);
 */
export interface RetryOptions<T = unknown> {
  /** Backoff policy; missing fields come from `DEFAULT_BACKOFF` (1 s × 2 up to 32 s, full jitter). */
  backoff?: Partial<BackoffPolicy>;
  /** Total attempts, the first included. Default `Infinity` (the deadline ends the loop). */
  maxAttempts?: number;
  /** Overall time limit, counted from the moment `retry()` is called, in milliseconds. Default 120 000. */
  deadlineMs?: number;
  /** Time limit for each attempt; one that runs longer fails with a `TimeoutError`. Default none. */
  attemptTimeoutMs?: number;
  /** Is this error transient? Default `isTransient`. */
  retryable?: RetryPredicate;
  /**
   * Is the operation safe to send again, after this attempt's failure? Default `true`. When
   * false, no error is retried. A function also gets the error it is judging (`undefined` for
   * a value `retryOnResult` rejected).
   */
  idempotent?: boolean | ((ctx: AttemptContext, error: unknown) => boolean);
  /**
   * Is this value not the answer yet? When it returns true, the attempt counts as a transient
   * failure (same backoff, deadline, budget and hooks); giving up rejects with a `RetryError`
   * whose `value` is the last value. For polling (an operation's `done`, a job's status).
   */
  retryOnResult?: (value: T, ctx: AttemptContext) => boolean;
  /** Aborting it rejects at once with `signal.reason`, in an attempt or a sleep. */
  signal?: AbortSignal;
  /** Called before each sleep; an exception it throws is ignored. */
  onRetry?: (event: RetryEvent) => void;
  /** Called once when the call resolves. May be async; what it throws or rejects is ignored. */
  onSuccess?: (event: SuccessEvent<T>) => void | PromiseLike<void>;
  /** Called once when the call rejects, with the reason. May be async; what it throws or rejects is ignored. */
  onGiveUp?: (event: GiveUpEvent) => void | PromiseLike<void>;
  /** A retry budget shared by many calls; a refused retry fails with `RetryError` `'budget'`. */
  budget?: RetryBudget;
  /** Client-side adaptive throttling shared by many calls. */
  throttle?: AttemptThrottle;
  /** Source of randomness in [0, 1] for jitter. Default `Math.random`. */
  rng?: () => number;
  /**
   * True: while this call waits (a sleep, a running attempt's deadline), the library's timer
   * does not keep the process alive (Node, Deno, Bun). Default false.
   */
  unref?: boolean;
}

/**
 * Why `retry()` gave up on an error that was worth retrying.
 *
 * @example
 * const reason: RetryErrorReason = error instanceof RetryError ? error.reason : 'attempts';
 */
export type RetryErrorReason = 'deadline' | 'attempts' | 'budget';

/**
 * `retry()` gave up although the last error was transient: out of attempts, out of time, or
 * refused by the retry budget. `cause` is the last error; when the last attempt returned a
 * value that `retryOnResult` rejected, `value` is that value and `cause` is undefined.
 *
 * @example
 * try { await retry(call, { maxAttempts: 3 }); }
 * catch (e) { if (e instanceof RetryError && e.reason === 'attempts') console.log(e.cause); }
 */
export class RetryError extends Error {
  override readonly name = 'RetryError';
  /** Why the loop stopped. */
  readonly reason: RetryErrorReason;
  /** Attempts made, the first included. */
  readonly attempts: number;
  /** Whole milliseconds from the moment `retry()` was called to giving up. */
  readonly elapsedMs: number;
  /** The last attempt's error (undefined when it returned a value to retry). */
  override readonly cause: unknown;
  /** The last attempt's value that `retryOnResult` rejected, or undefined. */
  readonly value: unknown;

  constructor(reason: RetryErrorReason, attempts: number, elapsedMs: number, cause: unknown, value?: unknown) {
    const why = reason === 'deadline' ? 'deadline reached' : reason === 'budget' ? 'retry budget exhausted' : 'out of attempts';
    const ms = Math.round(elapsedMs);
    // `cause` is this class's own field, set below (a field declared in a subclass replaces
    // whatever the Error constructor would have set from its options).
    super(`gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} in ${ms} ms (${why})${detailOf(cause)}`);
    this.reason = reason;
    this.attempts = attempts;
    this.elapsedMs = ms;
    this.cause = cause;
    this.value = value;
    brand(this, 'RetryError');
  }

  /** True for a RetryError from any copy of this library (its ESM and CommonJS builds, or two versions). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return isInstance(this, RetryError, 'RetryError', value);
  }
}

/**
 * True for a {@link RetryError} from any copy of this library: the ESM and the CommonJS build
 * loaded side by side, or two versions. `error instanceof RetryError` answers the same; this
 * one reads better in a filter and narrows the type.
 *
 * @example
 * try { await retry(call); }
 * catch (e) { if (isRetryError(e)) metrics.count(`gave_up_${e.reason}`); else throw e; }
 */
export function isRetryError(error: unknown): error is RetryError {
  return hasBrand(error, 'RetryError') || error instanceof RetryError;
}

/**
 * The cause's message for RetryError's own. The cause is whatever fn threw: a throwing
 * `message` getter or a hostile Proxy must not turn giving up into an exception of its own.
 */
function detailOf(cause: unknown): string {
  try {
    return cause instanceof Error ? `: ${cause.message}` : '';
  } catch {
    return '';
  }
}

/**
 * An attempt ran out of time: its `attemptTimeoutMs`, or the overall deadline. Transient, so
 * a timed-out attempt is retried while time remains.
 *
 * @example
 * retry(slowCall, {
 *   attemptTimeoutMs: 2_000,
 *   onRetry: ({ error }) => { if (error instanceof TimeoutError) metrics.count('attempt_timeout'); },
 * });
 */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    brand(this, 'TimeoutError');
  }

  /** True for a TimeoutError from any copy of this library (its ESM and CommonJS builds, or two versions). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return isInstance(this, TimeoutError, 'TimeoutError', value);
  }
}

/**
 * Calls `fn` until it succeeds, retrying transient errors with truncated exponential backoff
 * and jitter, within a deadline.
 *
 * - Resolves with `fn`'s value. A synchronous throw counts as a failed attempt.
 * - Rejects with the error itself, unchanged and at once, when it is not retryable or the
 *   operation is not idempotent.
 * - Rejects with a {@link RetryError} when out of attempts, out of time or out of budget.
 * - Settles no later than the deadline: when the next sleep would end past it, gives up at
 *   once; an attempt still running at the deadline is abandoned (its signal aborts; its late
 *   result is ignored).
 * - Rejects with `signal.reason` as soon as the caller's signal aborts.
 * - A server's `Retry-After` or gRPC pushback lengthens the next delay, never shortens it.
 *
 * Invalid options throw a `TypeError`/`RangeError` naming the option, synchronously.
 *
 * @example
 * const user = await retry(({ signal }) => fetchJson(`/users/${id}`, { signal }), {
 *   maxAttempts: 5,
 *   deadlineMs: 10_000,
 * });
 */
export function retry<T>(fn: (ctx: AttemptContext) => T | PromiseLike<T>, options?: RetryOptions<NoInfer<T>>): Promise<T> {
  // The deadline is a promise made when the call is made: the clock starts here, before the
  // options are read and before fn's synchronous part runs.
  const startedAt = steadyNow();
  if (typeof fn !== 'function') throw new TypeError(`retry: fn must be a function, got ${typeof fn}`);
  return runWith(fn, options === undefined ? DEFAULT_CONFIG : readOptions(options as RetryOptions), startedAt);
}

/**
 * Runs `fn` under a configuration read already (`withRetry` reads its options once, when
 * wrapping). Not part of the public API.
 *
 * @internal
 * @example
 * const config = readOptions({ maxAttempts: 3 });
 * await runWith(() => call(), config, steadyNow());
 */
export function runWith<T>(fn: (ctx: AttemptContext) => T | PromiseLike<T>, config: RetryConfig, startedAt: number): Promise<T> {
  const run = new Run<T>(fn, config, startedAt);
  run.start();
  // The returned promise adopts the run, which is a thenable: the engine calls `run.then` one
  // microtask from now, handing over this promise's settle functions. That one job is both
  // how the call settles and how the loop notices a first attempt still running (see `then`).
  return Promise.resolve(run as unknown as PromiseLike<T>);
}

/** The shortest real sleep: timers fire no sooner than 1 ms later. */
const MIN_SLEEP_MS = 1;

const ATTEMPTING = 0;
const SLEEPING = 1;
const SUCCEEDED = 2;
const FAILED = 3;

/** Swallows the rejection of a promise nobody else will read (an async hook's). */
function ignore(): void {}

/**
 * Calls a hook: what it throws is ignored, and so is a rejection of what it returns (an async
 * hook), so that a logging or metrics hook can never change what retry() does.
 */
function callHook<E>(hook: (event: E) => unknown, event: E): void {
  try {
    const returned = hook(event);
    if (returned !== undefined) Promise.resolve(returned).then(undefined, ignore);
  } catch {
    // See above.
  }
}

/**
 * The state of one `retry()` call. It is its own timer-queue entry and its own abort
 * watcher, so a call allocates no timer, listener or bound function. Private fields keep
 * the state out of users' sight (the attempt context never exposes it).
 *
 * Every entry point from outside (the adoption job, the timer, the caller's abort, an
 * attempt's outcome) either settles the call or leaves it running; none throws, whatever
 * user code does under it, so one call's failure can never reach another call.
 */
class Run<T> implements Timed, AbortWatcher {
  dueAt = 0;
  slot = NOT_QUEUED;
  readonly unref: boolean;
  #phase = ATTEMPTING;
  #attempt = 0;
  /** When retry() was called, on the steadyNow() clock. */
  readonly #startedAt: number;
  #controller: AbortController | undefined = undefined;
  /** The last attempt's error while the call runs; its outcome once it has ended. */
  #lastError: unknown = undefined;
  /** The last attempt's value that retryOnResult rejected, while the call runs. */
  #lastValue: unknown = undefined;
  /** The returned promise's settle functions, once the engine has handed them over. */
  #resolve: ((value: T) => void) | undefined = undefined;
  #reject: ((error: unknown) => void) | undefined = undefined;
  readonly #fn: (ctx: AttemptContext) => T | PromiseLike<T>;
  readonly #config: RetryConfig;

  constructor(fn: (ctx: AttemptContext) => T | PromiseLike<T>, config: RetryConfig, startedAt: number) {
    this.#fn = fn;
    this.#config = config;
    this.#startedAt = startedAt;
    this.unref = config.unref;
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
   * still running queues its deadline; the common case touches no timer.
   */
  then(resolve: (value: T) => void, reject: (error: unknown) => void): void {
    if (this.#phase === SUCCEEDED) return resolve(this.#lastError as T);
    if (this.#phase === FAILED) return reject(this.#lastError);
    this.#resolve = resolve;
    this.#reject = reject;
    if (this.#phase === ATTEMPTING && this.slot === NOT_QUEUED) schedule(this, this.#stopAt(this.#startedAt));
  }

  /** Starts the next attempt at time `t`. */
  #runAttempt(t: number): void {
    const config = this.#config;
    const { throttle } = config;
    if (throttle !== undefined && !throttle.admit()) return this.#fail(throttle.error(), 'throttled');
    const attempt = ++this.#attempt;
    this.#phase = ATTEMPTING;
    this.#controller = undefined;
    // A literal 0 for the first attempt: a small integer is stored in place, a computed 0.0 as a
    // separately allocated number (the success path allocates as little as it can).
    const elapsedMs = attempt === 1 ? 0 : t - this.#startedAt;
    const ctx = new Context(this, attempt, elapsedMs, config.deadlineMs - elapsedMs);
    // A later attempt starts from a timer, with the clock read: queue its limit before anything
    // (fn, or a thenable calling back at once) can settle the attempt.
    if (attempt > 1) schedule(this, this.#stopAt(t));
    let result: T | PromiseLike<T>;
    try {
      result = this.#fn(ctx);
    } catch (error) {
      // fn may have aborted the caller's signal, which settled the call: its outcome comes too late.
      if (this.#phase !== ATTEMPTING) return;
      return this.#attemptFailed(error, ctx);
    }
    // An outcome that arrives after the attempt was abandoned (timeout, deadline, abort) is
    // ignored, but it is always listened to, settled call or not: a promise fn returns must
    // never become an unhandled rejection. The reactions are shared functions bound to the
    // attempt's context: two small objects, where closures would also need a scope of their own.
    const onValue = attemptValue.bind(ctx) as (value: T) => void;
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

  /** Attempt `ctx.attempt` resolved with `value`; ignored unless it is still the running attempt. */
  attemptResolved(ctx: Context, value: T): void {
    if (this.#attempt !== ctx.attempt || this.#phase !== ATTEMPTING) return;
    const { retryOnResult } = this.#config;
    if (retryOnResult !== undefined) {
      let again: boolean;
      try {
        again = retryOnResult(value, ctx);
      } catch (error) {
        return this.#fail(error, 'not-retryable');
      }
      // It may have aborted the caller's signal, which settled the call.
      if (this.#phase !== ATTEMPTING) return;
      if (again) return this.#attemptFailed(undefined, ctx, steadyNow(), true, value);
    }
    this.#succeed(value);
  }

  /** Attempt `ctx.attempt` failed with `error`; ignored unless it is still the running attempt. */
  attemptRejected(ctx: Context, error: unknown): void {
    if (this.#attempt === ctx.attempt && this.#phase === ATTEMPTING) this.#attemptFailed(error, ctx);
  }

  /** The moment an attempt started at `attemptStart` must stop: its timeout or the deadline. */
  #stopAt(attemptStart: number): number {
    const deadline = this.#startedAt + this.#config.deadlineMs;
    const timeout = attemptStart + this.#config.attemptTimeoutMs;
    return Math.min(deadline, timeout);
  }

  onDue(t: number): void {
    try {
      this.#due(t);
    } catch (error) {
      // Whatever the call's own code threw settles that call, and no other.
      this.#fail(error, 'not-retryable');
    }
  }

  #due(t: number): void {
    const config = this.#config;
    const phase = this.#phase;
    if (phase === SLEEPING) {
      // A timer can fire late; an attempt started at or past the deadline could only overrun it.
      const elapsedMs = t - this.#startedAt;
      if (elapsedMs >= config.deadlineMs) {
        return this.#fail(new RetryError('deadline', this.#attempt, elapsedMs, this.#lastError, this.#lastValue), 'deadline', elapsedMs);
      }
      return this.#runAttempt(t);
    }
    // Settled already (the timer queue skips such calls too): nothing is due.
    if (phase !== ATTEMPTING) return;
    // Which limit was queued (see #stopAt): the deadline, or the attempt timeout before it.
    const atDeadline = this.dueAt === this.#startedAt + config.deadlineMs;
    // Only the deadline's timeout remembers the previous error (as the final cause); an attempt
    // timeout must not, or a stale Retry-After on that error would stretch the next delay.
    const timeout = new TimeoutError(
      `attempt ${this.#attempt} ${atDeadline ? 'was still running at the deadline' : 'timed out'} after ${
        atDeadline ? config.deadlineMs : config.attemptTimeoutMs
      } ms`,
      atDeadline ? { cause: this.#lastError } : undefined,
    );
    this.#controller?.abort(timeout);
    // An abandoned attempt says nothing about the server: the deadline records nothing.
    if (atDeadline) return this.#fail(new RetryError('deadline', this.#attempt, t - this.#startedAt, timeout), 'deadline', t - this.#startedAt);
    // A listener on the attempt's signal may have aborted the caller's signal meanwhile.
    if (this.#phase !== ATTEMPTING) return;
    this.#attemptFailed(timeout, undefined, t);
  }

  /** Called when the caller's signal aborts. The attempt it cut short is recorded nowhere. */
  onCallerAbort(reason: unknown): void {
    if (this.#phase >= SUCCEEDED) return;
    this.#controller?.abort(reason);
    this.#fail(reason, 'aborted');
  }

  #succeed(value: T): void {
    // Settled first: an abort that the hooks below raise comes after the success, too late.
    this.#finish(SUCCEEDED, value);
    const { budget, throttle } = this.#config;
    if (budget !== undefined || throttle !== undefined) {
      try {
        budget?.record(true);
        throttle?.record(true);
      } catch (error) {
        // Nobody has seen the success yet: the call fails with the hook's error instead.
        this.#phase = FAILED;
        this.#lastError = error;
        this.#reject?.(error);
        this.#report('not-retryable', error);
        return;
      }
    }
    this.#resolve?.(value);
    const { onSuccess } = this.#config;
    if (onSuccess !== undefined) {
      callHook(onSuccess, { attempts: this.#attempt, elapsedMs: Math.round(steadyNow() - this.#startedAt), value });
    }
  }

  /**
   * Settles the call with `error`, unless it has settled already: the first outcome wins.
   * `elapsedMs` is given where a RetryError carries it, so that the hook says the same.
   */
  #fail(error: unknown, reason: GiveUpReason, elapsedMs?: number): void {
    if (this.#phase >= SUCCEEDED) return;
    this.#finish(FAILED, error);
    this.#reject?.(error);
    this.#report(reason, error, elapsedMs);
  }

  /** Tells onGiveUp, if given, how the call ended. */
  #report(reason: GiveUpReason, error: unknown, elapsedMs: number = steadyNow() - this.#startedAt): void {
    const { onGiveUp } = this.#config;
    if (onGiveUp !== undefined) callHook(onGiveUp, { reason, error, attempts: this.#attempt, elapsedMs: Math.round(elapsedMs) });
  }

  #finish(phase: number, outcome: unknown): void {
    this.#phase = phase;
    this.#lastError = outcome;
    unschedule(this);
    const { signal } = this.#config;
    if (signal === undefined) return;
    try {
      unwatchAbort(signal, this);
    } catch {
      // A signal-like object whose removeEventListener throws: the call is settled all the same.
    }
  }

  /**
   * Decides what follows a failed attempt: give up with the error, give up with RetryError, or
   * sleep. An attempt whose value `retryOnResult` rejected (`byValue`) fails with no error: it
   * is transient by definition, and the server served it (the throttle counts it accepted).
   */
  #attemptFailed(error: unknown, ctx: AttemptContext | undefined, t: number = steadyNow(), byValue = false, value?: T): void {
    unschedule(this);
    this.#lastError = error;
    this.#lastValue = value;
    const config = this.#config;
    const attempt = this.#attempt;
    const elapsedMs = t - this.#startedAt;
    const context = ctx ?? new Context(this, attempt, elapsedMs, config.deadlineMs - elapsedMs);
    let delayMs: number;
    try {
      const transient = byValue || config.retryable(error, context);
      // That code may have aborted the caller's signal, which settled the call: the attempt it
      // cut short says nothing about the server, so nothing is recorded.
      if (this.#phase !== ATTEMPTING) return;
      const { idempotent } = config;
      let safe = false;
      if (byValue) {
        safe = typeof idempotent === 'function' ? idempotent(context, error) : idempotent;
        if (this.#phase !== ATTEMPTING) return;
        // A value of an operation that must not be sent again is the answer, as it is.
        if (!safe) return this.#succeed(value as T);
      }
      // Only transient failures say the server is struggling; the rest count as served.
      config.throttle?.record(byValue || !transient);
      if (!transient) return this.#fail(error, 'not-retryable', elapsedMs);
      config.budget?.record(false);
      if (!byValue) safe = typeof idempotent === 'function' ? idempotent(context, error) : idempotent;
      if (!safe) return this.#fail(error, 'not-idempotent', elapsedMs);
      if (attempt >= config.maxAttempts) return this.#fail(new RetryError('attempts', attempt, elapsedMs, error, value), 'attempts', elapsedMs);
      if (config.budget !== undefined && !config.budget.canRetry()) {
        return this.#fail(new RetryError('budget', attempt, elapsedMs, error, value), 'budget', elapsedMs);
      }
      delayMs = delayFor(attempt - 1, config.backoff, config.rng);
      const hintMs = retryAfterMsOf(error);
      if (hintMs !== undefined) delayMs = Math.max(delayMs, hintMs);
      // A sleep lasts whole timer turns: at least one (1 ms) even for a zero delay, and a
      // fractional delay (jitter makes them) is rounded up to the next millisecond.
      if (elapsedMs + Math.ceil(Math.max(delayMs, MIN_SLEEP_MS)) >= config.deadlineMs) {
        return this.#fail(new RetryError('deadline', attempt, elapsedMs, error, value), 'deadline', elapsedMs);
      }
    } catch (policyError) {
      // A predicate, budget or rng that throws is a bug in the caller's code: surface it.
      return this.#fail(policyError, 'not-retryable');
    }
    // That code may also have aborted the caller's signal, which settled the call already.
    if (this.#phase !== ATTEMPTING) return;
    callHook(config.onRetry, { attempt, error, value, delayMs, elapsedMs });
    if (this.#phase !== ATTEMPTING) return;
    this.#phase = SLEEPING;
    schedule(this, t + delayMs);
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

/** What a Context needs of its call. */
interface ContextOwner {
  signalFor(attempt: number): AbortSignal;
  attemptResolved(ctx: Context, value: unknown): void;
  attemptRejected(ctx: Context, error: unknown): void;
}

class Context implements AttemptContext {
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
function attemptValue(this: Context, value: unknown): void {
  Context.ownerOf(this).attemptResolved(this, value);
}

/** The reaction to an attempt's failure; `this` is the attempt's context. */
function attemptError(this: Context, error: unknown): void {
  Context.ownerOf(this).attemptRejected(this, error);
}
