import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import {
  type BackoffPolicy,
  GrpcStatus,
  type GrpcStatusName,
  type RetryError,
  type RetryOptions,
  type Telemetry,
  TimeoutError,
  computeDelay,
  retry,
} from '../../src/index.js';
import {
  GCS_OPERATIONS,
  type GcsOperation,
  type GcsPreconditions,
  gcs,
  gcsIdempotency,
  gcsIsIdempotent,
  gcsPreconditionMet,
} from '../../src/google/index.js';
import { instant } from '../../src/testing/index.js';
import { track, useVirtualClock } from '../helpers/clock.js';
import { polluted } from '../helpers/pollution.js';

const withProps = (props: Record<string, unknown>, message = 'boom'): Error => Object.assign(new Error(message), props);
/** Cloud Storage's ApiError: the HTTP status in a numeric `code`, the JSON body's `errors`. */
const apiError = (code: number, reason?: string): Error =>
  withProps({ code, errors: reason === undefined ? [] : [{ reason, message: reason }] }, `HTTP ${code}`);
const grpc = (name: GrpcStatusName): Error => withProps({ code: GrpcStatus[name], details: name });
const retryable = (options: Readonly<RetryOptions>, error: unknown): boolean => {
  const predicate = options.retryable;
  if (predicate === undefined) throw new Error('preset without a retryable predicate');
  return predicate(error);
};
const read = gcs({ operation: 'objects.get' });

