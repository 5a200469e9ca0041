import fc from 'fast-check';
import { rejection } from '../helpers/thrown.js';
import { describe, expect, it, vi } from 'vitest';
import {
  type AttemptContext,
  type BackoffPolicy,
  GrpcStatus,
  type GrpcStatusName,
  RetryError,
  type RetryOptions,
  TimeoutError,
  computeDelay,
  anyOf,
  httpStatus,
  retry,
} from '../../src/index.js';
import { iam, iamReadModifyWrite, gcs } from '../../src/google/index.js';
import { track, useVirtualClock } from '../helpers/clock.js';
import { polluted } from '../helpers/pollution.js';

const withProps = (props: Record<string, unknown>, message = 'boom'): Error => Object.assign(new Error(message), props);
/** An HTTP error shaped the way gaxios shapes one: status, and Google's JSON error body. */
const http = (status: number, googleStatus?: string): Error =>
  withProps({ status, response: { status, data: { error: { code: status, status: googleStatus } } } }, `HTTP ${status}`);
const grpc = (name: GrpcStatusName): Error => withProps({ code: GrpcStatus[name], details: name }, `${GrpcStatus[name]} ${name}`);
const retryable = (options: Readonly<RetryOptions>, error: unknown): boolean => {
  const predicate = options.retryable;
  if (predicate === undefined) throw new Error('preset without a retryable predicate');
  return predicate(error);
};

