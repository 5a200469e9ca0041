/**
 * The state that calls share, as OpenTelemetry gauges: a retry budget's tokens, an adaptive
 * throttle's rejection probability, a hedger's delay. Their values change with every call, not
 * at any one event, so they are observed (read when a reader collects), not recorded.
 */
import type { MeterProvider, ObservableResult } from '@opentelemetry/api';
import type { RetryTokenBudget } from '../fleet/budget.js';
import type { Hedger } from '../fleet/hedger.js';
import type { AdaptiveThrottle } from '../fleet/throttle.js';
import { type FieldRule, type FieldRules, hasMethods, isPlainObject, mustError, readChecked } from '../util/check.js';
import { api } from './api.js';

/**
 * What `observeFleet()` reports, each by a name of your choice (the `tenacious.fleet.name`
 * attribute: one per backend, say, never per call).
 *
 * @example
 * const fleet: FleetToObserve = { budgets: { storage: storageBudget }, hedgers: { search: searchHedger } };
 */
export interface FleetToObserve {
  /** Budgets from `createRetryBudget()`: `tenacious.budget.tokens`. */
  budgets?: Readonly<Record<string, RetryTokenBudget>>;
  /** Throttles from `createAdaptiveThrottle()`: `tenacious.throttle.rejection_probability`. */
  throttles?: Readonly<Record<string, AdaptiveThrottle>>;
  /** Hedgers from `createHedger()`: `tenacious.hedger.delay`. */
  hedgers?: Readonly<Record<string, Hedger>>;
}

/** Each kind: what a value must have, and what it is called in the messages. */
const KINDS = {
  budgets: { ok: (v: unknown) => typeof (v as RetryTokenBudget | null)?.tokens === 'number', rule: 'come from createRetryBudget()' },
  throttles: { ok: (v: unknown) => hasMethods(v, ['rejectionProbability']), rule: 'come from createAdaptiveThrottle()' },
  hedgers: { ok: (v: unknown) => typeof (v as Hedger | null)?.delayMs === 'number', rule: 'come from createHedger()' },
} satisfies FieldRules;

const BAG: FieldRule = { ok: isPlainObject, rule: 'be an object of names to values, such as { storage: budget }' };
const RULES: FieldRules = { budgets: BAG, throttles: BAG, hedgers: BAG };

/**
 * Reports the state of shared budgets, throttles and hedgers as observable gauges on the meter
 * `tenacious` (of `options.meterProvider`, else the global one), each with the attribute
 * `tenacious.fleet.name`:
 *
 * - `tenacious.budget.tokens` (`{token}`): the tokens a retry budget holds;
 * - `tenacious.throttle.rejection_probability` (`1`): the share of attempts the throttle
 *   refuses now;
 * - `tenacious.hedger.delay` (`s`): the hedging delay a call starting now would use.
 *
 * Returns a function that stops reporting them (so that they can be garbage collected). Bad
 * input throws a TypeError naming the field and the value, now.
 *
 * @example
 * import { createRetryBudget } from 'tenacious';
 * import { observeFleet } from 'tenacious/otel';
 *
 * const storageBudget = createRetryBudget();
 * const stop = observeFleet({ budgets: { storage: storageBudget } });
 * // … at shutdown:
 * stop();
 */
export function observeFleet(fleet: FleetToObserve, options?: { meterProvider?: MeterProvider }): () => void {
  const o = readChecked('observeFleet', fleet, RULES, 'fleet') as FleetToObserve;
  for (const kind of ['budgets', 'throttles', 'hedgers'] as const) {
    for (const [name, value] of Object.entries(o[kind] ?? {})) {
      if (!KINDS[kind].ok(value)) throw mustError(`observeFleet: fleet.${kind}.${name}`, KINDS[kind].rule, value);
    }
  }
  const { meterProvider } = readChecked('observeFleet', options ?? {}, PROVIDER) as { meterProvider?: MeterProvider };
  const meter = (meterProvider ?? api.metrics.getMeterProvider()).getMeter('tenacious');
  const gauges = [
    gauge(
      o.budgets,
      (b) => b.tokens,
      meter.createObservableGauge('tenacious.budget.tokens', {
        description: 'Tokens a retry budget holds: a retry is allowed while it holds more than half its size.',
        unit: '{token}',
      }),
    ),
    gauge(
      o.throttles,
      (t) => t.rejectionProbability(),
      meter.createObservableGauge('tenacious.throttle.rejection_probability', {
        description: 'The share of attempts an adaptive throttle refuses now.',
        unit: '1',
      }),
    ),
    gauge(
      o.hedgers,
      (h) => h.delayMs / 1000,
      meter.createObservableGauge('tenacious.hedger.delay', {
        description: 'The hedging delay a call starting now would use.',
        unit: 's',
      }),
    ),
  ];
  return () => {
    for (const stop of gauges) stop();
  };
}

const PROVIDER: FieldRules = {
  meterProvider: { ok: (v) => hasMethods(v, ['getMeter']), rule: 'be an OpenTelemetry MeterProvider (getMeter)' },
};

/** Observes `read` of each named value on `instrument`; returns what stops it. */
function gauge<V>(
  named: Readonly<Record<string, V>> | undefined,
  read: (value: V) => number,
  instrument: { addCallback(cb: (result: ObservableResult) => void): void; removeCallback(cb: (result: ObservableResult) => void): void },
): () => void {
  const entries = Object.entries(named ?? {});
  const callback = (result: ObservableResult) => {
    for (const [name, value] of entries) result.observe(read(value), { 'tenacious.fleet.name': name });
  };
  // With no entries the callback observes nothing, and the SDK exports no gauge without points.
  instrument.addCallback(callback);
  return () => instrument.removeCallback(callback);
}
