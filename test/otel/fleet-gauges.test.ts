// observeFleet(): the state calls share, as gauges a reader collects from the real SDK.
import { describe, expect, it } from 'vitest';
import { createAdaptiveThrottle, createHedger, createRetryBudget } from '../../src/index.js';
import { observeFleet } from '../../src/otel/index.js';
import { collectingProvider } from './sdk.js';
import { useSdk } from './sdk.js';

const sdk = useSdk();

/** Each gauge point of `name` as [fleet name, value]. */
async function gauge(name: string): Promise<Array<[unknown, unknown]>> {
  return (await sdk.points(name)).map((p) => [p.attributes['tenacious.fleet.name'], p.value]);
}

describe('observeFleet', () => {
  it("reports each budget's tokens, each throttle's rejection probability and each hedger's delay in seconds, by name", async () => {
    const storage = createRetryBudget({ maxTokens: 10 });
    const iam = createRetryBudget({ maxTokens: 4 });
    for (let i = 0; i < 3; i++) storage.record(false);
    const throttle = createAdaptiveThrottle({ k: 2, minRequests: 1 });
    for (let i = 0; i < 4; i++) {
      throttle.admit();
      throttle.record(false);
    }
    const hedger = createHedger({ minDelayMs: 250 });
    const stop = observeFleet(
      { budgets: { storage, iam }, throttles: { api: throttle }, hedgers: { search: hedger } },
      { meterProvider: sdk.meterProvider() },
    );
    expect(await gauge('tenacious.budget.tokens')).toEqual([
      ['storage', 7],
      ['iam', 4],
    ]);
    expect(await gauge('tenacious.throttle.rejection_probability')).toEqual([['api', throttle.rejectionProbability()]]);
    expect(throttle.rejectionProbability()).toBeGreaterThan(0);
    expect(await gauge('tenacious.hedger.delay')).toEqual([['search', hedger.delayMs / 1000]]);

    storage.record(true);
    expect(await gauge('tenacious.budget.tokens')).toContainEqual(['storage', storage.tokens]);
    stop(); // read no more: a later change is not reported
    storage.record(true);
    expect(await gauge('tenacious.budget.tokens')).not.toContainEqual(['storage', storage.tokens]);
  });

  it('refuses what is not a budget, a throttle or a hedger, naming the field and the value', () => {
    expect(() => observeFleet({ budgets: { storage: {} as never } })).toThrow(
      'observeFleet: fleet.budgets.storage must come from createRetryBudget(), got {}',
    );
    expect(() => observeFleet({ throttles: { api: createRetryBudget() as never } })).toThrow(
      /^observeFleet: fleet\.throttles\.api must come from createAdaptiveThrottle\(\), got /,
    );
    expect(() => observeFleet({ hedgers: [createHedger()] as never })).toThrow(
      /^observeFleet: fleet\.hedgers must be an object of names to values/,
    );
    // null or undefined where a value should be: the same message, not a TypeError from reading it.
    expect(() => observeFleet({ budgets: { storage: null as never } })).toThrow(
      'observeFleet: fleet.budgets.storage must come from createRetryBudget(), got null',
    );
    expect(() => observeFleet({ hedgers: { search: undefined as never } })).toThrow(
      'observeFleet: fleet.hedgers.search must come from createHedger(), got undefined',
    );
    expect(() => observeFleet({ hedgers: { search: createRetryBudget() as never } })).toThrow(
      /^observeFleet: fleet\.hedgers\.search must come from createHedger\(\), got /,
    );
    expect(() => observeFleet({ budget: {} } as never)).toThrow(/^observeFleet: unknown option "budget" in fleet/);
    expect(() => observeFleet({}, { meterProvider: 1 as never })).toThrow(
      'observeFleet: options.meterProvider must be an OpenTelemetry MeterProvider (getMeter), got 1',
    );
    expect(() => observeFleet({}, { meterProvider: {} as never })).toThrow(
      'observeFleet: options.meterProvider must be an OpenTelemetry MeterProvider (getMeter), got {}',
    );
  });

  it('describes each gauge, with its unit, as a reader of the SDK sees it', async () => {
    const { meterProvider, metrics } = collectingProvider();
    const stop = observeFleet(
      { budgets: { storage: createRetryBudget() }, throttles: { api: createAdaptiveThrottle() }, hedgers: { search: createHedger() } },
      { meterProvider },
    );
    try {
      const described = (await metrics()).map(({ descriptor: { name, unit, description } }) => ({ name, unit, description }));
      expect(described).toEqual([
        {
          name: 'tenacious.budget.tokens',
          unit: '{token}',
          description: 'Tokens a retry budget holds: a retry is allowed while it holds more than half its size.',
        },
        {
          name: 'tenacious.throttle.rejection_probability',
          unit: '1',
          description: 'The share of attempts an adaptive throttle refuses now.',
        },
        { name: 'tenacious.hedger.delay', unit: 's', description: 'The hedging delay a call starting now would use.' },
      ]);
    } finally {
      stop();
    }
  });

  it('reports only the kinds it was given', async () => {
    const { meterProvider, metrics } = collectingProvider();
    const stop = observeFleet({ budgets: { storage: createRetryBudget() } }, { meterProvider });
    try {
      expect((await metrics()).map((m) => [m.descriptor.name, m.dataPoints.length])).toEqual([['tenacious.budget.tokens', 1]]);
    } finally {
      stop();
    }
  });
});
