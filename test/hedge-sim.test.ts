// The hedging simulation's claims, on smaller runs that take a few seconds, so that a change to
// hedge(), the hedger or the budget cannot silently undo them. `npm run sim` runs the full size
// and prints the numbers the README quotes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type HedgingConfig,
  type HedgingResult,
  OVERLOADED,
  hedging,
  hedgingChart,
  hedgingVariants,
  headline,
  percentileOf,
  serviceTime,
} from '../bench/sim/hedging.js';
import { type LoadedVariant, loadedHedging, loadedVariants, spread } from '../bench/sim/hedging-load.js';
import { seededRandom } from '../bench/sim/random.js';
import { queueState } from '../src/runtime/timer-queue.js';

const [none, fixed, adaptive, budgeted] = hedgingVariants();
const spare: HedgingConfig = { requests: 4000, intervalMs: 1, seed: 7 };
const overloaded: HedgingConfig = { ...OVERLOADED, requests: 3000, seed: 7 };
const run = (config: HedgingConfig, variant: typeof none) => hedging(config, variant as NonNullable<typeof none>);

describe('hedging simulation: a server with a slow tail', () => {
  it('draws the stated latency model: about 1 % of attempts in the tail', () => {
    const rng = seededRandom(3);
    const draws = Array.from({ length: 20_000 }, () => serviceTime(rng));
    const slow = draws.filter((ms) => ms >= 500).length / draws.length;
    expect(slow).toBeGreaterThan(0.008);
    expect(slow).toBeLessThan(0.012);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(8);
  });

  it('adaptive p95 hedging with a 5 % budget cuts p99.9 at least tenfold for at most 5 % more requests', async () => {
    const baseline = await run(spare, none);
    const hedged = await run(spare, adaptive);
    const a = percentileOf(baseline.latencies, 0.999);
    const b = percentileOf(hedged.latencies, 0.999);
    expect(a).toBeGreaterThan(500);
    expect(a / b).toBeGreaterThanOrEqual(10);
    expect(hedged.extraLoad).toBeGreaterThan(0.02);
    expect(hedged.extraLoad).toBeLessThanOrEqual(0.05 + 1 / spare.requests);
    expect(baseline.extraLoad).toBe(0);
    expect(hedged.failed).toBe(0);
    expect(headline(baseline, hedged)).toMatch(/^hedging: p99\.9 \d+ ms -> \d+ ms, extra load \d+(\.\d+)? %$/);
    expect(queueState()).toEqual({ queued: 0, timerArmed: false });
  });

  it('is deterministic for a seed, chart included', async () => {
    const first = await run({ ...spare, requests: 1500 }, adaptive);
    const second = await run({ ...spare, requests: 1500 }, adaptive);
    expect(second).toEqual(first);
    expect(hedgingChart([second])).toBe(hedgingChart([first]));
  });
});

describe('hedging simulation: an overloaded server', () => {
  it('the extra-load limit and the retry budget keep hedges near 5 %, where unlimited hedging multiplies the load', async () => {
    const results: HedgingResult[] = [];
    for (const variant of [none, fixed, adaptive, budgeted]) results.push(await run(overloaded, variant));
    const [plain, unlimited, limited, withBudget] = results as [HedgingResult, HedgingResult, HedgingResult, HedgingResult];
    // The server really is overloaded: without hedging some requests already fail.
    expect(plain.failed).toBeGreaterThan(0);
    expect(unlimited.extraLoad).toBeGreaterThan(0.3);
    expect(limited.extraLoad).toBeLessThanOrEqual(0.05 + 1 / overloaded.requests);
    expect(withBudget.extraLoad).toBeLessThan(0.1);
  });
});

describe('hedging simulation: replicas with queues (bench/sim/hedging-load.ts)', () => {
  const [noHedge, , adaptiveLoaded] = loadedVariants() as [LoadedVariant, LoadedVariant, LoadedVariant];
  const base = { replicas: 10, workers: 4, utilisation: 0.5, requests: 3000, seed: 11 } as const;

  it('a server that stops cancelled copies does less work than without hedging; one that does not, more', async () => {
    const plain = await loadedHedging({ ...base, cancellation: 'none' }, noHedge);
    const runs = await loadedHedging({ ...base, cancellation: 'none' }, adaptiveLoaded);
    const stops = await loadedHedging({ ...base, cancellation: 'stop' }, adaptiveLoaded);
    expect(plain.extraRequests).toBe(0);
    expect(plain.extraWork).toBeCloseTo(0, 9);
    expect(runs.extraRequests).toBeGreaterThan(0.02);
    // The hedger's cap: at most 1 + 0.05 × calls hedges.
    expect(Math.round(runs.extraRequests * base.requests)).toBeLessThanOrEqual(1 + 0.05 * base.requests);
    expect(runs.extraWork).toBeGreaterThan(0);
    expect(stops.extraWork).toBeLessThan(0);
    expect(percentileOf(stops.latencies, 0.999)).toBeLessThan(percentileOf(plain.latencies, 0.999));
    expect(queueState()).toEqual({ queued: 0, timerArmed: false });
  });

  it('latency grows with load, and a seed gives the same run twice', async () => {
    const light = await loadedHedging({ ...base, utilisation: 0.3, cancellation: 'none' }, noHedge);
    const heavy = await loadedHedging({ ...base, utilisation: 0.85, cancellation: 'none' }, noHedge);
    expect(percentileOf(heavy.latencies, 0.5)).toBeGreaterThan(percentileOf(light.latencies, 0.5));
    expect(await loadedHedging({ ...base, utilisation: 0.3, cancellation: 'none' }, noHedge)).toEqual(light);
  });

  it('summarises seeds as median and range', () => {
    expect(spread([5, 1, 3])).toEqual({ median: 3, min: 1, max: 5 });
    expect(spread([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4 });
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1e6, max: 1e6 }), { minLength: 1, maxLength: 20 }), (xs) => {
        const s = spread(xs);
        expect(s.min).toBe(Math.min(...xs));
        expect(s.max).toBe(Math.max(...xs));
        expect(s.median).toBeGreaterThanOrEqual(s.min);
        expect(s.median).toBeLessThanOrEqual(s.max);
        // As many values at or below the median as at or above it.
        expect(xs.filter((x) => x <= s.median).length).toBeGreaterThanOrEqual(xs.length / 2);
        expect(xs.filter((x) => x >= s.median).length).toBeGreaterThanOrEqual(xs.length / 2);
        expect(spread([...xs].reverse())).toEqual(s);
      }),
    );
  });
});
