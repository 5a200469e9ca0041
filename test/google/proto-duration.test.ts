import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { durationMs, formatProtoDuration, readProtoDuration } from '../../src/google/proto-duration.js';

const MAX_SECONDS = 315_576_000_000;
const durations = fc.record({ seconds: fc.integer({ min: 0, max: MAX_SECONDS }), nanos: fc.integer({ min: 0, max: 999_999_999 }) });

describe('readProtoDuration', () => {
  it.each([
    ['0.1s', { seconds: 0, nanos: 100_000_000 }, 100],
    ['.5s', { seconds: 0, nanos: 500_000_000 }, 500],
    ['1.000340012s', { seconds: 1, nanos: 340_012 }, 1000.340012],
    ['30s', { seconds: 30, nanos: 0 }, 30_000],
    ['0s', { seconds: 0, nanos: 0 }, 0],
    [`${MAX_SECONDS}s`, { seconds: MAX_SECONDS, nanos: 0 }, MAX_SECONDS * 1000],
    ['2.s', undefined, undefined],
  ])('%s', (text, expected, ms) => {
    const read = readProtoDuration(text);
    expect(read).toEqual(expected);
    if (read !== undefined) expect(durationMs(read)).toBeCloseTo(ms as number, 9);
  });

  it.each(['100ms', '1', 's', '.s', '-1s', '+1s', '1e3s', ' 1s', '1s ', '1.0000000001s', '1,5s', '0x10s', '１s', `${MAX_SECONDS + 1}s`])(
    'refuses %j',
    (text) => {
      expect(readProtoDuration(text)).toBeUndefined();
    },
  );

  it('refuses what is not a string', () => {
    for (const value of [1, null, undefined, { seconds: 1, nanos: 0 }, ['1s']]) expect(readProtoDuration(value)).toBeUndefined();
  });

  it('reads back what it formats: seconds and nanos survive the round trip', () => {
    fc.assert(
      fc.property(durations, (d) => {
        const text = formatProtoDuration(d);
        expect(text).toMatch(/^\d+(\.(\d{3}|\d{6}|\d{9}))?s$/);
        expect(readProtoDuration(text)).toEqual(d);
      }),
    );
  });

  it('reads any 1 to 9 decimals, and the milliseconds are seconds·1000 + nanos/10⁶', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.stringMatching(/^\d{1,9}$/), (seconds, fraction) => {
        const read = readProtoDuration(`${seconds}.${fraction}s`);
        expect(read).toEqual({ seconds, nanos: Number(fraction.padEnd(9, '0')) });
        expect(durationMs(read!)).toBe(seconds * 1000 + Number(fraction.padEnd(9, '0')) / 1e6);
      }),
    );
  });

  it('rejects garbage: anything outside the grammar reads as undefined', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const valid = /^(\d*)(\.\d{1,9})?s$/.test(text) && /\d/.test(text) && Number(text.match(/^\d*/)![0] || 0) <= MAX_SECONDS;
        expect(readProtoDuration(text) !== undefined).toBe(valid);
      }),
    );
  });
});

describe('formatProtoDuration', () => {
  it.each([
    [{ seconds: 30, nanos: 0 }, '30s'],
    [{ seconds: 1, nanos: 500_000_000 }, '1.500s'],
    [{ seconds: 0, nanos: 1_000_000 }, '0.001s'],
    [{ seconds: 2, nanos: 340_000 }, '2.000340s'],
    [{ seconds: 1, nanos: 340_012 }, '1.000340012s'],
    [{ seconds: 0, nanos: 1 }, '0.000000001s'],
  ])('%j is %s', (duration, text) => {
    expect(formatProtoDuration(duration)).toBe(text);
  });
});
