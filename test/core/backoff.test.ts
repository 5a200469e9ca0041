import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readBackoffPolicy } from '../../src/core/backoff.js';
import { type BackoffPolicy, computeDelay, DEFAULT_BACKOFF, type Jitter } from '../../src/index.js';

const jitterArb: fc.Arbitrary<Jitter> = fc.oneof(
  fc.constantFrom<Jitter>('none', 'full', 'equal'),
  fc.record({ additiveMs: fc.double({ min: 0, max: 10_000, noNaN: true }) }),
);

const policyArb: fc.Arbitrary<BackoffPolicy> = fc
  .record({
    initialDelayMs: fc.double({ min: 0, max: 60_000, noNaN: true }),
    multiplier: fc.double({ min: 1, max: 10, noNaN: true }),
    extra: fc.double({ min: 0, max: 600_000, noNaN: true }),
    jitter: jitterArb,
  })
  .map(({ initialDelayMs, multiplier, extra, jitter }) => ({
    initialDelayMs,
    multiplier,
    maxDelayMs: initialDelayMs + extra,
    jitter,
  }));

const unit = fc.double({ min: 0, max: 1, noNaN: true });

describe('computeDelay', () => {
  it('follows each jitter formula on known values', () => {
    const base = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000 };
    expect(computeDelay(3, { ...base, jitter: 'none' }, () => 0.9)).toBe(8000);
    expect(computeDelay(3, { ...base, jitter: 'full' }, () => 0.25)).toBe(2000);
    expect(computeDelay(3, { ...base, jitter: 'equal' }, () => 0.5)).toBe(6000);
    expect(computeDelay(3, { ...base, jitter: { additiveMs: 1000 } }, () => 0.5)).toBe(8500);
    // Past the cap Google's formula truncates after adding jitter: exactly the maximum.
    expect(computeDelay(5, { ...base, jitter: { additiveMs: 1000 } }, () => 0.99)).toBe(32_000);
    expect(computeDelay(4, { ...base, jitter: { additiveMs: 1000 } }, () => 0.99)).toBe(16_990);
    // The cap applies before full/equal jitter.
    expect(computeDelay(10, { ...base, jitter: 'full' }, () => 0.5)).toBe(16_000);
    expect(computeDelay(10, { ...base, jitter: 'equal' }, () => 0)).toBe(16_000);
  });

  it('uses Math.random when no rng is given', () => {
    const d = computeDelay(2, DEFAULT_BACKOFF);
    expect(d).toBeGreaterThanOrEqual(0);
    expect(d).toBeLessThanOrEqual(4000);
  });

  it('property: always a finite number within [0, maxDelayMs]', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2_000_000 }), policyArb, unit, (n, policy, r) => {
        const d = computeDelay(n, policy, () => r);
        expect(Number.isFinite(d)).toBe(true);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(policy.maxDelayMs);
      }),
    );
  });

  it('property: deterministic for a given rng', () => {
    fc.assert(
      fc.property(fc.nat(200), policyArb, unit, (n, policy, r) => {
        expect(computeDelay(n, policy, () => r)).toBe(computeDelay(n, policy, () => r));
      }),
    );
  });

  it("property: non-decreasing in n for 'none'", () => {
    fc.assert(
      fc.property(fc.nat(2000), policyArb, (n, policy) => {
        const p = { ...policy, jitter: 'none' as const };
        expect(computeDelay(n + 1, p)).toBeGreaterThanOrEqual(computeDelay(n, p));
      }),
    );
  });

  it('property: additive jitter stays within [base, base + additiveMs] before the cap', () => {
    fc.assert(
      fc.property(
        fc.nat(12),
        fc.double({ min: 1, max: 1000, noNaN: true }),
        fc.double({ min: 1, max: 3, noNaN: true }),
        fc.double({ min: 0, max: 2000, noNaN: true }),
        unit,
        (n, initialDelayMs, multiplier, additiveMs, r) => {
          const base = initialDelayMs * multiplier ** n;
          const policy = { initialDelayMs, multiplier, maxDelayMs: 1e12, jitter: { additiveMs } };
          const d = computeDelay(n, policy, () => r);
          expect(d).toBeGreaterThanOrEqual(base);
          expect(d).toBeLessThanOrEqual(base + additiveMs + 1e-6 * base);
        },
      ),
    );
  });

  it('property: full and equal jitter stay within their ranges of the capped delay', () => {
    fc.assert(
      fc.property(fc.nat(100), policyArb, unit, (n, policy, r) => {
        const c = Math.min(policy.initialDelayMs * policy.multiplier ** n, policy.maxDelayMs);
        const full = computeDelay(n, { ...policy, jitter: 'full' }, () => r);
        const equal = computeDelay(n, { ...policy, jitter: 'equal' }, () => r);
        expect(full).toBeLessThanOrEqual(c);
        expect(equal).toBeGreaterThanOrEqual(c / 2);
        expect(equal).toBeLessThanOrEqual(c);
      }),
    );
  });

  it('is finite for huge n, including n = 10^6 and a zero initial delay', () => {
    for (const jitter of ['none', 'full', 'equal', { additiveMs: 1000 }] as Jitter[]) {
      expect(computeDelay(1_000_000, { ...DEFAULT_BACKOFF, jitter }, () => 1)).toBe(32_000);
      expect(computeDelay(1_000_000, { initialDelayMs: 0, multiplier: 2, maxDelayMs: 10, jitter }, () => 0.5)).not.toBeNaN();
    }
    expect(computeDelay(Number.MAX_SAFE_INTEGER, DEFAULT_BACKOFF, () => 0.5)).toBe(16_000);
  });

  it.each([
    [-1, /attempt must be an integer >= 0, got -1/],
    [1.5, /attempt .* got 1\.5/],
    [Number.NaN, /attempt .* got NaN/],
    [Number.POSITIVE_INFINITY, /attempt .* got Infinity/],
    ['3', /attempt .* got "3"/],
  ])('rejects attempt %s with a RangeError naming it', (attempt, message) => {
    expect(() => computeDelay(attempt as number, DEFAULT_BACKOFF)).toThrow(RangeError);
    expect(() => computeDelay(attempt as number, DEFAULT_BACKOFF)).toThrow(message);
  });

  it.each([
    [{ initialDelayMs: -1 }, /policy\.initialDelayMs must be a finite number >= 0, got -1/],
    [{ initialDelayMs: Number.NaN }, /policy\.initialDelayMs .* got NaN/],
    [{ multiplier: 0.5 }, /policy\.multiplier must be a finite number >= 1, got 0\.5/],
    [{ multiplier: Number.NaN }, /policy\.multiplier .* got NaN/],
    [{ maxDelayMs: 500 }, /policy\.maxDelayMs must be a finite number >= initialDelayMs \(1000\), got 500/],
    [{ maxDelayMs: Number.POSITIVE_INFINITY }, /policy\.maxDelayMs .* got Infinity/],
    [{ jitter: 'random' }, /policy\.jitter must be 'none', 'full', 'equal', 'decorrelated' or \{ additiveMs: number \}, got "random"/],
    [{ jitter: { additiveMs: -5 } }, /policy\.jitter\.additiveMs must be a finite number >= 0, got -5/],
    [{ jitter: null }, /policy\.jitter .* got null/],
    [{ extra: 1 }, /^computeDelay: unknown option "extra" in policy \(known: initialDelayMs, multiplier, maxDelayMs, jitter\)$/],
  ])('rejects policy %o with an error naming the field', (patch, message) => {
    expect(() => computeDelay(0, { ...DEFAULT_BACKOFF, ...patch } as BackoffPolicy)).toThrow(message);
  });

  it('names computeDelay and the field in every policy error', () => {
    expect(() => computeDelay(0, { ...DEFAULT_BACKOFF, multiplier: 0.5 })).toThrow(
      new RangeError('computeDelay: policy.multiplier must be a finite number >= 1, got 0.5'),
    );
    const { jitter: _, ...noJitter } = DEFAULT_BACKOFF;
    expect(() => computeDelay(0, noJitter as BackoffPolicy)).toThrow(
      new TypeError("computeDelay: policy.jitter must be 'none', 'full', 'equal', 'decorrelated' or { additiveMs: number }, got undefined"),
    );
    expect(() => computeDelay(0, { ...DEFAULT_BACKOFF, jitter: {} as Jitter })).toThrow(
      new RangeError('computeDelay: policy.jitter.additiveMs must be a finite number >= 0, got undefined'),
    );
  });

  it('rejects a missing policy and a bad rng', () => {
    expect(() => computeDelay(0, undefined as unknown as BackoffPolicy)).toThrow(
      new TypeError('computeDelay: policy must be an object, got undefined'),
    );
    expect(() => computeDelay(0, DEFAULT_BACKOFF, 5 as unknown as () => number)).toThrow(/rng must be a function .* got 5/);
    expect(() => computeDelay(0, DEFAULT_BACKOFF, () => 1.5)).toThrow(
      new RangeError('computeDelay: rng must return a number in [0, 1], got 1.5'),
    );
    expect(() => computeDelay(0, DEFAULT_BACKOFF, () => Number.NaN)).toThrow(/got NaN/);
    expect(() => computeDelay(0, DEFAULT_BACKOFF, () => -0.1)).toThrow(RangeError);
  });

  it('regression (property test): equal jitter stays within the cap for subnormal delays', () => {
    const tiny = { initialDelayMs: 0, multiplier: 1, maxDelayMs: 1.5e-323, jitter: 'equal' as const };
    expect(computeDelay(0, { ...tiny, initialDelayMs: 1.5e-323 }, () => 1)).toBeLessThanOrEqual(1.5e-323);
  });

  it("does not call rng for 'none'", () => {
    expect(computeDelay(1, { ...DEFAULT_BACKOFF, jitter: 'none' }, () => Number.NaN)).toBe(2000);
  });
});

