// Virtual time for timing tests: the timers and clocks retry() reads, and nothing else.
import FakeTimers, { type Clock } from '@sinonjs/fake-timers';

/** The installed fake clock. */
export type InstalledClock = Clock;

/** Installs a fake clock at time 0 over setTimeout/clearTimeout, performance.now and Date. */
export function installClock(): InstalledClock {
  return FakeTimers.install({
    now: 0,
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'],
  });
}

/** Observes a promise without handling it for anyone else: its state is read synchronously. */
export function track<T>(promise: Promise<T>): { readonly state: 'pending' | 'resolved' | 'rejected'; readonly value?: T; readonly error?: unknown } {
  const box: { state: 'pending' | 'resolved' | 'rejected'; value?: T; error?: unknown } = { state: 'pending' };
  promise.then(
    (value) => {
      box.state = 'resolved';
      box.value = value;
    },
    (error: unknown) => {
      box.state = 'rejected';
      box.error = error;
    },
  );
  return box;
}

/** An error carrying an HTTP status, the way many clients shape them. */
export function httpError(status: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`HTTP ${status}`), { status }, extra);
}
