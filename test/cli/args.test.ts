// The command line read into a request: flags, values, sub-commands and their errors.
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CliRequest, type RunRequest, type ScheduleRequest, UsageError, readArgs } from '../../src/cli/args.js';
import { renderSchedule } from '../../src/cli/schedule.js';
import { type BackoffPolicy, DEFAULT_BACKOFF } from '../../src/index.js';
import { gcs, iam } from '../../src/google/index.js';
import { readOptions } from '../../src/core/read-options.js';

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
      '--max-attempts',
      '5',
      '--deadline',
      '90s',
      '--initial-delay',
      '250ms',
      '--max-delay',
      '2m',
      '--jitter',
      'equal',
      '--retry-on',
      '1,75',
      '-q',
      '--',
      'cmd',
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

  it("scales a preset's additive jitter with --initial-delay, as iam() and gcs() do, unless --jitter is given", () => {
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
    ['decorrelated', 'decorrelated'],
    ['additive:1000', { additiveMs: 1000 }],
    ['additive:1.5s', { additiveMs: 1500 }],
    ['additive:0', { additiveMs: 0 }],
  ])('--jitter %s', (text, jitter) => {
    expect(readRun(['--jitter', text, '--', 'x']).backoff.jitter).toEqual(jitter);
  });

  it("takes the last value of a flag given twice, so a wrapper's defaults can be overridden", () => {
    const request = readRun(['--deadline', '1s', '--preset', 'iam', '--deadline=2s', '--preset', 'gcs', '-q', '-q', '--', 'x']);
    expect(request).toMatchObject({ deadlineMs: 2000, backoff: { maxDelayMs: 64_000 }, quiet: true });
    expect(readRun(['--deadline', '1s', '--deadline', '3s', '--', 'x']).deadlineMs).toBe(3000);
  });

  it('takes the same flag names as schedule: --max-attempts and --attempt-timeout, with --attempts as the old name', () => {
    expect(readRun(['--attempt-timeout', '1.5s', '--max-attempts', '4', '--', 'x'])).toMatchObject({
      attemptTimeoutMs: 1500,
      maxAttempts: 4,
    });
    expect(readRun(['--', 'x']).attemptTimeoutMs).toBe(Number.POSITIVE_INFINITY);
    expect(readRun(['--attempts', '4', '--', 'x']).maxAttempts).toBe(4);
    expect(readSchedule(['schedule', '--attempts', '7', '--attempt-timeout', '30s'])).toMatchObject({
      attempts: 7,
      attemptTimeoutMs: 30_000,
    });
    // The old and the new name are one flag: the last one counts.
    expect(readSchedule(['schedule', '--attempts', '7', '--max-attempts', '8']).attempts).toBe(8);
    expect(renderSchedule(readSchedule(['schedule', '--attempt-timeout', '30s'])).split('\n')[0]).toBe(
      'default policy: wait 1s x2 up to 32s, jitter full, deadline 120s, attempt timeout 30s',
    );
  });

  it('--version (-V) asks for the version, whatever else is given', () => {
    expect(read(['--version'])).toEqual({ kind: 'version' });
    expect(read(['schedule', '-V'])).toEqual({ kind: 'version' });
    expect(read(['--max-attempts', '0', '--version', '--', 'true'])).toEqual({ kind: 'version' });
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

describe('readArgs: a default cap follows the first delay given (as the library does)', () => {
  it('--initial-delay 40s alone waits 40 s at most, not refused under the default 32 s; a cap given is kept', () => {
    expect((read(['--initial-delay', '40s', '--', 'x']) as RunRequest).backoff).toMatchObject({
      initialDelayMs: 40_000,
      maxDelayMs: 40_000,
    });
    expect(readSchedule(['schedule', '--preset', 'iam', '--initial-delay', '2m']).backoff).toMatchObject({
      initialDelayMs: 120_000,
      maxDelayMs: 120_000,
    });
    expect((read(['--initial-delay', '1s', '--', 'x']) as RunRequest).backoff).toMatchObject({ maxDelayMs: 32_000 });
    expect(() => read(['--initial-delay', '40s', '--max-delay', '32s', '--', 'x'])).toThrow(
      '--max-delay "32s" must not be shorter than --initial-delay "40s"',
    );
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
    [
      ['--jitter', 'bogus', '--', 'x'],
      '--jitter must be full, none, equal, decorrelated or additive:AMOUNT (e.g. additive:1000), got "bogus"',
    ],
    [['--jitter', 'additive:-1', '--', 'x'], '--jitter additive: expected a duration such as 250ms, 1.5s or 2m, got "-1"'],
    [['--retry-on', '1,x', '--', 'x'], '--retry-on must list exit codes from 1 to 255 separated by commas (e.g. 1,75), got "1,x"'],
    [['--retry-on', '0', '--', 'x'], 'got "0"'],
    [['--retry-on', '256', '--', 'x'], 'got "256"'],
    [['--retry-on', '', '--', 'x'], 'got ""'],
    [['--preset', 'aws', '--', 'x'], '--preset must be iam or gcs, got "aws"'],
    [['--nope', '--', 'x'], 'unknown option --nope'],
    [['-z', '--', 'x'], 'unknown option -z'],
    [['--jiter', 'full', '--', 'x'], 'unknown option --jiter (did you mean --jitter?)'],
    [['--Max-Attempts', '3', '--', 'x'], 'unknown option --Max-Attempts (did you mean --max-attempts?)'],
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
    // Regression: a decorrelated jitter drawn up from 0 reached the library's RangeError and exited 70.
    [
      ['--jitter', 'decorrelated', '--initial-delay', '0', '--', 'x'],
      '--jitter decorrelated needs an --initial-delay longer than 0, got "0"',
    ],
    [
      ['--preset', 'gcs', '--initial-delay', '0ms', '--jitter', 'decorrelated', '--', 'x'],
      '--jitter decorrelated needs an --initial-delay longer than 0, got "0ms"',
    ],
    [
      ['schedule', '--jitter', 'decorrelated', '--initial-delay', '0s'],
      '--jitter decorrelated needs an --initial-delay longer than 0, got "0s"',
    ],
  ])('%j', (argv, message) => {
    expect(usageError(argv)).toContain(message);
  });

  it('takes an --initial-delay of 0 with any jitter but decorrelated', () => {
    for (const jitter of ['full', 'none', 'equal']) {
      expect(readRun(['--jitter', jitter, '--initial-delay', '0', '--', 'x']).backoff).toMatchObject({ initialDelayMs: 0, jitter });
    }
  });

  it('suggests a flag only when one is close to the name typed, and never for a short option', () => {
    expect(usageError(['--retry', '--', 'x'])).toBe('unknown option --retry (did you mean --retry-on?)');
    expect(usageError(['--verbose', '--', 'x'])).toBe('unknown option --verbose');
    expect(usageError(['-x', '--', 'x'])).toBe('unknown option -x');
  });
});

describe('readArgs: a policy it accepts, the library accepts', () => {
  // What exited 70 with a stack trace was a command line readArgs took and the library refused.
  it('either refuses a combination of policy flags by name, or hands the library options it takes', () => {
    const some = <T>(values: readonly T[]) => fc.option(fc.constantFrom(...values), { nil: undefined });
    const policyFlags = fc.record({
      preset: some(['iam', 'gcs']),
      'initial-delay': some(['0', '0ms', '1ms', '1s', '40s', '64s', '2m']),
      'max-delay': some(['0', '1ms', '1s', '32s', '64s']),
      jitter: some(['full', 'none', 'equal', 'decorrelated', 'additive:0', 'additive:1s', 'additive:5m']),
      deadline: some(['1ms', '10s', '10m']),
      'max-attempts': some(['2', '5', '1000']),
      'attempt-timeout': some(['1ms', '30s']),
    });
    fc.assert(
      fc.property(fc.boolean(), policyFlags, (schedule, flags) => {
        const argv = Object.entries(flags).flatMap(([name, value]) => (value === undefined ? [] : [`--${name}`, value]));
        let request: CliRequest;
        try {
          request = read(schedule ? ['schedule', ...argv] : [...argv, '--', 'x']);
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError);
          return;
        }
        if (request.kind === 'schedule') expect(() => renderSchedule(request)).not.toThrow();
        if (request.kind === 'run') {
          const { backoff, maxAttempts, deadlineMs } = request;
          expect(() => readOptions({ backoff, maxAttempts, deadlineMs })).not.toThrow();
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('readArgs', () => {
  it('makes UsageErrors that say what they are', () => {
    expect(String(new UsageError('--deadline needs a value'))).toBe('UsageError: --deadline needs a value');
  });

  it('takes the smallest and largest counts allowed', () => {
    expect(readRun(['--max-attempts', '1', '--', 'x']).maxAttempts).toBe(1);
    const schedule = (n: string) => read(['schedule', '--attempts', n]);
    expect(schedule('2')).toMatchObject({ attempts: 2 });
    expect(schedule('1000')).toMatchObject({ attempts: 1000 });
  });

  it.each([' 5', '5 ', '+5', '0x10', '1e3'])('takes counts as plain digits only: --max-attempts %j', (text) => {
    expect(usageError(['--max-attempts', text, '--', 'x'])).toBe(`--max-attempts must be a whole number >= 1, got ${JSON.stringify(text)}`);
  });

  it('takes exit codes from 1 to 255, with spaces around them, as plain digits only', () => {
    expect([...(readRun(['--retry-on', '1, 75,255', '--', 'x']).retryOn ?? [])]).toEqual([1, 75, 255]);
    for (const text of ['+5', '0x10', '1e2']) {
      expect(usageError(['--retry-on', text, '--', 'x'])).toContain(`got ${JSON.stringify(text)}`);
    }
  });

  it('names --max-delay in an error about its value', () => {
    expect(usageError(['--max-delay', 'soon', '--', 'x'])).toBe('--max-delay: expected a duration such as 250ms, 1.5s or 2m, got "soon"');
  });

  it('allows a cap equal to the initial delay, and names the default initial delay when the cap is below it', () => {
    expect(readRun(['--initial-delay', '5s', '--max-delay', '5s', '--', 'x']).backoff).toMatchObject({
      initialDelayMs: 5000,
      maxDelayMs: 5000,
    });
    expect(usageError(['--max-delay', '500ms', '--', 'x'])).toBe(
      '--max-delay "500ms" must not be shorter than --initial-delay 1s (the default)',
    );
  });

  it('reads additive jitter with decimals in milliseconds, and only the whole word', () => {
    expect(readRun(['--jitter', 'additive:1.25', '--', 'x']).backoff.jitter).toEqual({ additiveMs: 1.25 });
    expect(readRun(['--jitter', 'additive:1.5', '--', 'x']).backoff.jitter).toEqual({ additiveMs: 1.5 });
    for (const text of ['my-additive:5', 'additive:5\n']) {
      expect(usageError(['--jitter', text, '--', 'x'])).toContain('--jitter must be full, none, equal, decorrelated or additive:AMOUNT');
    }
  });

  it('refuses --quiet for schedule', () => {
    expect(usageError(['schedule', '-q'])).toBe('--quiet does not apply to schedule');
  });
});
