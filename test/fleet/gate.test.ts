// The Retry-After gate: one server's pause shared by every call through it, first attempts
// included, bounded by each call's deadline and signal. In virtual time.
import { describe, expect, it } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import { RetryError, createRetryAfterGate, retry } from '../../src/index.js';
import { script, withRetryAfter } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();
const backoff = { initialDelayMs: 100, multiplier: 1, maxDelayMs: 100, jitter: 'none' as const };
describe('createRetryAfterGate', () => {
  it('is open until held; a pause counts down on the clock and only ever extends', () => {
    const gate = createRetryAfterGate({ spread: false });
    expect(gate.maxHoldMs).toBe(Infinity);
    expect(gate.waitMs()).toBe(0);
    gate.hold(5000);
    expect(gate.waitMs()).toBe(5000);
    clock.tick(2000);
    expect(gate.waitMs()).toBe(3000);
    gate.hold(1000); // shorter than what is left: no change
    expect(gate.waitMs()).toBe(3000);
    gate.hold(4000);
    expect(gate.waitMs()).toBe(4000);
    clock.tick(4000);
    expect(gate.waitMs()).toBe(0);
    clock.tick(1000);
    expect(gate.waitMs()).toBe(0);
  });

  it('keeps the spread of the pause that set its end when another hint ends at the same moment', () => {
    const gate = createRetryAfterGate({ rng: () => 0.5 });
    gate.hold(2000);
    clock.tick(1000);
    gate.hold(1000); // ends when the pause does: the spread stays the first pause's 2 s
    expect(gate.waitMs()).toBe(1000 + 0.5 * 2000);
    clock.tick(1000);
  });

  it('holds nothing with maxHoldMs 0', () => {
    const gate = createRetryAfterGate({ maxHoldMs: 0 });
    gate.hold(5000);
    expect(gate.waitMs()).toBe(0);
  });

  it('cuts a pause to maxHoldMs', () => {
    const gate = createRetryAfterGate({ maxHoldMs: 30_000, spread: false });
    gate.hold(3_600_000);
    expect(gate.waitMs()).toBe(30_000);
    gate.hold(0);
    expect(gate.waitMs()).toBe(30_000);
  });

  it('spreads the return of held calls over one more pause, each asking drawing its own part', () => {
    const draws = [0, 0.5, 0.999];
    const gate = createRetryAfterGate({ rng: () => draws.shift() as number });
    expect(gate.waitMs()).toBe(0); // open: nothing drawn
    expect(draws).toHaveLength(3);
    gate.hold(2000);
    clock.tick(500);
    expect([gate.waitMs(), gate.waitMs(), gate.waitMs()]).toEqual([1500, 2500, 1500 + 0.999 * 2000]);
    gate.hold(100); // within the pause: the pause and its spread stay
    // The rng ran out: its undefined is named.
    expect(gate.waitMs).toThrow(new RangeError('createRetryAfterGate: options.rng must return a number in [0, 1], got undefined'));
    clock.tick(1500);
    expect(gate.waitMs()).toBe(0);
  });

  it('spreads with Math.random by default, within [the pause left, the pause left + its length)', () => {
    const gate = createRetryAfterGate();
    gate.hold(1000);
    const waits = Array.from({ length: 200 }, () => gate.waitMs());
    for (const wait of waits) {
      expect(wait).toBeGreaterThanOrEqual(1000);
      expect(wait).toBeLessThan(2000);
    }
    expect(new Set(waits).size).toBeGreaterThan(100);
    clock.tick(1000);
  });

  it('refuses bad options and pauses, naming them', () => {
    expect(() => createRetryAfterGate({ maxHoldMs: -1 })).toThrow(
      new RangeError('createRetryAfterGate: options.maxHoldMs must be a number >= 0 (Infinity for no cap), got -1'),
    );
    expect(() => createRetryAfterGate({ maxHoldMs: Number.NaN })).toThrow(RangeError);
    expect(() => createRetryAfterGate({ maxHoldMS: 5 } as never)).toThrow(
      'createRetryAfterGate: unknown option "maxHoldMS" (known: maxHoldMs, spread, rng)',
    );
    expect(() => createRetryAfterGate({ spread: 'yes' } as never)).toThrow(
      new TypeError('createRetryAfterGate: options.spread must be a boolean, got "yes"'),
    );
    expect(() => createRetryAfterGate({ rng: 0.5 } as never)).toThrow(
      new TypeError('createRetryAfterGate: options.rng must be a function, got 0.5'),
    );
    const gate = createRetryAfterGate({ spread: false });
    expect(() => gate.hold(Number.NaN)).toThrow(new RangeError('gate.hold(ms): ms must be a finite number >= 0, got NaN'));
    expect(() => gate.hold(Number.POSITIVE_INFINITY)).toThrow(
      new RangeError('gate.hold(ms): ms must be a finite number >= 0, got Infinity'),
    );
    expect(() => gate.hold(-5)).toThrow(RangeError);
    expect(() => gate.hold('5' as never)).toThrow(new RangeError('gate.hold(ms): ms must be a finite number >= 0, got "5"'));
    expect(() => createRetryAfterGate({ maxHoldMs: '5' } as never)).toThrow(
      new RangeError('createRetryAfterGate: options.maxHoldMs must be a number >= 0 (Infinity for no cap), got "5"'),
    );
    expect(gate.waitMs()).toBe(0);
  });
});