describe('gcs(): the values of the Cloud Storage retry guidance', () => {
  it('backs off 1 s × 2 up to 64 s with up to 1 s added, and stops after 600 s', () => {
    expect(read.backoff).toEqual({ initialDelayMs: 1000, multiplier: 2, maxDelayMs: 64_000, jitter: { additiveMs: 1000 } });
    expect(read.deadlineMs).toBe(600_000);
    // min(2^n + random_number_milliseconds/1000, 64) seconds with 250 ms of randomness.
    const waits = Array.from({ length: 8 }, (_, n) => computeDelay(n, read.backoff as BackoffPolicy, () => 0.25));
    expect(waits).toEqual([1250, 2250, 4250, 8250, 16_250, 32_250, 64_000, 64_000]);
  });

  it('is frozen, and shared between calls that override nothing', () => {
    expect(Object.isFrozen(read) && Object.isFrozen(read.backoff) && Object.isFrozen(read.backoff?.jitter)).toBe(true);
    // One shared object per operation: it carries the operation's name, for telemetry.
    expect(gcs({ operation: 'objects.get' })).toBe(read);
    expect(read).toMatchObject({ name: 'objects.get', service: 'storage' });
    expect(gcs({ operation: 'objects.list' })).toMatchObject({ ...read, name: 'objects.list' });
    expect(gcs({ operation: 'objects.insert' })).toEqual({ ...gcs({ strategy: 'never' }), name: 'objects.insert' });
    expect(gcs({ strategy: 'never' }).name).toBeUndefined();
    const custom = gcs({ operation: 'objects.get', maxAttempts: 4 });
    expect(Object.isFrozen(custom) && Object.isFrozen(custom.backoff)).toBe(true);
    expect(custom.maxAttempts).toBe(4);
  });

  it("names the call after its operation for telemetry, unless the caller named it: the caller's name wins", async () => {
    expect(gcs({ operation: 'objects.get', maxAttempts: 4 }).name).toBe('objects.get');
    expect(gcs({ operation: 'objects.get', name: 'report.download' }).name).toBe('report.download');
    expect(gcs({ strategy: 'always', name: 'report.download' }).name).toBe('report.download');
    // What retry() hands the telemetry: the same names.
    const names: Array<string | undefined> = [];
    const telemetry: Telemetry = ({ name }) => {
      names.push(name);
      return { event() {}, attempt: (_ctx, run) => run() };
    };
    await retry(() => 1, { ...gcs({ operation: 'objects.get', name: 'report.download' }), telemetry });
    await retry(() => 1, { ...gcs({ operation: 'objects.list' }), telemetry });
    await retry(() => 1, gcs({ strategy: 'always', name: 'bucket.scan', telemetry }));
    await retry(() => 1, gcs({ strategy: 'always', telemetry }));
    expect(names).toEqual(['report.download', 'objects.list', 'bucket.scan', undefined]);
  });

  const FIVE_XX = Array.from({ length: 100 }, (_, i) => 500 + i);
  it('retries 408, 429 and every 5xx, by status or by ApiError code', () => {
    for (const status of [408, 429, ...FIVE_XX]) {
      expect(retryable(read, apiError(status)), `code ${status}`).toBe(true);
      expect(retryable(read, withProps({ status })), `status ${status}`).toBe(true);
    }
  });

  it.each([400, 401, 403, 404, 409, 410, 412, 416])('does not retry HTTP %i', (status) => {
    expect(retryable(read, apiError(status))).toBe(false);
  });

  it.each([
    ['gRPC UNAVAILABLE', true, grpc('UNAVAILABLE')],
    ['gRPC RESOURCE_EXHAUSTED', true, grpc('RESOURCE_EXHAUSTED')],
    ['gRPC DEADLINE_EXCEEDED', true, grpc('DEADLINE_EXCEEDED')],
    ['gRPC INTERNAL', true, grpc('INTERNAL')],
    ['gRPC UNKNOWN', true, grpc('UNKNOWN')],
    ['gRPC ABORTED', false, grpc('ABORTED')],
    ['gRPC NOT_FOUND', false, grpc('NOT_FOUND')],
    ['gRPC PERMISSION_DENIED', false, grpc('PERMISSION_DENIED')],
    ['gRPC FAILED_PRECONDITION', false, grpc('FAILED_PRECONDITION')],
    ['ECONNRESET', true, withProps({ code: 'ECONNRESET' })],
    ['ETIMEDOUT', true, withProps({ code: 'ETIMEDOUT' })],
    ['EPIPE', true, withProps({ code: 'EPIPE' })],
    ['EAI_AGAIN', true, withProps({ code: 'EAI_AGAIN' })],
    ['socket hang up', true, new Error('socket hang up')],
    ['undici socket error under fetch', true, new TypeError('fetch failed', { cause: withProps({ code: 'UND_ERR_SOCKET' }) })],
    ['undici headers timeout', true, new TypeError('fetch failed', { cause: withProps({ code: 'UND_ERR_HEADERS_TIMEOUT' }) })],
    ['undici body timeout', true, new TypeError('terminated', { cause: withProps({ code: 'UND_ERR_BODY_TIMEOUT' }) })],
    ['node-fetch request timeout', true, withProps({ name: 'FetchError', type: 'request-timeout' })],
    ['retry()’s attempt timeout', true, new TimeoutError('attempt 2 timed out')],
    ['403 rateLimitExceeded', true, apiError(403, 'rateLimitExceeded')],
    ['403 userRateLimitExceeded', true, apiError(403, 'userRateLimitExceeded')],
    ['400 backendError', true, apiError(400, 'backendError')],
    ['internalError', true, apiError(400, 'internalError')],
    ['reason econnreset (Storage’s client)', true, withProps({ errors: [{ reason: 'ECONNRESET' }] })],
    ['reason unexpected connection closure', true, withProps({ errors: [{ reason: 'unexpected connection closure' }] })],
    ['403 forbidden', false, apiError(403, 'forbidden')],
    ['412 conditionNotMet', false, apiError(412, 'conditionNotMet')],
    ['an error of unknown shape', false, new Error('something else')],
    ['the caller’s abort', false, new DOMException('stop', 'AbortError')],
  ])('%s → retried: %s', (_name, expected, error) => {
    expect(retryable(read, error)).toBe(expected);
  });
});

