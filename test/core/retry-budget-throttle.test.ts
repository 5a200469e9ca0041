// The engine and a retry budget or an adaptive throttle: either one throwing fails that call
// with its error. (test/fleet has the budget's and the throttle's own rules, with real ones.)
import { describe, expect, it } from 'vitest';
import { retry } from '../../src/index.js';
import { track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

describe('a budget or throttle that throws', () => {
  const broken = new Error('metrics sink down');

  it('budget.record(true) or throttle.record(true) throwing on the async success path rejects with that error', async () => {
    const budget = {
      record: (success: boolean) => {
        if (success) throw broken;
      },
      canRetry: () => true,
    };
    const throttle = { admit: () => true, record: budget.record, error: () => new Error('never') };
    for (const options of [{ budget }, { throttle }]) {
      // Settles after the adoption microtask: the returned promise's settle functions are in use.
      const later = track(retry(() => new Promise<string>((resolve) => setTimeout(resolve, 10, 'late')), options));
      const atOnce = track(retry(async () => 'now', options));
      await clock.tickAsync(10);
      expect(later.state).toBe('rejected');
      expect(later.error).toBe(broken);
      expect(atOnce.error).toBe(broken);
    }
  });
});
