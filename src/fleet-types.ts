/**
 * The interfaces of what many calls share: a retry budget, an adaptive throttle and a
 * Retry-After gate. src/fleet/ implements them; any object with these methods will do.
 */

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
 * Holds back every call that shares it while a server has asked for a pause (see
 * `createRetryAfterGate`). Asked before every attempt, first attempts included, and before
 * each hedged copy; told each transient failure's `Retry-After` (or gRPC pushback, or 429/503
 * RateLimit reset), a hedged copy's as soon as it fails.
 *
 * @example
 * const gate: RetryGate = createRetryAfterGate();
 * await Promise.all(ids.map((id) => retryFetch(`https://api.example.com/items/${id}`, undefined, { gate })));
 */
export interface RetryGate {
  /**
   * Milliseconds until calls may send again; 0 (or less) when they may now. `remainingMs` is how
   * long the asking call has left before its deadline (absent: no deadline to fit): a wait at or
   * past it fails the call at once, so whatever a gate adds to the pause itself (a random
   * spread) must fit within it.
   */
  waitMs(remainingMs?: number): number;
  /**
   * A server asked for a pause of `ms` milliseconds: hold every call until it ends. `ms` is any
   * number >= 0, `Infinity` included (a hint too large for a double).
   */
  hold(ms: number): void;
}
