// Edges of the CLI's pure modules that test/cli-args.test.ts leaves open, found by mutation
// testing: anchored number formats, bounds that are allowed, exact messages and the table text.
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type CliRequest, FLAGS, type RunRequest, UsageError, readArgs } from '../../src/cli/args.js';
import { parseDuration } from '../../src/cli/duration.js';
import { CommandFailed, type CommandOutcome, describeOutcome } from '../../src/cli/exit-status.js';
import { renderSchedule } from '../../src/cli/schedule.js';
import { USAGE } from '../../src/cli/usage.js';
import type { BackoffPolicy } from '../../src/types.js';

const read = (argv: string[]): CliRequest => readArgs(argv, (config) => parseArgs(config));
const readRun = (argv: string[]): RunRequest => {
  const request = read(argv);
  if (request.kind !== 'run') throw new Error(`expected a run, got ${request.kind}`);
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
    expect(readRun(['--initial-delay', '5s', '--max-delay', '5s', '--', 'x']).backoff).toMatchObject({ initialDelayMs: 5000, maxDelayMs: 5000 });
    expect(usageError(['--max-delay', '500ms', '--', 'x'])).toBe('--max-delay "500ms" must not be shorter than --initial-delay 1s (the default)');
  });

  it('reads additive jitter with decimals in milliseconds, and only the whole word', () => {
    expect(readRun(['--jitter', 'additive:1.25', '--', 'x']).backoff.jitter).toEqual({ additiveMs: 1.25 });
    expect(readRun(['--jitter', 'additive:1.5', '--', 'x']).backoff.jitter).toEqual({ additiveMs: 1.5 });
    for (const text of ['my-additive:5', 'additive:5\n']) {
      expect(usageError(['--jitter', text, '--', 'x'])).toContain('--jitter must be full, none, equal or additive:AMOUNT');
    }
  });

  it('refuses --quiet for schedule', () => {
    expect(usageError(['schedule', '-q'])).toBe('--quiet does not apply to schedule');
  });
});

describe('parseDuration', () => {
  it('reads fractions written without a leading 0, and surrounding space', () => {
    expect(parseDuration('.25s')).toBe(250);
    expect(parseDuration(' 5s ')).toBe(5000);
  });

  it('refuses text after the unit', () => {
    expect(() => parseDuration('5sx')).toThrow('expected a duration such as 250ms, 1.5s or 2m, got "5sx"');
  });

  it('refuses a duration too large for a number', () => {
    const huge = `${'9'.repeat(400)}h`;
    expect(() => parseDuration(huge)).toThrow(`duration "${huge}" is too large`);
  });
});

describe('exit statuses', () => {
  it('name their error and say how the command ended', () => {
    const exited = (code: number | null, signal: string | null = null): CommandOutcome => ({ kind: 'exited', code, signal });
    expect(new CommandFailed(exited(3), 3).name).toBe('CommandFailed');
    expect(new CommandFailed(exited(3), 3).message).toBe('exit code 3');
    expect(describeOutcome(exited(null, null), 1)).toBe('exit code 1');
    expect(describeOutcome(exited(2, 'SIGTERM'), 2)).toBe('exit code 2');
    expect(describeOutcome({ kind: 'not-started', errorCode: 'ENOENT', message: 'spawn nope ENOENT' }, 127)).toBe(
      'could not start the command: spawn nope ENOENT',
    );
  });
});

describe('renderSchedule', () => {
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

describe('USAGE', () => {
  it('documents every flag', () => {
    for (const [name, flag] of Object.entries(FLAGS)) {
      expect(USAGE).toContain(`--${name}`);
      if ('short' in flag) expect(USAGE).toContain(`-${flag.short}, --${name}`);
    }
  });
});