describe('retry() through a gate', () => {
  it("holds a second call's first attempt until the first call's Retry-After has passed", async () => {
    const gate = createRetryAfterGate({ spread: false });
    const first = script(withRetryAfter(429, '5'));
    const second = script();
    const a = track(retry(first.fn, { backoff, gate }));
    await clock.tickAsync(1000);
    const b = track(retry(second.fn, { backoff, gate }));
    await clock.tickAsync(3999);
    expect(second.calls).toEqual([]);
    expect(first.calls).toEqual([0]);
    await clock.tickAsync(1);
    expect(first.calls).toEqual([0, 5000]);
    expect(second.calls).toEqual([5000]);
    expect([a.value, b.value]).toEqual(['ok', 'ok']);
  });

  it('holds a sleeping call past its own backoff, and again when the pause is extended meanwhile', async () => {
    const gate = createRetryAfterGate({ spread: false });
    const call = script(httpError(503));
    const p = track(retry(call.fn, { backoff, gate }));
    await clock.tickAsync(50);
    gate.hold(200); // until 250, past the backoff's 100
    await clock.tickAsync(150);
    gate.hold(150); // until 350
    await clock.tickAsync(149);
    expect(call.calls).toEqual([0]);
    await clock.tickAsync(1);
    expect(call.calls).toEqual([0, 350]);
    expect(p.value).toBe('ok');
  });

  it('fails a call at once whose deadline comes before the pause ends, fn never called', async () => {
    const gate = createRetryAfterGate({ spread: false });
    gate.hold(60_000);
    const call = script();
    const p = track(retry(call.fn, { gate, deadlineMs: 30_000 }));
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect(p.error).toBeInstanceOf(RetryError);
    expect(p.error).toMatchObject({ reason: 'deadline', attempts: 0, elapsedMs: 0 });
    expect(call.calls).toEqual([]);
  });

  it("gives up at once when a retry's pause would pass the deadline, with the failure as the cause", async () => {
    const gate = createRetryAfterGate({ spread: false });
    const error = httpError(503);
    const call = script(error);
    const p = track(retry(call.fn, { backoff, gate, deadlineMs: 10_000 }));
    await clock.tickAsync(50);
    gate.hold(20_000);
    await clock.tickAsync(50);
    expect(p.state).toBe('rejected');
    expect(p.error).toMatchObject({ reason: 'deadline', attempts: 1, elapsedMs: 100, cause: error });
  });

  it("a caller's abort ends the pause at once", async () => {
    const gate = createRetryAfterGate({ spread: false });
    gate.hold(10_000);
    const controller = new AbortController();
    const call = script();
    const p = track(retry(call.fn, { gate, signal: controller.signal }));
    await clock.tickAsync(1000);
    controller.abort(new Error('user left'));
    await clock.tickAsync(0);
    expect(p.error).toEqual(new Error('user left'));
    expect(call.calls).toEqual([]);
  });

  it('is held by a gRPC pushback, and not by the hint of a failure that is not retried', async () => {
    const pushback = Object.assign(new Error('UNAVAILABLE'), {
      code: 14,
      metadata: { get: (key: string) => (key === 'grpc-retry-pushback-ms' ? ['700'] : []) },
    });
    const gate = createRetryAfterGate({ spread: false });
    await expect(retry(script(httpError(400, { headers: { 'retry-after': '9' } })).fn, { gate })).rejects.toMatchObject({ status: 400 });
    expect(gate.waitMs()).toBe(0);
    const p = track(retry(script(pushback).fn, { backoff, gate }));
    await clock.tickAsync(0);
    expect(gate.waitMs()).toBe(700);
    await clock.tickAsync(700);
    expect(p.value).toBe('ok');
  });

  it('is held by a call that gives up on the hinted failure (not idempotent)', async () => {
    const gate = createRetryAfterGate({ spread: false });
    const p = track(retry(script(withRetryAfter(429, '3')).fn, { gate, idempotent: false }));
    await clock.tickAsync(0);
    expect(p.error).toMatchObject({ status: 429 });
    expect(gate.waitMs()).toBe(3000);
    await clock.tickAsync(3000);
  });

  it('asks a gate of your own, and a gate that throws fails the call with its error', async () => {
    const asked: string[] = [];
    const own = {
      waitMs: () => {
        asked.push('wait');
        return 0;
      },
      hold: (ms: number) => asked.push(`hold ${ms}`),
    };
    const p = track(retry(script(withRetryAfter(429, '1')).fn, { backoff, gate: own }));
    await clock.tickAsync(1000);
    expect(p.value).toBe('ok');
    expect(asked).toEqual(['wait', 'hold 1000', 'wait']);
    const broken = new Error('gate down');
    const failing = {
      waitMs: () => {
        throw broken;
      },
      hold: () => {},
    };
    await expect(retry(script().fn, { gate: failing })).rejects.toBe(broken);
    expect(() => retry(script().fn, { gate: { waitMs: () => 0 } as never })).toThrow(
      new TypeError('retry: options.gate must come from createRetryAfterGate() (waitMs, hold), got {}'),
    );
  });
});

describe('retryFetch through a gate', () => {
  it("a 429's RateLimit-Reset holds the other requests to the host", async () => {
    const sent: Array<{ url: string; at: number }> = [];
    const fetchFn: typeof fetch = async (input) => {
      sent.push({ url: String(input), at: Date.now() });
      return sent.length === 1
        ? new Response('slow down', { status: 429, headers: { 'ratelimit-reset': '2' } })
        : new Response(`ok ${sent.length}`);
    };
    const gate = createRetryAfterGate({ spread: false });
    const options = { fetch: fetchFn, gate, backoff };
    const first = track(retryFetch('http://x.test/a', undefined, options));
    await clock.tickAsync(10);
    const second = track(retryFetch('http://x.test/b', undefined, options));
    await clock.tickAsync(1989);
    expect(sent).toEqual([{ url: 'http://x.test/a', at: 0 }]);
    await clock.tickAsync(1);
    expect(sent.map((s) => s.at)).toEqual([0, 2000, 2000]);
    expect((first.value as Response).status).toBe(200);
    expect((second.value as Response).status).toBe(200);
  });
});
