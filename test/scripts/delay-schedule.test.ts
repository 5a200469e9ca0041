import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sampleSchedule } from '../../scripts/lib/delay-schedule.js';
import { seededRandom } from '../../bench/sim/random.js';
import { type BackoffPolicy, type Jitter, computeDelay } from '../../src/index.js';

const jitter: fc.Arbitrary<Jitter> = fc.oneof(
  fc.constantFrom<Jitter>('none', 'full', 'equal'),
  fc.integer({ min: 0, max: 5000 }).map((additiveMs) => ({ additiveMs })),
);
const policy: fc.Arbitrary<BackoffPolicy> = fc
  .record({
    initialDelayMs: fc.integer({ min: 0, max: 5000 }),
    multiplier: fc.double({ min: 1, max: 4, noNaN: true }),
    extra: fc.integer({ min: 0, max: 100_000 }),
    jitter,
  })
  .map(({ initialDelayMs, multiplier, extra, jitter: j }) => ({
    initialDelayMs,
    multiplier,
    maxDelayMs: initialDelayMs + extra,
    jitter: j,
  }));

describe('sampleSchedule', () => {
  it('keeps every retry within the delays the extreme rng values give, in order min <= median <= max', () => {
    fc.assert(
      fc.property(policy, fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 2 ** 31 }), (p, retries, seed) => {
        const rows = sampleSchedule(p, retries, 31, seededRandom(seed));
        expect(rows.map((row) => row.retry)).toEqual(Array.from({ length: retries }, (_, i) => i + 1));
        let waited = 0;
        for (const [n, row] of rows.entries()) {
          // computeDelay grows with the rng's value, so rng 0 and 1 bound every sample.
          expect(row.min).toBeGreaterThanOrEqual(computeDelay(n, p, () => 0));
          expect(row.max).toBeLessThanOrEqual(computeDelay(n, p, () => 1));
          expect(row.min).toBeLessThanOrEqual(row.median);
          expect(row.median).toBeLessThanOrEqual(row.max);
          expect(row.max).toBeLessThanOrEqual(p.maxDelayMs);
          // The median total grows and is bounded by the sums of the extremes.
          expect(row.medianWaitedSoFar).toBeGreaterThanOrEqual(waited);
          waited = row.medianWaitedSoFar;
        }
      }),
      { numRuns: 200 },
    );
  });

  it('with many runs, reaches the extremes and the middle of the jitter range', () => {
    const google: BackoffPolicy = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: { additiveMs: 1000 } };
    const rows = sampleSchedule(google, 7, 10_001, seededRandom(7));
    const expected = [0, 1, 2, 3, 4, 5, 6].map((n) => [
      computeDelay(n, google, () => 0),
      computeDelay(n, google, () => 0.5),
      computeDelay(n, google, () => 1),
    ]);
    for (const [n, row] of rows.entries()) {
      const [low, middle, high] = expected[n] as [number, number, number];
      expect(row.min).toBeCloseTo(low, -1); // within 5 ms
      expect(row.median).toBeCloseTo(middle, -2); // within 50 ms
      expect(row.max).toBeCloseTo(high, -1);
    }
    // At the cap Google's formula leaves no spread: every run waits exactly 32 s.
    expect(rows[6]).toMatchObject({ min: 32_000, median: 32_000, max: 32_000 });
  });

  it('without jitter, every run waits the same and the totals add up exactly', () => {
    const rows = sampleSchedule({ initialDelayMs: 100, multiplier: 3, maxDelayMs: 1000, jitter: 'none' }, 4, 3, () => 0.5);
    expect(rows).toEqual([
      { retry: 1, min: 100, median: 100, max: 100, medianWaitedSoFar: 100 },
      { retry: 2, min: 300, median: 300, max: 300, medianWaitedSoFar: 400 },
      { retry: 3, min: 900, median: 900, max: 900, medianWaitedSoFar: 1300 },
      { retry: 4, min: 1000, median: 1000, max: 1000, medianWaitedSoFar: 2300 },
    ]);
  });

  it('rejects a retry count or an even run count it cannot summarise', () => {
    const p: BackoffPolicy = { initialDelayMs: 1, multiplier: 2, maxDelayMs: 8, jitter: 'full' };
    expect(() => sampleSchedule(p, 0, 3, Math.random)).toThrow(/retries must be an integer >= 1, got 0/);
    expect(() => sampleSchedule(p, 3, 4, Math.random)).toThrow(/runs must be an odd integer >= 1, got 4/);
  });
});