describe('computeDelay: additive jitter kept after the cap ({ additiveMs, afterCap: true })', () => {
  const google = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000 };
  const afterCap = { ...google, jitter: { additiveMs: 1000, afterCap: true } } as const;

  it('is Google’s formula below the cap and stays random at the cap', () => {
    expect(computeDelay(0, afterCap, () => 0.25)).toBe(1250);
    expect(computeDelay(4, afterCap, () => 0.5)).toBe(16_500);
    // 2^5 s = 32 s would leave no room: the exponential part stops at 31 s.
    expect(computeDelay(5, afterCap, () => 0)).toBe(31_000);
    expect(computeDelay(5, afterCap, () => 0.5)).toBe(31_500);
    expect(computeDelay(40, afterCap, () => 1)).toBe(32_000);
    // Google's formula waits exactly the cap whatever the draw: the lockstep this option avoids.
    const googleFormula = { ...google, jitter: { additiveMs: 1000 } };
    expect(new Set([0, 0.3, 0.7, 1].map((r) => computeDelay(9, googleFormula, () => r)))).toEqual(new Set([32_000]));
    expect(new Set([0, 0.3, 0.7, 1].map((r) => computeDelay(9, afterCap, () => r))).size).toBe(4);
  });

  it('property: within [min(c, max − J), max], finite, and equal to Google’s formula while c ≤ max − J', () => {
    fc.assert(
      fc.property(fc.nat(2000), policyArb, fc.double({ min: 0, max: 1, noNaN: true }), unit, (n, policy, share, r) => {
        const additiveMs = share * policy.maxDelayMs;
        const withCap = { ...policy, jitter: { additiveMs, afterCap: true } };
        const delay = computeDelay(n, withCap, () => r);
        const uncapped = policy.initialDelayMs === 0 ? 0 : policy.initialDelayMs * policy.multiplier ** n;
        const c = Math.min(uncapped, policy.maxDelayMs);
        expect(Number.isFinite(delay)).toBe(true);
        expect(delay).toBeLessThanOrEqual(policy.maxDelayMs);
        expect(delay).toBeGreaterThanOrEqual(Math.min(c, policy.maxDelayMs - additiveMs) * (1 - 1e-12));
        if (c <= policy.maxDelayMs - additiveMs && c + additiveMs < policy.maxDelayMs) {
          const googleFormula = computeDelay(n, { ...policy, jitter: { additiveMs } }, () => r);
          expect(delay).toBe(googleFormula);
        }
      }),
    );
  });

  it('afterCap: false is Google’s formula', () => {
    const off = { ...google, jitter: { additiveMs: 1000, afterCap: false } };
    expect(computeDelay(9, off, () => 0)).toBe(32_000);
  });

  it.each([
    [{ jitter: { additiveMs: 1000, afterCap: 'yes' } }, TypeError, /policy\.jitter\.afterCap must be a boolean, got "yes"/],
    [{ jitter: { additiveMs: 1000, afterCap: 1 } }, TypeError, /policy\.jitter\.afterCap must be a boolean, got 1/],
    [
      { jitter: { additiveMs: 40_000, afterCap: true } },
      RangeError,
      /policy\.jitter\.additiveMs must be <= maxDelayMs \(32000\) with afterCap, got 40000/,
    ],
    [{ jitter: { additiveMs: -1, afterCap: true } }, RangeError, /policy\.jitter\.additiveMs must be a finite number >= 0, got -1/],
  ])('rejects %o with an error naming the field', (patch, type, message) => {
    const call = () => computeDelay(0, { ...google, ...patch } as BackoffPolicy);
    expect(call).toThrow(type);
    expect(call).toThrow(message);
  });

  it('is accepted and used by retry() options validation', async () => {
    const { retry } = await import('../../src/index.js');
    await expect(retry(async () => 'ok', { backoff: { jitter: { additiveMs: 1000, afterCap: true } } })).resolves.toBe('ok');
    await expect(
      retry(async () => 'ok', { backoff: { maxDelayMs: 32_000, jitter: { additiveMs: 50_000, afterCap: true } } }),
    ).rejects.toThrow(/options\.backoff\.jitter\.additiveMs must be <= maxDelayMs \(32000\) with afterCap, got 50000/);
  });
});

