/**
 * Calling the user's hooks (onRetry, onSuccess, onGiveUp, onEvent) so that they can never change what
 * retry() does: what a hook throws is ignored, and so is a rejection of what it returns (an
 * async hook). The call has settled before onSuccess and onGiveUp run, so an abort they raise
 * comes too late to matter.
 */
import type { CallEvent, GiveUpReason, RetryEvent } from '../types.js';
import { ignore } from './context.js';
import type { RetryConfig } from './options.js';

/**
 * Calls `hook`, if given, with `event`, isolated from the loop. Returns, for a hook that returned something
 * (an async hook's promise), a promise that fulfils once that settled, either way.
 */
export function callHook<E>(hook: ((event: E) => unknown) | undefined, event: E): Promise<unknown> | undefined {
  try {
    // Stryker disable next-line OptionalChaining: equivalent: calling a missing hook throws a TypeError, which the catch below ignores as it would the hook's own
    const returned = hook?.(event);
    // Stryker disable next-line ConditionalExpression: equivalent when true (Promise.resolve(undefined) has no rejection to ignore); false is the EqualityOperator mutant's case, still tested
    if (returned !== undefined) return Promise.resolve(returned).then(undefined, ignore);
  } catch {
    // See the module comment.
  }
  return undefined;
}

/** Tells the call's event stream, if it has one, of `event`. */
export function emit(config: RetryConfig, event: CallEvent): void {
  callHook(config.onEvent, event);
}

/**
 * Tells `onRetry` and the event stream that the call now waits `event.delayMs`, set by `source`.
 * Returns what settles when an async `onRetry` has: the next attempt waits for it too.
 */
export function reportRetry(config: RetryConfig, event: RetryEvent, source: 'backoff' | 'server'): Promise<unknown> | undefined {
  const held = callHook(config.onRetry, event);
  // The event is made without a stream too: a retry is about to wait, and a guard here would only be a branch more.
  const { attempt, error, delayMs, elapsedMs } = event;
  callHook(config.onEvent, { type: 'retry', attempt, error, delayMs, source, elapsedMs });
  return held;
}

/** Tells `onSuccess` and the event stream, if given, that the call resolved with `value` after `attempts` attempts. */
export function reportSuccess(config: RetryConfig, attempts: number, startedAt: number, value: unknown): void {
  const { onSuccess, onEvent } = config;
  if (onSuccess === undefined && onEvent === undefined) return;
  const elapsedMs = Math.round(config.timers.now() - startedAt);
  callHook(onSuccess, { attempts, elapsedMs, value });
  callHook(onEvent, { type: 'success', attempts, elapsedMs });
}

/**
 * Tells `onGiveUp`, if given, why the call rejected with `error`. `elapsedMs` is given where a
 * RetryError carries it, so that the hook says the same number; else the clock is read.
 */
export function reportGiveUp(
  config: RetryConfig,
  reason: GiveUpReason,
  error: unknown,
  attempts: number,
  startedAt: number,
  elapsedMs?: number,
): void {
  const { onGiveUp, onEvent } = config;
  if (onGiveUp === undefined && onEvent === undefined) return;
  const ms = Math.round(elapsedMs ?? config.timers.now() - startedAt);
  callHook(onGiveUp, { reason, error, attempts, elapsedMs: ms });
  callHook(onEvent, { type: 'give-up', reason, error, attempts, elapsedMs: ms });
}
