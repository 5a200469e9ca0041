// Which clock steadyNow() follows, with the timers and clocks stubbed by hand (no fake-timer
// library, so nothing is left behind for the next file of a shared module graph): the host's
// performance.now(), a replaced performance.now(), or Date.now() when the timers and Date are
// faked and performance is not (node:test's mock.timers). Driving whole calls under each
// framework's fake clock is test/testing/fake-clocks.test.ts's job.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hostSetTimeout, steadyNow } from '../../src/runtime/clock.js';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

/** A hand-moved clock with a `now()` of its own. */
function handClock(start: number): { now(): number; at: number } {
  return {
    at: start,
    now() {
      return this.at;
    },
  };
}

/** How far steadyNow() moves while `move` runs. */
function steadyMoveDuring(move: () => void): number {
  const before = steadyNow();
  move();
  return steadyNow() - before;
}

describe('steadyNow follows', () => {
  it('a replaced performance.now(), whatever the timers and Date are', () => {
    const perf = handClock(5_000);
    const date = handClock(9_000);
    vi.stubGlobal('performance', perf);
    vi.stubGlobal('setTimeout', () => 0);
    vi.stubGlobal('Date', date);
    steadyNow(); // the switch itself keeps time continuous
    expect(steadyMoveDuring(() => (perf.at += 250))).toBe(250);
    expect(steadyMoveDuring(() => (date.at += 250))).toBe(0);
  });

  it('Date.now() when setTimeout and Date are replaced and performance is the host’s', () => {
    const date = handClock(9_000);
    vi.stubGlobal('setTimeout', () => 0);
    vi.stubGlobal('Date', date);
    steadyNow();
    expect(steadyMoveDuring(() => (date.at += 1_000))).toBe(1_000);
    expect(steadyMoveDuring(() => (date.at += 0))).toBe(0);
  });

  it('the host’s performance while the host’s timers are installed, even if globalThis.performance is replaced', () => {
    const perf = handClock(5_000);
    vi.stubGlobal('setTimeout', hostSetTimeout);
    vi.stubGlobal('performance', perf);
    steadyNow();
    // A clock replaced without the timers is not followed: the real one moves by microseconds.
    expect(steadyMoveDuring(() => (perf.at += 1_000))).toBeLessThan(1_000);
  });

  it('a now() patched onto the host’s performance object under the host’s timers', () => {
    vi.stubGlobal('setTimeout', hostSetTimeout);
    let at = 7_000;
    vi.spyOn(performance, 'now').mockImplementation(() => at);
    steadyNow();
    expect(steadyMoveDuring(() => (at += 250))).toBe(250);
  });

  it('performance when only Date is replaced (a mocked system time under real timers)', () => {
    const date = handClock(9_000);
    vi.stubGlobal('Date', date);
    // The host's own timers, whatever an earlier test file of a shared module graph left there.
    vi.stubGlobal('setTimeout', hostSetTimeout);
    steadyNow();
    // Date jumps a second; the real performance clock moves by the microseconds this takes.
    expect(steadyMoveDuring(() => (date.at += 1_000))).toBeLessThan(1_000);
  });
});
