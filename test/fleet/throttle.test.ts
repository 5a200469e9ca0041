import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../../bench/sim/random.js';
import { throttleProbability } from '../../src/fleet/throttle.js';
import { createAdaptiveThrottle, retry, RetryError, systemClock, ThrottledError } from '../../src/index.js';
import { queueState } from '../../src/runtime/timer-queue.js';
import { httpError, installClock, type InstalledClock, track } from '../helpers/clock.js';

let clock: InstalledClock;
beforeEach(() => {
  clock = installClock();
});
afterEach(() => {
  try {
    expect(queueState()).toEqual({ queued: 0, timerArmed: false });
  } finally {
    clock.uninstall();
  }
});

/** A small seeded generator (mulberry32) for reproducible draws in tests. */
const seeded = seededRandom;

const never = () => 0.999_999_999; // a draw that only a probability of ~1 rejects

// Tests of the formula itself pass minRequests: 0, so that it applies from the first request;
// the default minimum has tests of its own ('createAdaptiveThrottle: the minimum of requests').

describe('createAdaptiveThrottle: the SRE book formula', () => {
  it('admits everything while the server accepts everything', () => {
    const throttle = createAdaptiveThrottle({ rng: () => 0 });
    for (let i = 0; i < 1000; i++) {
      expect(throttle.admit()).toBe(true);
      throttle.record(true);
    }
    expect(throttle.rejectionProbability()).toBe(0);
    expect(throttle.requests).toBe(1000);
    expect(throttle.accepts).toBe(1000);
  });

  it('computes max(0, (requests − k·accepts) / (requests + 1)) on known counts', () => {
    const throttle = createAdaptiveThrottle({ k: 2, rng: never });
    // 10 requests, 3 accepted: (10 − 6) / 11.
    for (let i = 0; i < 10; i++) {
      throttle.admit();
      throttle.record(i < 3);
    }
    expect(throttle.rejectionProbability()).toBeCloseTo(4 / 11, 12);
    const error = throttle.error();
    expect(error).toBeInstanceOf(ThrottledError);
    expect((error as ThrottledError).probability).toBeCloseTo(4 / 11, 12);
    expect(error.message).toMatch(/rejection probability 0\.364: 3 of the last 10 requests accepted/);
  });

  it('property: the probability follows the formula for any k and any outcomes', () => {
    fc.assert(
      fc.property(fc.double({ min: 1, max: 10, noNaN: true }), fc.array(fc.boolean(), { maxLength: 200 }), (k, outcomes) => {
        const throttle = createAdaptiveThrottle({ k, minRequests: 0, rng: never });
        let requests = 0;
        let accepts = 0;
        for (const accepted of outcomes) {
          const expected = Math.max(0, (requests - k * accepts) / (requests + 1));
          expect(throttle.rejectionProbability()).toBeCloseTo(expected, 12);
          expect(throttle.admit()).toBe(true); // the draw is never below p < 1
          requests++;
          throttle.record(accepted);
          if (accepted) accepts++;
          expect(throttle.requests).toBe(requests);
          expect(throttle.accepts).toBe(accepts);
        }
      }),
    );
  });

  it('counts locally rejected attempts as requests, as the book does', () => {
    const throttle = createAdaptiveThrottle({ minRequests: 0, rng: () => 0 }); // every draw below p rejects
    throttle.admit();
    throttle.record(false); // 1 request, 0 accepts: p = 1/2
    expect(throttle.admit()).toBe(false);
    expect(throttle.requests).toBe(2);
    expect(throttle.accepts).toBe(0);
    expect(throttle.rejectionProbability()).toBeCloseTo(2 / 3, 12);
  });

  it('rejects when the draw is below the probability, admits at or above it', () => {
    const draws = [0.49, 0.5];
    const throttle = createAdaptiveThrottle({ minRequests: 0, rng: () => draws.shift() ?? 0 });
    throttle.admit();
    throttle.record(false); // p = 0.5
    expect(throttle.admit()).toBe(false); // 0.49 < 0.5
    throttle.record(false); // not reached in retry(), but harmless: p from counts only
    // requests 2, accepts 0: p = 2/3; 0.5 < 2/3 → rejected
    expect(throttle.admit()).toBe(false);
  });

  it('does not draw from the rng while the probability is 0', () => {
    let draws = 0;
    const throttle = createAdaptiveThrottle({
      rng: () => {
        draws++;
        return 0.5;
      },
    });
    for (let i = 0; i < 50; i++) {
      throttle.admit();
      throttle.record(true);
    }
    expect(draws).toBe(0);
  });

  it('property: the same rng sequence gives the same admissions (determinism)', () => {
    fc.assert(
      fc.property(fc.integer(), fc.array(fc.boolean(), { minLength: 1, maxLength: 300 }), (seed, outcomes) => {
        const run = () => {
          const throttle = createAdaptiveThrottle({ rng: seeded(seed) });
          return outcomes.map((accepted) => {
            const admitted = throttle.admit();
            if (admitted) throttle.record(accepted);
            return admitted;
          });
        };
        expect(run()).toEqual(run());
      }),
    );
  });

  it('rejects about the computed fraction of attempts against a dead server', () => {
    // A dead server accepts nothing: p = R/(R+1) → 1, so of 2000 attempts nearly all are
    // rejected; the server still sees a trickle that lets it notice a recovery.
    const throttle = createAdaptiveThrottle({ rng: seeded(7) });
    let sent = 0;
    let expectedSent = 0;
    for (let i = 0; i < 2000; i++) {
      expectedSent += 1 - throttle.rejectionProbability();
      if (throttle.admit()) {
        sent++;
        throttle.record(false);
      }
    }
    expect(sent).toBeGreaterThan(0);
    expect(Math.abs(sent - expectedSent)).toBeLessThan(4 * Math.sqrt(expectedSent) + 2);
  });

  it('throws a clear error for an rng that returns something outside [0, 1]', () => {
    const throttle = createAdaptiveThrottle({ minRequests: 0, rng: () => 1.5 });
    throttle.admit();
    throttle.record(false);
    expect(() => throttle.admit()).toThrow(/^createAdaptiveThrottle: options\.rng must return a number in \[0, 1\], got 1\.5$/);
  });
});

