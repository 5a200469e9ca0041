/**
 * `hedge()`: a call of one hedged attempt, as sugar over `retry(fn, { hedge: hedging(…) })`.
 * The engine (core/call.ts) keeps the deadline and the caller's signal; the hedging mode
 * (hedging.ts) races the copies.
 */
import { RETRY_RULES } from '../core/options.js';
import { retry } from '../core/retry.js';
import type { AttemptContext, AttemptMode, RetryBudget, RetryPredicate, Telemetry } from '../types.js';
import { type FieldRules, mustError, readChecked } from '../util/check.js';
import { type HedgingOptions, HEDGING_RULES, hedgingMode } from './hedging.js';

export { type Hedger, type HedgerOptions, createHedger } from '../fleet/hedger.js';
export { type HedgeEvent, type HedgingOptions, hedging } from './hedging.js';

/**
 * Options of `hedge()`: how copies are hedged, plus the call's deadline, policies and signal.
 *
 * @example
 * const options: HedgeOptions = { hedger: createHedger(), maxCopies: 2, deadlineMs: 5_000 };
 * const page = await hedge(({ signal }) => fetch(url, { signal }), options);
 */
export interface HedgeOptions extends HedgingOptions {
  /** Overall time limit from the call, in milliseconds. Default 120 000. */
  deadlineMs?: number;
  /** Is this error transient? A transient error sends the next copy at once; any other ends the call. Default `isTransient`. */
  retryable?: RetryPredicate;
  /** Is the operation safe to send twice? Default `true`. Asked once, before the first copy; when false, exactly one copy is sent. */
  idempotent?: boolean | ((error: unknown, ctx: AttemptContext) => boolean);
  /** Aborting it rejects at once with `signal.reason` and aborts every copy. */
  signal?: AbortSignal;
  /** A retry budget shared with other calls: each extra copy costs a token, as a failure does. */
  budget?: RetryBudget;
  /** Where the call's telemetry goes (see `RetryOptions.telemetry`): each copy is a send of its own. */
  telemetry?: Telemetry;
  /** The operation's name, for telemetry. */
  name?: string;
  /** The service called, for telemetry (`gcp.client.service`). */
  service?: string;
}

/** hedging()'s rules, and retry()'s own for the call's options hedge() takes. */
const RULES: FieldRules = /* @__PURE__ */ hedgeRules(RETRY_RULES);

function hedgeRules({ deadlineMs, retryable, idempotent, signal, budget, telemetry, name, service }: typeof RETRY_RULES): FieldRules {
  return { ...HEDGING_RULES, deadlineMs, retryable, idempotent, signal, budget, telemetry, name, service };
}

/**
 * Runs `fn`, and when it has not settled after the hedging delay runs a copy of it, up to
 * `maxCopies` copies in all (default 2, the first included), all racing; one attempt of
 * `retry()` in the hedging mode (see `hedging()` for the rules of the race):
 *
 * - the first success wins; every other copy's `ctx.signal` aborts;
 * - an error that is not retryable, from any copy, ends the call with that error, unchanged;
 * - when every copy failed with transient errors and none may be sent, the call rejects with
 *   a `RetryError` (`'attempts'`, `cause` the last error);
 * - settles no later than `deadlineMs` (`RetryError` `'deadline'`), and at once with
 *   `signal.reason` when the caller's signal aborts.
 *
 * To hedge and also back off and retry when every copy failed, pass `hedge: hedging(…)` to
 * `retry()` or `retryFetch()` instead. Invalid options reject the returned promise with a
 * `TypeError`/`RangeError` naming the option, before any copy is sent.
 *
 * @example
 * const hedger = createHedger({ percentile: 0.95, maxExtraLoad: 0.05 }); // one per backend
 * const user = await hedge(({ signal }) => fetchJson(`/users/${id}`, { signal }), { hedger, deadlineMs: 2_000 });
 */
export function hedge<T>(fn: (ctx: AttemptContext) => T | PromiseLike<T>, options: HedgeOptions): Promise<T> {
  let o: HedgeOptions;
  let mode: AttemptMode;
  try {
    if (typeof fn !== 'function') throw mustError('hedge: fn', 'be a function', fn);
    o = readChecked('hedge', options, RULES) as HedgeOptions;
    mode = hedgingMode('hedge', o);
  } catch (error) {
    return Promise.reject(error);
  }
  // The call's options (hedging's own left out) were checked above; those not given are
  // retry()'s defaults, the same as hedge()'s: the deadline, isTransient, idempotent.
  const { delayMs, hedger, maxCopies, onHedge, ...call } = o;
  return retry(fn, { ...call, maxAttempts: 1, hedge: mode });
}
