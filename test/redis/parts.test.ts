// The pure parts of tenacious/redis: the clock offset measured from round trips, and the checks
// on what Redis sends back. Property tests where the rule is a bound.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_SAMPLE_RTT_MS, SAMPLE_TTL_MS, createClockOffset } from '../../src/redis/clock-offset.js';
import { boundedLeft, pauseEndOf, pauseOfMessage, replyOf } from '../../src/redis/scripts.js';

describe('the clock offset', () => {
  it('is within half a round trip of the truth, whatever the two clocks read', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e12, max: 1e12, noNaN: true }), // Redis's clock minus ours
        fc.double({ min: -1e9, max: 1e9, noNaN: true }), // when we sent, on our clock
        fc.double({ min: 0, max: MAX_SAMPLE_RTT_MS, noNaN: true }), // the round trip
        fc.double({ min: 0, max: 1, noNaN: true }), // where in it Redis read its clock
        (truth, sentAt, rtt, at) => {
          const offset = createClockOffset();
          expect(offset.add(sentAt, sentAt + rtt, sentAt + at * rtt + truth)).toBe(true);
          // 1 µs for the doubles' rounding at a trillion milliseconds.
          expect(Math.abs((offset.value as number) - truth)).toBeLessThanOrEqual(rtt / 2 + 1e-3);
        },
      ),
    );
  });

  it('keeps the shortest round trip until it is old, and takes no round trip longer than a second', () => {
    const offset = createClockOffset();
    expect(offset.value).toBeUndefined();
    expect(offset.stale(0)).toBe(true);
    expect(offset.add(0, MAX_SAMPLE_RTT_MS + 1, 5000)).toBe(false);
    expect(offset.add(0, -1, 5000)).toBe(false);
    expect(offset.add(0, 10, 1005)).toBe(true); // offset 1000 ± 5
    expect(offset.value).toBe(1000);
    expect(offset.stale(10 + SAMPLE_TTL_MS)).toBe(false);
    expect(offset.add(100, 150, 1200)).toBe(false); // a longer trip, while the short one is fresh
    expect(offset.add(200, 202, 1203)).toBe(true); // a shorter one
    expect(offset.value).toBe(1002);
    expect(offset.stale(202 + SAMPLE_TTL_MS + 1)).toBe(true);
    expect(offset.add(202 + SAMPLE_TTL_MS + 1, 202 + SAMPLE_TTL_MS + 101, 202 + SAMPLE_TTL_MS + 51 + 990)).toBe(true); // old: any fresh one
    expect(offset.value).toBe(990);
  });

  it('is stale with no sample, whatever the clock reads', () => {
    const offset = createClockOffset();
    for (const now of [0, -1e12, 1e12, Number.NEGATIVE_INFINITY, Number.NaN]) expect(offset.stale(now)).toBe(true);
  });

  it('takes a round trip as short as the one it rests on, and a longer one once that one is more than a minute old', () => {
    const offset = createClockOffset();
    const t = 5_000_000; // a steady clock far from 0
    expect(offset.add(t, t + 10, 1005)).toBe(true);
    expect(offset.add(t + 100, t + 110, 1107)).toBe(true); // as short, and fresher
    expect(offset.value).toBe(1002 - t);
    expect(offset.add(t + 90 + SAMPLE_TTL_MS, t + 110 + SAMPLE_TTL_MS, 0)).toBe(false); // longer, and the sample just a minute old
    expect(offset.value).toBe(1002 - t);
    expect(offset.add(t + 91 + SAMPLE_TTL_MS, t + 111 + SAMPLE_TTL_MS, t + 101 + SAMPLE_TTL_MS + 990)).toBe(true);
    expect(offset.value).toBe(990);
  });
});

describe('what Redis sends back', () => {
  it('reads a reply of either client: numbers, digit strings, bigints, buffers', () => {
    expect(replyOf('g', [1_700_000_000_000, ''])).toEqual({ now: 1_700_000_000_000, end: '' });
    expect(replyOf('g', ['1700000000000', 0])).toEqual({ now: 1_700_000_000_000, end: 0 });
    expect(replyOf('g', [1_700_000_000_000n, '5'])).toEqual({ now: 1_700_000_000_000, end: '5' });
    expect(replyOf('g', [new TextEncoder().encode('1700000000000'), 1])).toEqual({ now: 1_700_000_000_000, end: 1 });
    expect(pauseEndOf('g', '')).toBe(0);
    expect(pauseEndOf('g', 0)).toBe(0);
    expect(pauseEndOf('g', '1700000002000')).toBe(1_700_000_002_000);
  });

  it.each([[undefined], ['OK'], [[1]], [[0, '']], [[-1, '']], [['x', '']], [[1, 2, 3]]])('refuses the reply %j, naming it', (reply) => {
    expect(() => replyOf('createRedisGate', reply)).toThrow(
      /^createRedisGate: the script's reply must be \[Redis's TIME in ms, the pause's end\], got/,
    );
  });

  it.each([
    ['banana'],
    ['-5'],
    ['1.5'],
    [Number.NaN],
    ['9'.repeat(17)],
    [{}],
    // Digits, but not written as Redis writes a number.
    ['1700000002000 '],
    [' 1700000002000'],
    ['+1700000002000'],
    ['1700000002000.0'],
    [['1700000002000']],
  ])('refuses the end %j, naming it', (end) => {
    expect(() => pauseEndOf('createRedisGate', end)).toThrow(
      /^createRedisGate: the pause read from Redis must be the moment it ends, in ms since 1970, got/,
    );
  });

  it('reads a message "<now> <end>", and refuses anything else', () => {
    expect(pauseOfMessage('g', '1700000000000 1700000002000')).toEqual({ now: 1_700_000_000_000, end: 1_700_000_002_000 });
    for (const text of ['', '1700000000000', '1700000000000 1 2', 'now end', ' 1 2'])
      expect(() => pauseOfMessage('g', text)).toThrow(TypeError);
  });

  it('holds at most maxHoldMs from what it read, reporting a longer pause as a RangeError', () => {
    const reports: Error[] = [];
    const now = 1_700_000_000_000;
    expect(boundedLeft('g', { now, end: 0 }, 5000, (e) => reports.push(e))).toBe(0);
    expect(boundedLeft('g', { now, end: now + 5001 }, 5000, (e) => reports.push(e))).toBe(5001); // a rounding's slack
    expect(boundedLeft('g', { now, end: now - 10 }, 5000, (e) => reports.push(e))).toBe(-10);
    expect(reports).toEqual([]);
    expect(boundedLeft('g', { now, end: now + 5002 }, 5000, (e) => reports.push(e))).toBe(5000);
    expect(reports.map(String)).toEqual([
      'RangeError: g: the pause read from Redis must end within maxHoldMs (5000 ms); it was cut to it, got "5002 ms"',
    ]);
  });
});
