// scheduleOf: an options object's waits as the CLI's schedule rows, to assert on.
import { describe, expect, it } from 'vitest';
import { renderSchedule, scheduleRows } from '../../src/cli/schedule.js';
import { gcs, iam } from '../../src/google/index.js';
import { instant, scheduleOf } from '../../src/testing/index.js';

describe('scheduleOf', () => {
  it("gives a preset's exact waits: gcs(), 1–2 s, then doubling", () => {
    expect(scheduleOf(gcs({ operation: 'objects.get' }), 3)).toEqual([
      { retry: 1, minMs: 1000, medianMs: 1500, maxMs: 2000, waitedMinMs: 1000, waitedMaxMs: 2000 },
      { retry: 2, minMs: 2000, medianMs: 2500, maxMs: 3000, waitedMinMs: 3000, waitedMaxMs: 5000 },
      { retry: 3, minMs: 4000, medianMs: 4500, maxMs: 5000, waitedMinMs: 7000, waitedMaxMs: 10_000 },
    ]);
  });

  it('is the rows the CLI prints', () => {
    const policy = iam().backoff;
    expect(scheduleOf(iam(), 6)).toEqual(scheduleRows(policy, 6));
    const text = renderSchedule({ backoff: policy, deadlineMs: 300_000, attempts: 7, source: 'iam preset' });
    for (const row of scheduleOf(iam(), 6)) expect(text).toContain(`${(row.maxMs / 1000).toFixed(3)}`);
  });

  it('gives one row per retry maxAttempts allows, 9 without it, and none for one attempt', () => {
    expect(scheduleOf({ maxAttempts: 4 })).toHaveLength(3);
    expect(scheduleOf({ maxAttempts: 1 })).toEqual([]);
    expect(scheduleOf({})).toHaveLength(9);
    expect(scheduleOf()).toHaveLength(9);
    expect(scheduleOf({ maxAttempts: 4 }, 6)).toHaveLength(6);
    expect(scheduleOf({ maxAttempts: 20_000 })).toHaveLength(10_000);
  });

  it("fills in retry()'s default backoff: 1 s doubling to 32 s, full jitter", () => {
    const rows = scheduleOf({}, 7);
    expect(rows.map((row) => [row.minMs, row.medianMs, row.maxMs])).toEqual([
      [0, 500, 1000],
      [0, 1000, 2000],
      [0, 2000, 4000],
      [0, 4000, 8000],
      [0, 8000, 16_000],
      [0, 16_000, 32_000],
      [0, 16_000, 32_000],
    ]);
  });

  it("reads retryFetch's options and instant()'s alike: their waits are the options' own", () => {
    const options = {
      backoff: { initialDelayMs: 200, jitter: 'none' as const },
      maxAttempts: 3,
      fetch: globalThis.fetch,
      bufferBody: true,
    };
    expect(scheduleOf(options)).toEqual(scheduleOf({ backoff: options.backoff, maxAttempts: 3 }));
    expect(scheduleOf(instant(options))).toEqual([
      { retry: 1, minMs: 200, medianMs: 200, maxMs: 200, waitedMinMs: 200, waitedMaxMs: 200 },
      { retry: 2, minMs: 400, medianMs: 400, maxMs: 400, waitedMinMs: 600, waitedMaxMs: 600 },
    ]);
  });

  it('checks the fields it reads as retry() does, naming scheduleOf', () => {
    expect(() => scheduleOf({ backoff: { multiplier: 0.5 } })).toThrow(/^scheduleOf: options\.backoff\.multiplier must/);
    expect(() => scheduleOf({ maxAttempts: 0 })).toThrow(
      new RangeError('scheduleOf: options.maxAttempts must be a safe integer >= 1 or Infinity, got 0'),
    );
    expect(() => scheduleOf('gcs' as never)).toThrow(new TypeError('scheduleOf: options must be an object, got "gcs"'));
  });

  it.each([-1, 1.5, 10_001, Number.NaN, Infinity])('refuses %s retries', (retries) => {
    expect(() => scheduleOf({}, retries)).toThrow(
      new RangeError(`scheduleOf: retries must be a whole number from 0 to 10000, got ${retries}`),
    );
  });

  it('accepts 0 and 10 000 retries', () => {
    expect(scheduleOf({}, 0)).toEqual([]);
    expect(scheduleOf({}, 10_000)).toHaveLength(10_000);
  });

  it('refuses retries of the wrong kind with a TypeError', () => {
    expect(() => scheduleOf({}, '3' as never)).toThrow(
      new TypeError('scheduleOf: retries must be a whole number from 0 to 10000, got "3"'),
    );
  });
});
