import FakeTimers from '@sinonjs/fake-timers';
import { describe, expect, it, vi } from 'vitest';
import { readOptions } from '../../src/core/read-options.js';
import { createRetryAfterGate, createRetryBudget, retry, type RetryOptions } from '../../src/index.js';
import { instant } from '../../src/testing/index.js';
import { rejection, thrown } from '../helpers/thrown.js';

/**
 * The options reader retry() runs before anything else: what it throws, retry()'s promise
 * rejects with (the test 'rejects the promise with what the options reader throws…' below).
 */
const call = (options: unknown) => () => readOptions(options as RetryOptions);

describe('retry() validates its options before anything runs', () => {
  it.each([
    [{ maxAttempts: 0 }, RangeError, /options\.maxAttempts must be a safe integer >= 1 or Infinity, got 0/],
    [{ maxAttempts: 2.5 }, RangeError, /options\.maxAttempts .* got 2\.5/],
    [{ maxAttempts: '3' }, RangeError, /options\.maxAttempts .* got "3"/],
    [{ deadlineMs: -1 }, RangeError, /options\.deadlineMs must be a number > 0 .* got -1/],
    [{ deadlineMs: 0 }, RangeError, /options\.deadlineMs .* got 0/],
    [{ deadlineMs: Number.NaN }, RangeError, /options\.deadlineMs .* got NaN/],
    [{ attemptTimeoutMs: 0 }, RangeError, /options\.attemptTimeoutMs must be a number > 0 or \{ initialMs, multiplier, maxMs \}, got 0/],
    [{ attemptTimeoutMs: [] }, RangeError, /options\.attemptTimeoutMs must be a number > 0 or .*, got \[\]/],
    [
      { attemptTimeoutMs: { initialMs: 0, multiplier: 2, maxMs: 10 } },
      RangeError,
      /options\.attemptTimeoutMs\.initialMs must be a finite number > 0, got 0/,
    ],
    [
      { attemptTimeoutMs: { initialMs: Infinity, multiplier: 2, maxMs: Infinity } },
      RangeError,
      /options\.attemptTimeoutMs\.initialMs .* got Infinity/,
    ],
    [
      { attemptTimeoutMs: { initialMs: 10, multiplier: 0.5, maxMs: 10 } },
      RangeError,
      /options\.attemptTimeoutMs\.multiplier must be a finite number >= 1, got 0\.5/,
    ],
    [
      { attemptTimeoutMs: { initialMs: 10, multiplier: Number.NaN, maxMs: 10 } },
      RangeError,
      /options\.attemptTimeoutMs\.multiplier .* got NaN/,
    ],
    [
      { attemptTimeoutMs: { initialMs: 10, multiplier: 2, maxMs: 5 } },
      RangeError,
      /options\.attemptTimeoutMs\.maxMs must be >= initialMs \(10\), got 5/,
    ],
    [
      { attemptTimeoutMs: { initialMs: 10, multiplier: 2, maxMs: Number.NaN } },
      RangeError,
      /options\.attemptTimeoutMs\.maxMs must be a number >= initialMs \(Infinity for no cap\), got NaN/,
    ],
    // Neither a numeric string nor a cap of 0 gets past its field's own rule.
    [
      { attemptTimeoutMs: { initialMs: '5', multiplier: 2, maxMs: 10 } },
      RangeError,
      /options\.attemptTimeoutMs\.initialMs must be a finite number > 0, got "5"/,
    ],
    [
      { attemptTimeoutMs: { initialMs: 5, multiplier: 2, maxMs: '10' } },
      RangeError,
      /attemptTimeoutMs\.maxMs must be a number >= initialMs \(Infinity for no cap\), got "10"/,
    ],
    [
      { attemptTimeoutMs: { initialMs: 5, multiplier: 2, maxMs: 0 } },
      RangeError,
      /attemptTimeoutMs\.maxMs must be a number >= initialMs \(Infinity for no cap\), got 0/,
    ],
    [{ attemptTimeoutMs: { initialMs: 10, multiplier: 2 } }, RangeError, /options\.attemptTimeoutMs\.maxMs .* got undefined/],
    [
      { attemptTimeoutMs: { initialMs: 10, multiplier: 2, maxMs: 20, max: 30 } },
      TypeError,
      /^retry: unknown option "max" in options\.attemptTimeoutMs \(known: initialMs, multiplier, maxMs\)$/,
    ],
    [{ retryable: true }, TypeError, /options\.retryable must be a function, got true/],
    [{ onRetry: 'log' }, TypeError, /options\.onRetry must be a function, got "log"/],
    [{ rng: 0.5 }, TypeError, /options\.rng must be a function, got 0\.5/],
    [{ unref: 'yes' }, TypeError, /options\.unref must be a boolean, got "yes"/],
    [{ unref: 1 }, TypeError, /options\.unref must be a boolean, got 1/],
    [{ idempotent: 'yes' }, TypeError, /options\.idempotent must be a boolean or a function, got "yes"/],
    [{ signal: {} }, TypeError, /options\.signal must be an AbortSignal \(aborted, addEventListener, removeEventListener\), got \{\}/],
    [{ budget: { canRetry: () => true } }, TypeError, /options\.budget must come from createRetryBudget/],
    [{ throttle: {} }, TypeError, /options\.throttle must come from createAdaptiveThrottle/],
    [{ backoff: { multiplier: 0 } }, RangeError, /options\.backoff\.multiplier must be a finite number >= 1, got 0/],
    [{ backoff: { maxDelayMs: 10 } }, RangeError, /options\.backoff\.maxDelayMs must be .* >= initialDelayMs \(1000\), got 10/],
    [{ backoff: { jitter: 'lots' } }, TypeError, /options\.backoff\.jitter must be/],
    [
      { backoff: { initial: 5 } },
      TypeError,
      /^retry: unknown option "initial" in options\.backoff \(known: initialDelayMs, multiplier, maxDelayMs, jitter\)$/,
    ],
    [{ backoff: 5 }, TypeError, /options\.backoff must be an object, got 5/],
    [{ maxRetries: 3 }, TypeError, /unknown option "maxRetries"/],
    [{ maxAttempts: Number.POSITIVE_INFINITY, deadlineMs: Number.POSITIVE_INFINITY }, RangeError, /would never give up/],
    [null, TypeError, /options must be an object, got null/],
  ])('%o → %s', (options, type, message) => {
    expect(call(options)).toThrow(type);
    expect(call(options)).toThrow(message);
  });

  // Regression: with no deadline, nothing bounded the failures countsAsAttempt left uncounted (1,600 retries in 2 s).
  it('refuses countsAsAttempt without a finite deadline, whatever maxAttempts says', () => {
    const message = 'retry: options.countsAsAttempt needs a finite options.deadlineMs, got Infinity: the loop would never give up';
    for (const maxAttempts of [1, 3]) {
      expect(call({ maxAttempts, deadlineMs: Number.POSITIVE_INFINITY, countsAsAttempt: () => false })).toThrow(new RangeError(message));
    }
    // Both Infinity is refused on its own, before countsAsAttempt is looked at.
    const endless = { maxAttempts: Number.POSITIVE_INFINITY, deadlineMs: Number.POSITIVE_INFINITY, countsAsAttempt: () => false };
    expect(call(endless)).toThrow(/would never give up/);
    expect(call({ maxAttempts: 3, deadlineMs: 60_000, countsAsAttempt: () => false })).not.toThrow();
  });

  it('rejects a non-function fn', async () => {
    await expect(retry(5 as unknown as () => number)).rejects.toThrow(/fn must be a function, got number/);
  });

  it('rejects the promise with what the options reader throws, never a synchronous throw, and never calls fn', async () => {
    const bad: unknown[] = [
      { maxAttempts: 0 },
      { deadlineMs: -1 },
      { backoff: { jitter: 'lots' } },
      { maxAtempts: 3 },
      { maxAttempts: Number.POSITIVE_INFINITY, deadlineMs: Number.POSITIVE_INFINITY },
      null,
    ];
    for (const options of bad) {
      const fn = vi.fn(async () => 1);
      let returned: Promise<number> | undefined;
      expect(() => {
        returned = retry(fn, options as RetryOptions);
      }).not.toThrow();
      const error = await rejection(returned as Promise<number>);
      expect(error).toEqual(thrown(call(options)));
      expect(error.constructor).toBe(thrown(call(options)).constructor);
      expect(fn).not.toHaveBeenCalled();
    }
  });

  it('does not call fn when the options are bad', async () => {
    const fn = vi.fn(async () => 1);
    await expect(retry(fn, { maxAttempts: -1 })).rejects.toThrow(RangeError);
    expect(fn).not.toHaveBeenCalled();
  });

  it('treats undefined fields as absent and accepts every valid option', async () => {
    const options: RetryOptions = {
      backoff: { initialDelayMs: 10, multiplier: 1.5, maxDelayMs: 100, jitter: { additiveMs: 5 } },
      maxAttempts: 3,
      deadlineMs: 1000,
      attemptTimeoutMs: 100,
      retryable: () => true,
      idempotent: () => true,
      signal: new AbortController().signal,
      onRetry: () => {},
      rng: () => 0,
      unref: true,
    };
    await expect(retry(async () => 'ok', options)).resolves.toBe('ok');
    await expect(retry(async () => 'ok', { signal: undefined, backoff: undefined })).resolves.toBe('ok');
  });

  it('reads a frozen options object once and reuses it', async () => {
    const retryable = vi.fn(() => false);
    const frozen = Object.freeze({ retryable, maxAttempts: 2 });
    await expect(retry(() => Promise.reject(new Error('a')), frozen)).rejects.toThrow('a');
    await expect(retry(() => Promise.reject(new Error('b')), frozen)).rejects.toThrow('b');
    expect(retryable).toHaveBeenCalledTimes(2);
  });

  it('reads each frozen options object once, however calls alternate between them; an unfrozen one at every call', async () => {
    // A getter counts the reads (a frozen object may still have one).
    const counted = (freeze: boolean) => {
      const box = { reads: 0, options: {} as RetryOptions };
      const options = {
        get maxAttempts() {
          box.reads++;
          return 2;
        },
      };
      box.options = freeze ? Object.freeze(options) : options;
      return box;
    };
    const first = counted(true);
    const second = counted(true);
    const open = counted(false);
    const openReads: number[] = [];
    for (const box of [first, second, first, second, first, open, open]) {
      await expect(retry(async () => 'ok', box.options)).resolves.toBe('ok');
      if (box === open) openReads.push(open.reads);
    }
    expect([first.reads, second.reads]).toEqual([1, 1]);
    // Read at each call: compared with the last literal, and checked when it differs.
    expect(openReads[0]).toBeGreaterThanOrEqual(1);
    expect(openReads[1]).toBeGreaterThan(openReads[0] as number);
  });

  it('compares a literal with the last one only when both are plain options: a Map after {} is refused, instant() is kept', async () => {
    await expect(retry(async () => 'ok', {})).resolves.toBe('ok');
    await expect(retry(async () => 'ok', new Map() as RetryOptions)).rejects.toThrow('retry: options must be a plain object, got a Map');
    // The same keys and values as the last literal, plus instant()'s marker: its wait is skipped.
    const fake = FakeTimers.createClock(0);
    const clock = { now: () => fake.now, setTimeout: fake.setTimeout, clearTimeout: fake.clearTimeout } as RetryOptions['clock'];
    const flaky = () => {
      let calls = 0;
      return () => (++calls === 1 ? Promise.reject(new Error('down')) : Promise.resolve(calls));
    };
    const plain = { clock, retryable: () => true };
    const waiting = retry(flaky(), { ...plain });
    await fake.runAllAsync();
    await expect(waiting).resolves.toBe(2);
    expect(fake.now).toBeGreaterThan(0);
    const at = fake.now;
    const skipping = retry(flaky(), instant({ ...plain }));
    await fake.runAllAsync();
    await expect(skipping).resolves.toBe(2);
    expect(fake.now).toBe(at);
  });

  it('reads an options object changed between calls anew: a field, or a backoff changed in place', async () => {
    // A created (not installed) clock: the waits are virtual, and nothing global changes.
    const fake = FakeTimers.createClock(0);
    const clock = { now: () => fake.now, setTimeout: fake.setTimeout, clearTimeout: fake.clearTimeout } as RetryOptions['clock'];
    const waits: number[] = [];
    const shared = { clock, retryable: () => true, onRetry: (e: { delayMs: number }) => void waits.push(e.delayMs) };
    const failing = async (options: RetryOptions) => {
      const call = retry(() => Promise.reject(new Error('down')), options).catch(() => 'gave up');
      await fake.runAllAsync();
      return call;
    };
    // The same object, a field changed between calls.
    const options = { ...shared, maxAttempts: 3, backoff: Object.freeze({ initialDelayMs: 100, jitter: 'none' as const }) };
    await failing(options);
    options.maxAttempts = 2;
    await failing(options);
    expect(waits).toEqual([100, 200, 100]);
    // A literal per call holding the same backoff object, changed in place in between.
    waits.length = 0;
    const backoff = { initialDelayMs: 100, jitter: 'none' as const };
    await failing({ ...shared, maxAttempts: 2, backoff });
    await failing({ ...shared, maxAttempts: 2, backoff });
    backoff.initialDelayMs = 300;
    await failing({ ...shared, maxAttempts: 2, backoff });
    expect(waits).toEqual([100, 100, 300]);
    // A growing attempt timeout changed in place: a hung attempt is given up at the new limit.
    const growth = { initialMs: 100, multiplier: 2, maxMs: 1000 };
    const hung = async () => {
      const start = fake.now;
      const call = retry(() => new Promise(() => {}), { clock, maxAttempts: 1, attemptTimeoutMs: growth }).catch(() => 'timed out');
      await fake.runAllAsync();
      await call;
      return fake.now - start;
    };
    expect([await hung(), await hung()]).toEqual([100, 100]);
    growth.initialMs = 300;
    expect(await hung()).toBe(300);
  });
});