describe('iam(): the values of the IAM retry guidance', () => {
  it('backs off 1 s × 2 up to 32 s with up to 1 s added, and stops after 300 s', () => {
    const preset = iam();
    expect(preset.backoff).toEqual({ initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: { additiveMs: 1000 } });
    expect(preset.deadlineMs).toBe(300_000);
    expect(preset.idempotent).toBeUndefined();
    // min(2^n + random_fraction, 32) seconds, random_fraction = 0.5.
    const waits = Array.from({ length: 8 }, (_, n) => computeDelay(n, preset.backoff as BackoffPolicy, () => 0.5));
    expect(waits).toEqual([1500, 2500, 4500, 8500, 16_500, 32_000, 32_000, 32_000]);
  });

  it('is frozen through and through, and the same object every time it has no options', () => {
    const preset = iam();
    expect(Object.isFrozen(preset)).toBe(true);
    expect(Object.isFrozen(preset.backoff)).toBe(true);
    expect(Object.isFrozen(preset.backoff?.jitter)).toBe(true);
    expect(iam()).toBe(preset);
    expect(iam({})).toBe(preset);
    expect(iam({ retryNotFound: false, maxAttempts: undefined })).toBe(preset);
    expect(iam({ retryNotFound: true })).toBe(iam({ retryNotFound: true }));
    const custom = iam({ maxAttempts: 3 });
    expect(Object.isFrozen(custom) && Object.isFrozen(custom.backoff) && Object.isFrozen(custom.backoff?.jitter)).toBe(true);
  });

  it.each([
    ['HTTP 500', true, http(500)],
    ['HTTP 502', true, http(502)],
    ['HTTP 503', true, http(503)],
    ['HTTP 504', true, http(504)],
    ['gRPC INTERNAL', true, grpc('INTERNAL')],
    ['gRPC UNKNOWN', true, grpc('UNKNOWN')],
    ['gRPC UNAVAILABLE', true, grpc('UNAVAILABLE')],
    ['gRPC DEADLINE_EXCEEDED', true, grpc('DEADLINE_EXCEEDED')],
    ['ECONNRESET', true, withProps({ code: 'ECONNRESET' })],
    ['fetch failed (ECONNREFUSED)', true, new TypeError('fetch failed', { cause: withProps({ code: 'ECONNREFUSED' }) })],
    ['socket hang up', true, new Error('socket hang up')],
    ['retry()’s attempt timeout', true, new TimeoutError('attempt 1 timed out after 10 ms')],
    ['HTTP 409 ABORTED (alone)', false, http(409, 'ABORTED')],
    ['HTTP 409 ALREADY_EXISTS', false, http(409, 'ALREADY_EXISTS')],
    ['HTTP 409 without a status', false, http(409)],
    ['gRPC ABORTED (alone)', false, grpc('ABORTED')],
    ['gRPC ALREADY_EXISTS', false, grpc('ALREADY_EXISTS')],
    ['HTTP 404', false, http(404, 'NOT_FOUND')],
    ['gRPC NOT_FOUND', false, grpc('NOT_FOUND')],
    ['HTTP 429', false, http(429, 'RESOURCE_EXHAUSTED')],
    ['gRPC RESOURCE_EXHAUSTED', false, grpc('RESOURCE_EXHAUSTED')],
    ['HTTP 400', false, http(400, 'INVALID_ARGUMENT')],
    ['HTTP 403', false, http(403, 'PERMISSION_DENIED')],
    ['gRPC PERMISSION_DENIED', false, grpc('PERMISSION_DENIED')],
    ['HTTP 501', false, http(501)],
    ['an error of unknown shape', false, new Error('something else')],
    ['the caller’s abort', false, new DOMException('stop', 'AbortError')],
  ])('%s → retried: %s', (_name, expected, error) => {
    expect(retryable(iam(), error)).toBe(expected);
  });

  it('retries 404 / NOT_FOUND only with retryNotFound (eventual consistency after a create)', () => {
    const preset = iam({ retryNotFound: true });
    expect(retryable(preset, http(404, 'NOT_FOUND'))).toBe(true);
    expect(retryable(preset, grpc('NOT_FOUND'))).toBe(true);
    expect(retryable(preset, http(503))).toBe(true);
    expect(retryable(preset, http(409, 'ABORTED'))).toBe(false);
    expect(retryable(preset, http(403))).toBe(false);
  });

  it('lets every field be overridden; backoff merges field by field', async () => {
    const preset = iam({ maxDelayMs: 64_000, maxAttempts: 5, backoff: { initialDelayMs: 500 }, deadlineMs: 60_000 });
    // The random part follows the first delay (see the scaling tests below).
    expect(preset.backoff).toEqual({ initialDelayMs: 500, multiplier: 2, maxDelayMs: 64_000, jitter: { additiveMs: 500 } });
    expect(preset.maxAttempts).toBe(5);
    expect(preset.deadlineMs).toBe(60_000);
    expect(iam({ backoff: { maxDelayMs: 64_000 } }).backoff?.maxDelayMs).toBe(64_000);
    expect(iam({ maxDelayMs: 64_000, backoff: { maxDelayMs: 64_000 } }).backoff?.maxDelayMs).toBe(64_000);
    expect(iam({ backoff: { jitter: 'full' } }).backoff?.jitter).toBe('full');
    // Values other than 32 or 64 s are allowed: Google's own tools use 60 s.
    expect(iam({ maxDelayMs: 60_000 }).backoff?.maxDelayMs).toBe(60_000);
    // A caller's predicate replaces the preset's.
    const mine = () => true;
    expect(iam({ retryable: mine }).retryable).toBe(mine);
    // Undefined counts as absent, as in retry().
    expect(iam({ deadlineMs: undefined, backoff: { initialDelayMs: undefined } })).toEqual(iam());
    // A caller's jitter object is copied and frozen: mutating it later changes nothing.
    const jitter = { additiveMs: 10 };
    const frozen = iam({ backoff: { jitter } });
    jitter.additiveMs = 99;
    expect(frozen.backoff?.jitter).toEqual({ additiveMs: 10 });
    await expect(retry(async () => 'ok', preset)).resolves.toBe('ok');
  });

  it.each([
    [{ maxDelayMs: 0 }, RangeError, /^iam: options\.maxDelayMs must be a finite number > 0 .* got 0$/],
    [{ maxDelayMs: Number.POSITIVE_INFINITY }, RangeError, /iam: options\.maxDelayMs .* got Infinity/],
    [{ maxDelayMs: Number.NaN }, RangeError, /iam: options\.maxDelayMs .* got NaN/],
    [{ maxDelayMs: '32000' }, RangeError, /iam: options\.maxDelayMs .* got "32000"/],
    [{ maxDelayMs: 500 }, RangeError, /^iam: options\.backoff\.maxDelayMs must be .* >= initialDelayMs \(1000\), got 500$/],
    [
      { maxDelayMs: 32_000, backoff: { maxDelayMs: 64_000 } },
      TypeError,
      /iam: options\.maxDelayMs \(32000\) and options\.backoff\.maxDelayMs \(64000\) disagree/,
    ],
    [{ deadlineMs: 0 }, RangeError, /^iam: options\.deadlineMs must be a number > 0/],
    [{ deadlineMs: '300s' }, RangeError, /^iam: options\.deadlineMs .* got "300s"/],
    [{ deadlineMs: Number.POSITIVE_INFINITY }, RangeError, /iam: options\.maxAttempts and options\.deadlineMs are both Infinity/],
    [{ retryNotFound: 'yes' }, TypeError, /^iam: options\.retryNotFound must be a boolean, got "yes"$/],
    [
      { retryNotFound: true, retryable: () => true },
      TypeError,
      /iam: options\.retryNotFound has no effect when options\.retryable is given/,
    ],
    [{ retryNotFund: true }, TypeError, 'iam: unknown option "retryNotFund" (did you mean "retryNotFound"?)'],
    [{ maxAttempt: 3 }, TypeError, /^iam: unknown option "maxAttempt"/],
    [{ backoff: { initial: 5 } }, TypeError, /^iam: unknown option "initial" in options\.backoff \(known: initialDelayMs, /],
    [{ backoff: { initialDelayMs: -1 } }, RangeError, /^iam: options\.backoff\.initialDelayMs must be a finite number >= 0, got -1$/],
    [
      { backoff: { jitter: { additiveMs: 5, afterCapp: true } } },
      TypeError,
      /^iam: unknown option "afterCapp" in options\.backoff\.jitter/,
    ],
    [{ backoff: 5 }, TypeError, /^iam: options\.backoff must be an object, got 5$/],
    [{ backoff: { multiplier: 0.5 } }, RangeError, /^iam: options\.backoff\.multiplier must be a finite number >= 1/],
    [{ retryable: 'all' }, TypeError, /^iam: options\.retryable must be a function/],
    [null, TypeError, /^iam: options must be an object, got null$/],
    [[], TypeError, /^iam: options must be a plain object, got \[\]$/],
  ])('rejects %o at the call, naming the field', (options, type, message) => {
    const call = () => iam(options as never);
    expect(call).toThrow(type);
    expect(call).toThrow(message);
  });

  it('has types that refuse retryNotFound together with a retryable, which the runtime refuses', async () => {
    const mine = (): boolean => true;
    // @ts-expect-error the caller's predicate replaces the preset's: the flag would do nothing
    expect(() => iam({ retryNotFound: true, retryable: mine })).toThrow(TypeError);
    const steps = { read: async () => 1, modify: (n: number) => n, write: async () => 2 };
    // @ts-expect-error the same for iamReadModifyWrite
    await expect(iamReadModifyWrite(steps, { retryNotFound: false, retryable: mine })).rejects.toThrow(TypeError);
    expect(iam({ retryable: mine, maxAttempts: 2 }).retryable).toBe(mine);
    expect(iam({ retryNotFound: true, maxAttempts: 2 }).maxAttempts).toBe(2);
  });

  it('reads its options itself, under its own name: no retry() error renamed after the fact', async () => {
    try {
      iam({ maxAttempts: 0 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(RangeError);
      expect((error as Error).message).toBe('iam: options.maxAttempts must be a safe integer >= 1 or Infinity, got 0');
      expect((error as Error).cause).toBeUndefined();
    }
    await expect(iamReadModifyWrite({ read: () => 1, modify: () => undefined, write: () => 1 }, { maxDelay: 5 } as never)).rejects.toThrow(
      new TypeError('iamReadModifyWrite: unknown option "maxDelay" (did you mean "maxDelayMs"?)'),
    );
  });
});

describe('iam(): only the options object’s own fields are options', () => {
  it('ignores fields set on Object.prototype', () => {
    const clean = { plain: iam(), three: iam({ maxAttempts: 3 }) };
    const fields = { retryNotFound: true, maxDelayMs: 5000, backoff: { initialDelayMs: 1 }, afterCap: true };
    const dirty = polluted(fields, () => {
      const plain = iam();
      const three = iam({ maxAttempts: 3 });
      return {
        plain,
        three,
        notFound: retryable(plain, http(404)),
        capped: computeDelay(10, plain.backoff as BackoffPolicy, () => 1),
        ownJitter: computeDelay(10, iam({ backoff: { jitter: { additiveMs: 500 } } }).backoff as BackoffPolicy, () => 1),
      };
    });
    expect(dirty.plain).toBe(clean.plain);
    expect(dirty.three).toEqual(clean.three);
    expect(dirty.three.retryable).toBe(clean.three.retryable);
    expect(dirty.notFound).toBe(false);
    // afterCap inherited from Object.prototype would keep the jitter past the 32 s cap.
    expect(dirty.capped).toBe(32_000);
    expect(dirty.ownJitter).toBe(32_000);
  });

  it('iamReadModifyWrite ignores them too: a 404 is not retried without its own retryNotFound', async () => {
    const error = http(404);
    const read = vi.fn(() => Promise.reject(error));
    const run = polluted({ retryNotFound: true }, () =>
      iamReadModifyWrite({ read, modify: (p: unknown) => p, write: async () => 'written' }, { deadlineMs: 500 }),
    );
    await expect(run).rejects.toBe(error);
    expect(read).toHaveBeenCalledTimes(1);
  });

  it.each([
    [new Map([['maxAttempts', 3]]), /^iam: options must be a plain object, got a Map$/],
    [[['maxAttempts', 3]], /^iam: options must be a plain object, got \[\["maxAttempts",3\]\]$/],
    [new Date(0), /^iam: options must be a plain object, got a Date$/],
    [{ backoff: new Map([['initialDelayMs', 50]]) }, /^iam: options\.backoff must be a plain object, got a Map$/],
    [{ backoff: [50] }, /^iam: options\.backoff must be a plain object, got \[50\]$/],
  ])('refuses %o: arrays and Maps are not options objects', (options, message) => {
    expect(() => iam(options as never)).toThrow(TypeError);
    expect(() => iam(options as never)).toThrow(message);
  });
});

describe('iam() and gcs(): the random part of Google’s formula scales with the first delay', () => {
  it('gcs({ backoff: { initialDelayMs: 50, maxDelayMs: 200 } }) backs off 50–100 ms, 100–150 ms, then 200 ms', () => {
    // Regression: the 1 s random part was kept, so every wait was the 200 ms cap.
    const { backoff } = gcs({ operation: 'objects.get', backoff: { initialDelayMs: 50, maxDelayMs: 200 } });
    expect(backoff.jitter).toEqual({ additiveMs: 50 });
    expect([0, 1, 2].map((n) => [computeDelay(n, backoff, () => 0), computeDelay(n, backoff, () => 1)])).toEqual([
      [50, 100],
      [100, 150],
      [200, 200],
    ]);
  });

  it('property: without a jitter of yours the random part is at most the first delay; yours is kept as given', () => {
    const presets = [
      (backoff: Partial<BackoffPolicy>) => iam({ backoff }),
      (backoff: Partial<BackoffPolicy>) => gcs({ strategy: 'always', backoff }),
    ];
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60_000 }),
        fc.integer({ min: 0, max: 600_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 20 }),
        fc.option(fc.integer({ min: 0, max: 5000 }), { nil: undefined }),
        (initialDelayMs, extra, draw, n, ownAdditive) => {
          const maxDelayMs = initialDelayMs + extra;
          const jitter = ownAdditive === undefined ? undefined : { additiveMs: ownAdditive };
          for (const make of presets) {
            const { backoff } = make({ initialDelayMs, maxDelayMs, jitter });
            const additiveMs = ownAdditive ?? initialDelayMs;
            expect(backoff.jitter).toEqual({ additiveMs });
            const exponential = initialDelayMs * 2 ** n;
            const delay = computeDelay(n, backoff, () => draw);
            expect(delay).toBeGreaterThanOrEqual(Math.min(exponential, maxDelayMs));
            expect(delay).toBeLessThanOrEqual(Math.min(exponential + additiveMs, maxDelayMs));
          }
        },
      ),
    );
  });

  it('keeps the 1 s random part when only the cap or other fields change', () => {
    expect(iam({ maxDelayMs: 64_000 }).backoff.jitter).toEqual({ additiveMs: 1000 });
    expect(gcs({ operation: 'objects.get', backoff: { multiplier: 3, initialDelayMs: 1000 } }).backoff.jitter).toEqual({
      additiveMs: 1000,
    });
    expect(iam({ backoff: { initialDelayMs: 2000, jitter: 'equal' } }).backoff.jitter).toBe('equal');
  });

  it('regression: a first delay above the preset’s cap lifts the cap you did not set, and only that one', () => {
    // Refused before: "iam: options.backoff.maxDelayMs must be … >= initialDelayMs (60000), got 32000".
    expect(iam({ backoff: { initialDelayMs: 60_000 } }).backoff).toEqual({
      initialDelayMs: 60_000,
      multiplier: 2,
      maxDelayMs: 60_000,
      jitter: { additiveMs: 60_000 },
    });
    expect(gcs({ operation: 'objects.get', backoff: { initialDelayMs: 90_000 } }).backoff.maxDelayMs).toBe(90_000);
    expect(iam({ backoff: { jitter: { additiveMs: 40_000, afterCap: true } } }).backoff.maxDelayMs).toBe(40_000);
    expect(iam({ backoff: { initialDelayMs: 500 } }).backoff.maxDelayMs).toBe(32_000);
    // A cap of yours, either way you give it, is kept and checked.
    expect(() => iam({ maxDelayMs: 32_000, backoff: { initialDelayMs: 60_000 } })).toThrow(
      new RangeError('iam: options.backoff.maxDelayMs must be a finite number >= initialDelayMs (60000), got 32000'),
    );
    expect(() => gcs({ operation: 'objects.get', backoff: { initialDelayMs: 60_000, maxDelayMs: 32_000 } })).toThrow(
      /^gcs: options\.backoff\.maxDelayMs must be a finite number >= initialDelayMs \(60000\), got 32000$/,
    );
  });

  it('types retryable, backoff and deadlineMs as present, so a preset’s predicate composes without `!`', () => {
    const withQuota = anyOf(iam().retryable, httpStatus(429));
    expect(withQuota(http(429))).toBe(true);
    expect(withQuota(http(503))).toBe(true);
    expect(gcs({ operation: 'objects.get' }).retryable(http(404))).toBe(false);
    const cap: number = iam().backoff.maxDelayMs;
    const deadline: number = gcs({ strategy: 'never' }).deadlineMs;
    expect([cap, deadline]).toEqual([32_000, 600_000]);
  });
});

