// Durations on the command line: parseDuration and formatDuration.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/cli/duration.js';

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['1.5s', 1500],
    ['.5s', 500],
    ['1.1s', 1100],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['0', 0],
    ['0ms', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('refuses a bare number other than 0, naming it and suggesting units', () => {
    expect(() => parseDuration('90')).toThrow(RangeError);
    expect(() => parseDuration('90')).toThrow('"90" has no unit: write 90s or 90ms');
  });

  it.each(['', 's', '-1s', '1x', '1e3ms', 'abc', '1.s', '1 s s', `${'9'.repeat(400)}h`])('refuses %j', (text) => {
    expect(() => parseDuration(text)).toThrow(RangeError);
  });

  it('reads whole numbers in every unit exactly', () => {
    const units = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.constantFrom(...(Object.keys(units) as Array<keyof typeof units>)),
        (n, unit) => {
          expect(parseDuration(`${n}${unit}`)).toBe(n * units[unit]);
        },
      ),
    );
  });

  it('reads seconds with millisecond decimals exactly, despite binary floating point', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 999 }), (whole, fraction) => {
        expect(parseDuration(`${whole}.${String(fraction).padStart(3, '0')}s`)).toBe(whole * 1000 + fraction);
      }),
    );
  });

  it('reads fractions written without a leading 0, and surrounding space', () => {
    expect(parseDuration('.25s')).toBe(250);
    expect(parseDuration(' 5s ')).toBe(5000);
  });

  it('refuses text after the unit', () => {
    expect(() => parseDuration('5sx')).toThrow('expected a duration such as 250ms, 1.5s or 2m, got "5sx"');
  });

  it('refuses a duration too large for a number', () => {
    const huge = `${'9'.repeat(400)}h`;
    expect(() => parseDuration(huge)).toThrow(`duration "${huge}" is too large`);
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [250, '250ms'],
    [999.6, '1s'],
    [1000, '1s'],
    [1250, '1.25s'],
    [64_000, '64s'],
    [600_000, '600s'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('reads back through parseDuration to within half a millisecond', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e9, noNaN: true }), (ms) => {
        expect(Math.abs(parseDuration(formatDuration(ms)) - ms)).toBeLessThanOrEqual(0.5);
      }),
    );
  });
});
