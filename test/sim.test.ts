// The fleet simulator's key claims, on reduced scenarios that run in a few seconds, so that a
// change to retry(), the backoff, the budget or the throttle cannot silently undo them.
// `npm run sim` runs the full-size versions and writes the numbers quoted in the README.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { contention, contentionTrial } from '../bench/sim/contention.js';
import { bucketAmplification, runBudgets } from '../bench/sim/budgets.js';
import { lockstep } from '../bench/sim/lockstep.js';
import { type OutageConfig, outage } from '../bench/sim/outage.js';
import { seededRandom } from '../bench/sim/random.js';
import { createAdaptiveThrottle, createRetryBudget } from '../src/index.js';
import { queueState } from '../src/runtime/timer-queue.js';

describe('fleet simulator: contention (AWS OCC model)', () => {
  it('reproduces the AWS reference at 100 clients: none ≈ 1,850 calls / 63 s, full ≈ 800 calls / 5 s', async () => {
    const none = await contention(100, 'none', 3, 1);
    const full = await contention(100, 'full', 3, 1);
    expect(none.calls).toBeGreaterThan(1600);
    expect(none.calls).toBeLessThan(2100);
    expect(none.timeMs).toBeGreaterThan(50_000);
    expect(none.timeMs).toBeLessThan(75_000);
    expect(full.calls).toBeGreaterThan(700);
    expect(full.calls).toBeLessThan(900);
    expect(full.timeMs).toBeGreaterThan(4000);
    expect(full.timeMs).toBeLessThan(6000);
  });

  it('full jitter needs fewer calls and less time than none and than Google’s additive formula', async () => {
    const none = await contention(40, 'none', 3, 2);
    const additive = await contention(40, { additiveMs: 10 }, 3, 2);
    const full = await contention(40, 'full', 3, 2);
    expect(full.calls).toBeLessThan(0.75 * none.calls);
    expect(full.calls).toBeLessThan(0.75 * additive.calls);
    expect(full.timeMs).toBeLessThan(0.25 * none.timeMs);
  });

  it('is deterministic for a seed and leaves no timer behind', async () => {
    const a = await contentionTrial(30, 'full', 99);
    const b = await contentionTrial(30, 'full', 99);
    expect(a).toEqual(b);
    expect(await contentionTrial(30, 'full', 100)).not.toEqual(a);
    expect(queueState()).toEqual({ queued: 0, timerArmed: false });
  });
});

describe('fleet simulator: outage', () => {
  const config: OutageConfig = {
    clients: 100,
    beforeMs: 5_000,
    outageMs: 60_000,
    afterMs: 15_000,
    capacityPerSec: 120,
    seed: 5,
  };

  it('a retry budget per client keeps the load during the outage ≤ 1.1×; without one it is ~maxAttempts×', async () => {
    const plain = await outage(config, { name: 'plain', clientOptions: (rng) => ({ maxAttempts: 3, rng }) });
    const budgeted = await outage(config, {
      name: 'budget',
      clientOptions: (rng) => ({ maxAttempts: 3, rng, budget: createRetryBudget() }),
    });
    expect(plain.amplification).toBeGreaterThan(2.7);
    expect(budgeted.amplification).toBeLessThanOrEqual(1.1);
    expect(budgeted.amplification).toBeGreaterThanOrEqual(1);
    expect(budgeted.recoverySec).toBeLessThanOrEqual(plain.recoverySec);
    expect(budgeted.successAfter).toBeGreaterThan(0.99);
  });

  it('adaptive throttling sheds load during the outage', async () => {
    const rng = seededRandom(3);
    const throttled = await outage(config, {
      name: 'throttle',
      clientOptions: (jitter) => ({ maxAttempts: 3, rng: jitter, throttle: createAdaptiveThrottle({ windowMs: 10_000, rng }) }),
    });
    expect(throttled.amplification).toBeLessThan(1);
  });

  it('without an attempt limit or budget the retries pile up (the library defaults need a budget in a fleet)', async () => {
    const defaults = await outage(config, { name: 'defaults', clientOptions: (rng) => ({ rng }) });
    const budgeted = await outage(config, { name: 'defaults + budget', clientOptions: (rng) => ({ rng, budget: createRetryBudget() }) });
    expect(defaults.amplification).toBeGreaterThan(4);
    expect(budgeted.amplification).toBeLessThanOrEqual(1.1);
  });
});

