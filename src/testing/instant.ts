/**
 * `instant()`: options that make the same decisions as the ones given, with no time spent
 * waiting. The engine still decides each wait (the backoff and its jitter, a server's
 * Retry-After, the `delay` option), reports it and counts it against the deadline; it only
 * skips the sleep (`INSTANT`, util/check.ts; core/judge.ts and call.ts).
 */
import type { RetryFetchOptions } from '../fetch/fetch-options.js';
import type { RetryGate, RetryOptions } from '../types.js';
import { INSTANT, checkPlainObject, hasMethods } from '../util/check.js';

/**
 * The same options with every wait skipped, for tests: the same classification, idempotency,
 * `maxAttempts`, hooks and backoff (the jitter still drawn from `rng`), so a call makes the same
 * attempts in the same order, and its `onRetry` events carry the same `delayMs`; but the next
 * attempt starts at the next turn of the event loop instead of after the wait.
 *
 * What still holds, and how:
 * - The deadline: each skipped wait counts as time passed, so a call gives up with
 *   `RetryError` `'deadline'` after the same attempts as the real options would (when the
 *   attempts themselves take no time), and a `Retry-After` past the deadline gives up at once.
 * - `attemptTimeoutMs` and the deadline's cut of an attempt still running are real time: a
 *   hung attempt in a test still ends.
 * - A shared `gate` is still told every server pause, for the other calls that use it, but this
 *   call does not wait for one. A hedging delay is a timer within the attempt, not a wait
 *   between attempts: it is not skipped.
 *
 * Works for `retry()`, `withRetry()`, `retryFetch()` and the presets' options alike (spread or
 * override it as any options object), either way round: `instant(gcs({ operation }))` or
 * `gcs(instant({ operation }))`; `iamReadModifyWrite()` and `gcsResumableUpload()` honour it
 * too. Without options, `retry()`'s defaults.
 *
 * @example
 * const options = instant({ ...gcs({ operation: 'objects.get' }), maxAttempts: 4 });
 * const res = await retryFetch(url, undefined, { ...options, fetch: scriptedFetch([503, 503, 200]) });
 * // three attempts, in a few milliseconds; the waits the events report are gcs()'s own
 */
export function instant(): RetryOptions;
// One signature per kind of options, so that the hooks and predicates written inline are typed.
export function instant<const O extends RetryOptions>(options: O): O;
export function instant<const O extends RetryFetchOptions>(options: O): O;
export function instant<const O extends object>(options: O): O;
export function instant(options?: object): object {
  if (options === undefined) return { [INSTANT]: true };
  checkPlainObject('instant: options', options);
  const fast: Record<PropertyKey, unknown> = { ...options, [INSTANT]: true };
  const gate: unknown = (options as { gate?: unknown }).gate;
  // Anything else is left for the options reader to refuse, naming the field.
  if (hasMethods(gate, ['waitMs', 'hold'])) fast.gate = passingGate(gate as RetryGate);
  return fast;
}

/** A gate that tells `gate` of every pause and never holds this call. */
function passingGate(gate: RetryGate): RetryGate {
  return {
    waitMs: () => 0,
    hold: (ms) => gate.hold(ms),
  };
}