describe('gcs(): whether the request may be resent', () => {
  it('follows the idempotency table and the preconditions under the default strategy', () => {
    expect(gcs({ operation: 'objects.get' }).idempotent).toBe(true);
    expect(gcs({ operation: 'buckets.insert' }).idempotent).toBe(true);
    expect(gcs({ operation: 'objects.insert' }).idempotent).toBe(false);
    expect(gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 } }).idempotent).toBe(true);
    expect(gcs({ operation: 'objects.delete', preconditions: { generation: '1700000000000001' } }).idempotent).toBe(true);
    expect(gcs({ operation: 'objects.patch', preconditions: { ifMetagenerationMatch: 3 } }).idempotent).toBe(true);
    expect(gcs({ operation: 'objects.patch', preconditions: { ifGenerationMatch: 3 } }).idempotent).toBe(false);
    expect(gcs({ operation: 'buckets.setIamPolicy', preconditions: { etag: 'CAE=' } }).idempotent).toBe(true);
    expect(gcs({ operation: 'hmacKeys.update', preconditions: { etag: 'abc' } }).idempotent).toBe(true);
    expect(gcs({ operation: 'hmacKeys.create' }).idempotent).toBe(false);
    expect(gcs({ operation: 'bucketAccessControls.patch', preconditions: { etag: 'x' } }).idempotent).toBe(false);
  });

  it('agrees with gcsIsIdempotent for every operation, strategy and precondition set', () => {
    const preconditionSets = [undefined, {}, { ifGenerationMatch: 0 }, { ifMetagenerationMatch: 1 }, { etag: 'e' }, { generation: 5 }];
    for (const operation of GCS_OPERATIONS) {
      for (const strategy of ['always', 'conditional', 'never'] as const) {
        for (const preconditions of preconditionSets) {
          expect(gcs({ operation, preconditions, strategy }).idempotent).toBe(gcsIsIdempotent(operation, preconditions, strategy));
        }
      }
    }
  });

  it("'always' resends every operation, 'never' none, even without an operation", () => {
    expect(gcs({ operation: 'hmacKeys.create', strategy: 'always' }).idempotent).toBe(true);
    expect(gcs({ operation: 'objects.get', strategy: 'never' }).idempotent).toBe(false);
    expect(gcs({ strategy: 'always' }).idempotent).toBe(true);
    expect(gcs({ strategy: 'never' }).idempotent).toBe(false);
  });

  it('takes the caller’s own idempotent, boolean or function, when no operation is named', () => {
    expect(gcs({ idempotent: true }).idempotent).toBe(true);
    expect(gcs({ idempotent: false }).idempotent).toBe(false);
    const decide = () => true;
    expect(gcs({ idempotent: decide }).idempotent).toBe(decide);
  });

  it.each([
    [undefined, TypeError, /gcs: options\.operation is required under strategy 'conditional' \(the default\)/],
    [{}, TypeError, /gcs: options\.operation is required/],
    [{ strategy: 'conditional' }, TypeError, /gcs: options\.operation is required/],
    [{ maxAttempts: 3 }, TypeError, /gcs: options\.operation is required/],
    [{ operation: 'objects.gett' }, TypeError, /Unknown Cloud Storage operation "objects\.gett": did you mean objects\.get\?/],
    [{ operation: 'objects.fetch' }, TypeError, /Unknown Cloud Storage operation "objects\.fetch"/],
    [{ operation: 'objects.insert', preconditions: { ifGenerationMatch: -1 } }, RangeError, /ifGenerationMatch must be a non-negative/],
    [{ operation: 'objects.insert', preconditions: { IfGenerationMatch: 0 } }, TypeError, /did you mean ifGenerationMatch/],
    [
      { operation: 'objects.get', strategy: 'sometimes' },
      TypeError,
      /^gcs: options\.strategy must be 'always', 'conditional' or 'never', got "sometimes"$/,
    ],
    [{ strategy: 'alwayss' }, TypeError, /^gcs: options\.strategy must be 'always', 'conditional' or 'never', got "alwayss"$/],
    [{ operation: 5 }, TypeError, /^gcs: options\.operation must be a JSON API method name such as 'objects\.get', got 5$/],
    [{ operation: 'objects.get', preconditions: 'ifGenerationMatch=0' }, TypeError, /^gcs: options\.preconditions must be a plain object/],
    [{ preconditions: { ifGenerationMatch: 0 } }, TypeError, /gcs: options\.preconditions mean nothing without options\.operation/],
    [{ operation: 'objects.get', idempotent: true }, TypeError, /gcs: options\.idempotent decides by itself/],
    [{ strategy: 'always', idempotent: false }, TypeError, /gcs: options\.idempotent decides by itself/],
    [{ idempotent: 'yes' }, TypeError, /^gcs: options\.idempotent must be a boolean or a function, got "yes"$/],
    [{ operation: 'objects.get', maxDelayMs: -5 }, RangeError, /^gcs: options\.maxDelayMs must be a finite number > 0/],
    [{ operation: 'objects.get', deadlineMs: -5 }, RangeError, /^gcs: options\.deadlineMs must be a number > 0/],
    [{ operation: 'objects.get', operaton: 'x' }, TypeError, 'gcs: unknown option "operaton" (did you mean "operation"?)'],
    [{ operation: 'objects.get', backoff: { jitter: 'lots' } }, TypeError, /^gcs: options\.backoff\.jitter must be/],
    ['objects.get', TypeError, /^gcs: options must be an object, got "objects\.get"$/],
  ])('rejects %o at the call', (options, type, message) => {
    const call = () => gcs(options as never);
    expect(call).toThrow(type);
    expect(call).toThrow(message);
  });

  it('has types that refuse every call the runtime refuses for want of, or a clash between, ways to decide', () => {
    const calls = [
      // @ts-expect-error no way to decide whether to resend
      () => gcs(),
      // @ts-expect-error no way to decide whether to resend
      () => gcs({}),
      // @ts-expect-error no way to decide whether to resend
      () => gcs({ maxAttempts: 3 }),
      // @ts-expect-error 'conditional' needs an operation to look up
      () => gcs({ strategy: 'conditional' }),
      // @ts-expect-error preconditions without an operation
      () => gcs({ preconditions: { ifGenerationMatch: 0 }, strategy: 'always' }),
      // @ts-expect-error the operation and the caller's idempotent both decide
      () => gcs({ operation: 'objects.get', idempotent: true }),
      // @ts-expect-error the strategy and the caller's idempotent both decide
      () => gcs({ strategy: 'always', idempotent: false }),
    ];
    for (const call of calls) expect(call).toThrow(TypeError);
    // Each way alone type-checks and runs.
    expect(gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 }, strategy: 'conditional' }).idempotent).toBe(true);
    expect(gcs({ strategy: 'never', maxAttempts: 2 }).idempotent).toBe(false);
    expect(gcs({ idempotent: () => true, deadlineMs: 1000 }).deadlineMs).toBe(1000);
  });

  it('lets every field be overridden', () => {
    const preset = gcs({
      operation: 'objects.insert',
      preconditions: { ifGenerationMatch: 0 },
      maxAttempts: 5,
      maxDelayMs: 32_000,
      deadlineMs: 120_000,
      backoff: { initialDelayMs: 250 },
    });
    expect(preset).toMatchObject({ idempotent: true, maxAttempts: 5, deadlineMs: 120_000 });
    expect(preset.backoff).toEqual({ initialDelayMs: 250, multiplier: 2, maxDelayMs: 32_000, jitter: { additiveMs: 250 } });
    const mine = () => false;
    expect(gcs({ operation: 'objects.get', retryable: mine }).retryable).toBe(mine);
  });
});

