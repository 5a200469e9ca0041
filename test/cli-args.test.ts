// The CLI's pure parts: durations, the command line, the schedule table, exit statuses.
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CliRequest, type RunRequest, type ScheduleRequest, UsageError, readArgs } from '../src/cli/args.js';
import { formatDuration, parseDuration } from '../src/cli/duration.js';
import { CommandFailed, type CommandOutcome, exitStatusOf, retryLine, retryableExit } from '../src/cli/exit-status.js';
import { renderSchedule, scheduleRows } from '../src/cli/schedule.js';
import { type BackoffPolicy, DEFAULT_BACKOFF, computeDelay, gcs, iam } from '../src/index.js';

const read = (argv: string[]): CliRequest => readArgs(argv, (config) => parseArgs(config));
const readRun = (argv: string[]): RunRequest => {
  const request = read(argv);
  if (request.kind !== 'run') throw new Error(`expected a run, got ${request.kind}`);
  return request;
};
const readSchedule = (argv: string[]): ScheduleRequest => {
  const request = read(argv);
  if (request.kind !== 'schedule') throw new Error(`expected a schedule, got ${request.kind}`);
  return request;
};
const usageError = (argv: string[]): string => {
  try {
    read(argv);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`expected a UsageError for ${JSON.stringify(argv)}`);
};

const GCS_BACKOFF: BackoffPolicy = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 64_000, jitter: { additiveMs: 1000 } };

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['1.5s', 1500],
    ['.5s', 500],
    ['1.1s', 1100],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['0', 0],
    ['0ms', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('refuses a bare number other than 0, naming it and suggesting units', () => {
    expect(() => parseDuration('90')).toThrow(RangeError);
    expect(() => parseDuration('90')).toThrow('"90" has no unit: write 90s or 90ms');
  });

  it.each(['', 's', '-1s', '1x', '1e3ms', 'abc', '1.s', '1 s s', `${'9'.repeat(400)}h`])('refuses %j', (text) => {
    expect(() => parseDuration(text)).toThrow(RangeError);
  });

  it('reads whole numbers in every unit exactly', () => {
    const units = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom(...(Object.keys(units) as Array<keyof typeof units>)), (n, unit) => {
        expect(parseDuration(`${n}${unit}`)).toBe(n * units[unit]);
      }),
    );
  });

  it('reads seconds with millisecond decimals exactly, despite binary floating point', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 999 }), (whole, fraction) => {
        expect(parseDuration(`${whole}.${String(fraction).padStart(3, '0')}s`)).toBe(whole * 1000 + fraction);
      }),
    );
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [250, '250ms'],
    [999.6, '1s'],
    [1000, '1s'],
    [1250, '1.25s'],
    [64_000, '64s'],
    [600_000, '600s'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('reads back through parseDuration to within half a millisecond', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e9, noNaN: true }), (ms) => {
        expect(Math.abs(parseDuration(formatDuration(ms)) - ms)).toBeLessThanOrEqual(0.5);
      }),
    );
  });
});

