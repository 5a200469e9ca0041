// What iam() and gcs() share (src/presets/preset.ts): shared frozen presets, validated once,
// under the preset's own name (no retry() error renamed after the fact).
import { describe, expect, it } from 'vitest';
import { retry } from '../../src/core/retry.js';
import { readOptions } from '../../src/core/read-options.js';
import { gcs } from '../../src/presets/gcs.js';
import { iam } from '../../src/presets/iam.js';
import { scaledJitter } from '../../src/presets/preset.js';

describe('the shared presets', () => {
  // They are constants, validated by the first retry() that gets them rather than at import.
  it("pass retry()'s validation as they are, and are the same object call after call", () => {
    const presets = [iam(), iam({ retryNotFound: true }), gcs({ operation: 'objects.get' }), gcs({ operation: 'objects.insert' })];
    for (const preset of presets) {
      expect(Object.isFrozen(preset)).toBe(true);
      expect(() => readOptions(preset)).not.toThrow();
    }
    expect(new Set(presets).size).toBe(4);
    expect(iam()).toBe(presets[0]);
    expect(gcs({ operation: 'objects.insert' })).toBe(presets[3]);
  });
});

describe('preset option errors', () => {
  it('name the preset for what was given to it, also when retry() runs the predicate given there', async () => {
    expect(() => gcs({ operation: 'objects.get', rng: 5 as never })).toThrow(new TypeError('gcs: options.rng must be a function, got 5'));
    const preset = iam({ retryable: (async () => true) as never, maxAttempts: 2 });
    await expect(retry(() => Promise.reject(new Error('x')), preset)).rejects.toThrow(
      new TypeError('iam: options.retryable must return a boolean, got a promise'),
    );
  });

  it('pass anything else a check meets (a getter that throws) through as it is', () => {
    const boom = new Error('budget getter exploded');
    const budget = {
      get record(): never {
        throw boom;
      },
      canRetry: () => true,
    };
    let thrown: unknown;
    try {
      iam({ budget } as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBe(boom);
  });
});

describe('scaledJitter', () => {
  const base = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: { additiveMs: 1000 } };

  it('scales an additive jitter with the first delay', () => {
    expect(scaledJitter(base, 50)).toEqual({ additiveMs: 50 });
    expect(scaledJitter(base, 4000)).toEqual({ additiveMs: 4000 });
  });

  it('returns the jitter itself for the same first delay, a named jitter, or a base whose first delay is 0', () => {
    expect(scaledJitter(base, 1000)).toBe(base.jitter);
    // Not (0.1 · 3) / 3, which floating point makes 0.10000000000000002.
    const odd = { ...base, initialDelayMs: 3, jitter: { additiveMs: 0.1 } };
    expect(scaledJitter(odd, 3)).toBe(odd.jitter);
    for (const jitter of ['none', 'full', 'equal'] as const) expect(scaledJitter({ ...base, jitter }, 50)).toBe(jitter);
    // Nothing to scale from: 0 would make it Infinity or NaN.
    const zero = { ...base, initialDelayMs: 0 };
    expect(scaledJitter(zero, 50)).toBe(zero.jitter);
  });
});