describe('gcs({ operation }) made per call', () => {
  it('gives the same frozen preset each time, and only for an own operation alone', () => {
    const first = gcs({ operation: 'objects.get' });
    expect(gcs({ operation: 'objects.get' })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(gcs({ operation: 'objects.get', maxAttempts: 3 })).not.toBe(first);
    expect(gcs({ operation: 'objects.get', maxAttempts: 3 }).maxAttempts).toBe(3);
    // An operation inherited from a polluted prototype is none: gcs({}) still asks for one.
    expect(() => polluted({ operation: 'objects.get' }, () => gcs({} as never))).toThrow(/options\.operation is required/);
    // instant()'s marker goes on with the preset made for it.
    const skipping = gcs(instant({ operation: 'objects.get' }));
    expect(skipping).not.toBe(first);
    expect((skipping as unknown as Record<symbol, unknown>)[Symbol.for('tenacious.instant')]).toBe(true);
  });

  it("reads options the same as their operation's last ones to compare them, and not again, with operations in turn", () => {
    // Each operation's last options, with more than the operation.
    gcs({ operation: 'objects.get', strategy: 'always' });
    gcs({ operation: 'objects.insert', strategy: 'never' });
    const reads = { get: 0, insert: 0 };
    const counted = (operation: GcsOperation, key: keyof typeof reads) => ({
      get operation() {
        reads[key]++;
        return operation;
      },
    });
    const get = counted('objects.get', 'get');
    const insert = counted('objects.insert', 'insert');
    // Not their operation's last options: looked up, compared, then read.
    const got = gcs(get as never);
    const inserted = gcs(insert as never);
    expect(reads).toEqual({ get: 3, insert: 3 });
    // Their operation's last ones now, in turn: looked up and compared only.
    for (let i = 0; i < 3; i++) {
      expect(gcs(get as never)).toBe(got);
      expect(gcs(insert as never)).toBe(inserted);
    }
    expect(reads).toEqual({ get: 9, insert: 9 });
    expect(gcs({ operation: 'objects.get' })).toBe(got);
    expect(inserted.idempotent).toBe(false);
  });

  it('gives options with overrides a preset of their own at each call, the same options as the last included', () => {
    const first = gcs({ operation: 'objects.get', maxAttempts: 3 });
    const second = gcs({ operation: 'objects.get', maxAttempts: 3 });
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
  });

  it('gives the shared preset of the answer, safe or not, to options that are read at every call', () => {
    // Options with preconditions are never remembered: each call reads them and looks up the preset.
    const safe = gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 } });
    expect(gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 } })).toBe(safe);
    const unsafe = gcs({ operation: 'objects.insert', preconditions: {} });
    expect(gcs({ operation: 'objects.insert', preconditions: {} })).toBe(unsafe);
    expect([safe.idempotent, unsafe.idempotent]).toEqual([true, false]);
  });

  it("gives an operation's last options the preset they got, whichever answer came before", () => {
    const answers = (['always', 'never', 'always', 'never'] as const).flatMap((strategy) => [
      gcs({ operation: 'objects.insert', strategy }).idempotent,
      gcs({ operation: 'objects.insert', strategy }).idempotent,
    ]);
    expect(answers).toEqual([true, true, false, false, true, true, false, false]);
  });

  it('reads preconditions at every call: their fields may change under the same reference', () => {
    const preconditions: GcsPreconditions = { ifGenerationMatch: 0 };
    expect(gcs({ operation: 'objects.insert', preconditions }).idempotent).toBe(true);
    delete preconditions.ifGenerationMatch;
    expect(gcs({ operation: 'objects.insert', preconditions }).idempotent).toBe(false);
  });

  it('remembers a preset under the operation it was built from, not one a getter answered before', () => {
    let reads = 0;
    const shifting = {
      get operation() {
        return reads++ === 0 ? 'buckets.get' : 'hmacKeys.create';
      },
    };
    expect(gcs(shifting as never).idempotent).toBe(false);
    expect(gcs({ operation: 'buckets.get' }).idempotent).toBe(true);
  });
});

