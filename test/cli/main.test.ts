// The built `tenacious` command, run as a child process against real child commands.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const distCli = join(root, 'dist', 'cli.js');
const work = mkdtempSync(join(tmpdir(), 'tenacious-cli-'));
let cli = distCli;

/** Newest modification time of the files the CLI bundle is built from. */
function newestSource(): number {
  const walk = (dir: string): number[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : [statSync(join(dir, entry.name)).mtimeMs],
    );
  return Math.max(...walk(join(root, 'src')), statSync(join(root, 'tsup.config.ts')).mtimeMs);
}

beforeAll(async () => {
  if (existsSync(distCli) && statSync(distCli).mtimeMs >= newestSource()) return;
  // `npm test` builds dist/ first. Without that (a bare `vitest run` after editing src/), build
  // the CLI alone, with the shipped options, into a private directory: rebuilding dist/ here
  // would delete files other test files are reading.
  const [{ build }, { cliBuild }] = await Promise.all([import('tsup'), import('../../tsup.config.js')]);
  const outDir = join(work, 'build');
  await build({ ...cliBuild, entry: { cli: join(root, 'src', 'cli', 'main.ts') }, outDir, config: false, silent: true });
  cli = join(outDir, 'cli.js');
  if (!existsSync(cli)) throw new Error(`dist/cli.js is missing or stale and building ${cli} failed: run npm run build`);
}, 60_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

const started = new Set<ChildProcess>();
afterEach(() => {
  // A CLI still running here belongs to a failed test; do not leave it behind.
  for (const child of started) child.kill('SIGKILL');
  started.clear();
});

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI; `whenOutput` is called with the output so far each time the CLI writes. */
function runCli(args: string[], whenOutput?: (out: { stdout: string; stderr: string }, child: ChildProcess) => void): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: work });
    started.add(child);
    const out = { stdout: '', stderr: '' };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out.stdout += chunk;
      whenOutput?.(out, child);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      out.stderr += chunk;
      whenOutput?.(out, child);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      started.delete(child);
      resolve({ code, signal, ...out });
    });
  });
}

let files = 0;
/** A fresh path in the work directory. */
const fresh = (name: string): string => join(work, `${name}-${++files}`);
const count = (counter: string): number => (existsSync(counter) ? Number(readFileSync(counter, 'utf8')) : 0);

// A command that counts its runs in a file and exits with the n-th listed status (the last one
// once the list runs out); "kill" makes it die of SIGKILL instead. A shell script, because a
// shell starts in a few milliseconds where node takes a hundred or more on a busy machine.
const FLAKY = `
counter=$1; shift
n=$(( $(cat "$counter" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$counter"
echo "out $n"
echo "err $n" >&2
i=0
for status in "$@"; do i=$((i + 1)); [ "$i" -ge "$n" ] && break; done
[ "$status" = kill ] && kill -KILL $$
exit "$status"
`;
const flaky = (counter: string, ...statuses: string[]): string[] => ['sh', '-c', FLAKY, 'flaky', counter, ...statuses];

// A command that counts its runs, says "ready" once its handlers are set, writes the signal it
// receives to a log and exits with status 7; otherwise it runs for 30 s.
const WAITER = `
const fs = require('node:fs');
const [counter, log] = process.argv.slice(1);
fs.writeFileSync(counter, String((fs.existsSync(counter) ? Number(fs.readFileSync(counter, 'utf8')) : 0) + 1));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) {
  process.on(signal, () => { fs.appendFileSync(log, signal + '\\n'); process.exit(7); });
}
setTimeout(() => process.exit(9), 30_000); // never outlive a failed test by long
process.stdout.write('ready\\n');
`;

// Tiny waits without jitter, so the printed delays are known; the deadline ends a broken test early.
const FAST = ['--initial-delay', '10ms', '--jitter', 'none', '--deadline', '10s'];