describe('fleet simulator: budgets across rates', () => {
  it('a token bucket adds maxTokens/2 − 1 retries per client and outage, whatever the rate; a 10 % ratio about 10 %', async () => {
    const rows = await runBudgets(100, 17, () => {}, [
      { requestsPerSec: 1, outageSec: 10, maxTokens: 10 },
      { requestsPerSec: 0.1, outageSec: 60, maxTokens: 10 },
    ]);
    for (const row of rows) {
      expect(row.formula).toBe(bucketAmplification(10, row.requestsPerSec, row.outageSec));
      expect(Math.abs(row.bucket.amplification - row.formula)).toBeLessThan(0.03);
      expect(row.ratio.amplification).toBeLessThanOrEqual(1.4);
    }
    expect(rows.map((r) => r.formula)).toEqual([1.4, 1 + 4 / 6]);
    // A client that sends six requests a minute never reaches a tenth of a retry: the ratio allows none.
    expect((rows[1] as (typeof rows)[number]).ratio.amplification).toBe(1);
  }, 60_000);
});

describe('fleet simulator: synchronisation at the cap', () => {
  const config = { clients: 800, outageMs: 240_000, measureFromMs: 100_000, seed: 11 };

  it('Google’s formula marches in lockstep at the cap; full jitter and afterCap do not', async () => {
    const google = await lockstep(config, { additiveMs: 1000 });
    const afterCap = await lockstep(config, { additiveMs: 16_000, afterCap: true });
    const afterCapSmall = await lockstep(config, { additiveMs: 1000, afterCap: true });
    const full = await lockstep(config, 'full');
    expect(google.peakPer100ms).toBeGreaterThan(3 * full.peakPer100ms);
    expect(google.peakPer100ms).toBeGreaterThan(3 * afterCap.peakPer100ms);
    // 1 s of jitter kept at a 32 s cap only widens the burst slowly, but it does widen it.
    expect(afterCapSmall.peakPer100ms).toBeLessThan(google.peakPer100ms);
    // Between two bursts a fleet on Google's formula sends nothing at all: the arrivals come in a pulse.
    const quietWindows = google.arrivalsPer100ms.slice(1000, 2400).filter((n) => n === 0).length;
    expect(quietWindows).toBeGreaterThan(1000);
  });
});

describe('npm run sim: same seed, same bytes', () => {
  /** Runs the simulator's entry point (scaled down) in its own process; its tables and charts. */
  async function runSim(): Promise<Record<string, string>> {
    const dir = mkdtempSync(join(tmpdir(), 'tenacious-sim-'));
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/sim/main.ts', dir], {
        env: { ...process.env, SIM_SIZE: 'small' },
        maxBuffer: 16 * 1024 * 1024,
      });
      const files: Record<string, string> = { 'stdout.md': stdout };
      for (const name of readdirSync(dir).sort()) files[name] = readFileSync(join(dir, name), 'utf8');
      return files;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('two runs print the same tables and draw the same charts, byte for byte', async () => {
    const [a, b] = await Promise.all([runSim(), runSim()]);
    expect(Object.keys(a)).toEqual([
      'stdout.md',
      'fleet-contention-calls.svg',
      'fleet-contention-time.svg',
      'fleet-lockstep.svg',
      'fleet-outage-load.svg',
      'fleet-sim.json',
      'hedging-latency.svg',
    ]);
    for (const name of Object.keys(a)) expect(b[name], name).toBe(a[name]);
  }, 120_000);
});