describe('regressions of issue 12: a backoff is read as written', () => {
  const google: BackoffPolicy = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: { additiveMs: 1000 } };

  it('defect 10: a misspelled jitter field is refused by computeDelay, retry() and the presets', async () => {
    const { retry } = await import('../../src/index.js');
    const { iam } = await import('../../src/google/index.js');
    const misspelled = { additiveMs: 1000, afterCapp: true } as unknown as Jitter;
    expect(() => computeDelay(0, { ...google, jitter: misspelled })).toThrow(
      new TypeError('computeDelay: unknown option "afterCapp" in policy.jitter (did you mean "afterCap"?)'),
    );
    await expect(retry(async () => 1, { backoff: { jitter: misspelled } })).rejects.toThrow(
      new TypeError('retry: unknown option "afterCapp" in options.backoff.jitter (did you mean "afterCap"?)'),
    );
    await expect(retry(async () => 1, { ...iam(), backoff: { ...iam().backoff, jitter: misspelled } })).rejects.toThrow(
      /^retry: unknown option "afterCapp" in options\.backoff\.jitter/,
    );
    expect(() => iam({ backoff: { jitter: misspelled } })).toThrow(/^iam: unknown option "afterCapp" in options\.backoff\.jitter/);
  });

  it('reads own fields only: an inherited afterCap or multiplier changes nothing', () => {
    const proto = Object.prototype as Record<string, unknown>;
    try {
      proto.afterCap = true;
      // Google's formula truncates at the cap: exactly 32 000 at n = 9 without afterCap.
      expect(computeDelay(9, google, () => 0.25)).toBe(32_000);
      delete proto.afterCap;
      const inherited = Object.assign(Object.create({ multiplier: 3 }), { initialDelayMs: 1000, maxDelayMs: 32_000, jitter: 'none' });
      expect(() => computeDelay(1, inherited)).toThrow(/policy\.multiplier must be a finite number >= 1, got undefined/);
    } finally {
      delete proto.afterCap;
    }
  });

  it('refuses an array, a Map or a Set as a policy or a jitter', () => {
    expect(() => computeDelay(0, [] as unknown as BackoffPolicy)).toThrow(
      new TypeError('computeDelay: policy must be a plain object, got []'),
    );
    expect(() => computeDelay(0, new Map() as unknown as BackoffPolicy)).toThrow(
      /^computeDelay: policy must be a plain object, got a Map$/,
    );
    expect(() => computeDelay(0, new Date(0) as unknown as BackoffPolicy)).toThrow(
      /^computeDelay: policy must be a plain object, got a Date$/,
    );
    expect(() => computeDelay(0, { ...google, jitter: new Set() as unknown as Jitter })).toThrow(/policy\.jitter must be/);
  });
});