describe('gcs(), gcsIdempotency(): only own fields are options or preconditions', () => {
  it('ignores options set on Object.prototype', () => {
    const fields = {
      operation: 'objects.get',
      strategy: 'always',
      idempotent: true,
      preconditions: { ifGenerationMatch: 0 },
      maxDelayMs: 5000,
    };
    const dirty = polluted(fields, () => ({
      bare: (() => {
        try {
          // @ts-expect-error no operation, strategy or idempotent: the type refuses it too
          gcs();
          return 'no error';
        } catch (error) {
          return (error as Error).message;
        }
      })(),
      insert: gcs({ operation: 'objects.insert' }),
      get: gcs({ operation: 'objects.get' }),
    }));
    expect(dirty.bare).toMatch(/^gcs: options\.operation is required under strategy 'conditional'/);
    expect(dirty.insert.idempotent).toBe(false);
    expect(dirty.get).toBe(read);
  });

  it('ignores preconditions set on Object.prototype', () => {
    const dirty = polluted({ ifGenerationMatch: 0, etag: 'e1' }, () => [
      gcsPreconditionMet('objects.insert', {}),
      gcsPreconditionMet('buckets.setIamPolicy', {}),
      gcsIsIdempotent('objects.insert', {}, 'conditional'),
      gcs({ operation: 'objects.insert', preconditions: {} }).idempotent,
    ]);
    expect(dirty).toEqual([false, false, false, false]);
  });

  it.each([
    [() => gcs(new Map([['operation', 'objects.get']]) as never), /^gcs: options must be a plain object, got a Map$/],
    [() => gcs(['objects.get'] as never), /^gcs: options must be a plain object, got \["objects\.get"\]$/],
    [() => gcs({ operation: 'objects.get', backoff: new Map() as never }), /^gcs: options\.backoff must be a plain object, got a Map$/],
    [
      () => gcs({ operation: 'objects.insert', preconditions: new Map([['ifGenerationMatch', 0]]) as never }),
      /^gcs: options\.preconditions must be a plain object such as \{ ifGenerationMatch: 0 \}, got a Map$/,
    ],
    [
      () => gcsPreconditionMet('objects.insert', new Map([['ifGenerationMatch', 0]]) as never),
      /^Cloud Storage preconditions must be a plain object, got a Map$/,
    ],
    [() => gcsIdempotency('objects.insert', [0] as never), /^Cloud Storage preconditions must be a plain object, got \[0\]$/],
  ])('refuses arrays and Maps as options or preconditions (%#)', (call, message) => {
    expect(call).toThrow(TypeError);
    expect(call).toThrow(message);
  });
});