describe('tenacious -- command', () => {
  it('runs the command until it succeeds, streaming its output and printing each retry', async () => {
    const counter = fresh('count');
    const result = await runCli([...FAST, '--', ...flaky(counter, '1', '1', '0')]);
    expect(result.code).toBe(0);
    expect(count(counter)).toBe(3);
    expect(result.stdout).toBe('out 1\nout 2\nout 3\n');
    expect(result.stderr).toContain('err 1\n');
    expect(result.stderr).toContain('tenacious: attempt 1 failed (exit code 1); retrying in 10ms\n');
    expect(result.stderr).toContain('tenacious: attempt 2 failed (exit code 1); retrying in 20ms\n');
    expect(result.stderr).not.toContain('attempt 3');
  });

  it('gives up after --max-attempts and exits with the last exit code', async () => {
    const counter = fresh('count');
    const result = await runCli([...FAST, '--max-attempts', '3', '--', ...flaky(counter, '5', '6', '7', '0')]);
    expect(result.code).toBe(7);
    expect(count(counter)).toBe(3);
    expect(result.stderr).toContain('tenacious: attempt 2 of 3 failed (exit code 6); retrying in 20ms\n');
    expect(result.stderr).toContain('tenacious: giving up after 3 attempts (no attempts left): exit code 7\n');
  });

  it('retries only the exit codes in --retry-on', async () => {
    const counter = fresh('count');
    const result = await runCli([...FAST, '--retry-on', '75,76', '--', ...flaky(counter, '75', '3', '0')]);
    expect(result.code).toBe(3);
    expect(count(counter)).toBe(2);
    expect(result.stderr).toContain('tenacious: attempt 1 failed (exit code 75); retrying in 10ms\n');
    expect(result.stderr).toContain('tenacious: not retrying: exit code 3 is not in --retry-on\n');
  });

  it('prints nothing of its own with --quiet; the command still speaks', async () => {
    const counter = fresh('count');
    const result = await runCli([...FAST, '--quiet', '--', ...flaky(counter, '1', '0')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('out 1\nout 2\n');
    expect(result.stderr).toBe('err 1\nerr 2\n');
  });

  it('counts a command killed by a signal as 128 + its number, retried like any failing code', async () => {
    const retried = fresh('count');
    const again = await runCli([...FAST, '--', ...flaky(retried, 'kill', '0')]);
    expect(again.code).toBe(0);
    expect(count(retried)).toBe(2);
    expect(again.stderr).toContain('tenacious: attempt 1 failed (killed by SIGKILL, exit code 137); retrying in 10ms\n');

    const notListed = fresh('count');
    const once = await runCli([...FAST, '--retry-on', '1', '--', ...flaky(notListed, 'kill', '0')]);
    expect(once.code).toBe(137);
    expect(count(notListed)).toBe(1);
  });

  it('exits 127 without retrying when the command does not exist', async () => {
    const result = await runCli([...FAST, '--', join(work, 'no-such-command')]);
    expect(result.code).toBe(127);
    expect(result.stderr).toMatch(/^tenacious: could not start the command: spawn .*no-such-command ENOENT\n$/);
  });

  it('gives up at once when the next wait would pass the deadline', async () => {
    const counter = fresh('count');
    const result = await runCli(['--deadline', '5s', '--initial-delay', '10s', '--jitter', 'none', '--', ...flaky(counter, '4', '0')]);
    expect(result.code).toBe(4);
    expect(count(counter)).toBe(1);
    expect(result.stderr).toContain('tenacious: giving up after 1 attempt (the next wait would pass the 5s deadline): exit code 4\n');
  });

  it('sends SIGTERM to a command still running at the deadline and exits with its status', async () => {
    // No handler in the command: SIGTERM kills it however far its start-up has got.
    const result = await runCli([...FAST, '--deadline', '300ms', '--', process.execPath, '-e', 'setTimeout(() => {}, 30_000)']);
    expect(result.code).toBe(143);
    expect(result.stderr).toBe('tenacious: deadline of 300ms reached during attempt 1; sending SIGTERM to the command\n');
  });
});

// A command that counts its runs and hangs (as sleep itself, so SIGTERM ends it) until run number $2.
const HANGS_UNTIL = `
n=$(( $(cat "$1" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$1"
[ "$n" -ge "$2" ] && exit 0
exec sleep 30
`;
const hangsUntil = (counter: string, run: number): string[] => ['sh', '-c', HANGS_UNTIL, 'hangs', counter, String(run)];

describe('--attempt-timeout', () => {
  it('sends SIGTERM to a run still going after the timeout and retries it', async () => {
    const counter = fresh('count');
    const result = await runCli([...FAST, '--attempt-timeout', '400ms', '--', ...hangsUntil(counter, 2)]);
    expect(result.code).toBe(0);
    expect(count(counter)).toBe(2);
    expect(result.stderr).toBe(
      'tenacious: attempt 1 still running after 400ms (--attempt-timeout); sending SIGTERM to the command\n' +
        'tenacious: attempt 1 failed (timed out after 400ms); retrying in 10ms\n',
    );
  });

  it("retries a timed-out run whatever --retry-on lists, and exits with the last run's status when the attempts run out", async () => {
    const counter = fresh('count');
    const result = await runCli([
      ...FAST,
      '--retry-on',
      '3',
      '--max-attempts',
      '2',
      '--attempt-timeout',
      '300ms',
      '--',
      ...hangsUntil(counter, 9),
    ]);
    expect(result.code).toBe(143);
    expect(count(counter)).toBe(2);
    expect(result.stderr).toContain('tenacious: attempt 1 of 2 failed (timed out after 300ms); retrying in 10ms\n');
    expect(result.stderr).toContain('tenacious: giving up after 2 attempts (no attempts left): the last one timed out, exit code 143\n');
  });
});

describe('signals', () => {
  // SIGHUP and SIGQUIT: regression, they ended tenacious alone and left the command running.
  it.each(['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT'] as const)(
    'passes %s to the running command, stops retrying and exits with its status',
    async (signal) => {
      const counter = fresh('count');
      const log = fresh('log');
      let sent = false;
      const result = await runCli([...FAST, '--', process.execPath, '-e', WAITER, counter, log], (out, child) => {
        // "ready" comes through the CLI's stdout while the CLI is still running: output streams.
        if (!sent && out.stdout.includes('ready\n')) {
          sent = true;
          child.kill(signal);
        }
      });
      expect(sent).toBe(true);
      expect(result.code).toBe(7);
      expect(readFileSync(log, 'utf8')).toBe(`${signal}\n`);
      expect(count(counter)).toBe(1);
      expect(result.stderr).toContain(`tenacious: received ${signal}; passed it to the command; not retrying\n`);
      expect(result.stderr).not.toContain('retrying in');
    },
  );

  it.each([
    ['SIGTERM', 143],
    ['SIGHUP', 129],
    ['SIGQUIT', 131],
  ] as const)('stops during a wait on %s and exits with 128 + the signal number (%i)', async (signal, status) => {
    const counter = fresh('count');
    let sent = false;
    const result = await runCli(['--initial-delay', '30s', '--jitter', 'none', '--', ...flaky(counter, '1')], (out, child) => {
      if (!sent && out.stderr.includes('retrying in 30s')) {
        sent = true;
        child.kill(signal);
      }
    });
    expect(result.code).toBe(status);
    expect(count(counter)).toBe(1);
    expect(result.stderr).toContain(`tenacious: received ${signal}; not retrying\n`);
  });
});

describe('usage', () => {
  it('--help prints the usage to stdout and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage:\n {2}tenacious \[options\] -- command \[args\.\.\.\]\n/);
    expect(result.stdout).toContain('--retry-on CODES');
    expect(result.stderr).toBe('');
  });

  it.each([['--version'], ['-V'], ['schedule', '--version']])('%s prints the package version to stdout and exits 0', async (...args) => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const result = await runCli(args);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it.each([
    [['--max-attempts', '0', '--', 'true'], 'tenacious: --max-attempts must be a whole number >= 1, got "0"'],
    [['--deadline', '90', '--', 'true'], 'tenacious: --deadline: "90" has no unit: write 90s or 90ms'],
    [['--nope', '--', 'true'], 'tenacious: unknown option --nope'],
    [['--max-atempts', '3', '--', 'true'], 'tenacious: unknown option --max-atempts (did you mean --max-attempts?)'],
    [[], 'tenacious: missing the command to run'],
    // Regression: a jitter amount too large for a double exited 70 with a stack trace.
    [['--jitter', `additive:${'9'.repeat(400)}`, '--', 'true'], 'tenacious: --jitter additive: amount "999'],
    [['schedule', '--jitter', `additive:${'9'.repeat(400)}`], 'tenacious: --jitter additive: amount "999'],
    // Regression: a decorrelated jitter from an initial delay of 0 exited 70 with a stack trace.
    [
      ['--jitter', 'decorrelated', '--initial-delay', '0', '--', 'true'],
      'tenacious: --jitter decorrelated needs an --initial-delay longer than 0, got "0"\n',
    ],
    [
      ['--preset', 'iam', '--jitter', 'decorrelated', '--initial-delay', '0', '--', 'true'],
      'tenacious: --jitter decorrelated needs an --initial-delay longer than 0, got "0"\n',
    ],
    [
      ['schedule', '--jitter', 'decorrelated', '--initial-delay', '0'],
      'tenacious: --jitter decorrelated needs an --initial-delay longer than 0, got "0"\n',
    ],
  ])('%j prints the problem and where the usage is to stderr, and exits 2', async (args, message) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expect(result.stderr.startsWith(message)).toBe(true);
    // One line of problem and a pointer to --help: never a stack trace, nor the whole usage.
    const lines = result.stderr.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.slice(1)).toEqual(['see tenacious --help', '']);
    expect(result.stdout).toBe('');
  });

  it('is an executable file that starts with a node shebang', async () => {
    expect(readFileSync(cli, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    const result = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(cli, ['--help'], { stdio: 'ignore' });
      child.on('error', reject);
      child.on('close', resolve);
    });
    expect(result).toBe(0);
  });
});