describe('createAdaptiveThrottle: the minimum of requests', () => {
  it('regression (issue 21, defect 14): a low-traffic process is not throttled after two failures', async () => {
    // The README's case: one call, two transient failures, then the server answers. Without a
    // minimum the third attempt met p = 2/3 and failed with "rejection probability 0.750: 0 of
    // the last 3 requests accepted". rng 0 rejects at any probability above 0.
    const throttle = createAdaptiveThrottle({ rng: () => 0 });
    let calls = 0;
    const p = track(
      retry(
        async () => {
          calls++;
          if (calls <= 2) throw httpError(503);
          return 'ok';
        },
        { throttle, backoff: { initialDelayMs: 100, jitter: 'none' }, maxAttempts: 3 },
      ),
    );
    await clock.tickAsync(300);
    expect(p.error).toBeUndefined();
    expect(p.value).toBe('ok');
    expect(calls).toBe(3);
  });

  it('rejects from the default of 10 requests in the window on, not before', () => {
    const throttle = createAdaptiveThrottle({ rng: () => 0 });
    for (let i = 0; i < 10; i++) {
      expect(throttle.rejectionProbability()).toBe(0);
      expect(throttle.admit()).toBe(true);
      throttle.record(false);
    }
    expect(throttle.rejectionProbability()).toBeCloseTo(10 / 11, 12);
    expect(throttle.admit()).toBe(false);
  });

  it('takes minRequests as given: 3 lets the fourth attempt be rejected, 0 the second', () => {
    const atThree = createAdaptiveThrottle({ minRequests: 3, rng: () => 0 });
    for (let i = 0; i < 3; i++) {
      expect(atThree.admit()).toBe(true);
      atThree.record(false);
    }
    expect(atThree.admit()).toBe(false);
    const atZero = createAdaptiveThrottle({ minRequests: 0, rng: () => 0 });
    expect(atZero.admit()).toBe(true); // no request yet: p = 0 by the formula itself
    atZero.record(false);
    expect(atZero.admit()).toBe(false);
  });

  it('counts the minimum over the window: once old requests leave it, the throttle stops rejecting', () => {
    const throttle = createAdaptiveThrottle({ minRequests: 5, windowMs: 60_000, rng: () => 0 });
    for (let i = 0; i < 5; i++) {
      throttle.admit();
      throttle.record(false);
      clock.tick(10_000);
    }
    // At 50 s the window holds all five failures; at 60 s the first has left it.
    expect(throttle.rejectionProbability()).toBeCloseTo(5 / 6, 12);
    clock.tick(10_000);
    expect(throttle.requests).toBe(4);
    expect(throttle.rejectionProbability()).toBe(0);
    expect(throttle.admit()).toBe(true);
  });

  it('property: throttleProbability is 0 below the minimum, the formula from it on, and always in [0, 1)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.double({ min: 1, max: 10, noNaN: true }),
        fc.integer({ min: 0, max: 1000 }),
        (requests, acceptsRaw, k, minRequests) => {
          const accepts = Math.min(acceptsRaw, requests);
          const p = throttleProbability(requests, accepts, k, minRequests);
          if (requests < minRequests) expect(p).toBe(0);
          else expect(p).toBe(Math.max(0, (requests - k * accepts) / (requests + 1)));
          expect(p >= 0 && p < 1).toBe(true);
        },
      ),
    );
  });

  it('property: never rejects while the window holds fewer than minRequests requests', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.array(fc.boolean(), { maxLength: 100 }), (minRequests, outcomes) => {
        const throttle = createAdaptiveThrottle({ minRequests, rng: () => 0 }); // any p > 0 rejects
        for (const accepted of outcomes) {
          const before = throttle.requests;
          const admitted = throttle.admit();
          if (before < minRequests) expect(admitted).toBe(true);
          if (admitted) throttle.record(accepted);
        }
      }),
    );
  });
});