describe('gcsIdempotency(operation, preconditions?)', () => {
  it('accepts and validates preconditions without changing the class', () => {
    expect(gcsIdempotency('objects.insert', { ifGenerationMatch: 0 })).toBe('conditional');
    expect(gcsIdempotency('objects.get', {})).toBe('always');
    expect(gcsIdempotency('hmacKeys.create', { etag: 'x' })).toBe('never');
    expect(() => gcsIdempotency('objects.insert', { ifGenerationMatch: 1.5 })).toThrow(RangeError);
    expect(() => gcsIdempotency('objects.insert', 'ifGenerationMatch=0' as never)).toThrow(
      /^Cloud Storage preconditions must be an object, got "ifGenerationMatch=0"$/,
    );
  });
});

describe('gcs() in virtual time', () => {
  const clock = useVirtualClock();

  it('retries a read on the schedule of Google’s formula, capped at 64 s, until the 600 s deadline', async () => {
    const starts: number[] = [];
    const busy = apiError(503, 'backendError');
    const p = track(
      retry(
        () => {
          starts.push(Date.now() / 1000);
          return Promise.reject(busy);
        },
        gcs({ operation: 'objects.get', rng: () => 0 }),
      ),
    );
    await clock.tickAsync(600_000);
    // Waits 1, 2, 4, …, 32, then 64 s each; 575 + 64 > 600, so the attempt at 575 s is the last.
    expect(starts).toEqual([0, 1, 3, 7, 15, 31, 63, 127, 191, 255, 319, 383, 447, 511, 575]);
    expect((p.error as RetryError).reason).toBe('deadline');
  });

  it('sends a conditional write without its precondition once, and one with it until it succeeds', async () => {
    const busy = apiError(503);
    const unsafe = vi.fn(() => Promise.reject(busy));
    const p = track(retry(unsafe, gcs({ operation: 'objects.insert' })));
    await clock.tickAsync(0);
    expect(p.error).toBe(busy);
    expect(unsafe).toHaveBeenCalledTimes(1);

    const safe = vi.fn().mockRejectedValueOnce(busy).mockResolvedValue('created');
    const q = track(retry(safe, gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 }, rng: () => 0 })));
    await clock.tickAsync(1000);
    expect(q.value).toBe('created');
    expect(safe).toHaveBeenCalledTimes(2);
  });

  it("strategy 'never' disables retry", async () => {
    const busy = apiError(503);
    const fn = vi.fn(() => Promise.reject(busy));
    const p = track(retry(fn, gcs({ operation: 'objects.get', strategy: 'never' })));
    await clock.tickAsync(0);
    expect(p.error).toBe(busy);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});

