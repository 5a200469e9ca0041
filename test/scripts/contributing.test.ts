// CONTRIBUTING.md's "Working on tenacious" lists every step CI takes, in CI's order, so that a
// contributor who follows it gets an `npm test` with nothing skipped. .ci/run is the truth: each
// command it runs must appear in the listed steps, in the same order.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const SCRIPTS = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

/** Logical lines of shell text: continuations joined, comments and blank lines dropped. */
function logicalLines(text: string): string[] {
  return text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter((line) => line !== '');
}

/** One command as written, without what only says how it is run (sudo, a guard, a capture). */
function bare(line: string): string {
  return line
    .replace(/^\[[^\]]*\]\s*\|\|\s*/, '') // `[ -z "$need" ] || …`
    .replace(/^\$sudo\s+(env\s+\w+=\S+\s+)?/, '') // `$sudo env DEBIAN_FRONTEND=noninteractive …`
    .replace(/^sudo\s+/, '')
    .replace(/^\w+=\$\((.*)\)$/, '$1') // `changed=$(git status …)`
    .replace(/\s*>\s*\/dev\/null$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

const COMMAND = /^(apt-get|npm|bash|git)\s/;

/** The commands .ci/run runs, in order. */
function ciCommands(): string[] {
  return logicalLines(read('.ci/run'))
    .map(bare)
    .filter((line) => COMMAND.test(line));
}

/** The commands of the `sh` block under "Working on tenacious" in CONTRIBUTING.md, in order. */
function listedSteps(): string[] {
  const text = read('CONTRIBUTING.md');
  const section = text.slice(text.indexOf('## Working on tenacious'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('CONTRIBUTING.md: no ```sh block under "## Working on tenacious"');
  return logicalLines(block).map(bare);
}

/** A listed step runs `command`: the same words, or an npm script whose text is that command. */
function runs(step: string, command: string): boolean {
  if (step === command) return true;
  const script = /^npm run (\S+)$/.exec(step)?.[1];
  return script !== undefined && SCRIPTS[script] === command;
}

/** The first of `commands` that `steps` do not run after the ones before it, in order; undefined when none. */
function firstMissing(commands: readonly string[], steps: readonly string[]): string | undefined {
  let at = -1;
  for (const command of commands) {
    at = steps.findIndex((step, i) => i > at && runs(step, command));
    if (at < 0) return command;
  }
  return undefined;
}

describe('CONTRIBUTING.md: every step CI takes', () => {
  it('reads the commands of .ci/run: the apt packages, npm ci, the runtimes, npm test and what CI adds', () => {
    const commands = ciCommands();
    expect(commands).toEqual(
      expect.arrayContaining(['apt-get update', 'apt-get install -y chromium', 'bash test/runtimes/install.sh', 'npm test', 'npm run sim']),
    );
    expect(commands.find((command) => command.includes('gunicorn'))).toMatch(/^apt-get install .*python3-flask/);
  });

  it('lists each command of .ci/run, in the order CI runs them', () => {
    expect(firstMissing(ciCommands(), listedSteps())).toBeUndefined();
  });

  it('lists the storage testbench’s packages exactly as its start.sh names them, and says where the testbench comes from', () => {
    const text = read('CONTRIBUTING.md');
    expect(text).toContain('../shared/storage-testbench');
    const install = listedSteps().find((step) => step.includes('gunicorn'));
    const ci = ciCommands().find((command) => command.includes('gunicorn'));
    expect(install).toBe(ci);
  });

  it('gives a measured duration for npm test, saying by whom or when', () => {
    const text = read('CONTRIBUTING.md');
    expect(text).not.toMatch(/about 90 s/);
    expect(text).toMatch(/about \d+ s on two cores, measured \d{4}-\d{2}/);
  });

  it('the checks themselves: a step out of order or missing is found', () => {
    expect(bare('[ -z "$need_chromium" ] || $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium')).toBe(
      'apt-get install -y chromium',
    );
    expect(bare("changed=$(git status --porcelain -- 'docs/schedule-*.svg')")).toBe("git status --porcelain -- 'docs/schedule-*.svg'");
    expect(runs('npm run runtimes:install', 'bash test/runtimes/install.sh')).toBe(true);
    expect(runs('npm run docs', 'npm run plots')).toBe(false);
    const ci = ['apt-get update', 'npm ci', 'npm test'];
    expect(firstMissing(ci, ['sudo apt-get update', 'npm ci', 'npm test'].map(bare))).toBeUndefined();
    expect(firstMissing(ci, ['apt-get update', 'npm test', 'npm ci'])).toBe('npm test');
    expect(firstMissing(ci, ['apt-get update', 'npm test'])).toBe('npm ci');
  });
});
