/**
 * Calling the user's hooks (onRetry, onSuccess, onGiveUp) so that they can never change what
 * retry() does: what a hook throws is ignored, and so is a rejection of what it returns (an
 * async hook). The call has settled before onSuccess and onGiveUp run, so an abort they raise
 * comes too late to matter.
 */
import { steadyNow } from '../runtime/clock.js';
import type { GiveUpReason } from '../types.js';
import { ignore } from './context.js';
import type { RetryConfig } from './options.js';

/** Calls `hook` with `event`, isolated from the loop. */
export function callHook<E>(hook: (event: E) => unknown, event: E): void {
  try {
    const returned = hook(event);
    if (returned !== undefined) Promise.resolve(returned).then(undefined, ignore);
  } catch {
    // See the module comment.
  }
}

/** Tells `onSuccess`, if given, that the call resolved with `value` after `attempts` attempts. */
export function reportSuccess(config: RetryConfig, attempts: number, startedAt: number, value: unknown): void {
  const { onSuccess } = config;
  if (onSuccess !== undefined) callHook(onSuccess, { attempts, elapsedMs: Math.round(steadyNow() - startedAt), value });
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
  const { onGiveUp } = config;
  if (onGiveUp !== undefined) {
    callHook(onGiveUp, { reason, error, attempts, elapsedMs: Math.round(elapsedMs ?? steadyNow() - startedAt) });
  }
}
