// `tenacious schedule`: the exact waits per retry and their text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderSchedule, scheduleRows } from '../../src/cli/schedule.js';
import { type AttemptTimeoutGrowth, type BackoffPolicy, computeDelay } from '../../src/index.js';

const GCS_BACKOFF: BackoffPolicy = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 64_000, jitter: { additiveMs: 1000 } };

describe('scheduleRows', () => {
  it('gives the exact Cloud Storage waits: 1–2 s first, then doubling, truncated at 64 s', () => {
    const rows = scheduleRows(GCS_BACKOFF, 8);
    expect(rows.slice(0, 2)).toEqual([
      { retry: 1, minMs: 1000, medianMs: 1500, maxMs: 2000, waitedMinMs: 1000, waitedMaxMs: 2000 },
      { retry: 2, minMs: 2000, medianMs: 2500, maxMs: 3000, waitedMinMs: 3000, waitedMaxMs: 5000 },
    ]);
    expect(rows.map((r) => [r.minMs, r.maxMs])).toEqual([
      [1000, 2000],
      [2000, 3000],
      [4000, 5000],
      [8000, 9000],
      [16_000, 17_000],
      [32_000, 33_000],
      [64_000, 64_000],
      [64_000, 64_000],
    ]);
    expect(rows[7]?.waitedMaxMs).toBe(197_000);
  });

  const policies = fc
    .record({
      initialDelayMs: fc.integer({ min: 0, max: 10_000 }),
      multiplier: fc.double({ min: 1, max: 4, noNaN: true }),
      extraMs: fc.integer({ min: 0, max: 100_000 }),
      jitter: fc.oneof(
        fc.constantFrom<BackoffPolicy['jitter']>('none', 'full', 'equal'),
        fc.integer({ min: 0, max: 5000 }).map((additiveMs): BackoffPolicy['jitter'] => ({ additiveMs })),
        fc.integer({ min: 0, max: 5000 }).map((additiveMs): BackoffPolicy['jitter'] => ({ additiveMs, afterCap: true })),
      ),
    })
    .map(({ initialDelayMs, multiplier, extraMs, jitter }): BackoffPolicy => {
      const maxDelayMs = initialDelayMs + extraMs;
      // With afterCap the jitter must fit under the cap.
      const fitted =
        typeof jitter === 'object' && jitter.afterCap === true
          ? { ...jitter, additiveMs: Math.min(jitter.additiveMs, maxDelayMs) }
          : jitter;
      return { initialDelayMs, multiplier, maxDelayMs, jitter: fitted };
    });

  it('min, median and max bound every wait computeDelay can produce, and the median splits them', () => {
    fc.assert(
      fc.property(
        policies,
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 20 }),
        (policy, retries, draws) => {
          const rows = scheduleRows(policy, retries);
          expect(rows).toHaveLength(retries);
          let waitedMin = 0;
          let waitedMax = 0;
          rows.forEach((row, n) => {
            expect(row.minMs).toBeLessThanOrEqual(row.medianMs);
            expect(row.medianMs).toBeLessThanOrEqual(row.maxMs);
            expect(row.maxMs).toBeLessThanOrEqual(policy.maxDelayMs);
            waitedMin += row.minMs;
            waitedMax += row.maxMs;
            expect(row.waitedMinMs).toBe(waitedMin);
            expect(row.waitedMaxMs).toBe(waitedMax);
            for (const r of draws) {
              const delay = computeDelay(n, policy, () => r);
              expect(delay).toBeGreaterThanOrEqual(row.minMs);
              expect(delay).toBeLessThanOrEqual(row.maxMs);
              // Monotone in r is what makes the delay at r = 0.5 the exact median.
              if (r <= 0.5) expect(delay).toBeLessThanOrEqual(row.medianMs);
              else expect(delay).toBeGreaterThanOrEqual(row.medianMs);
            }
          });
        },
      ),
    );
  });
});

describe('scheduleRows with a decorrelated jitter: each chain carries its previous wait', () => {
  const policy: BackoffPolicy = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 20_000, jitter: 'decorrelated' };

  it('gives the shortest waits (every draw 0), the longest (every draw 1, tripling to the cap) and the waits at 0.5', () => {
    const rows = scheduleRows(policy, 5);
    expect(rows.map((r) => r.minMs)).toEqual([1000, 1000, 1000, 1000, 1000]);
    expect(rows.map((r) => r.maxMs)).toEqual([3000, 9000, 20_000, 20_000, 20_000]);
    expect(rows.map((r) => r.medianMs)).toEqual([2000, 3500, 5750, 9125, 10_500]);
    expect(rows.map((r) => r.waitedMaxMs)).toEqual([3000, 12_000, 32_000, 52_000, 72_000]);
  });

  it('bounds every chain of waits computeDelay can draw', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 12 }), (draws) => {
        const rows = scheduleRows(policy, draws.length);
        let previous: number | undefined;
        draws.forEach((r, n) => {
          previous = computeDelay(n, policy, () => r, previous);
          expect(previous).toBeGreaterThanOrEqual(rows[n]?.minMs as number);
          expect(previous).toBeLessThanOrEqual(rows[n]?.maxMs as number);
        });
      }),
    );
  });

  it('names it in the title', () => {
    expect(renderSchedule({ backoff: policy, deadlineMs: 60_000, attempts: 2, source: 'x' }).split('\n')[0]).toBe(
      'x: wait 1s x2 up to 20s, jitter decorrelated, deadline 60s',
    );
  });
});