describe('createAdaptiveThrottle: the window, on the core clock', () => {
  it('forgets what happened more than windowMs ago', () => {
    const throttle = createAdaptiveThrottle({ windowMs: 60_000, rng: never });
    for (let i = 0; i < 30; i++) {
      throttle.admit();
      throttle.record(false);
    }
    expect(throttle.rejectionProbability()).toBeCloseTo(30 / 31, 12);
    clock.tick(58_999); // still inside the window (slices are 1 s wide)
    expect(throttle.requests).toBe(30);
    clock.tick(1001);
    expect(throttle.requests).toBe(0);
    expect(throttle.rejectionProbability()).toBe(0);
  });

  it('keeps a sliding window: old failures leave while recent ones stay', () => {
    const throttle = createAdaptiveThrottle({ windowMs: 10_000, rng: never });
    const counts: Array<[number, number]> = [];
    for (let t = 0; t < 20; t++) {
      throttle.admit();
      throttle.record(t >= 10); // failures in the first 10 s, successes after
      clock.tick(1000);
      counts.push([throttle.requests, throttle.accepts]);
    }
    // At 15 s the window holds the events of 6…14 s: four failures, five successes.
    expect(counts[14]).toEqual([9, 5]);
    // At 20 s it holds 11…19 s: successes only (10 s is exactly windowMs old, and gone).
    expect(counts[19]).toEqual([9, 9]);
    expect(throttle.rejectionProbability()).toBe(0);
  });

  it('property: counts equal the events of the last windowMs, to one slice', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ gap: fc.integer({ min: 0, max: 5000 }), accepted: fc.boolean() }), { maxLength: 100 }), (events) => {
        const windowMs = 12_000;
        const slice = windowMs / 60;
        const throttle = createAdaptiveThrottle({ windowMs, rng: never });
        const log: Array<{ at: number; accepted: boolean }> = [];
        for (const { gap, accepted } of events) {
          clock.tick(gap);
          throttle.admit();
          throttle.record(accepted);
          // The throttle's window is on the system clock, which may stand a whole offset from the
          // fake clock's Date (it continues across clocks): its slices are counted on it.
          log.push({ at: systemClock.now(), accepted });
        }
        const t = systemClock.now();
        const sliceOf = (ms: number) => Math.floor(ms / slice);
        const inWindow = log.filter((e) => sliceOf(t) - sliceOf(e.at) < 60);
        expect(throttle.requests).toBe(inWindow.length);
        expect(throttle.accepts).toBe(inWindow.filter((e) => e.accepted).length);
        // Nothing older than windowMs counts, nothing younger than windowMs − slice is lost.
        expect(inWindow.every((e) => t - e.at < windowMs)).toBe(true);
        expect(log.filter((e) => t - e.at <= windowMs - slice).length).toBeLessThanOrEqual(inWindow.length);
      }),
      { numRuns: 50 },
    );
  });

  it('lets a rejection, or an outcome recorded alone, leave the window with its own slice', () => {
    const throttle = createAdaptiveThrottle({ windowMs: 60_000, minRequests: 0, rng: () => 0 });
    throttle.record(false); // slice 0: 1 request, no accept: p = 1/2
    clock.tick(1500);
    expect(throttle.admit()).toBe(false); // the first event of slice 1
    clock.tick(29_000);
    throttle.record(true); // the first event of slice 30
    expect([throttle.requests, throttle.accepts]).toEqual([3, 1]);
    clock.tick(30_000); // 60.5 s: slice 0 has left
    expect([throttle.requests, throttle.accepts]).toEqual([2, 1]);
    clock.tick(1000); // 61.5 s: slice 1, and the rejection with it
    expect([throttle.requests, throttle.accepts]).toEqual([1, 1]);
    clock.tick(29_000); // 90.5 s: slice 30
    expect([throttle.requests, throttle.accepts]).toEqual([0, 0]);
  });

  it('keeps its window when a new fake clock replaces the old one: the system clock continues where it stood', () => {
    clock.tick(500_000);
    const throttle = createAdaptiveThrottle({ rng: never });
    throttle.admit();
    throttle.record(false);
    expect(throttle.requests).toBe(1);
    clock.uninstall();
    clock = installClock(); // time 0 again for Date and performance, not for the throttle
    expect(throttle.requests).toBe(1);
    clock.tick(120_000);
    expect(throttle.requests).toBe(0);
  });

  it('starts afresh when a clock passed in goes back', () => {
    let at = 500_000;
    const handClock = { now: () => at, setTimeout: () => 0, clearTimeout: () => {} };
    const throttle = createAdaptiveThrottle({ rng: never, clock: handClock });
    throttle.admit();
    throttle.record(false);
    expect(throttle.requests).toBe(1);
    at = 0;
    expect(throttle.requests).toBe(0);
  });
});

