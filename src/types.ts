/**
 * The shapes every layer shares: what `retry()` accepts, what it tells `fn` and `onRetry`, and
 * what a predicate, a mode and telemetry must provide (a budget, a throttle and a gate:
 * fleet-types.ts). Types only, so any module may import them without pulling code into a
 * bundle or closing an import cycle.
 */
export type { CallEvent, GiveUpEvent, GiveUpReason, RetryEvent, SuccessEvent } from './events.js';
export type { AttemptThrottle, RetryBudget, RetryGate } from './fleet-types.js';
export type { RetryClock } from './clock-types.js';
import type { RetryClock } from './clock-types.js';
import type { CallEvent, GiveUpEvent, RetryEvent, SuccessEvent } from './events.js';
import type { AttemptThrottle, RetryBudget, RetryGate } from './fleet-types.js';
export type { AttemptTimeoutGrowth, DelayContext, Jitter } from './schedule-types.js';
import type { AttemptTimeoutGrowth, DelayContext, Jitter } from './schedule-types.js';

/**
 * The shape of a truncated exponential backoff: `initialDelayMs · multiplier^n`, capped.
 *
 * @example
 * // 0.5 s, 1 s, 2 s, … up to 10 s, each delay anywhere between half and all of it
 * const policy: BackoffPolicy = { initialDelayMs: 500, multiplier: 2, maxDelayMs: 10_000, jitter: 'equal' };
 * await retry(call, { backoff: policy });
 */
export interface BackoffPolicy {
  /** Delay before the first retry (n = 0), before jitter, in milliseconds. */
  initialDelayMs: number;
  /** Growth factor per retry; at least 1. */
  multiplier: number;
  /**
   * Cap on any single delay, in milliseconds (Google: typically 32 or 64 s). Left out of an
   * options object's `backoff`, it is the default (32 s, a preset's own) raised to what you did
   * set: `{ initialDelayMs: 60_000 }` alone waits 60 s, rather than being refused under a cap you
   * never chose; so is an after-cap jitter's `additiveMs`. A cap you set is kept, and checked.
   */
  maxDelayMs: number;
  /** How randomness is applied; see {@link Jitter}. */
  jitter: Jitter;
}

/**
 * Decides whether an error is worth retrying. The context is absent when called outside `retry()`.
 *
 * @example
 * const quotaOrBusy: RetryPredicate = anyOf(httpStatus(429, 503), grpcCode('RESOURCE_EXHAUSTED'));
 */