describe('iam() and iamReadModifyWrite() in virtual time', () => {
  const clock = useVirtualClock();

  it('retries a 503 on the schedule of Google’s formula and gives up at once when the next wait would pass 300 s', async () => {
    const starts: number[] = [];
    const unavailable = http(503);
    const p = track(
      retry(
        () => {
          starts.push(Date.now());
          return Promise.reject(unavailable);
        },
        iam({ rng: () => 0 }),
      ),
    );
    await clock.tickAsync(300_000);
    // Waits of 1, 2, 4, 8, 16, 32, 32, … s: the attempt at 287 s is the last, as 287 + 32 > 300.
    expect(starts.map((t) => t / 1000)).toEqual([0, 1, 3, 7, 15, 31, 63, 95, 127, 159, 191, 223, 255, 287]);
    expect(p.state).toBe('rejected');
    expect(p.error).toBeInstanceOf(RetryError);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).cause).toBe(unavailable);
  });

  it('rejects a lone 409 ABORTED unchanged and at once', async () => {
    const conflict = http(409, 'ABORTED');
    const fn = vi.fn(() => Promise.reject(conflict));
    const p = track(retry(fn, iam()));
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect(p.error).toBe(conflict);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  /** A policy store with etags; `interfere` changes it behind the reader's back after reads listed. */
  function policyStore(interfereAfterReads: number[] = []) {
    let policy = { etag: 'e0', bindings: [] as string[] };
    let version = 0;
    const log: string[] = [];
    const read = vi.fn(async (ctx: AttemptContext) => {
      log.push(`read#${ctx.attempt}`);
      const snapshot = structuredClone(policy);
      if (interfereAfterReads.includes(read.mock.calls.length)) {
        policy = { etag: `e${++version}`, bindings: [...policy.bindings, 'other'] };
      }
      return snapshot;
    });
    const write = vi.fn(async (next: typeof policy, ctx: AttemptContext) => {
      log.push(`write#${ctx.attempt}`);
      if (next.etag !== policy.etag) throw http(409, 'ABORTED');
      policy = { etag: `e${++version}`, bindings: next.bindings };
      return policy;
    });
    return { read, write, log, current: () => policy };
  }

  const addMe = (p: { etag: string; bindings: string[] }) =>
    p.bindings.includes('me') ? undefined : { ...p, bindings: [...p.bindings, 'me'] };

  it('reruns the whole read → modify → write on 409 ABORTED, with the attempt’s context', async () => {
    const store = policyStore([1, 2]);
    const p = track(iamReadModifyWrite({ read: store.read, modify: addMe, write: store.write }, { rng: () => 0 }));
    await clock.tickAsync(10_000);
    expect(p.state).toBe('resolved');
    expect(store.log).toEqual(['read#1', 'write#1', 'read#2', 'write#2', 'read#3', 'write#3']);
    expect(store.current().bindings).toEqual(['other', 'other', 'me']);
    expect(p.value).toEqual(store.current());
    // The read and write of one pass share one context.
    expect(store.read.mock.calls.map(([ctx]) => ctx.attempt)).toEqual([1, 2, 3]);
    expect(store.write.mock.calls.map(([, ctx]) => ctx)).toEqual(store.read.mock.calls.map(([ctx]) => ctx));
  });

  it('reruns on gRPC ABORTED and on the iam() transient errors of any step', async () => {
    const read = vi.fn<(ctx: AttemptContext) => Promise<string>>().mockRejectedValueOnce(grpc('UNAVAILABLE')).mockResolvedValue('v');
    const write = vi
      .fn<(next: string) => Promise<string>>()
      .mockRejectedValueOnce(grpc('ABORTED'))
      .mockRejectedValueOnce(http(503))
      .mockResolvedValue('written');
    const p = track(iamReadModifyWrite({ read, modify: (v) => `${v}!`, write }, { rng: () => 0 }));
    await clock.tickAsync(20_000);
    expect(p.value).toBe('written');
    expect(read).toHaveBeenCalledTimes(4);
    expect(write.mock.calls.map(([next]) => next)).toEqual(['v!', 'v!', 'v!']);
  });

  it('stops without writing when modify returns undefined', async () => {
    const store = policyStore();
    const write = vi.fn(store.write);
    const p = track(iamReadModifyWrite({ read: store.read, modify: () => undefined, write }));
    await clock.tickAsync(0);
    expect(p.state).toBe('resolved');
    expect(p.value).toBeUndefined();
    expect(write).not.toHaveBeenCalled();
  });

  it('does not retry 409 ALREADY_EXISTS, or errors iam() does not retry', async () => {
    for (const error of [http(409, 'ALREADY_EXISTS'), grpc('ALREADY_EXISTS'), http(403), http(404), new Error('bug in modify')]) {
      const read = vi.fn(async () => 'v');
      const p = track(iamReadModifyWrite({ read, modify: (v) => v, write: () => Promise.reject(error) }));
      await clock.tickAsync(0);
      expect(p.state).toBe('rejected');
      expect(p.error).toBe(error);
      expect(read).toHaveBeenCalledTimes(1);
    }
  });

  it('retries a 404 read with retryNotFound; runs under one deadline and the given limits', async () => {
    const read = vi.fn<(ctx: AttemptContext) => Promise<string>>().mockRejectedValueOnce(http(404)).mockResolvedValue('v');
    const p = track(iamReadModifyWrite({ read, modify: (v) => v, write: async (v) => v }, { retryNotFound: true, rng: () => 0 }));
    await clock.tickAsync(1000);
    expect(p.value).toBe('v');

    const conflict = http(409, 'ABORTED');
    const always = track(
      iamReadModifyWrite({ read: async () => 'v', modify: (v) => v, write: () => Promise.reject(conflict) }, { maxAttempts: 3 }),
    );
    await clock.tickAsync(10_000);
    expect(always.error).toBeInstanceOf(RetryError);
    expect((always.error as RetryError).reason).toBe('attempts');
    expect((always.error as RetryError).cause).toBe(conflict);

    const slow = track(
      iamReadModifyWrite(
        { read: async () => 'v', modify: (v) => v, write: () => Promise.reject(conflict) },
        { deadlineMs: 5000, rng: () => 0 },
      ),
    );
    await clock.tickAsync(5000);
    expect((slow.error as RetryError).reason).toBe('deadline');
    expect((slow.error as RetryError).elapsedMs).toBeLessThanOrEqual(5000);
  });

  it('lets a caller’s retryable replace the whole classification, ABORTED included', async () => {
    const conflict = http(409, 'ABORTED');
    const p = track(
      iamReadModifyWrite({ read: async () => 'v', modify: (v) => v, write: () => Promise.reject(conflict) }, { retryable: () => false }),
    );
    await clock.tickAsync(0);
    expect(p.error).toBe(conflict);
  });

  it('names itself when a caller’s retryable answers with a promise', async () => {
    const conflict = http(409, 'ABORTED');
    const p = track(
      iamReadModifyWrite(
        { read: async () => 'v', modify: (v) => v, write: () => Promise.reject(conflict) },
        { retryable: (async () => true) as never },
      ),
    );
    await clock.tickAsync(0);
    expect(p.error).toEqual(new TypeError('iamReadModifyWrite: options.retryable must return a boolean, got a promise'));
  });

  it('calls the steps as methods, so an object’s `this` is kept', async () => {
    const steps = {
      value: 'from this',
      async read() {
        return this.value;
      },
      modify(current: string) {
        return `${current}!`;
      },
      async write(next: string) {
        return `${next} (${this.value})`;
      },
    };
    await expect(iamReadModifyWrite(steps)).resolves.toBe('from this! (from this)');
  });

  it('throws synchronously for bad steps or options, before any step runs', async () => {
    const read = vi.fn(async () => 1);
    await expect(iamReadModifyWrite(null as never)).rejects.toThrow(
      /iamReadModifyWrite: steps must be an object \{ read, modify, write \}, got null/,
    );
    await expect(iamReadModifyWrite({ read, modify: (v: number) => v } as never)).rejects.toThrow(
      /iamReadModifyWrite: steps\.write must be a function, got undefined/,
    );
    await expect(iamReadModifyWrite({ read, modify: (v) => v, write: async (v) => v }, { maxAtempts: 2 } as never)).rejects.toThrow(
      /^iamReadModifyWrite: unknown option "maxAtempts"/,
    );
    await expect(iamReadModifyWrite({ read, modify: (v) => v, write: async (v) => v }, { maxDelayMs: -1 })).rejects.toThrow(
      /^iamReadModifyWrite: options\.maxDelayMs/,
    );
    expect(read).not.toHaveBeenCalled();
  });
});

const messageOf = (call: () => unknown): string => {
  try {
    call();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a throw');
};

describe('iam() and iamReadModifyWrite()', () => {
  it('refuse a backoff of null, and a jitter of null, by what they are', () => {
    expect(messageOf(() => iam({ backoff: null as never }))).toBe('iam: options.backoff must be an object, got null');
    expect(messageOf(() => iam({ backoff: { jitter: null as never } }))).toMatch(
      /^iam: options\.backoff\.jitter must be 'none', 'full', 'equal'/,
    );
  });

  it('say steps must be an object when they are not', async () => {
    expect((await rejection(iamReadModifyWrite('steps' as never))).message).toBe(
      'iamReadModifyWrite: steps must be an object { read, modify, write }, got "steps"',
    );
  });
});