describe('computeDelay: edge cases', () => {
  it('stays 0 with a 0 initial delay, however large the attempt (0 · Infinity is NaN)', () => {
    const policy: BackoffPolicy = { initialDelayMs: 0, multiplier: 2, maxDelayMs: 1000, jitter: 'none' };
    expect(computeDelay(2000, policy)).toBe(0);
    expect(computeDelay(2000, { ...policy, jitter: { additiveMs: 10 } }, () => 0.5)).toBe(5);
  });

  it('keeps the after-cap jitter under the cap where (max − J) + J rounds above max', () => {
    const maxDelayMs = 6 / 7;
    const additiveMs = 3 / 13;
    expect(maxDelayMs - additiveMs + additiveMs).toBeGreaterThan(maxDelayMs); // the rounding this guards against
    const policy: BackoffPolicy = { initialDelayMs: 0.5, multiplier: 2, maxDelayMs, jitter: { additiveMs, afterCap: true } };
    expect(computeDelay(10, policy, () => 1)).toBe(maxDelayMs);
  });

  it('rejects an rng that returns a number as text', () => {
    const policy: BackoffPolicy = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 1000, jitter: 'full' };
    expect(() => computeDelay(0, policy, () => '0.5' as unknown as number)).toThrow(/rng must return a number in \[0, 1\], got "0.5"/);
  });
});

