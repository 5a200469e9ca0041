// Edges of computeDelay and backoff validation that the main tests (test/backoff.test.ts) leave
// open, found by mutation testing.
import { describe, expect, it } from 'vitest';
import { type BackoffPolicy } from '../../src/types.js';
import { assertBackoffPolicy, computeDelay } from '../../src/core/backoff.js';

describe('computeDelay', () => {
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

describe('assertBackoffPolicy', () => {
  const valid: BackoffPolicy = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 1000, jitter: 'full' };

  it('names the known fields for an unknown one', () => {
    expect(() => assertBackoffPolicy({ ...valid, initialDelay: 5 }, 'backoff')).toThrow(
      'backoff.initialDelay is not a backoff option (expected one of initialDelayMs, multiplier, maxDelayMs, jitter)',
    );
  });

  it('says that null is not an object', () => {
    expect(() => assertBackoffPolicy(null, 'backoff')).toThrow(new TypeError('backoff must be an object, got null'));
  });

  it('takes additive jitter only as a finite number >= 0, 0 included', () => {
    expect(() => assertBackoffPolicy({ ...valid, jitter: { additiveMs: 0 } }, 'backoff')).not.toThrow();
    for (const additiveMs of ['5', -1, Number.NaN, Number.POSITIVE_INFINITY, undefined]) {
      expect(() => assertBackoffPolicy({ ...valid, jitter: { additiveMs } }, 'backoff'), String(additiveMs)).toThrow(
        /backoff\.jitter\.additiveMs must be a finite number >= 0/,
      );
    }
  });

  it('takes afterCap as absent, false or true, and nothing else', () => {
    for (const afterCap of [undefined, false, true]) {
      expect(() => assertBackoffPolicy({ ...valid, jitter: { additiveMs: 10, afterCap } }, 'backoff')).not.toThrow();
    }
    expect(() => assertBackoffPolicy({ ...valid, jitter: { additiveMs: 10, afterCap: 'yes' } }, 'backoff')).toThrow(
      new TypeError('backoff.jitter.afterCap must be a boolean, got "yes"'),
    );
  });

  it('rejects a jitter that is null or another string', () => {
    for (const jitter of [null, 'half']) {
      expect(() => assertBackoffPolicy({ ...valid, jitter }, 'backoff')).toThrow(/backoff\.jitter must be 'none', 'full', 'equal'/);
    }
  });
});
