// The checks of the simulation have power: a world doctored to break a promise is caught. (The
// simulation's runs themselves: sim.test.ts and fetch-sim.test.ts.)
import { describe, expect, it } from 'vitest';
import { INVARIANTS } from './invariants.js';
import { newWorldRecord } from './record.js';

const invariant = (name: string) => {
  const found = INVARIANTS.find((i) => i.name === name);
  if (found === undefined) throw new Error(`no invariant ${name}`);
  return found;
};

describe('gate-hold-capped', () => {
  it("catches a gate that takes a server's far-off hint at its word, past maxHoldMs", () => {
    const world = newWorldRecord();
    // The server asked for 1,000 s; the gate was made with maxHoldMs 1 s.
    world.holds.push({ at: 0, seq: 0, ms: 1_000_000, pause: 1_000_000 });
    world.gateWaits.push({ at: 10, waitMs: 999_990, maxHoldMs: 1000 });
    expect(invariant('gate-hold-capped').check(world)).toEqual([
      'the gate answered a wait of 999990 ms at 10 ms; the hints told it allow 1990 ms (maxHoldMs 1000)',
    ]);
  });

  it('allows what is left of the capped pause plus a spread of at most its length, and nothing before any hint', () => {
    const world = newWorldRecord();
    world.gateWaits.push({ at: 0, waitMs: 0, maxHoldMs: 1000 });
    world.holds.push({ at: 5, seq: 1, ms: 5000, pause: 1000 });
    world.gateWaits.push({ at: 10, waitMs: 1990, maxHoldMs: 1000 });
    expect(invariant('gate-hold-capped').check(world)).toEqual([]);
    world.gateWaits.push({ at: 10, waitMs: 1996, maxHoldMs: 1000 });
    world.gateWaits.push({ at: 1, waitMs: 1, maxHoldMs: 1000 });
    expect(invariant('gate-hold-capped').check(world)).toHaveLength(2);
  });
});
