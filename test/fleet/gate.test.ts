// The Retry-After gate: one server's pause shared by every call through it, first attempts
// included, bounded by each call's deadline and signal. In virtual time.
import { describe, expect, it } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import { RetryError, createRetryAfterGate, hedging, retry, systemClock } from '../../src/index.js';
import { scriptedFetch } from '../../src/testing/index.js';
import { script, withRetryAfter } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';
import { startLoopback } from '../helpers/loopback.js';
import { ioUntil } from '../helpers/virtual-io.js';

const clock = useVirtualClock();
const backoff = { initialDelayMs: 100, multiplier: 1, maxDelayMs: 100, jitter: 'none' as const };
describe('createRetryAfterGate', () => {
  it('is open until held; a pause counts down on the clock and only ever extends', () => {
    const gate = createRetryAfterGate({ spread: false });
    expect(gate.maxHoldMs).toBe(64_000);
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

  it('is open at first on a clock that reads below 0 (a clock may have any origin)', () => {
    const below = { ...systemClock, now: () => systemClock.now() - 3_600_000 };
    const gate = createRetryAfterGate({ spread: false, clock: below });
    expect(gate.waitMs()).toBe(0);
    gate.hold(1000);
    expect(gate.waitMs()).toBe(1000);
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

  // Regression (issue 34): a hint too large for a double (Infinity) threw the gate's RangeError.
  it('takes a pause of Infinity (a hint too large for a double) as one of maxHoldMs', () => {
    const capped = createRetryAfterGate({ maxHoldMs: 30_000, spread: false });
    capped.hold(Number.POSITIVE_INFINITY);
    expect(capped.waitMs()).toBe(30_000);
    const byDefault = createRetryAfterGate({ spread: false });
    byDefault.hold(Number.POSITIVE_INFINITY);
    expect(byDefault.waitMs()).toBe(64_000);
    clock.tick(64_000);
    expect([capped.waitMs(), byDefault.waitMs()]).toEqual([0, 0]);
  });

  it('with maxHoldMs Infinity, holds a pause of Infinity for ever, spread or not (never NaN)', () => {
    for (const rng of [() => 0, () => 0.5]) {
      const gate = createRetryAfterGate({ maxHoldMs: Number.POSITIVE_INFINITY, rng });
      gate.hold(Number.POSITIVE_INFINITY);
      expect([gate.waitMs(), gate.waitMs(5000)]).toEqual([Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]);
    }
  });

  // Regression (issue 34): the spread was drawn over the whole pause, whatever the asking call had left.
  it("cuts the spread to what the asking call's deadline leaves after the pause, less one timer turn", () => {
    let draws = 0;
    const gate = createRetryAfterGate({
      rng: () => {
        draws++;
        return 0.9;
      },
    });
    gate.hold(1000);
    expect(gate.waitMs()).toBe(1000 + 0.9 * 1000); // no deadline given: the whole pause
    expect(gate.waitMs(5000)).toBe(1000 + 0.9 * 1000); // room for the whole spread
    expect(gate.waitMs(1500)).toBe(1000 + 0.9 * 499); // 500 ms left after the pause, 1 for the timer
    expect(draws).toBe(3);
    // No room left for a spread: nothing drawn.
    expect(gate.waitMs(1001)).toBe(1000); // the pause ends one timer turn before the deadline
    expect(gate.waitMs(1000.5)).toBe(1000); // the pause ends as good as at the deadline
    expect(gate.waitMs(800)).toBe(1000); // the pause itself passes the deadline: told as it is
    expect(draws).toBe(3);
    clock.tick(1000);
    expect(gate.waitMs(10)).toBe(0);
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
      'createRetryAfterGate: unknown option "maxHoldMS" (did you mean "maxHoldMs"?)',
    );
    expect(() => createRetryAfterGate({ spread: 'yes' } as never)).toThrow(
      new TypeError('createRetryAfterGate: options.spread must be a boolean, got "yes"'),
    );
    expect(() => createRetryAfterGate({ rng: 0.5 } as never)).toThrow(
      new TypeError('createRetryAfterGate: options.rng must be a function, got 0.5'),
    );
    const gate = createRetryAfterGate({ spread: false });
    expect(() => gate.hold(Number.NaN)).toThrow(
      new RangeError('gate.hold(ms): ms must be a number >= 0 (Infinity for "forever"), got NaN'),
    );
    expect(() => gate.hold(-5)).toThrow(new RangeError('gate.hold(ms): ms must be a number >= 0 (Infinity for "forever"), got -5'));
    expect(() => gate.hold(Number.NEGATIVE_INFINITY)).toThrow(RangeError);
    expect(() => gate.hold('5' as never)).toThrow(
      new RangeError('gate.hold(ms): ms must be a number >= 0 (Infinity for "forever"), got "5"'),
    );
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

  // Regression (issue 34): with rng pinned at 0.9, pause + spread passed the deadline and all 20 failed at once.
  it('fails early only a call whose deadline comes before the pause itself ends: the spread is cut to fit', async () => {
    const gate = createRetryAfterGate({ rng: () => 0.9 });
    gate.hold(1000);
    const calls = Array.from({ length: 20 }, () => script());
    const settled = calls.map(({ fn }) => track(retry(fn, { gate, deadlineMs: 1500 })));
    const late = track(retry(script().fn, { gate, deadlineMs: 1000 }));
    await clock.tickAsync(0);
    expect(late.error).toMatchObject({ reason: 'deadline', attempts: 0 });
    await clock.tickAsync(1499);
    expect(settled.map((p) => p.state)).toEqual(Array(20).fill('resolved'));
    // Each came back after the pause, within what its deadline left: 1000 + 0.9 × 499 ms, on a whole timer turn.
    expect(calls.map(({ calls: at }) => at)).toEqual(Array(20).fill([1450]));
  });

  it('fits the spread to the deadline left when a call wakes from its backoff into a pause', async () => {
    const gate = createRetryAfterGate({ rng: () => 0.9 });
    const call = script(httpError(503));
    const p = track(retry(call.fn, { backoff, gate, deadlineMs: 1500 }));
    await clock.tickAsync(50);
    gate.hold(1000); // until 1050
    await clock.tickAsync(50);
    // At 100, 1400 ms left: 950 of pause, then 0.9 of the 449 ms the deadline leaves after it.
    await clock.tickAsync(1354);
    expect(call.calls).toEqual([0]);
    await clock.tickAsync(1);
    expect(call.calls).toEqual([0, 1455]);
    expect(p.value).toBe('ok');
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

  // Regression (issue 34): Retry-After of 309+ digits, or a RateLimit-Reset or pushback as large, is
  // Infinity: gate.hold() threw its RangeError and every call through the gate rejected with it.
  it.each([
    ['Retry-After of 400 digits', () => withRetryAfter(503, '9'.repeat(400))],
    ["a 429's RateLimit-Reset of 400 digits", () => httpError(429, { headers: { 'ratelimit-reset': '9'.repeat(400) } })],
    [
      'a gRPC pushback of 400 digits',
      () =>
        Object.assign(new Error('UNAVAILABLE'), {
          code: 14,
          metadata: { get: (key: string) => (key === 'grpc-retry-pushback-ms' ? ['9'.repeat(400)] : []) },
        }),
    ],
  ])('handles a hint too large for a double (%s) as without a gate, and holds the gate maxHoldMs', async (_name, hinted) => {
    const outcomes = [];
    for (const gate of [undefined, createRetryAfterGate({ spread: false })]) {
      const error = hinted();
      const p = track(retry(script(error).fn, { backoff, gate }));
      await clock.tickAsync(0);
      expect(p.error).toBeInstanceOf(RetryError);
      expect(p.error).toMatchObject({ reason: 'deadline', attempts: 1, cause: error });
      outcomes.push((p.error as RetryError).message);
      expect(gate?.waitMs()).toBe(gate === undefined ? undefined : 64_000);
    }
    expect(outcomes[1]).toBe(outcomes[0]);
    await clock.tickAsync(64_000);
  });

  // Regression (issue 34): with maxHoldMs Infinity by default, a far-future date held the gate until a restart.
  it('holds for at most 64 s by default on a Retry-After date far away: a call with the default deadline then goes', async () => {
    const gate = createRetryAfterGate({ spread: false });
    const year9999 = withRetryAfter(503, 'Fri, 31 Dec 9999 23:59:59 GMT');
    const first = track(retry(script(year9999).fn, { backoff, gate }));
    await clock.tickAsync(0);
    expect(first.error).toMatchObject({ reason: 'deadline', attempts: 1, cause: year9999 });
    const second = script();
    const p = track(retry(second.fn, { backoff, gate }));
    await clock.tickAsync(63_999);
    expect(second.calls).toEqual([]);
    await clock.tickAsync(1);
    expect(second.calls).toEqual([64_000]);
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
    await expect(retry(script().fn, { gate: { waitMs: () => 0 } as never })).rejects.toThrow(
      new TypeError('retry: options.gate must come from createRetryAfterGate() (waitMs, hold), got {}'),
    );
  });
});

describe('retryFetch through a gate', () => {
  // Regression (issue 34): the gate threw a RangeError instead of the 429 being returned.
  it('returns at once, as without a gate, a 429 whose Retry-After is too large for a double', async () => {
    const statuses = [];
    for (const gate of [undefined, createRetryAfterGate({ spread: false })]) {
      const fetch = scriptedFetch([{ status: 429, headers: { 'retry-after': '9'.repeat(400) }, body: 'come back never' }]);
      const res = await retryFetch('http://x.test/', undefined, { fetch, backoff, gate });
      expect(Date.now()).toBe(0);
      statuses.push([res.status, await res.text(), fetch.requests.length]);
    }
    expect(statuses).toEqual([
      [429, 'come back never', 1],
      [429, 'come back never', 1],
    ]);
    await clock.tickAsync(64_000);
  });

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

  // Regression (issue 34): copies asked the budget, the hedger and the throttle, never the gate,
  // so call A's second copy went out at 100 ms, in the middle of the pause call B was told of.
  it('sends no hedged copy during a pause: the copy waits for the pause to end (loopback, real fetch)', async () => {
    const arrived: string[] = [];
    const server = await startLoopback((req, res) => {
      arrived.push(`${req.url}@${Date.now()}`);
      if (arrived.length === 1) return; // call A's first copy: no answer (aborted once a copy wins)
      if (req.url === '/b' && arrived.filter((at) => at.startsWith('/b@')).length === 1) {
        res.writeHead(429, { 'retry-after': '2' });
        return res.end('slow down');
      }
      res.end(`ok ${req.url}`);
    });
    try {
      const sent: string[] = [];
      // The real fetch, recording when each request goes out (on the virtual clock).
      const fetchFn: typeof fetch = (input, init) => {
        sent.push(`${new URL(String(input)).pathname}@${Date.now()}`);
        return fetch(input, init);
      };
      const gate = createRetryAfterGate({ spread: false });
      const options = { fetch: fetchFn, gate, backoff, deadlineMs: 10_000 };
      const a = track(retryFetch(`${server.url}/a`, undefined, { ...options, hedge: hedging({ delayMs: 100 }) }));
      await ioUntil(() => arrived.length === 1, "call A's first copy reached the server");
      await clock.tickAsync(10);
      const b = track(retryFetch(`${server.url}/b`, undefined, options));
      await ioUntil(() => gate.waitMs() > 0, "call B's 429 held the gate");
      expect(gate.waitMs()).toBe(2000);
      await clock.tickAsync(90); // call A's hedging delay has passed, within the pause
      expect(sent).toEqual(['/a@0', '/b@10']);
      await clock.tickAsync(1909);
      expect(sent).toEqual(['/a@0', '/b@10']);
      await clock.tickAsync(1); // the pause ends at 2010: B's retry and A's copy go out
      await ioUntil(() => a.state !== 'pending' && b.state !== 'pending', 'both calls settled');
      expect(sent.slice(2).sort()).toEqual(['/a@2010', '/b@2010']);
      expect(arrived.slice(2).sort()).toEqual(['/a@2010', '/b@2010']);
      expect(await (a.value as Response).text()).toBe('ok /a');
      expect(await (b.value as Response).text()).toBe('ok /b');
    } finally {
      await server.close();
      await clock.runAllAsync(); // undici's own timers (its keep-alive clock) run on the virtual clock
    }
  });
});

// Found by the simulation (test/sim): a first attempt that a gate's pause held was started from
// the timer after the hand-over, where nothing queued its limit: it ran with neither its attempt
// timeout nor the deadline, and a hung one never settled.
describe('a first attempt held by a pause keeps its limits', () => {
  const hang = () => new Promise<never>(() => {});

  it('its attempt timeout, counted from when it goes', async () => {
    const gate = createRetryAfterGate({ spread: false });
    gate.hold(1000);
    const p = track(retry(hang, { gate, attemptTimeoutMs: 100, deadlineMs: 5000, maxAttempts: 1 }));
    await clock.tickAsync(1099);
    expect(p.state).toBe('pending');
    await clock.tickAsync(1);
    expect(p.error).toBeInstanceOf(RetryError);
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 1, elapsedMs: 1100 });
  });

  it('the deadline, hedged or not', async () => {
    for (const hedge of [undefined, hedging({ delayMs: 50 })]) {
      const gate = createRetryAfterGate({ spread: false });
      gate.hold(1000);
      const p = track(retry(hang, { gate, deadlineMs: 1500, hedge }));
      await clock.tickAsync(1499);
      expect(p.state).toBe('pending');
      await clock.tickAsync(1);
      expect(p.error).toMatchObject({ reason: 'deadline', attempts: 1, elapsedMs: 1500 });
    }
  });
});