describe('readArgs: run', () => {
  it('takes the command after "--" and the library defaults', () => {
    expect(readRun(['--', 'make', 'test'])).toEqual({
      kind: 'run',
      command: 'make',
      args: ['test'],
      backoff: { ...DEFAULT_BACKOFF },
      deadlineMs: 120_000,
      attemptTimeoutMs: Number.POSITIVE_INFINITY,
      maxAttempts: Number.POSITIVE_INFINITY,
      retryOn: undefined,
      quiet: false,
    });
  });

  it('passes everything after the first "--" to the command untouched, flags and "--" included', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 6 }), (commandLine) => {
        const request = readRun(['--quiet', '--', ...commandLine]);
        expect([request.command, ...request.args]).toEqual(commandLine);
        expect(request.quiet).toBe(true);
      }),
    );
    expect(readRun(['--', 'ls', '--max-attempts', 'x', '-q']).maxAttempts).toBe(Number.POSITIVE_INFINITY);
  });

  it('reads every flag', () => {
    const request = readRun([
      '--max-attempts', '5',
      '--deadline', '90s',
      '--initial-delay', '250ms',
      '--max-delay', '2m',
      '--jitter', 'equal',
      '--retry-on', '1,75',
      '-q',
      '--', 'cmd',
    ]);
    expect(request).toMatchObject({
      maxAttempts: 5,
      deadlineMs: 90_000,
      backoff: { initialDelayMs: 250, multiplier: 2, maxDelayMs: 120_000, jitter: 'equal' },
      quiet: true,
    });
    expect([...(request.retryOn ?? [])]).toEqual([1, 75]);
  });

  it('takes the backoff and deadline of a preset, and flags override single parts', () => {
    expect(readRun(['--preset', 'iam', '--', 'x'])).toMatchObject({
      backoff: { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: { additiveMs: 1000 } },
      deadlineMs: 300_000,
    });
    expect(readRun(['--preset', 'gcs', '--', 'x'])).toMatchObject({ backoff: GCS_BACKOFF, deadlineMs: 600_000 });
    expect(readRun(['--preset', 'gcs', '--max-delay', '10s', '--deadline', '1m', '--', 'x'])).toMatchObject({
      backoff: { ...GCS_BACKOFF, maxDelayMs: 10_000 },
      deadlineMs: 60_000,
    });
  });

  it('follows the library presets, so the command cannot drift from iam() and gcs()', () => {
    expect(readRun(['--preset', 'iam', '--', 'x'])).toMatchObject({
      backoff: { ...DEFAULT_BACKOFF, ...iam().backoff },
      deadlineMs: iam().deadlineMs,
    });
    const library = gcs({ strategy: 'always' });
    expect(readRun(['--preset', 'gcs', '--', 'x'])).toMatchObject({
      backoff: { ...DEFAULT_BACKOFF, ...library.backoff },
      deadlineMs: library.deadlineMs,
    });
  });

  it('scales a preset\'s additive jitter with --initial-delay, as iam() and gcs() do, unless --jitter is given', () => {
    const scaled = readRun(['--preset', 'gcs', '--initial-delay', '50ms', '--max-delay', '200ms', '--', 'x']).backoff;
    expect(scaled).toEqual(gcs({ strategy: 'always', backoff: { initialDelayMs: 50, maxDelayMs: 200 } }).backoff);
    expect(scaled.jitter).toEqual({ additiveMs: 50 });
    expect(readRun(['--preset', 'iam', '--initial-delay', '2s', '--', 'x']).backoff.jitter).toEqual({ additiveMs: 2000 });
    const own = readRun(['--preset', 'iam', '--initial-delay', '50ms', '--jitter', 'additive:1s', '--', 'x']).backoff;
    expect(own.jitter).toEqual({ additiveMs: 1000 });
    expect(readRun(['--initial-delay', '50ms', '--', 'x']).backoff.jitter).toBe('full');
  });

  it.each([
    ['full', 'full'],
    ['none', 'none'],
    ['equal', 'equal'],
    ['additive:1000', { additiveMs: 1000 }],
    ['additive:1.5s', { additiveMs: 1500 }],
    ['additive:0', { additiveMs: 0 }],
  ])('--jitter %s', (text, jitter) => {
    expect(readRun(['--jitter', text, '--', 'x']).backoff.jitter).toEqual(jitter);
  });

  it('takes the last value of a flag given twice, so a wrapper\'s defaults can be overridden', () => {
    const request = readRun(['--deadline', '1s', '--preset', 'iam', '--deadline=2s', '--preset', 'gcs', '-q', '-q', '--', 'x']);
    expect(request).toMatchObject({ deadlineMs: 2000, backoff: { maxDelayMs: 64_000 }, quiet: true });
    expect(readRun(['--deadline', '1s', '--deadline', '3s', '--', 'x']).deadlineMs).toBe(3000);
  });

  it('takes the same flag names as schedule: --max-attempts and --attempt-timeout, with --attempts as the old name', () => {
    expect(readRun(['--attempt-timeout', '1.5s', '--max-attempts', '4', '--', 'x'])).toMatchObject({ attemptTimeoutMs: 1500, maxAttempts: 4 });
    expect(readRun(['--', 'x']).attemptTimeoutMs).toBe(Number.POSITIVE_INFINITY);
    expect(readRun(['--attempts', '4', '--', 'x']).maxAttempts).toBe(4);
    expect(readSchedule(['schedule', '--attempts', '7', '--attempt-timeout', '30s'])).toMatchObject({ attempts: 7, attemptTimeoutMs: 30_000 });
    // The old and the new name are one flag: the last one counts.
    expect(readSchedule(['schedule', '--attempts', '7', '--max-attempts', '8']).attempts).toBe(8);
    expect(renderSchedule(readSchedule(['schedule', '--attempt-timeout', '30s'])).split('\n')[0]).toBe(
      'default policy: wait 1s x2 up to 32s, jitter full, deadline 120s, attempt timeout 30s',
    );
  });

  it('--help wins over everything else', () => {
    expect(read(['--max-attempts', '0', '--help'])).toEqual({ kind: 'help' });
    expect(read(['schedule', '-h'])).toEqual({ kind: 'help' });
  });
});

