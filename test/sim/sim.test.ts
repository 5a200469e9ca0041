// The simulation of retry(): seeded worlds of 1–20 calls sharing one budget, throttle, gate and
// hedger, over every option retry() accepts, in virtual time; after every world, every invariant
// (invariants.ts: the docs' promises). `npm test` runs a bounded count; `npm run fuzz` many more
// (SIM_RUNS). A failure prints one replay line (replay.ts).
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { RETRY_RULES } from '../../src/core/options.js';
import { worldArb } from './generator.js';
import { openHarness } from './harness.js';
import { violations } from './invariants.js';
import { newCallRecord, newWorldRecord } from './record.js';
import { simulated, simulate } from './replay.js';
import { buildOptions, makeShared, runWorld } from './world.js';

const FILE = 'test/sim/sim.test.ts';

describe('the simulation of retry()', () => {
  it('generates every option the options reader accepts', async () => {
    const produced = new Set<string>();
    const telemetries = new Set<string | undefined>();
    const record = newWorldRecord();
    const h = openHarness(record, [0.5]);
    try {
      for (const world of fc.sample(worldArb(), { numRuns: 300, seed: 1 })) {
        const shared = makeShared(world.fleet, h);
        for (const call of world.calls) {
          telemetries.add(call.options.telemetry);
          for (const key of Object.keys(buildOptions(call.options, shared, h, newCallRecord(0), record).options)) produced.add(key);
        }
      }
    } finally {
      await h.close(false, []);
    }
    // A new option of retry() fails this test until the generator produces it.
    expect(Object.keys(RETRY_RULES).filter((key) => !produced.has(key))).toEqual([]);
    // A telemetry that declines its call is a case of its own (invariants.ts, telemetry-declined).
    expect([...telemetries].sort()).toEqual(['declines', 'records', undefined]);
  });

  it('keeps every documented promise in every world', async () => {
    await simulate(
      worldArb(),
      async (world) => {
        const record = await runWorld(world);
        simulated.worlds += 1;
        simulated.calls += world.calls.length;
        return violations(record);
      },
      { defaultRuns: 400, runsEnv: 'SIM_RUNS', file: FILE },
    );
  }, 600_000);
});

afterAll(() => {
  console.log(`simulation (retry): ${simulated.calls} calls in ${simulated.worlds} worlds`);
});
