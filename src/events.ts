/**
 * What a call tells the outside while it runs: the events its hooks (`onRetry`, `onSuccess`,
 * `onGiveUp`) and its one event stream (`onEvent`) receive.
 */

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
 * (`signal.reason`), or the adaptive throttle's refusal (its `ThrottledError`). A `retryable`,
 * `idempotent` or `retryOnResult` that throws counts as `'not-retryable'` (the call rejects
 * with what it threw).
 *
 * @example
 * const onGiveUp = ({ reason }: GiveUpEvent) => metrics.count(`retry_gave_up_${reason}`);
 */
export type GiveUpReason = 'attempts' | 'deadline' | 'budget' | 'not-retryable' | 'not-idempotent' | 'aborted' | 'throttled';

/**
 * One event of a call, in the order it happens, as `onEvent` receives it: the one stream every
 * way of making a call reports to (plain and hedged attempts, progress, resumed downloads), for
 * logs, metrics and traces. `elapsedMs` counts from the call's start.
 *
 * - `attempt`: an attempt starts (its number, 1-based).
 * - `hedge`: a hedged attempt sends copy `copy` (2 and more), after the delay or an error.
 * - `retry`: attempt `attempt` failed; the call waits `delayMs`, chosen by the `backoff` or
 *   lengthened by the `server`'s hint (Retry-After, gRPC pushback).
 * - `progress`: the attempt reported progress (`ctx.progress()`): the limits count from here.
 * - `resume`: a settled call runs again (a download whose body broke with `error`).
 * - `success` / `give-up`: the call settled, or a resumed run ended (onSuccess and onGiveUp
 *   are told once, of the call).
 *
 * @example
 * retry(call, { onEvent: (e) => { if (e.type === 'retry') log.warn(`retry in ${e.delayMs} ms`, e.error); } });
 */
export type CallEvent =
  | { readonly type: 'attempt'; readonly attempt: number; readonly elapsedMs: number }
  | {
      readonly type: 'hedge';
      readonly attempt: number;
      readonly copy: number;
      readonly reason: 'delay' | 'error';
      readonly elapsedMs: number;
    }
  | {
      readonly type: 'retry';
      readonly attempt: number;
      readonly error: unknown;
      readonly delayMs: number;
      readonly source: 'backoff' | 'server';
      readonly elapsedMs: number;
    }
  | { readonly type: 'progress'; readonly attempt: number; readonly elapsedMs: number }
  | { readonly type: 'resume'; readonly attempt: number; readonly error: unknown; readonly elapsedMs: number }
  | { readonly type: 'success'; readonly attempts: number; readonly elapsedMs: number }
  | {
      readonly type: 'give-up';
      readonly reason: GiveUpReason;
      readonly error: unknown;
      readonly attempts: number;
      readonly elapsedMs: number;
    };

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
