// The schedule options read once with retry()'s options: the growing attempt timeout's formula.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readTimeoutGrowth, timeoutOf } from '../../src/core/schedule.js';

const growth = fc
  .record({
    initialMs: fc.double({ min: 0.001, max: 1e6, noNaN: true }),
    multiplier: fc.double({ min: 1, max: 10, noNaN: true }),
    extra: fc.oneof(fc.double({ min: 0, max: 1e7, noNaN: true }), fc.constant(Infinity)),
  })
  .map(({ initialMs, multiplier, extra }) => ({ initialMs, multiplier, maxMs: initialMs + extra }));

describe('timeoutOf', () => {
  it('is the fixed attemptTimeoutMs without a growth', () => {
    expect(timeoutOf({ attemptTimeoutMs: 250, schedule: undefined }, 7)).toBe(250);
    expect(timeoutOf({ attemptTimeoutMs: 250, schedule: { timeout: undefined } }, 7)).toBe(250);
  });

  it('is min(initialMs · multiplier^(n−1), maxMs): in [initialMs, maxMs], never NaN, non-decreasing in n', () => {
    fc.assert(
      fc.property(growth, fc.integer({ min: 1, max: 5000 }), (g, n) => {
        const config = { attemptTimeoutMs: Infinity, schedule: { timeout: readTimeoutGrowth(g, 'retry', 'options.attemptTimeoutMs') } };
        const ms = timeoutOf(config, n);
        expect(ms).toBeGreaterThanOrEqual(g.initialMs);
        expect(ms).toBeLessThanOrEqual(g.maxMs);
        expect(timeoutOf(config, n + 1)).toBeGreaterThanOrEqual(ms);
        if (n === 1) expect(ms).toBe(g.initialMs);
      }),
    );
  });

  it('reads its exact values', () => {
    const config = { attemptTimeoutMs: Infinity, schedule: { timeout: { initialMs: 5000, multiplier: 1.5, maxMs: 30_000 } } };
    expect([1, 2, 3, 4, 5, 6].map((n) => timeoutOf(config, n))).toEqual([5000, 7500, 11_250, 16_875, 25_312.5, 30_000]);
  });
});

describe('readTimeoutGrowth', () => {
  it('keeps only the three checked fields, in a fresh object', () => {
    const given = { initialMs: 1, multiplier: 1, maxMs: 1 };
    const read = readTimeoutGrowth(given, 'retry', 'options.attemptTimeoutMs');
    expect(read).toEqual(given);
    expect(read).not.toBe(given);
  });
});
