// Virtual time for timing tests: the timers and clocks retry() reads, and nothing else.
import FakeTimers, { type Clock } from '@sinonjs/fake-timers';
import { afterEach, beforeEach, expect } from 'vitest';
import { GrpcStatus, type RetryClock } from '../../src/index.js';
import { queueState } from '../../src/runtime/timer-queue.js';

/**
 * A sinon clock that is created, not installed, as a `clock` option: only what is given it moves
 * with it, nothing global changes. `fake` drives it; `armed` lists the delay of every timer set on it.
 */
export function virtualClock(): RetryClock & { readonly fake: Clock; readonly armed: number[] } {
  const fake = FakeTimers.createClock(0);
  const armed: number[] = [];
  return {
    fake,
    armed,
    now: () => fake.now,
    setTimeout(callback, ms) {
      armed.push(ms);
      return fake.setTimeout(callback, ms);
    },
    clearTimeout: (handle) => fake.clearTimeout(handle as FakeTimers.TimerId),
  };
}

/** The installed fake clock. */
export type InstalledClock = Clock;

/** Installs a fake clock at time 0 over setTimeout/clearTimeout, performance.now and Date. */
export function installClock(): InstalledClock {
  return FakeTimers.install({
    now: 0,
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'],
  });
}

/**
 * Gives each test of the enclosing file or `describe` block a fresh virtual clock at time 0, and
 * after each test checks that the library left nothing behind (no entry in its shared timer
 * queue, no timer on the clock) before uninstalling it, even when the test failed. Returns the
 * running test's clock.
 */
export function useVirtualClock(): InstalledClock {
  let current: InstalledClock | undefined;
  beforeEach(() => {
    current = installClock();
  });
  afterEach(() => {
    const clock = current as InstalledClock;
    current = undefined;
    try {
      expect(queueState()).toEqual({ queued: 0, timerArmed: false });
      expect(clock.countTimers()).toBe(0);
    } finally {
      clock.uninstall();
    }
  });
  // Each test gets its own clock; the returned object always speaks for the current one.
  const running = (): InstalledClock => {
    if (current === undefined) throw new Error('the virtual clock exists only while a test runs');
    return current;
  };
  return new Proxy({} as InstalledClock, {
    // `in` too, so that code telling clocks apart by their methods (tenacious/testing's settle) sees this one's.
    has: (_target, key) => Reflect.has(running(), key),
    get(_target, key) {
      const clock = running();
      const value: unknown = Reflect.get(clock, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(clock) : value;
    },
  });
}

/** Observes a promise without handling it for anyone else: its state is read synchronously. */
export function track<T>(promise: Promise<T>): {
  readonly state: 'pending' | 'resolved' | 'rejected';
  readonly value?: T;
  readonly error?: unknown;
} {
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

/** A gRPC error with status `code`, shaped as grpc-js's ServiceError (a numeric `code`). */
export function grpcError(code: keyof typeof GrpcStatus): Error {
  return Object.assign(new Error(code), { code: GrpcStatus[code] });
}