describe('createAdaptiveThrottle: options', () => {
  it.each([
    [{ k: 0.5 }, RangeError, /options\.k must be a finite number >= 1, got 0\.5$/],
    [{ k: 0 }, RangeError, /options\.k .*got 0$/],
    [{ k: -2 }, RangeError, /options\.k .*got -2$/],
    [{ k: Number.NaN }, RangeError, /options\.k .*got NaN$/],
    [{ k: Number.POSITIVE_INFINITY }, RangeError, /options\.k .*got Infinity$/],
    [{ k: '2' }, RangeError, /options\.k .*got "2"$/],
    [{ windowMs: 0 }, RangeError, /options\.windowMs must be a finite number > 0, got 0$/],
    [{ windowMs: -1000 }, RangeError, /options\.windowMs .*got -1000$/],
    [{ windowMs: Number.POSITIVE_INFINITY }, RangeError, /options\.windowMs .*got Infinity$/],
    [{ minRequests: -1 }, RangeError, /options\.minRequests must be a safe integer >= 0, got -1$/],
    [{ minRequests: 2.5 }, RangeError, /options\.minRequests .*got 2\.5$/],
    [{ minRequests: Number.NaN }, RangeError, /options\.minRequests .*got NaN$/],
    [{ minRequests: Number.POSITIVE_INFINITY }, RangeError, /options\.minRequests .*got Infinity$/],
    [{ minRequests: '10' }, RangeError, /options\.minRequests .*got "10"$/],
    [{ rng: 0.3 }, TypeError, /options\.rng must be a function, got 0\.3$/],
    [{ K: 2 }, TypeError, /unknown option "K"/],
    ['fast', TypeError, /options must be an object, got "fast"/],
  ])('rejects %o with a clear error', (options, type, message) => {
    const make = () => createAdaptiveThrottle(options as never);
    expect(make).toThrow(type);
    expect(make).toThrow(message);
  });

  it('accepts k = 1, the most aggressive setting that still leaves a healthy server alone', () => {
    const throttle = createAdaptiveThrottle({ k: 1, rng: () => 0 });
    for (let i = 0; i < 100; i++) {
      expect(throttle.admit()).toBe(true);
      throttle.record(true);
    }
  });
});