describe('readArgs: schedule', () => {
  it('reads the preset and --max-attempts, 10 attempts by default', () => {
    expect(readSchedule(['schedule', '--preset', 'gcs', '--max-attempts', '12'])).toEqual({
      kind: 'schedule',
      backoff: GCS_BACKOFF,
      deadlineMs: 600_000,
      attemptTimeoutMs: Number.POSITIVE_INFINITY,
      attempts: 12,
      source: 'gcs preset',
    });
    expect(readSchedule(['schedule'])).toMatchObject({ attempts: 10, backoff: DEFAULT_BACKOFF, source: 'default policy' });
    expect(readSchedule(['schedule', '--preset', 'iam', '--jitter', 'none']).source).toBe('iam preset, changed by flags');
  });
});

describe('readArgs: bad command lines name the flag and the value', () => {
  it.each([
    [['--max-attempts', '0', '--', 'x'], '--max-attempts must be a whole number >= 1, got "0"'],
    [['--max-attempts', '2.5', '--', 'x'], '--max-attempts must be a whole number >= 1, got "2.5"'],
    [['--deadline', '90', '--', 'x'], '--deadline: "90" has no unit: write 90s or 90ms'],
    [['--deadline', '0s', '--', 'x'], '--deadline must be longer than 0, got "0s"'],
    [['--deadline', '--quiet', '--', 'x'], '--deadline: expected a duration such as 250ms, 1.5s or 2m, got "--quiet"'],
    [['--initial-delay', 'soon', '--', 'x'], '--initial-delay: expected a duration such as 250ms, 1.5s or 2m, got "soon"'],
    [['--initial-delay', '5s', '--max-delay', '2s', '--', 'x'], '--max-delay "2s" must not be shorter than --initial-delay "5s"'],
    [['--initial-delay', '40s', '--', 'x'], '--max-delay 32s (the default) must not be shorter than --initial-delay "40s"'],
    [['--jitter', 'bogus', '--', 'x'], '--jitter must be full, none, equal or additive:AMOUNT (e.g. additive:1000), got "bogus"'],
    [['--jitter', 'additive:-1', '--', 'x'], '--jitter additive: expected a duration such as 250ms, 1.5s or 2m, got "-1"'],
    [['--retry-on', '1,x', '--', 'x'], '--retry-on must list exit codes from 1 to 255 separated by commas (e.g. 1,75), got "1,x"'],
    [['--retry-on', '0', '--', 'x'], 'got "0"'],
    [['--retry-on', '256', '--', 'x'], 'got "256"'],
    [['--retry-on', '', '--', 'x'], 'got ""'],
    [['--preset', 'aws', '--', 'x'], '--preset must be iam or gcs, got "aws"'],
    [['--nope', '--', 'x'], 'unknown option --nope'],
    [['-z', '--', 'x'], 'unknown option -z'],
    [['--deadline'], '--deadline needs a value'],
    [['--quiet=yes', '--', 'x'], '--quiet takes no value, got "yes"'],
    [[], 'missing the command to run'],
    [['--quiet', '--'], 'missing the command to run'],
    [['make', 'test'], 'unexpected argument "make": put the command after "--", as in: tenacious [options] -- make …'],
    [['schedule', '--retry-on', '1'], '--retry-on does not apply to schedule'],
    [['schedule', '--', 'x'], 'schedule takes no command'],
    [['schedule', 'now'], 'schedule: unexpected argument "now"'],
    [['schedule', '--max-attempts', '1'], '--max-attempts must be a whole number from 2 to 1000, got "1"'],
    [['schedule', '--attempts', '1'], '--attempts must be a whole number from 2 to 1000, got "1"'],
    [['schedule', '--max-attempts', '1001'], 'got "1001"'],
    [['--attempt-timeout', '0s', '--', 'x'], '--attempt-timeout must be longer than 0, got "0s"'],
    [['--attempt-timeout', '5', '--', 'x'], '--attempt-timeout: "5" has no unit: write 5s or 5ms'],
    [['schedule', '--attempt-timeout', 'soon'], '--attempt-timeout: expected a duration such as 250ms, 1.5s or 2m, got "soon"'],
    // Regression: 400 digits read as Infinity, which reached retry() and exited 70 with a stack trace.
    [['--jitter', `additive:${'9'.repeat(400)}`, '--', 'x'], `--jitter additive: amount "${'9'.repeat(400)}" is too large`],
    [['schedule', '--jitter', `additive:${'9'.repeat(400)}`], '--jitter additive: amount'],
    [['--jitter', 'additive:1e400', '--', 'x'], '--jitter additive: expected a duration such as 250ms, 1.5s or 2m, got "1e400"'],
    [['--jitter', 'additive:NaN', '--', 'x'], 'got "NaN"'],
    [['--jitter', 'additive:', '--', 'x'], 'got "additive:"'],
    [['--deadline', `${'9'.repeat(400)}ms`, '--', 'x'], 'is too large'],
    [['--initial-delay', `${'9'.repeat(400)}s`, '--', 'x'], 'is too large'],
    [['--max-delay', `${'9'.repeat(310)}ms`, '--', 'x'], 'is too large'],
    [['--deadline', 'NaN', '--', 'x'], 'got "NaN"'],
    [['--deadline', '', '--', 'x'], 'got ""'],
    [['--max-attempts', '9'.repeat(400), '--', 'x'], '--max-attempts must be a whole number >= 1'],
    [['--max-attempts', '', '--', 'x'], 'got ""'],
    [['--max-attempts', '-1', '--', 'x'], 'got "-1"'],
  ])('%j', (argv, message) => {
    expect(usageError(argv)).toContain(message);
  });
});