describe('readBackoffPolicy', () => {
  const valid: BackoffPolicy = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 1000, jitter: 'full' };

  it('names the closest known field for an unknown one, else the known ones', () => {
    expect(() => readBackoffPolicy({ ...valid, initialDelay: 5 }, 'make', 'options.backoff')).toThrow(
      new TypeError('make: unknown option "initialDelay" in options.backoff (did you mean "initialDelayMs"?)'),
    );
    expect(() => readBackoffPolicy({ ...valid, base: 5 }, 'make', 'options.backoff')).toThrow(
      new TypeError('make: unknown option "base" in options.backoff (known: initialDelayMs, multiplier, maxDelayMs, jitter)'),
    );
  });

  it('says that null is not an object', () => {
    expect(() => readBackoffPolicy(null, 'make', 'backoff')).toThrow(new TypeError('make: backoff must be an object, got null'));
  });

  it('takes additive jitter only as a finite number >= 0, 0 included', () => {
    expect(() => readBackoffPolicy({ ...valid, jitter: { additiveMs: 0 } }, 'make', 'backoff')).not.toThrow();
    for (const additiveMs of ['5', -1, Number.NaN, Number.POSITIVE_INFINITY, undefined]) {
      expect(() => readBackoffPolicy({ ...valid, jitter: { additiveMs } }, 'make', 'backoff'), String(additiveMs)).toThrow(
        /backoff\.jitter\.additiveMs must be a finite number >= 0/,
      );
    }
  });

  it('takes afterCap as absent, false or true, and nothing else', () => {
    for (const afterCap of [undefined, false, true]) {
      expect(() => readBackoffPolicy({ ...valid, jitter: { additiveMs: 10, afterCap } }, 'make', 'backoff')).not.toThrow();
    }
    expect(() => readBackoffPolicy({ ...valid, jitter: { additiveMs: 10, afterCap: 'yes' } }, 'make', 'backoff')).toThrow(
      new TypeError('make: backoff.jitter.afterCap must be a boolean, got "yes"'),
    );
  });

  it('rejects a jitter that is null or another string', () => {
    for (const jitter of [null, 'half']) {
      expect(() => readBackoffPolicy({ ...valid, jitter }, 'make', 'backoff')).toThrow(/backoff\.jitter must be 'none', 'full', 'equal'/);
    }
  });
});