export type RetryPredicate = (error: unknown, ctx?: AttemptContext) => boolean;

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
  /** Which copy of the attempt this is: 1, or 2 and more for the copies a hedged attempt sends. */
  readonly copy: number;
  /**
   * A random UUID of the whole call, the same for every attempt, copy and resumed run: what a
   * server needs to tell a retry from a new request. Send it as an `Idempotency-Key` header.
   * `retryFetch` under `gcs()` sends it as Google's clients do (`x-goog-api-client:
   * gccl-invocation-id/…`, `x-goog-gcs-idempotency-token`). Created on first read.
   */
  readonly invocationId: string;
  /**
   * Tells the call that this attempt made progress a retry keeps (an upload's bytes persisted,
   * a page of results stored): the limits, `deadlineMs`, `maxAttempts` and `attemptTimeoutMs`,
   * and the backoff count again from now. Attempt numbers and hooks go on as the call's. A
   * call that never reports progress is bounded from its start. Only the running attempt can
   * report it: once the attempt has failed (in a hook, a predicate or `delay`), or has been
   * abandoned, the call ignores it.
   */
  progress(): void;
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
  /**
   * Time limit for each attempt; one that runs longer fails with a `TimeoutError`. Default none.
   * A number is the same limit for every attempt; an {@link AttemptTimeoutGrowth} lets later
   * attempts run longer (the deadline bounds each one either way).
   */
  attemptTimeoutMs?: number | AttemptTimeoutGrowth;
  /** Is this error transient? Default `isTransient`. */
  retryable?: RetryPredicate;
  /**
   * Is the operation safe to send again, after this attempt's failure? Default `true`. When
   * false, no error is retried. A function gets, like every predicate, the outcome first: the
   * error it is judging (`undefined` for a value `retryOnResult` rejected, or when a hedged
   * attempt asks before its first copy), then the attempt's context.
   */
  idempotent?: boolean | ((error: unknown, ctx: AttemptContext) => boolean);
  /**
   * Is this value not the answer yet? When it returns true, the attempt counts as a transient
   * failure (same backoff, deadline, budget and hooks); giving up rejects with a `RetryError`
   * whose `value` is the last value. For polling (an operation's `done`, a job's status).
   */
  retryOnResult?: (value: T, ctx: AttemptContext) => boolean;
  /**
   * Picks each wait: milliseconds, or `undefined` for the computed one. A server's hint
   * (Retry-After, gRPC pushback) still lengthens it, and a wait past the deadline still gives
   * up at once (`'deadline'`). Anything but a finite number >= 0 or undefined (a promise
   * included) rejects the call with a TypeError/RangeError naming `delay`.
   */
  delay?: (ctx: DelayContext) => number | undefined;
  /**
   * Does this failure use up one of `maxAttempts`? Only `false` says no (a 429 with a
   * Retry-After, say): the limit compares the attempts counted, while hooks, events and errors
   * number every attempt; the backoff still grows and the deadline still bounds the call. Asked
   * only for a failure that would be retried, with the error (`undefined` for a value
   * `retryOnResult` refused) and the attempt's context, like every predicate. Only the deadline
   * ends a run of failures it does not count, so it needs a finite `deadlineMs`: with `Infinity`
   * (a gRPC method config without `timeout` has none) the options are refused with a RangeError,
   * rather than retrying a server that keeps pacing the call for ever.
   */
  countsAsAttempt?: (error: unknown, ctx: AttemptContext) => boolean;
  /** Aborting it rejects at once with `signal.reason`, in an attempt or a sleep. */
  signal?: AbortSignal;
  /**
   * Called before each sleep; an exception it throws is ignored. May be async: the next attempt
   * then waits for it as well as for the backoff (they run side by side), so it can refresh a
   * token or reopen a connection first. That wait is bounded like any other: the deadline ends
   * the call, the signal aborts it; a rejection is ignored, and the attempt goes.
   */
  onRetry?: (event: RetryEvent) => void;
  /** Called once when the call resolves. May be async; what it throws or rejects is ignored. */
  onSuccess?: (event: SuccessEvent<T>) => void | PromiseLike<void>;
  /** Called once when the call rejects, with the reason. May be async; what it throws or rejects is ignored. */
  onGiveUp?: (event: GiveUpEvent) => void | PromiseLike<void>;
  /** Called with every event of the call, in order (see `CallEvent`); what it throws is ignored. */
  onEvent?: (event: CallEvent) => void;
  /** A retry budget shared by many calls; a refused retry fails with `RetryError` `'budget'`. */
  budget?: RetryBudget;
  /** Client-side adaptive throttling shared by many calls. */
  throttle?: AttemptThrottle;
  /**
   * A gate shared by the calls to one host (`createRetryAfterGate()`): when one of them is told
   * to wait (`Retry-After`, gRPC pushback, a 429's RateLimit reset), every call through the gate
   * waits that long before its next attempt, first attempts and hedged copies included, instead
   * of each finding the limit by failing. A pause that would end at or past a call's deadline fails
   * that call at once (`RetryError` `'deadline'`); its signal still aborts it.
   */
  gate?: RetryGate;
  /** Source of randomness in [0, 1] for jitter. Default `Math.random`. */
  rng?: () => number;
  /**
   * True: while this call waits (a sleep, a running attempt's deadline), the library's timer
   * does not keep the process alive (Node, Deno, Bun). Default false.
   */
  unref?: boolean;
  /**
   * The clock the call reads time from and sets its timers on: its deadline, waits, attempt
   * timeouts and hedging delays. Default `systemClock`, the host's `performance.now()`
   * and `setTimeout`, looked up at each use, so fake timers a test installs (`@sinonjs/fake-timers`,
   * `vi.useFakeTimers()`, `node:test`'s `mock.timers`) work without passing anything. Pass a
   * virtual clock to run calls in a time of your own without touching the globals.
   */
  clock?: RetryClock;
  /**
   * How each attempt is made: `hedging({ delayMs })` races copies within an attempt. Default:
   * one request per attempt.
   */
  hedge?: AttemptMode;
  /**
   * Where the call's telemetry goes: `otelTelemetry()` from 'tenacious/otel', or your own.
   * Default none: no span, no metric, nothing made per call.
   */
  telemetry?: Telemetry;
  /** The operation's name, for telemetry (the span's name), e.g. `'objects.get'`. Read only with `telemetry`. */
  name?: string;
  /** The service called, for telemetry (`gcp.client.service`), e.g. `'storage'`; the presets set it. Read only with `telemetry`. */
  service?: string;
}