describe('createAdaptiveThrottle with retry() in virtual time', () => {
  const backoff = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 1000, jitter: 'none' } as const;

  it('rejects an attempt with ThrottledError without calling fn, and does not retry it', async () => {
    const throttle = createAdaptiveThrottle({ minRequests: 0, rng: () => 0 });
    let calls = 0;
    const p = track(
      retry(
        async () => {
          calls++;
          throw httpError(503);
        },
        { throttle, backoff, maxAttempts: 5 },
      ),
    );
    // Attempt 1 goes through (p = 0) and fails; attempt 2 draws 0 < 1/2 and is rejected.
    await clock.tickAsync(100);
    expect(p.state).toBe('rejected');
    expect(p.error).toBeInstanceOf(ThrottledError);
    expect(p.error).not.toBeInstanceOf(RetryError);
    expect(calls).toBe(1);
    expect(throttle.requests).toBe(2);
    expect(throttle.accepts).toBe(0);
  });

  it('regression (issue 12, defect 3): an attempt the caller aborts is not counted, so a typeahead never throttles itself', async () => {
    const throttle = createAdaptiveThrottle({ minRequests: 0, rng: () => 0 }); // any probability above 0 rejects
    const search = ({ signal }: { signal: AbortSignal }) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(resolve, 50, 'results');
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
    // Each keystroke aborts the search before it, against a server that never fails.
    let previous: AbortController | undefined;
    const searches = [];
    for (let i = 0; i < 20; i++) {
      previous?.abort(new Error('stale'));
      previous = new AbortController();
      searches.push(track(retry(search, { throttle, signal: previous.signal })));
      await clock.tickAsync(10);
    }
    await clock.tickAsync(50);
    expect(searches.filter((s) => s.state === 'rejected').map((s) => (s.error as Error).message)).toEqual(
      Array.from({ length: 19 }, () => 'stale'),
    );
    expect(searches.at(-1)?.value).toBe('results');
    expect(throttle.requests).toBe(1);
    expect(throttle.rejectionProbability()).toBe(0);
  });

  it('regression (issue 12, defect 3): an attempt abandoned at the deadline is not counted', async () => {
    const throttle = createAdaptiveThrottle({ minRequests: 0, rng: () => 0 });
    for (let i = 0; i < 5; i++) {
      const p = track(retry(() => new Promise<never>(() => {}), { throttle, deadlineMs: 100 }));
      await clock.tickAsync(100);
      expect((p.error as RetryError).reason).toBe('deadline');
    }
    expect(throttle.requests).toBe(0);
    await expect(retry(async () => 'served', { throttle })).resolves.toBe('served');
  });

  it('counts anything but a transient failure as accepted', async () => {
    const throttle = createAdaptiveThrottle({ rng: never });
    await retry(async () => 'ok', { throttle });
    await expect(
      retry(
        async () => {
          throw httpError(404);
        },
        { throttle },
      ),
    ).rejects.toMatchObject({ status: 404 });
    expect(throttle.requests).toBe(2);
    expect(throttle.accepts).toBe(2);
  });

  it('sheds load from a dead server, then lets traffic through again once the window forgets it', async () => {
    const throttle = createAdaptiveThrottle({ windowMs: 60_000, rng: seeded(42) });
    let serverUp = false;
    let received = 0;
    const call = () =>
      retry(
        async () => {
          received++;
          if (!serverUp) throw httpError(503);
          return 'ok';
        },
        { throttle, backoff, maxAttempts: 3 },
      ).catch((e: unknown) => e);

    // One logical call per second for a minute against a dead server.
    const outcomes: unknown[] = [];
    for (let s = 0; s < 60; s++) {
      outcomes.push(await callAndSettle(call));
      clock.tick(1000 - 300);
    }
    const throttled = outcomes.filter((e) => e instanceof ThrottledError).length;
    expect(throttled).toBeGreaterThan(30);
    // Without the throttle the server would get 3 attempts per call: 180.
    expect(received).toBeLessThan(90);

    serverUp = true;
    clock.tick(60_000); // the failures leave the window
    expect(throttle.rejectionProbability()).toBe(0);
    await expect(call()).resolves.toBe('ok');
  });

  /** Runs one call to completion in virtual time: it takes at most 300 ms with this backoff. */
  async function callAndSettle(call: () => Promise<unknown>): Promise<unknown> {
    const p = call();
    await clock.tickAsync(300);
    return p;
  }
});

