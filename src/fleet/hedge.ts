/**
 * Hedged requests ("The Tail at Scale", Dean and Barroso, CACM 2013; gRFC A6's hedging policy):
 * when an idempotent request has not answered within a short delay, send another copy and take
 * whichever answers first. Retries fix failures; hedges fix the slow request that has not
 * failed yet, at the price of a few percent more requests, which a shared limit keeps few.
 *
 * Like `retry()`, a call is its own timer-queue entry and abort watcher: the next hedge and the
 * deadline share one entry (whichever comes first is queued), on the same steady clock.
 */
import { type AbortWatcher, unwatchAbort, watchAbort } from '../runtime/abort-watch.js';
import { hedgerCallStarted, hedgerDelay, hedgerTakeHedge } from './hedger.js';
import { type HedgeConfig, type HedgeOptions, readHedgeOptions } from './hedge-options.js';
import { answerOf, mustError } from '../util/check.js';
import type { AttemptContext } from '../types.js';
import { type RetryErrorReason, RetryError, TimeoutError } from '../errors.js';
import { NOT_QUEUED, type Timed, schedule, unschedule } from '../runtime/timer-queue.js';
import { steadyNow } from '../runtime/clock.js';
import { callHook } from '../core/hooks.js';
import { retryAfterMsOf } from '../classify/error-shape.js';

export { type Hedger, type HedgerOptions, createHedger } from './hedger.js';
export type { HedgeEvent, HedgeOptions } from './hedge-options.js';

/**
 * Runs `fn`, and when it has not settled after the hedging delay runs it again, up to
 * `maxAttempts` attempts in all (default 2, the first included), all racing:
 *
 * - the first success wins: the call resolves with it and every other attempt's `ctx.signal`
 *   aborts (pass it to fetch, gaxios, grpc-js… so the losers free their sockets); the losers'
 *   late results and rejections are ignored;
 * - an error that is not retryable, from any attempt, ends the call with that error, unchanged;
 * - a transient error starts the next attempt at once, without waiting for the delay; when no
 *   attempt is left running and none may start, the call rejects with a `RetryError`
 *   (`'attempts'`, `'budget'` or `'deadline'`, `cause` the last error);
 * - an error whose server asks to wait (a `Retry-After`, gRPC pushback) starts no attempt, now
 *   or later: those running go on, and if none wins the call rejects with that error, unchanged;
 * - the delay is `delayMs`, or adaptive: the hedger's percentile of recent latencies;
 * - every extra attempt needs the `hedger`'s extra-load allowance and the `budget`'s consent;
 *   a refused hedge is asked for again one delay later, while the attempts running go on;
 * - `idempotent: false`: exactly one attempt, its error passed on unchanged;
 * - settles no later than `deadlineMs` (`RetryError` `'deadline'`, all attempts aborted with a
 *   `TimeoutError`), and at once with `signal.reason` when the caller's signal aborts.
 *
 * Invalid options throw a `TypeError`/`RangeError` naming the option, synchronously. An async
 * `retryable` or `idempotent` is refused as `retry()` refuses it: the call rejects with a
 * `TypeError` naming it (its promise would count as true whatever it resolved to).
 *
 * @example
 * const hedger = createHedger({ percentile: 0.95, maxExtraLoad: 0.05 }); // one per backend
 * const user = await hedge(({ signal }) => fetchJson(`/users/${id}`, { signal }), { hedger, deadlineMs: 2_000 });
 */
export function hedge<T>(fn: (ctx: AttemptContext) => T | PromiseLike<T>, options: HedgeOptions): Promise<T> {
  if (typeof fn !== 'function') throw mustError('hedge: fn', 'be a function', fn);
  const config = readHedgeOptions(options);
  return new Promise<T>((resolve, reject) => new HedgedCall(fn, config, resolve, reject).start());
}

/** One attempt of a hedged call: its context, and the means to abort it. */
class Attempt implements AttemptContext {
  done = false;
  #controller: AbortController | undefined = undefined;
  #stopReason: unknown = undefined;

