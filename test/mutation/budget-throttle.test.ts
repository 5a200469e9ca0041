// Edges of the retry budget and the adaptive throttle that their main tests leave open, found by
// mutation testing: the messages for options of the wrong type, and the rng at its bounds.
import { describe, expect, it } from 'vitest';
import { createRetryBudget } from '../../src/fleet/budget.js';
import { createAdaptiveThrottle } from '../../src/fleet/throttle.js';

describe('createRetryBudget', () => {
  it('says options must be an object when they are not', () => {
    expect(() => createRetryBudget('big' as never)).toThrow(new TypeError('createRetryBudget: options must be an object, got "big"'));
  });
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
    const throttle = createAdaptiveThrottle({ rng: () => (draws++ < 2 ? 1 : (draw() as number)) });
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
        /createAdaptiveThrottle: rng must return a number in \[0, 1\]/,
      );
    }
  });
});