describe('createAdaptiveThrottle', () => {
  it('says options must be an object when they are null', () => {
    expect(() => createAdaptiveThrottle(null as never)).toThrow(
      new TypeError('createAdaptiveThrottle: options must be an object, got null'),
    );
  });

  /**
   * A throttle that has seen three requests and no accept (k = 2), so its next admit() draws
   * against p = 3/4 with `draw`. The first admit does not draw (p = 0); the next two draw 1 and pass.
   */
  function throttleAtThreeQuarters(draw: () => unknown) {
    let draws = 0;
    const throttle = createAdaptiveThrottle({ minRequests: 0, rng: () => (draws++ < 2 ? 1 : (draw() as number)) });
    // Three admitted attempts that failed (an admitted attempt counts once it is recorded).
    for (let i = 0; i < 3; i++) {
      expect(throttle.admit()).toBe(true);
      throttle.record(false);
    }
    expect(throttle.rejectionProbability()).toBe(0.75);
    return throttle;
  }

  it('admits when the draw equals the rejection probability (rejects only draws below it)', () => {
    expect(throttleAtThreeQuarters(() => 0.75).admit()).toBe(true);
    expect(throttleAtThreeQuarters(() => 0.7499).admit()).toBe(false);
  });

  it('accepts a draw of exactly 0 or 1, and rejects one outside [0, 1] or not a number', () => {
    expect(throttleAtThreeQuarters(() => 1).admit()).toBe(true);
    expect(throttleAtThreeQuarters(() => 0).admit()).toBe(false);
    for (const bad of [-0.1, 1.5, '0.9', Number.NaN]) {
      expect(() => throttleAtThreeQuarters(() => bad).admit(), String(bad)).toThrow(
        /^createAdaptiveThrottle: options\.rng must return a number in \[0, 1\]/,
      );
    }
  });
});
