// The checks of the simulation have power: a world doctored to break a promise is caught. (The
// simulation's runs themselves: sim.test.ts and fetch-sim.test.ts.)
import { describe, expect, it } from 'vitest';
import { INVARIANTS } from './invariants.js';
import { type CallLimits, newCallRecord, newWorldRecord } from './record.js';

const invariant = (name: string) => {
  const found = INVARIANTS.find((i) => i.name === name);
  if (found === undefined) throw new Error(`no invariant ${name}`);
  return found;
};

/** Limits of a call with no option that matters to the check at hand. */
const LIMITS: CallLimits = {
  deadlineMs: 120_000,
  maxAttempts: Infinity,
  maxCopies: 1,
  timeoutOf: undefined,
  throughGate: false,
  idempotentAt: undefined,
  abortAfterMs: undefined,
  hooks: { onRetry: false, onSuccess: false, onGiveUp: false, telemetry: false },
  maxRetryAfterMs: Infinity,
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

describe('telemetry-declined', () => {
  /** A world of one call whose telemetry declined it, which made one request and succeeded, and its twin. */
  const declinedWorld = () => {
    const world = newWorldRecord();
    const call = newCallRecord(0);
    call.limits = { ...LIMITS, hooks: { ...LIMITS.hooks, telemetry: 'declines' } };
    call.startedAt = 0;
    call.telemetryStarts = [{ name: 'sim', service: undefined }];
    call.events.push({ at: 0, seq: 1, event: { type: 'attempt', attempt: 1, elapsedMs: 0 } });
    world.sent.push({ call: 0, seq: 2, at: 0, attempt: 1, copy: 1, endedAt: 5, endedSeq: 3 });
    call.events.push({ at: 5, seq: 4, event: { type: 'success', attempts: 1, elapsedMs: 5 } });
    call.settled = { at: 5, seq: 5, ok: true, value: { call: 0 } };
    call.settleCount = 1;
    world.calls.push(call);
    return world;
  };
  const withTwin = () => {
    const world = declinedWorld();
    world.twin = declinedWorld();
    return world;
  };

  it('passes a declined call that did exactly what it does without telemetry', () => {
    expect(invariant('telemetry-declined').check(withTwin())).toEqual([]);
  });

  it('catches a declined call whose events, requests, outcome or hooks differ from the run without telemetry', () => {
    const world = withTwin();
    const twin = world.twin!;
    twin.calls[0]!.events.splice(0, 1); // no attempt event without telemetry
    twin.sent[0] = { ...twin.sent[0]!, endedAt: 6 };
    twin.calls[0]!.settled = { at: 6, seq: 5, ok: false, error: new RangeError('bad') };
    twin.calls[0]!.successes.push(6);
    expect(
      invariant('telemetry-declined')
        .check(world)
        .map((line) => line.replace(/: [[{].*$/, '')),
    ).toEqual([
      'call 0: outcome not as in the run without telemetry',
      'call 0: events not as in the run without telemetry',
      'call 0: requests not as in the run without telemetry',
      'call 0: hooks not as in the run without telemetry',
    ]);
  });

  it('compares errors by class and message', () => {
    const world = withTwin();
    world.calls[0]!.settled = { at: 5, seq: 5, ok: false, error: new TypeError('options.x') };
    world.twin!.calls[0]!.settled = { at: 5, seq: 5, ok: false, error: new RangeError('options.x') };
    expect(invariant('telemetry-declined').check(world)).toHaveLength(1);
    world.twin!.calls[0]!.settled = { at: 5, seq: 5, ok: false, error: new TypeError('options.x') };
    expect(invariant('telemetry-declined').check(world)).toEqual([]);
  });

  it('catches a declining telemetry asked more than once, or told anything, and a world not run again', () => {
    const world = declinedWorld();
    world.calls[0]!.telemetryStarts!.push({ name: 'sim', service: undefined });
    world.calls[0]!.telemetryAttempts = 1;
    expect(invariant('telemetry-declined').check(world)).toEqual([
      'call 0: the declining telemetry was asked 2 times to start the call, not 1',
      'call 0: the declining telemetry was told 0 events and 1 sends',
      'call 0: the world was not run again without the declining telemetry',
    ]);
  });

  it('asks a telemetry that records its call once too (hooks)', () => {
    const world = declinedWorld();
    const call = world.calls[0]!;
    call.limits = { ...LIMITS, hooks: { ...LIMITS.hooks, telemetry: 'records' } };
    call.telemetryEvents.push(...call.events.map((e) => e.event));
    call.telemetryAttempts = 1;
    expect(invariant('hooks').check(world)).toEqual([]);
    call.telemetryStarts!.push({ name: 'sim', service: undefined });
    expect(invariant('hooks').check(world)).toEqual(['call 0: the telemetry was asked 2 times to start the call']);
  });

  it('expects no question for a call refused before it starts, and checks only declined calls', () => {
    const world = withTwin();
    world.calls[0]!.refused = new RangeError('retry: options.maxAttempts must be …');
    world.twin!.calls[0]!.refused = new RangeError('retry: options.maxAttempts must be …');
    expect(invariant('telemetry-declined').check(world)).toEqual([
      'call 0: the declining telemetry was asked 1 times to start the call, not 0',
    ]);
    const recorded = declinedWorld();
    recorded.calls[0]!.limits = LIMITS;
    expect(invariant('telemetry-declined').check(recorded)).toEqual([]);
  });
});