describe('scheduleRows', () => {
  it('gives the exact Cloud Storage waits: 1–2 s first, then doubling, truncated at 64 s', () => {
    const rows = scheduleRows(GCS_BACKOFF, 8);
    expect(rows.slice(0, 2)).toEqual([
      { retry: 1, minMs: 1000, medianMs: 1500, maxMs: 2000, waitedMinMs: 1000, waitedMaxMs: 2000 },
      { retry: 2, minMs: 2000, medianMs: 2500, maxMs: 3000, waitedMinMs: 3000, waitedMaxMs: 5000 },
    ]);
    expect(rows.map((r) => [r.minMs, r.maxMs])).toEqual([
      [1000, 2000], [2000, 3000], [4000, 5000], [8000, 9000], [16_000, 17_000], [32_000, 33_000], [64_000, 64_000], [64_000, 64_000],
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
      const fitted = typeof jitter === 'object' && jitter.afterCap === true ? { ...jitter, additiveMs: Math.min(jitter.additiveMs, maxDelayMs) } : jitter;
      return { initialDelayMs, multiplier, maxDelayMs, jitter: fitted };
    });

  it('min, median and max bound every wait computeDelay can produce, and the median splits them', () => {
    fc.assert(
      fc.property(policies, fc.integer({ min: 1, max: 40 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 20 }), (policy, retries, draws) => {
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
      }),
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

  it('draws a wait without jitter as a single mark', () => {
    const text = renderSchedule({ backoff: { ...GCS_BACKOFF, jitter: 'none' }, deadlineMs: 600_000, attempts: 2, source: 'x' });
    expect(text).toMatch(/\|o {31}\|\n$/);
  });
});

describe('exit statuses', () => {
  const signals = { SIGKILL: 9, SIGTERM: 15 };
  const exited = (code: number | null, signal: string | null = null): CommandOutcome => ({ kind: 'exited', code, signal });
  const notStarted = (errorCode: string): CommandOutcome => ({ kind: 'not-started', errorCode, message: errorCode });

  it('follows the shell: the code, 128 + signal number, 127 not found, 126 not executable', () => {
    expect(exitStatusOf(exited(0), signals)).toBe(0);
    expect(exitStatusOf(exited(3), signals)).toBe(3);
    expect(exitStatusOf(exited(null, 'SIGKILL'), signals)).toBe(137);
    expect(exitStatusOf(exited(null, 'SIGTERM'), signals)).toBe(143);
    expect(exitStatusOf(exited(null, 'SIGWEIRD'), signals)).toBe(1);
    expect(exitStatusOf(notStarted('ENOENT'), signals)).toBe(127);
    expect(exitStatusOf(notStarted('EACCES'), signals)).toBe(126);
  });

  it('retries every failing status without --retry-on, only the listed ones with it, never a command that did not start', () => {
    const any = retryableExit(undefined);
    const listed = retryableExit(new Set([75, 137]));
    expect(any(new CommandFailed(exited(1), 1))).toBe(true);
    expect(any(new CommandFailed(exited(null, 'SIGKILL'), 137))).toBe(true);
    expect(any(new CommandFailed(notStarted('ENOENT'), 127))).toBe(false);
    expect(any(new Error('not a command failure'))).toBe(false);
    expect(listed(new CommandFailed(exited(75), 75))).toBe(true);
    expect(listed(new CommandFailed(exited(null, 'SIGKILL'), 137))).toBe(true);
    expect(listed(new CommandFailed(exited(1), 1))).toBe(false);
  });

  it('reports a retry with the attempt, the failure and the wait', () => {
    expect(retryLine(1, 5, 'exit code 1', 1250)).toBe('tenacious: attempt 1 of 5 failed (exit code 1); retrying in 1.25s');
    expect(retryLine(2, Number.POSITIVE_INFINITY, 'killed by SIGKILL, exit code 137', 10)).toBe(
      'tenacious: attempt 2 failed (killed by SIGKILL, exit code 137); retrying in 10ms',
    );
    expect(new CommandFailed(exited(null, 'SIGKILL'), 137).message).toBe('killed by SIGKILL, exit code 137');
  });
});