describe("computeDelay: jitter 'decorrelated' (AWS), with the previous wait as 4th argument", () => {
  const decorrelatedArb = fc
    .record({
      initialDelayMs: fc.double({ min: 0.001, max: 60_000, noNaN: true }),
      extra: fc.double({ min: 0, max: 600_000, noNaN: true }),
      multiplier: fc.double({ min: 1, max: 10, noNaN: true }),
    })
    .map(
      ({ initialDelayMs, extra, multiplier }): BackoffPolicy => ({
        initialDelayMs,
        multiplier,
        maxDelayMs: initialDelayMs + extra,
        jitter: 'decorrelated',
      }),
    );

  it('follows the formula on known values: uniform in [initial, min(3 · previous, max)]', () => {
    const policy: BackoffPolicy = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: 'decorrelated' };
    expect(computeDelay(0, policy, () => 0)).toBe(1000);
    expect(computeDelay(0, policy, () => 1)).toBe(3000); // the first wait's previous is initialDelayMs
    expect(computeDelay(0, policy, () => 0.5, 4000)).toBe(6500);
    expect(computeDelay(7, policy, () => 0.5, 4000)).toBe(6500); // attempt and multiplier play no part
    expect(computeDelay(0, policy, () => 1, 20_000)).toBe(32_000); // capped
    expect(computeDelay(0, policy, () => 0.5, 100)).toBe(1000); // a previous below initial/3: initial
  });

  it('stays in [initial, min(3 · previous, max)], finite, never NaN, whatever the previous wait and draw', () => {
    const previousArb = fc.oneof(fc.constant(undefined), fc.double({ min: 0, max: 1e300, noNaN: true }), fc.constant(Number.MAX_VALUE));
    fc.assert(
      fc.property(decorrelatedArb, unit, previousArb, (policy, r, previous) => {
        const delay = computeDelay(0, policy, () => r, previous);
        const high = Math.max(policy.initialDelayMs, Math.min(3 * (previous ?? policy.initialDelayMs), policy.maxDelayMs));
        expect(Number.isFinite(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(policy.initialDelayMs);
        expect(delay).toBeLessThanOrEqual(high);
        expect(delay).toBeLessThanOrEqual(policy.maxDelayMs);
      }),
    );
  });

  it('at a previous wait of maxDelayMs stays <= maxDelayMs, and a chain of waits never leaves [initial, max]', () => {
    fc.assert(
      fc.property(decorrelatedArb, fc.array(unit, { minLength: 1, maxLength: 60 }), (policy, draws) => {
        expect(computeDelay(0, policy, () => draws[0] as number, policy.maxDelayMs)).toBeLessThanOrEqual(policy.maxDelayMs);
        let previous: number | undefined;
        for (const r of draws) {
          const delay = computeDelay(0, policy, () => r, previous);
          expect(delay).toBeGreaterThanOrEqual(policy.initialDelayMs);
          expect(delay).toBeLessThanOrEqual(Math.min(3 * (previous ?? policy.initialDelayMs), policy.maxDelayMs));
          previous = delay;
        }
      }),
    );
  });

  it('never decreases as the draw grows (the CLI schedule reads its range at 0 and 1)', () => {
    fc.assert(
      fc.property(decorrelatedArb, unit, unit, fc.double({ min: 0, max: 1e6, noNaN: true }), (policy, a, b, previous) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(computeDelay(0, policy, () => lo, previous)).toBeLessThanOrEqual(computeDelay(0, policy, () => hi, previous));
      }),
    );
  });

  it('refuses a bad previous wait and, for this jitter, an initialDelayMs of 0, naming the field', () => {
    const policy: BackoffPolicy = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: 'decorrelated' };
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => computeDelay(0, policy, () => 0.5, bad)).toThrow(RangeError);
      expect(() => computeDelay(0, policy, () => 0.5, bad)).toThrow(
        /computeDelay: previousDelayMs must be a finite number >= 0 or undefined, got/,
      );
    }
    expect(() => computeDelay(0, policy, () => 0.5, '5' as unknown as number)).toThrow(TypeError);
    expect(() => computeDelay(0, { ...policy, initialDelayMs: 0 })).toThrow(
      new RangeError("computeDelay: policy.initialDelayMs must be > 0 with jitter 'decorrelated', got 0"),
    );
    // The other jitters ignore a previous wait.
    expect(computeDelay(2, { ...policy, jitter: 'none' }, Math.random, 123)).toBe(4000);
  });

  it('checks the draw of the rng like every jitter', () => {
    const policy: BackoffPolicy = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: 'decorrelated' };
    expect(() => computeDelay(0, policy, () => 2)).toThrow(/computeDelay: rng must return a number in \[0, 1\], got 2/);
  });
});