// RetryConfig's documented shape: what a call does not use, it does not carry.
describe('readOptions', () => {
  it('leaves schedule and fleet undefined without any of their options, and records each option given', () => {
    expect(readOptions({ maxAttempts: 3, attemptTimeoutMs: 50 })).toMatchObject({
      attemptTimeoutMs: 50,
      schedule: undefined,
      fleet: undefined,
    });
    const delay = () => 1;
    expect(readOptions({ delay }).schedule).toEqual({ timeout: undefined, delay, countsAsAttempt: undefined });
    expect(readOptions({ backoff: { jitter: 'decorrelated' } }).schedule).toBeDefined();
    const gate = createRetryAfterGate();
    expect(readOptions({ gate }).fleet).toEqual({ budget: undefined, throttle: undefined, gate });
    const budget = createRetryBudget();
    expect(readOptions({ budget }).fleet).toEqual({ budget, throttle: undefined, gate: undefined });
  });

  // The reuse is what makes a literal per call cost what options made once do (npm run bench);
  // the config's identity is how a test sees it.
  it('gives a literal the same keys and values as the last one read its config again, and nothing else', () => {
    const onRetry = () => {};
    const config = readOptions({ maxAttempts: 5, onRetry });
    expect(readOptions({ maxAttempts: 5, onRetry })).toBe(config);
    // Read afresh: a value differs, a key is missing or added, the keys come in another order, another entry point.
    expect(readOptions({ maxAttempts: 6, onRetry })).not.toBe(config);
    const six = readOptions({ maxAttempts: 6, onRetry });
    expect(readOptions({ maxAttempts: 6 })).not.toBe(six);
    expect(readOptions({ maxAttempts: 6, onRetry, unref: false })).not.toBe(six);
    const withUnref = readOptions({ maxAttempts: 6, onRetry, unref: false });
    expect(readOptions({ maxAttempts: 6, onRetry })).not.toBe(withUnref);
    const ordered = readOptions({ maxAttempts: 6, onRetry });
    expect(readOptions({ onRetry, maxAttempts: 6 })).not.toBe(ordered);
    const other = readOptions({ onRetry, maxAttempts: 6 }, 'gcs');
    expect(other.where).toBe('gcs');
    expect(readOptions({ onRetry, maxAttempts: 6 }, 'gcs')).toBe(other);
    expect(readOptions({ onRetry, maxAttempts: 6 })).toMatchObject({ where: 'retry' });
  });

  it('does not remember a literal holding an object that may change (an unfrozen backoff or growing timeout), nor instant()’s', () => {
    for (const options of [
      () => ({ backoff: { initialDelayMs: 5 } }),
      () => ({ attemptTimeoutMs: { initialMs: 10, multiplier: 2, maxMs: 40 } }),
      () => instant({ maxAttempts: 2 }),
    ]) {
      const first = readOptions(options());
      expect(readOptions(options())).not.toBe(first);
    }
    // Nor does the plain literal after instant()'s, with the same keys and values, get its waits skipped.
    readOptions(instant({ maxAttempts: 3 }));
    expect(readOptions({ maxAttempts: 3 }).schedule?.instant).toBeUndefined();
    const backoff = Object.freeze({ initialDelayMs: 5 });
    const frozen = readOptions({ backoff });
    expect(readOptions({ backoff })).toBe(frozen);
  });

  it('keeps a growing timeout in schedule, attemptTimeoutMs then Infinity (no fixed limit)', () => {
    const timeout = { initialMs: 10, multiplier: 2, maxMs: 40 };
    expect(readOptions({ attemptTimeoutMs: timeout })).toMatchObject({ attemptTimeoutMs: Infinity, schedule: { timeout } });
  });
});