  constructor(
    readonly attempt: number,
    readonly elapsedMs: number,
    readonly remainingMs: number,
    readonly startedAt: number,
  ) {}

  get signal(): AbortSignal {
    if (this.#controller !== undefined) return this.#controller.signal;
    // First read after the attempt ended: it is over, so its signal is aborted (as retry()'s is).
    if (this.done) return AbortSignal.abort(this.#stopReason ?? new TimeoutError(`attempt ${this.attempt} has ended`));
    this.#controller = new AbortController();
    return this.#controller.signal;
  }

  stop(reason: unknown): void {
    this.done = true;
    this.#stopReason = reason;
    this.#controller?.abort(reason);
  }
}

type Refusal = RetryErrorReason | 'unsafe';

class HedgedCall<T> implements Timed, AbortWatcher {
  dueAt = 0;
  slot = NOT_QUEUED;
  #settled = false;
  #started = 0;
  #running: Attempt[] = [];
  #lastError: unknown = undefined;
  #nextHedgeAt = Infinity;
  #safe = true;
  readonly #startedAt = steadyNow();
  readonly #delayMs: number;

  constructor(
    readonly fn: (ctx: AttemptContext) => T | PromiseLike<T>,
    readonly config: HedgeConfig,
    readonly resolve: (value: T) => void,
    readonly reject: (error: unknown) => void,
  ) {
    const { hedger, delayMs } = config;
    this.#delayMs = delayMs ?? hedgerDelay(hedger as NonNullable<typeof hedger>);
  }

  start(): void {
    const { signal, hedger, idempotent } = this.config;
    if (signal !== undefined) {
      if (signal.aborted) return this.reject(signal.reason);
      watchAbort(signal, this);
    }
    if (hedger !== undefined) hedgerCallStarted(hedger);
    const first = new Attempt(1, 0, this.config.deadlineMs, this.#startedAt);
    try {
      // Refused when async, as retry() refuses it: a pending promise would read as a yes.
      this.#safe = typeof idempotent === 'function' ? answerOf('hedge', 'idempotent', idempotent(first)) : idempotent;
    } catch (policyError) {
      return this.#fail(policyError);
    }
    this.#launch(first);
    if (!this.#settled) this.#requeue();
  }

  #launch(attempt: Attempt): void {
    this.#started = attempt.attempt;
    this.#running.push(attempt);
    this.#nextHedgeAt = this.#safe && this.#started < this.config.maxAttempts ? attempt.startedAt + this.#delayMs : Infinity;
    let result: Promise<T>;
    try {
      // Adopted inside the try too: Promise.resolve reads a promise's `constructor`, which a
      // hostile one makes throw; thrown from a timer, that would escape and leave the call hung.
      result = Promise.resolve(this.fn(attempt));
    } catch (error) {
      return this.#attemptFailed(attempt, error);
    }
    result.then(
      (value) => this.#attemptSucceeded(attempt, value),
      (error: unknown) => this.#attemptFailed(attempt, error),
    );
  }

  /** Queues whichever comes first: the next hedge or the deadline. */
  #requeue(): void {
    unschedule(this);
    schedule(this, Math.min(this.#nextHedgeAt, this.#startedAt + this.config.deadlineMs));
  }

  onDue(t: number): void {
    const { deadlineMs } = this.config;
    if (t >= this.#startedAt + deadlineMs) {
      const timeout = new TimeoutError(`hedged attempts still running at the deadline after ${deadlineMs} ms`, {
        cause: this.#lastError,
      });
      return this.#fail(new RetryError('deadline', this.#started, t - this.#startedAt, timeout), timeout);
    }
    // Refused by the allowance or the budget: ask again one delay later, so that what little
    // allowance there is goes to the calls that are still waiting then, the slowest ones.
    if (this.#hedge(t, 'delay', undefined) === 'budget') this.#nextHedgeAt = t + Math.max(1, this.#delayMs);
    if (!this.#settled) this.#requeue();
  }

  /** Starts the next attempt if it may start; otherwise says why not. */
  #hedge(t: number, reason: 'delay' | 'error', error: unknown): Refusal | undefined {
    const { maxAttempts, deadlineMs, budget, hedger, onHedge } = this.config;
    if (!this.#safe) return 'unsafe';
    if (this.#started >= maxAttempts) return 'attempts';
    const elapsedMs = t - this.#startedAt;
    if (elapsedMs >= deadlineMs) return 'deadline';
    try {
      if (budget !== undefined && !budget.canRetry()) return 'budget';
      if (hedger !== undefined && !hedgerTakeHedge(hedger)) return 'budget';
      // An extra request is paid for as a failed attempt is: the bucket drains as hedges go out.
      budget?.record(false);
    } catch (policyError) {
      this.#fail(policyError);
      return undefined;
    }
    const attempt = this.#started + 1;
    // A logging hook must not change what hedge() does: what it throws, or an async one's
    // rejection, is ignored (never an unhandled rejection).
    if (onHedge !== undefined) callHook(onHedge, { attempt, reason, error, delayMs: this.#delayMs, elapsedMs });
    if (this.#settled) return undefined;
    this.#launch(new Attempt(attempt, elapsedMs, deadlineMs - elapsedMs, t));
    return undefined;
  }

  #attemptSucceeded(attempt: Attempt, value: T): void {
    if (this.#settled || attempt.done) return;
    const { hedger, budget } = this.config;
    // How long the first attempt took, or at least took: when a hedge wins, the first attempt
    // was still running. Censored values all lie above the delay, so a percentile at or below
    // the one the delay is read from stays true, and the share of calls that hedge stays near
    // 1 − percentile (timing the winner from its own start would make the delay ever shorter).
    if (hedger !== undefined) hedger.window.record(steadyNow() - this.#startedAt);
    attempt.done = true;
    this.#finish(new DOMException(`hedged attempt ${attempt.attempt} won`, 'AbortError'));
    try {
      budget?.record(true);
    } catch {
      // The call has its value; a broken budget must not turn it into an unhandled rejection.
    }
    this.resolve(value);
  }

  #attemptFailed(attempt: Attempt, error: unknown): void {
    if (this.#settled || attempt.done) return;
    attempt.done = true;
    this.#running.splice(this.#running.indexOf(attempt), 1);
    this.#lastError = error;
    const t = steadyNow();
    try {
      if (!answerOf('hedge', 'retryable', this.config.retryable(error, attempt))) return this.#fail(error);
      this.config.budget?.record(false);
      // The server said when to come back (Retry-After, gRPC pushback): another copy now would
      // ignore it, as retry() never does. The copies running go on; then the error is the
      // caller's, unchanged, to wait as long as it asks.
      if ((retryAfterMsOf(error) ?? 0) > 0) {
        this.#safe = false;
        this.#nextHedgeAt = Infinity;
      }
    } catch (policyError) {
      return this.#fail(policyError);
    }
    const refusal = this.#hedge(t, 'error', error);
    if (this.#settled) return;
    if (refusal === undefined) return this.#requeue();
    if (this.#running.length > 0) return;
    if (refusal === 'unsafe') return this.#fail(error);
    this.#fail(new RetryError(refusal, this.#started, t - this.#startedAt, error));
  }

  onCallerAbort(reason: unknown): void {
    this.#fail(reason, reason);
  }

  #fail(error: unknown, abortReason: unknown = new DOMException('the hedged call has failed', 'AbortError')): void {
    this.#finish(abortReason);
    this.reject(error);
  }

  /** Ends the call: no timer, no listener, and every attempt still running aborted with `reason`. */
  #finish(reason: unknown): void {
    this.#settled = true;
    unschedule(this);
    const { signal } = this.config;
    if (signal !== undefined) unwatchAbort(signal, this);
    for (const attempt of this.#running) if (!attempt.done) attempt.stop(reason);
    this.#running = [];
  }
}