/**
 * What a telemetry is told of a call when it starts: the `name` and `service` options.
 *
 * @example
 * const call: TelemetryCall = { name: 'objects.get', service: 'storage' };
 */
export interface TelemetryCall {
  readonly name: string | undefined;
  readonly service: string | undefined;
}

/**
 * Where calls report to, for traces and metrics (the `telemetry` option): called once per call,
 * before its first attempt, with the call's `name` and `service`; what it returns follows that
 * call (`undefined`: nothing would record it, and the call runs as one without telemetry).
 * `otelTelemetry()` ('tenacious/otel') makes one; any function of this shape works. What it
 * throws, retry() throws; what the returned `event` throws is ignored.
 *
 * @example
 * const logTelemetry: Telemetry = ({ name }) => ({
 *   event: (e) => console.log(name, e.type, e.elapsedMs),
 *   attempt: (_ctx, run) => run(),
 * });
 * await retry(call, { telemetry: logTelemetry, name: 'load-user' });
 */
export type Telemetry = (call: TelemetryCall) => CallTelemetry | undefined;

/**
 * The telemetry of one call: every event of the call (as `onEvent` gets them), and every
 * request it sends run inside `attempt`, so that a trace context set there is the one the
 * request's own spans see.
 *
 * @example
 * const quiet: CallTelemetry = { event: () => {}, attempt: (_ctx, run) => run() };
 */
export interface CallTelemetry {
  /** An event of the call, in order (see `CallEvent`). */
  event(event: CallEvent): void;
  /**
   * Runs one send of the call, `run`: each plain attempt, and each copy of a hedged one (`ctx`
   * says which). Must call `run` once, synchronously, and return what it returns (or throw
   * what it throws).
   */
  attempt<R>(ctx: AttemptContext, run: () => R): R;
}

/**
 * What an attempt mode may ask of the call it runs in.
 *
 * @example
 * const mode: AttemptMode = { run: (fn, ctx, host) => (host.mayResend(ctx) ? race(fn, ctx) : Promise.resolve(fn(ctx))) };
 */
export interface AttemptHost {
  /**
   * Whether `error` is worth another try, by the call's retry policy. The call remembers the
   * answer: when the attempt then fails with that error, the policy is not asked twice. It also
   * remembers a transient error's server hint (`Retry-After`, pushback) and tells the call's
   * gate at once: whatever error the attempt then fails with, the next attempt waits at least
   * until the latest moment any copy's server asked for.
   */
  isTransient(error: unknown, ctx: AttemptContext): boolean;
  /** Whether the call's idempotency rule allows sending the request again (asked before any failure). */
  mayResend(ctx: AttemptContext): boolean;
  /** The call's retry budget: an extra copy is paid for as a retry is. */
  readonly budget: RetryBudget | undefined;
  /** The call's adaptive throttle: an extra copy is a request, admitted or refused. */
  readonly throttle: AttemptThrottle | undefined;
  /** The call's Retry-After gate: no copy goes out while it holds a pause. */
  readonly gate: RetryGate | undefined;
  /** The call's clock (the `clock` option): a mode's own timers, such as the next copy's moment, run on it. */
  readonly clock: RetryClock;
  /** Reports an event of the attempt (a `hedge`) to the call's event stream. */
  report(event: CallEvent): void;
  /**
   * A policy of the call threw (a predicate, the budget, the throttle): fail the attempt with
   * `error` after telling the host, and the call gives up with it unchanged, as when the engine
   * itself meets such a bug, instead of judging it as `fn`'s failure.
   */
  policyFailed(error: unknown): void;
}

/**
 * A way to make one attempt of a call, from `hedging()`. `run` settles once, as a plain attempt
 * does, and stops when `ctx.signal` aborts (the attempt's timeout, the deadline, the caller's
 * abort), after which its outcome is ignored. The call judges the outcome, waits and retries.
 *
 * @example
 * await retry(({ signal }) => fetch(url, { signal }), { hedge: hedging({ delayMs: 50 }) });
 */
export interface AttemptMode {
  /** Makes one attempt of `fn` with the attempt's context `ctx`, asking the call's policies through `host`. */
  run<T>(fn: (ctx: AttemptContext) => T | PromiseLike<T>, ctx: AttemptContext, host: AttemptHost): Promise<T>;
}