describe('regressions of issue 12: options are what the caller wrote', () => {
  it('defect 11: a signal without removeEventListener (or addEventListener, or aborted) is refused up front', async () => {
    const fn = vi.fn(async () => 1);
    for (const signal of [
      { aborted: false, addEventListener() {} },
      { aborted: false, removeEventListener() {} },
      { addEventListener() {}, removeEventListener() {} },
    ]) {
      await expect(retry(fn, { signal: signal as unknown as AbortSignal })).rejects.toThrow(
        /^retry: options\.signal must be an AbortSignal \(aborted, addEventListener, removeEventListener\), got /,
      );
    }
    expect(fn).not.toHaveBeenCalled();
  });

  it('reads own properties only: a polluted Object.prototype changes nothing', async () => {
    const proto = Object.prototype as Record<string, unknown>;
    let attempts = 0;
    const fn = async () => {
      if (++attempts < 3) throw Object.assign(new Error('unavailable'), { status: 503 });
      return 'ok';
    };
    try {
      proto.idempotent = false;
      proto.maxAttempts = 1;
      proto.backoff = { initialDelayMs: 5 };
      const p = retry(fn, { backoff: { initialDelayMs: 0, maxDelayMs: 0 } });
      // Were the inherited fields read, the first 503 would end the call.
      await expect(p).resolves.toBe('ok');
      expect(attempts).toBe(3);
    } finally {
      delete proto.idempotent;
      delete proto.maxAttempts;
      delete proto.backoff;
    }
  });

  it('reads own properties only, also right after a literal that held the polluted value as its own', async () => {
    const proto = Object.prototype as Record<string, unknown>;
    let attempts = 0;
    const fn = async () => {
      if (++attempts < 3) throw Object.assign(new Error('unavailable'), { status: 503 });
      return 'ok';
    };
    const backoff = Object.freeze({ initialDelayMs: 0, maxDelayMs: 0 });
    await expect(retry(async () => 'first', { backoff, maxAttempts: 1 })).resolves.toBe('first');
    try {
      // Listed by for…in as the last literal's keys, with its values: the inherited one is not the caller's.
      proto.maxAttempts = 1;
      await expect(retry(fn, { backoff })).resolves.toBe('ok');
      expect(attempts).toBe(3);
    } finally {
      delete proto.maxAttempts;
    }
  });

  it('refuses arrays, Maps, Sets, Dates as options, naming what they are', () => {
    expect(call([])).toThrow(new TypeError('retry: options must be a plain object, got []'));
    expect(call(new Map([['maxAttempts', 1]]))).toThrow(new TypeError('retry: options must be a plain object, got a Map'));
    expect(call(new Set())).toThrow(new TypeError('retry: options must be a plain object, got a Set'));
    expect(call(new Date(0))).toThrow(new TypeError('retry: options must be a plain object, got a Date'));
    expect(call({ backoff: [] })).toThrow(new TypeError('retry: options.backoff must be a plain object, got []'));
  });

  it('accepts an options object without a prototype', async () => {
    const bare = Object.assign(Object.create(null) as RetryOptions, { maxAttempts: 1 });
    await expect(retry(async () => 'ok', bare)).resolves.toBe('ok');
  });
});
