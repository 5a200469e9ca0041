/**
 * The state that hedged calls to one backend share: the window of recent latencies the
 * adaptive delay is read from, and the extra-load allowance hedges draw on (Finagle's backup
 * request filter works the same way: a latency percentile, under a maximum extra load).
 */
import { type FieldRules, atLeast, isFiniteNumber, isInteger, mustError, readChecked } from '../util/check.js';
import { createLatencyWindow, type LatencyWindow } from './latency-window.js';

/**
 * Options of {@link createHedger}.
 *
 * @example
 * // Hedge at the observed p99, never sooner than 20 ms nor later than 2 s, at most 2 % more requests.
 * const hedger = createHedger({ percentile: 0.99, minDelayMs: 20, maxDelayMs: 2_000, maxExtraLoad: 0.02 });
 */
export interface HedgerOptions {
  /** Which percentile of recent first-attempt latencies is the hedging delay. In (0, 1]; default 0.95. */
  percentile?: number;
  /** How many recent latencies the window keeps. An integer in [1, 10 000]; default 100. */
  windowSize?: number;
  /** The floor of the adaptive delay, in milliseconds. Default 1. */
  minDelayMs?: number;
  /** The cap of the adaptive delay, and the delay while the window is empty. Default 1 000. */
  maxDelayMs?: number;
  /**
   * Hedges allowed per call, on average: 0.05 means at most 5 % more requests than calls (a
   * little more at the very start: see {@link createHedger}). In [0, 1]; default 0.05.
   */
  maxExtraLoad?: number;
}

/**
 * Shared by the `hedge()` calls to one backend (`hedge(fn, { hedger })`); its counters can be
 * exported as metrics.
 *
 * @example
 * const hedger = createHedger();
 * setInterval(() => metrics.gauge('search.hedge_delay_ms', hedger.delayMs), 10_000);
 */
export interface Hedger {
  /** The hedging delay a call starting now would use, in milliseconds. */
  readonly delayMs: number;
  /** Calls started with this hedger. */
  readonly calls: number;
  /** Extra attempts they sent (hedges after the delay and after transient errors). */
  readonly hedges: number;
}

/** What `hedge()` reads and updates; kept out of the public type. */
interface HedgerState {
  readonly window: LatencyWindow;
  readonly percentile: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxExtraLoad: number;
  calls: number;
  hedges: number;
  /** Hedges that may be sent now; each call adds maxExtraLoad, each hedge takes 1. */
  allowance: number;
}

/**
 * The most hedges a hedger may save up. A long calm spell must not bank a burst of hedges that
 * would all go out the moment the backend slows down, which is when it can least afford them.
 */
const MAX_BANKED_HEDGES = 10;

const states = new WeakMap<Hedger, HedgerState>();

/**
 * Creates the shared state of adaptive hedging. Give one hedger to every `hedge()` call to the
 * same backend:
 *
 * - the hedging delay is the `percentile` of how long the first attempt of each of the last
 *   `windowSize` successful calls took (when a hedge won, how long it had run by then: a lower
 *   bound above the delay, which leaves the percentile true), clamped to
 *   [`minDelayMs`, `maxDelayMs`]; while the window is empty it is `maxDelayMs`;
 * - each call adds `maxExtraLoad` to an allowance and each hedge takes 1 from it; a hedge is
 *   sent only while a whole one is left. The allowance starts at 1 and holds at most 10, so
 *   after N calls at most `1 + maxExtraLoad × N` hedges have been sent.
 *
 * Throws a `RangeError`/`TypeError` naming the option for a value out of range, a non-number or
 * an unknown option.
 *
 * @example
 * const searchHedger = createHedger({ percentile: 0.95, maxExtraLoad: 0.05 });
 * const results = await hedge(({ signal }) => search(query, { signal }), { hedger: searchHedger });
 */
export function createHedger(options: HedgerOptions = {}): Hedger {
  const o = readHedgerOptions(options);
  const state: HedgerState = { ...o, window: createLatencyWindow(o.windowSize), calls: 0, hedges: 0, allowance: 1 };
  const hedger: Hedger = {
    get delayMs() {
      return hedgerDelay(state);
    },
    get calls() {
      return state.calls;
    },
    get hedges() {
      return state.hedges;
    },
  };
  states.set(hedger, state);
  return hedger;
}

/** The state behind a hedger, or undefined for an object createHedger did not make. @internal */
export function hedgerState(hedger: unknown): HedgerState | undefined {
  return states.get(hedger as Hedger);
}

/** The adaptive delay now. @internal */
export function hedgerDelay(state: HedgerState): number {
  const p = state.window.percentile(state.percentile);
  if (Number.isNaN(p)) return state.maxDelayMs;
  return Math.min(state.maxDelayMs, Math.max(state.minDelayMs, p));
}

/** A call starts: it adds its share to the allowance. @internal */
export function hedgerCallStarted(state: HedgerState): void {
  state.calls++;
  state.allowance = Math.min(MAX_BANKED_HEDGES, state.allowance + state.maxExtraLoad);
}

/** Whether a whole hedge is left in the allowance. @internal */
export function hedgerCanHedge(state: HedgerState): boolean {
  // Allowances are sums of floating-point shares: 20 × 0.05 is 0.9999999999999999.
  return state.allowance >= 1 - 1e-9;
}

/**
 * Takes one hedge from the allowance, for a copy that goes out: asked only after
 * {@link hedgerCanHedge} and every other check said yes, so a refused copy costs nothing. @internal
 */
export function hedgerTakeHedge(state: HedgerState): void {
  state.allowance = Math.max(0, state.allowance - 1);
  state.hedges++;
}

const RULES: FieldRules = {
  percentile: { ok: (v) => isFiniteNumber(v) && v > 0 && v <= 1, rule: 'be a number in (0, 1]', range: true },
  windowSize: { ok: (v) => isInteger(v) && v >= 1 && v <= 10_000, rule: 'be an integer in [1, 10000]', range: true },
  minDelayMs: /* @__PURE__ */ atLeast(0),
  maxDelayMs: { ok: isFiniteNumber, rule: 'be a finite number >= minDelayMs', range: true },
  maxExtraLoad: { ok: (v) => isFiniteNumber(v) && v >= 0 && v <= 1, rule: 'be a number in [0, 1]', range: true },
};

function readHedgerOptions(options: unknown): Required<HedgerOptions> {
  const o = readChecked('createHedger', options, RULES) as HedgerOptions;
  const { percentile = 0.95, windowSize = 100, minDelayMs = 1, maxExtraLoad = 0.05 } = o;
  const maxDelayMs = o.maxDelayMs ?? Math.max(1000, minDelayMs);
  if (maxDelayMs < minDelayMs)
    throw mustError('createHedger: options.maxDelayMs', `be a finite number >= minDelayMs (${minDelayMs})`, maxDelayMs, true);
  return { percentile, windowSize, minDelayMs, maxDelayMs, maxExtraLoad };
}
