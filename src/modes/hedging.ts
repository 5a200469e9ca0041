/**
 * Hedging as a mode of an attempt ("The Tail at Scale", Dean and Barroso, CACM 2013; gRFC A6's
 * hedging policy): when the request has not answered within a short delay, another copy goes
 * out and whichever answers first is the attempt's answer. Copies race within ONE attempt of
 * the call, so the call's deadline, backoff, attempt count, hooks and signal stay the engine's:
 * when every copy fails, the attempt fails, and the engine waits and tries again as it would
 * after any failed attempt.
 *
 * A hedged attempt is its own timer-queue entry (the next copy's moment) on the engine's clock.
 */
import type { AttemptContext, AttemptHost, AttemptMode } from '../types.js';
import { FUNCTION, type FieldRules, atLeast, readChecked, wholeAtLeast } from '../util/check.js';
import { type HedgeEvent, HedgedAttempt, type Settings } from './hedged-attempt.js';
import { type Hedger, hedgerState } from '../fleet/hedger.js';

export type { HedgeEvent };

/**
 * How an attempt is hedged. `delayMs` or `hedger` sets the hedging delay.
 *
 * @example
 * const options: HedgingOptions = { hedger: createHedger(), maxCopies: 2 };
 * await retry(({ signal }) => fetch(url, { signal }), { hedge: hedging(options) });
 */
export interface HedgingOptions {
  /** A fixed hedging delay in milliseconds (>= 0). Takes precedence over the hedger's adaptive one. */
  delayMs?: number;
  /** Shared adaptive delay and extra-load allowance (see `createHedger`). */
  hedger?: Hedger;
  /** Copies per attempt, the first included, so also the most in flight at once. Default 2. */
  maxCopies?: number;
  /** Called before each extra copy; an exception it throws, or an async one's rejection, is ignored. */
  onHedge?: (event: HedgeEvent) => void;
}

/** The rules of hedging's own options (hedge() adds the call's). @internal */
export const HEDGING_RULES: FieldRules = {
  delayMs: /* @__PURE__ */ atLeast(0),
  hedger: { ok: (v) => hedgerState(v) !== undefined, rule: 'come from createHedger()' },
  maxCopies: /* @__PURE__ */ wholeAtLeast(1),
  onHedge: FUNCTION,
};

/**
 * The hedging mode of an attempt, for `retry()`'s and `retryFetch()`'s `hedge` option. Within
 * each attempt:
 *
 * - the first copy is sent at once; when no copy has answered after the hedging delay, another
 *   is sent, up to `maxCopies`, all racing; the first success is the attempt's value and every
 *   other copy's `ctx.signal` aborts (pass it on, so the losers free their sockets);
 * - a copy's transient error sends the next copy at once; an error that is not transient fails
 *   the attempt with that error at once; when no copy is running and none may be sent, the
 *   attempt fails with the last error, which the call judges, backs off and retries as usual;
 * - an error whose server asks to wait (`Retry-After`, gRPC pushback) sends no more copies,
 *   and the call's gate hears it at once; whichever copy's error the attempt fails with, the
 *   next attempt waits until the latest moment any copy's server asked for;
 * - only an operation the call's `idempotent` rule allows to be resent is copied, and each
 *   extra copy needs the call's gate to hold no pause (a held copy is asked for again when the
 *   pause ends), then the budget's consent, the hedger's allowance and the throttle's admission
 *   (a refused copy is asked for again one delay later); the allowance and the budget are
 *   charged only for a copy that goes out;
 * - the delay is `delayMs`, or the hedger's percentile of recent latencies.
 *
 * Bad options throw a `TypeError`/`RangeError` naming the option, now.
 *
 * @example
 * const hedger = createHedger({ percentile: 0.95, maxExtraLoad: 0.05 }); // one per backend
 * const user = await retry(({ signal }) => fetchJson(`/users/${id}`, { signal }), { hedge: hedging({ hedger }) });
 */
export function hedging(options: HedgingOptions): AttemptMode {
  return hedgingMode('hedging', readChecked('hedging', options, HEDGING_RULES) as HedgingOptions);
}

/** The mode for options `o`, checked already against HEDGING_RULES by `where`. @internal */
export function hedgingMode(where: string, o: HedgingOptions): AttemptMode {
  if (o.delayMs === undefined && o.hedger === undefined) {
    throw new TypeError(`${where}: options.delayMs or options.hedger must be given (the hedging delay), got neither`);
  }
  const settings: Settings = { delayMs: o.delayMs, hedger: hedgerState(o.hedger), maxCopies: o.maxCopies ?? 2, onHedge: o.onHedge };
  return Object.freeze({
    run: <T>(fn: (ctx: AttemptContext) => T | PromiseLike<T>, ctx: AttemptContext, host: AttemptHost): Promise<T> =>
      new Promise<T>((resolve, reject) => new HedgedAttempt(fn, ctx, host, settings, resolve, reject).start()),
  });
}
