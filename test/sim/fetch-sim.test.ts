// The simulation of retryFetch: worlds of 1–8 calls (URLs, Requests of this realm and of undici's
// package) against a scripted server in virtual time, every fetch promise checked after every
// world (fetch-invariants.ts). Replay and counts as in sim.test.ts (replay.ts).
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FETCH_RULES } from '../../src/fetch/fetch-options.js';
import { fetchWorldArb } from './fetch-generator.js';
import { fetchViolations } from './fetch-invariants.js';
import { runFetchWorld } from './fetch-world.js';
import { simulated, simulate } from './replay.js';

const FILE = 'test/sim/fetch-sim.test.ts';

/** retry() options the fetch worlds leave to the retry() simulation (sim.test.ts), which produces every one of them. */
const LEFT_TO_RETRY_SIM = new Set([
  'retryOnResult',
  'retryable',
  'idempotent',
  'delay',
  'countsAsAttempt',
  'onRetry',
  'onSuccess',
  'onGiveUp',
  'onEvent',
  'budget',
  'throttle',
  'unref',
  'telemetry',
  'name',
  'service',
]);

describe('the simulation of retryFetch', () => {
  it("generates every option of retryFetch's own (the rest: sim.test.ts)", async () => {
    const produced = new Set<string>();
    for (const world of fc.sample(fetchWorldArb, { numRuns: 200, seed: 1 })) {
      for (const call of world.calls) {
        for (const key of Object.keys(call.options)) produced.add(key);
        // Always given by the driver (fetch-world.ts): the server, the backoff, the rng, the caller's signal.
        for (const key of ['fetch', 'backoff', 'rng', 'signal']) produced.add(key);
      }
    }
    const missing = Object.keys(FETCH_RULES).filter(
      (key) => !produced.has(key === 'abortAtMs' ? 'signal' : key) && !LEFT_TO_RETRY_SIM.has(key),
    );
    expect(missing).toEqual([]);
  });

  it('keeps every documented promise of retryFetch in every world', async () => {
    await simulate(
      fetchWorldArb,
      async (world) => {
        const record = await runFetchWorld(world);
        simulated.worlds += 1;
        simulated.calls += world.calls.length;
        return fetchViolations(record);
      },
      { defaultRuns: 60, runsEnv: 'SIM_FETCH_RUNS', file: FILE },
    );
  }, 600_000);
});

afterAll(() => {
  console.log(`simulation (retryFetch): ${simulated.calls} calls in ${simulated.worlds} worlds`);
});