describe('a default cap follows a larger start (issue 35)', () => {
  it('regression: backoff { initialDelayMs: 60_000 } alone is read with a cap of 60 s, not refused under the default 32 s', async () => {
    const { withRetry } = await import('../../src/index.js');
    expect(readBackoffPolicy({ initialDelayMs: 60_000 }, 'retry', 'options.backoff', DEFAULT_BACKOFF)).toEqual({
      initialDelayMs: 60_000,
      multiplier: 2,
      maxDelayMs: 60_000,
      jitter: 'full',
    });
    // withRetry() reads its options when it wraps: nothing is refused there either.
    expect(withRetry(async () => 1, { backoff: { initialDelayMs: 60_000, jitter: 'none' } })).toBeTypeOf('function');
  });

  it('a cap the caller set is kept, and still refused under the start', () => {
    expect(readBackoffPolicy({ initialDelayMs: 60_000, maxDelayMs: 90_000 }, 'retry', 'options.backoff', DEFAULT_BACKOFF).maxDelayMs).toBe(
      90_000,
    );
    expect(readBackoffPolicy({ initialDelayMs: 500 }, 'retry', 'options.backoff', DEFAULT_BACKOFF).maxDelayMs).toBe(32_000);
    expect(() => readBackoffPolicy({ initialDelayMs: 60_000, maxDelayMs: 32_000 }, 'retry', 'options.backoff', DEFAULT_BACKOFF)).toThrow(
      new RangeError('retry: options.backoff.maxDelayMs must be a finite number >= initialDelayMs (60000), got 32000'),
    );
    // Without defaults (computeDelay's policy), every field is the caller's: nothing to follow.
    expect(() => readBackoffPolicy({ initialDelayMs: 60_000, multiplier: 2, jitter: 'full' }, 'computeDelay', 'policy')).toThrow(
      /^computeDelay: policy\.maxDelayMs must be a finite number >= initialDelayMs, got undefined$/,
    );
  });

  it('an after-cap jitter the caller set lifts the default cap as far as its random part', () => {
    const read = readBackoffPolicy({ jitter: { additiveMs: 40_000, afterCap: true } }, 'retry', 'options.backoff', DEFAULT_BACKOFF);
    expect(read.maxDelayMs).toBe(40_000);
    expect(() =>
      readBackoffPolicy(
        { maxDelayMs: 32_000, jitter: { additiveMs: 40_000, afterCap: true } },
        'retry',
        'options.backoff',
        DEFAULT_BACKOFF,
      ),
    ).toThrow(new RangeError('retry: options.backoff.jitter.additiveMs must be <= maxDelayMs (32000) with afterCap, got 40000'));
  });

  it('property: for any initialDelayMs the caller sets and a maxDelayMs left out, no error, and maxDelayMs >= initialDelayMs', () => {
    const jitter = fc.option(
      fc.oneof(
        fc.constantFrom<Jitter>('none', 'full', 'equal', 'decorrelated'),
        fc.record({ additiveMs: fc.double({ min: 0, max: 1e9, noNaN: true }), afterCap: fc.boolean() }),
      ),
      { nil: undefined },
    );
    const start = fc.double({ min: Number.MIN_VALUE, max: 1e12, noNaN: true });
    fc.assert(
      fc.property(
        start,
        fc.option(fc.double({ min: 1, max: 10, noNaN: true }), { nil: undefined }),
        jitter,
        (initialDelayMs, multiplier, j) => {
          const read = readBackoffPolicy({ initialDelayMs, multiplier, jitter: j }, 'retry', 'options.backoff', DEFAULT_BACKOFF);
          expect(read.maxDelayMs).toBeGreaterThanOrEqual(initialDelayMs);
          expect(read.maxDelayMs).toBe(Math.max(32_000, initialDelayMs, typeof j === 'object' && j.afterCap === true ? j.additiveMs : 0));
          for (const attempt of [0, 1, 30]) {
            const delay = computeDelay(attempt, read, () => 0.5, initialDelayMs);
            expect(delay).toBeGreaterThanOrEqual(0);
            expect(delay).toBeLessThanOrEqual(read.maxDelayMs);
          }
        },
      ),
    );
  });
});