describe('the README’s idempotency table (docs/readme/presets.md)', () => {
  it('says what gcsIdempotency and gcsPreconditionMet say, for every operation', () => {
    const doc = readFileSync(new URL('../../docs/readme/presets.md', import.meta.url), 'utf8');
    const table = doc.slice(doc.indexOf('| resource | always idempotent |'));
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    const documented = new Map<string, { idempotency: string; preconditions: string[] }>();
    for (const row of rows) {
      const [resource = '', always = '', conditional = '', never = ''] = row
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim());
      const name = resource.replaceAll('`', '');
      const methods = (cell: string) => [...cell.matchAll(/`([a-zA-Z]+)`/g)].map((m) => m[1] ?? '');
      for (const method of methods(always)) documented.set(`${name}.${method}`, { idempotency: 'always', preconditions: [] });
      for (const method of methods(never)) documented.set(`${name}.${method}`, { idempotency: 'never', preconditions: [] });
      // "`patch`, `update` (`ifMetagenerationMatch` or `etag`); `setIamPolicy` (`etag`)"
      for (const group of conditional.split(';')) {
        const [ops = '', preconditions = ''] = group.split('(');
        for (const method of methods(ops)) {
          documented.set(`${name}.${method}`, { idempotency: 'conditional', preconditions: methods(preconditions) });
        }
      }
    }
    expect([...documented.keys()].sort()).toEqual([...GCS_OPERATIONS].sort());
    for (const [operation, row] of documented) {
      const op = operation as (typeof GCS_OPERATIONS)[number];
      expect(gcsIdempotency(op), operation).toBe(row.idempotency);
      for (const field of row.preconditions) {
        const value = field === 'etag' ? 'e' : 0;
        expect(gcsPreconditionMet(op, { [field]: value }), `${operation} with ${field}`).toBe(true);
      }
      if (row.idempotency === 'conditional') {
        const others = ['ifGenerationMatch', 'ifMetagenerationMatch', 'etag', 'generation'].filter((f) => !row.preconditions.includes(f));
        for (const field of others) {
          const value = field === 'etag' ? 'e' : 0;
          expect(gcsPreconditionMet(op, { [field]: value }), `${operation} with ${field}`).toBe(false);
        }
      }
    }
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

describe('gcs()', () => {
  it('refuses idempotent together with preconditions', () => {
    // @ts-expect-error the type refuses it too
    expect(messageOf(() => gcs({ idempotent: true, preconditions: { ifGenerationMatch: 0 } }))).toBe(
      'gcs: options.idempotent decides by itself whether to resend; drop it, or drop operation, preconditions and strategy',
    );
  });

  it('explains in full why it needs an operation', () => {
    // @ts-expect-error the type refuses it too
    expect(messageOf(() => gcs())).toBe(
      "gcs: options.operation is required under strategy 'conditional' (the default): name the JSON API method, " +
        "e.g. gcs({ operation: 'objects.get' }), so the preset can tell whether the request is safe to resend; " +
        "or decide yourself with strategy: 'always' or idempotent: true",
    );
  });
});
