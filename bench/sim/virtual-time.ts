// Virtual time for the fleet simulator. The real retry() runs unchanged: it reads
// performance.now() and arms its timer through globalThis.setTimeout at call time, and both
// are @sinonjs/fake-timers fakes while a simulation runs. The driver below fires one timer at
// a time and lets every promise reaction settle (a real setImmediate turn) before the next,
// so what runs between two timers is exactly what would run in a real process.
import FakeTimers from '@sinonjs/fake-timers';

/** A fake clock installed over the timers and clocks retry() uses. */
export interface VirtualClock {
  /** Virtual milliseconds since the clock was installed. */
  now(): number;
  /** Resolves after `ms` virtual milliseconds (whole milliseconds, as real timers). */
  sleep(ms: number): Promise<void>;
  /** Fires timers in time order until `done()` is true; throws if nothing is left to fire before that. */
  runUntil(done: () => boolean): Promise<void>;
  /** Restores the real timers. */
  uninstall(): void;
}

// Captured before any fake is installed (setImmediate is never faked here, but be explicit).
const realSetImmediate = globalThis.setImmediate;
const realSetTimeout = globalThis.setTimeout;
const settle = (): Promise<void> => new Promise((resolve) => realSetImmediate(resolve));

/** Installs a fake clock at time 0 over setTimeout, clearTimeout, performance and Date. */
export function installVirtualClock(): VirtualClock {
  const clock = FakeTimers.install({
    now: 0,
    toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'],
  });
  // A clock that is not faked (a runtime whose performance object cannot be patched) would
  // let wall time into every number: the same seed would then draw different charts.
  if (globalThis.performance.now() !== 0 || Date.now() !== 0 || globalThis.setTimeout === realSetTimeout) {
    clock.uninstall();
    throw new Error('virtual clock not in place: performance.now(), Date.now() or setTimeout is still the real one');
  }
  return {
    now: () => clock.now,
    sleep: (ms) => new Promise((resolve) => clock.setTimeout(() => resolve(), ms)),
    async runUntil(done) {
      await settle();
      while (!done()) {
        if (clock.countTimers() === 0) throw new Error(`simulation stalled at ${clock.now} ms: no timer left, not done`);
        clock.next();
        await settle();
      }
    },
    uninstall: () => clock.uninstall(),
  };
}