describe('renderSchedule', () => {
  it('prints one row per retry with the waits in seconds and a bar up to the cap', () => {
    const text = renderSchedule({ backoff: GCS_BACKOFF, deadlineMs: 600_000, attempts: 12, source: 'gcs preset' });
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('gcs preset: wait 1s x2 up to 64s, jitter additive:1s, deadline 600s');
    const rows = lines.filter((line) => /^\s+\d+\s/.test(line));
    expect(rows).toHaveLength(11);
    expect(rows[0]).toMatch(/^\s+1\s+1\.000\s+1\.500\s+2\.000\s+1\.000\s+2\.000\s+\|o=\s{30}\|$/);
    expect(rows[10]).toMatch(/^\s+11\s+64\.000\s+64\.000\s+64\.000\s+383\.000\s+389\.000\s+\|\s{31}o\|$/);
    expect(text).not.toContain('deadline:');
  });

  it('marks the retries the deadline may or must cut off', () => {
    const text = renderSchedule({ backoff: GCS_BACKOFF, deadlineMs: 10_000, attempts: 5, source: 'x' });
    const rows = text.split('\n').filter((line) => /^\s+\d+\s/.test(line));
    expect(rows.map((row) => /\|\s*(.*)$/.exec(row.slice(row.lastIndexOf('|')))?.[1])).toEqual([
      '',
      '',
      'may pass the deadline',
      'past the deadline: never reached',
    ]);
  });

  it('names jitter kept after the cap in the title', () => {
    const backoff = { ...GCS_BACKOFF, jitter: { additiveMs: 1000, afterCap: true } };
    const text = renderSchedule({ backoff, deadlineMs: 600_000, attempts: 9, source: 'x' });
    expect(text.split('\n')[0]).toBe('x: wait 1s x2 up to 64s, jitter additive:1s (kept after the cap), deadline 600s');
    expect(text.trimEnd().split('\n').at(-1)).toMatch(/^\s+8\s+63\.000\s+63\.500\s+64\.000\s/);
  });

  it('names a finite attempt timeout in its title, and leaves out an infinite one', () => {
    const title = (attemptTimeoutMs?: number | AttemptTimeoutGrowth): string | undefined =>
      renderSchedule({ backoff: GCS_BACKOFF, deadlineMs: 600_000, attempts: 2, source: 'x', attemptTimeoutMs }).split('\n')[0];
    expect(title(30_000)).toBe('x: wait 1s x2 up to 64s, jitter additive:1s, deadline 600s, attempt timeout 30s');
    expect(title(Number.POSITIVE_INFINITY)).toBe('x: wait 1s x2 up to 64s, jitter additive:1s, deadline 600s');
    expect(title(undefined)).toBe('x: wait 1s x2 up to 64s, jitter additive:1s, deadline 600s');
  });

  it('names a growing attempt timeout by its three numbers, leaving out an infinite cap', () => {
    const title = (attemptTimeoutMs: AttemptTimeoutGrowth): string | undefined =>
      renderSchedule({ backoff: GCS_BACKOFF, deadlineMs: 600_000, attempts: 2, source: 'x', attemptTimeoutMs }).split('\n')[0];
    expect(title({ initialMs: 5000, multiplier: 1.5, maxMs: 30_000 })).toBe(
      'x: wait 1s x2 up to 64s, jitter additive:1s, deadline 600s, attempt timeout 5s x1.5 up to 30s',
    );
    expect(title({ initialMs: 5000, multiplier: 2, maxMs: Number.POSITIVE_INFINITY })).toBe(
      'x: wait 1s x2 up to 64s, jitter additive:1s, deadline 600s, attempt timeout 5s x2',
    );
  });

  it('draws a wait without jitter as a single mark', () => {
    const text = renderSchedule({ backoff: { ...GCS_BACKOFF, jitter: 'none' }, deadlineMs: 600_000, attempts: 2, source: 'x' });
    expect(text).toMatch(/\|o {31}\|\n$/);
  });

  const full: BackoffPolicy = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: 'full' };

  it('prints its title, the explanation and the column headings', () => {
    const lines = renderSchedule({ backoff: full, deadlineMs: 120_000, attempts: 2, source: 'default policy' }).split('\n');
    expect(lines.slice(0, 5)).toEqual([
      'default policy: wait 1s x2 up to 32s, jitter full, deadline 120s',
      'Seconds waited before each retry over the whole jitter range (exact), and in total so far',
      '(the time the attempts themselves take comes on top).',
      '',
      `retry       min    median       max   total min   total max  0${' '.repeat(32)}32s`,
    ]);
  });

  it('draws full jitter as a bar from 0 to the cap with the median in the middle', () => {
    const text = renderSchedule({ backoff: full, deadlineMs: 600_000, attempts: 7, source: 'x' });
    const last = text.trimEnd().split('\n').at(-1) ?? '';
    expect(last.slice(last.indexOf('|'))).toBe(`|${'='.repeat(16)}o${'='.repeat(15)}|`);
  });

  it('says a retry whose shortest total wait equals the deadline is never reached', () => {
    const none: BackoffPolicy = { ...full, jitter: 'none' };
    const rows = renderSchedule({ backoff: none, deadlineMs: 3000, attempts: 3, source: 'x' }).trimEnd().split('\n').slice(-2);
    expect(rows[0]).not.toContain('deadline');
    expect(rows[1]).toMatch(/past the deadline: never reached$/);
  });

  it('draws a policy that never waits as a mark at 0', () => {
    const zero: BackoffPolicy = { initialDelayMs: 0, multiplier: 1, maxDelayMs: 0, jitter: 'none' };
    const last = renderSchedule({ backoff: zero, deadlineMs: 1000, attempts: 2, source: 'x' }).trimEnd().split('\n').at(-1) ?? '';
    expect(last.slice(last.indexOf('|'))).toBe(`|o${' '.repeat(31)}|`);
  });
});
