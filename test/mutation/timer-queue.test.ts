// steadyNow(), the clock of retry() and its timer queue, at its edges: no drift while the clock
// stays the same, and an unbroken time line whichever way another clock takes over. Found by
// mutation testing; test/timer-queue.test.ts covers the queue itself.
import FakeTimers from '@sinonjs/fake-timers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { steadyNow } from '../../src/runtime/clock.js';

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

describe('steadyNow', () => {
  it('follows performance.now without drift while the clock stays the same', () => {
    const before = steadyNow() - performance.now();
    for (let i = 0; i < 1000; i++) steadyNow();
    const after = steadyNow() - performance.now();
    expect(Math.abs(after - before)).toBeLessThan(1);
  });

  it('continues from the real time when a virtual clock is installed and has already moved', () => {
    const before = steadyNow();
    const clock = FakeTimers.install({ now: 0, toFake: ['performance'] });
    try {
      clock.tick(5000); // the virtual clock reads 5000 when steadyNow first meets it
      const after = steadyNow();
      expect(after - before).toBeGreaterThanOrEqual(0);
      expect(after - before).toBeLessThan(50);
      clock.tick(100);
      expect(steadyNow() - after).toBe(100);
    } finally {
      clock.uninstall();
    }
  });

  it('continues when only performance.now is replaced, on the same object', () => {
    const before = steadyNow();
    vi.spyOn(performance, 'now').mockImplementation(() => 7);
    const after = steadyNow();
    expect(after - before).toBeGreaterThanOrEqual(0);
    expect(after - before).toBeLessThan(50);
  });

  it('continues when only the performance object is replaced, sharing its now function', () => {
    function now(this: { t: number }): number {
      return this.t;
    }
    vi.stubGlobal('performance', { t: 100, now });
    const first = steadyNow();
    vi.stubGlobal('performance', { t: 500, now });
    expect(steadyNow()).toBe(first);
  });
});
