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
 * `createRetryAfterGate`). Asked before every attempt, first attempts included; told each
 * transient failure's `Retry-After` (or gRPC pushback, or 429/503 RateLimit reset).
 *
 * @example
 * const gate: RetryGate = createRetryAfterGate();
 * await Promise.all(ids.map((id) => retryFetch(`https://api.example.com/items/${id}`, undefined, { gate })));
 */
export interface RetryGate {
  /** Milliseconds until calls may send again; 0 (or less) when they may now. */
  waitMs(): number;
  /** A server asked for a pause of `ms` milliseconds: hold every call until it ends. */
  hold(ms: number): void;
}