describe('tenacious schedule', () => {
  it('prints the exact Cloud Storage waits per retry with the running total and a chart', async () => {
    const result = await runCli(['schedule', '--preset', 'gcs', '--max-attempts', '12']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('gcs preset: wait 1s x2 up to 64s, jitter additive:1s, deadline 600s');
    const rows = lines.filter((line) => /^\s+\d+\s/.test(line)).map((line) => line.trim().split(/\s+/).slice(0, 6).map(Number));
    expect(rows).toEqual([
      [1, 1, 1.5, 2, 1, 2],
      [2, 2, 2.5, 3, 3, 5],
      [3, 4, 4.5, 5, 7, 10],
      [4, 8, 8.5, 9, 15, 19],
      [5, 16, 16.5, 17, 31, 36],
      [6, 32, 32.5, 33, 63, 69],
      [7, 64, 64, 64, 127, 133],
      [8, 64, 64, 64, 191, 197],
      [9, 64, 64, 64, 255, 261],
      [10, 64, 64, 64, 319, 325],
      [11, 64, 64, 64, 383, 389],
    ]);
    expect(lines.at(-1)).toMatch(/\|\s{31}o\|$/);
  });
});

describe('tenacious schedule --from-service-config', () => {
  const CONFIG = {
    methodConfig: [
      {
        name: [{ service: 'google.pubsub.v1.Publisher' }],
        retryPolicy: {
          maxAttempts: 5,
          initialBackoff: '0.1s',
          maxBackoff: '60s',
          backoffMultiplier: 1.3,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
    ],
  };

  it("prints the waits of the method's retry policy", async () => {
    const file = fresh('service_config.json');
    writeFileSync(file, JSON.stringify(CONFIG));
    const result = await runCli(['schedule', '--from-service-config', file, '--method', 'google.pubsub.v1.Publisher/Publish']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`${file}, google.pubsub.v1.Publisher/Publish: wait 100ms x1.3 up to 60s, jitter full, deadline none`);
    const rows = lines.filter((line) => /^\s+\d+\s/.test(line)).map((line) => line.trim().split(/\s+/).slice(0, 4).map(Number));
    expect(rows).toEqual([
      [1, 0, 0.05, 0.1],
      [2, 0, 0.065, 0.13],
      [3, 0, 0.085, 0.169],
      [4, 0, 0.11, 0.22],
    ]);
  });

  it('a file that is not there: one line naming it, status 2', async () => {
    const missing = fresh('missing.json');
    const result = await runCli(['schedule', '--from-service-config', missing, '--method', 'a.B/C']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`tenacious: --from-service-config: cannot read ${JSON.stringify(missing)} (ENOENT)\n`);
  });

  it('a method the document does not cover: one line naming it, status 2', async () => {
    const file = fresh('service_config.json');
    writeFileSync(file, JSON.stringify(CONFIG));
    const result = await runCli(['schedule', '--from-service-config', file, '--method', 'google.pubsub.v1.Subscriber/Pull']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `tenacious: --from-service-config ${file}: no entry, service-wide entry or default for "google.pubsub.v1.Subscriber/Pull" in methodConfig (known: google.pubsub.v1.Publisher)\n`,
    );
  });
});
