// The flag table and what is derived from it: the tokenizer's options and the usage text.
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { UsageError, readArgs } from '../../src/cli/args.js';
import { FLAGS, FLAG_TABLE, type FlagSpec, flagNamed } from '../../src/cli/flags.js';
import { USAGE } from '../../src/cli/usage.js';

const rows = Object.entries(FLAG_TABLE as Readonly<Record<string, FlagSpec<unknown>>>);
const read = (argv: string[]) => readArgs(argv, (config) => parseArgs(config));

describe('FLAGS (the tokenizer options)', () => {
  it('has every flag of the table and its old names, a string when it takes a value, a boolean otherwise', () => {
    expect(Object.keys(FLAGS).sort()).toEqual([...rows.map(([name]) => name), 'attempts'].sort());
    for (const [name, spec] of rows) {
      expect(FLAGS[name], name).toEqual(
        spec.short === undefined ? { type: spec.value === undefined ? 'boolean' : 'string' } : { type: 'boolean', short: spec.short },
      );
    }
    expect(FLAGS.attempts).toEqual({ type: 'string' });
  });

  it('maps names and old names to the table, and nothing else', () => {
    expect(flagNamed('deadline')).toBe('deadline');
    expect(flagNamed('attempts')).toBe('max-attempts');
    for (const name of ['nope', 'toString', '__proto__', 'constructor']) expect(flagNamed(name), name).toBeUndefined();
  });
});

describe('sub-commands', () => {
  it.each(rows.filter(([, spec]) => !spec.commands.includes('schedule')))('schedule refuses --%s, as the table says', (name, spec) => {
    const argv = ['schedule', `--${name}`, ...(spec.value === undefined ? [] : ['1'])];
    expect(() => read(argv)).toThrow(UsageError);
    expect(() => read(argv)).toThrow(`--${name} does not apply to schedule`);
  });
});

describe('USAGE', () => {
  it('documents every flag, with its short form and value', () => {
    for (const [name, flag] of Object.entries(FLAGS)) {
      expect(USAGE).toContain(`--${name}`);
      if (flag.short !== undefined) expect(USAGE).toContain(`-${flag.short}, --${name}`);
    }
    for (const [name, spec] of rows) {
      if (spec.value !== undefined) expect(USAGE).toContain(`--${name} ${spec.value}`);
    }
  });

  it('aligns every help line at one column, one flag a block', () => {
    const options = USAGE.slice(USAGE.indexOf('Options:\n') + 9, USAGE.indexOf('\n\nDUR'));
    const lines = options.split('\n');
    expect(lines.filter((line) => line.startsWith('  -'))).toHaveLength(rows.length);
    for (const line of lines) {
      // Too long for the column: two spaces, then the help.
      if (line.startsWith('  --attempt-timeout DUR') || line.startsWith('  --from-service-config FILE')) continue;
      expect(line[23], line).not.toBe(' ');
      expect(line.slice(0, 23).endsWith(' '), line).toBe(true);
    }
    expect(options).toContain('  --preset iam|gcs     Google Cloud');
    expect(options).toContain('  --attempt-timeout DUR  send SIGTERM');
    expect(options).toContain('  --from-service-config FILE  schedule the retryPolicy');
    expect(options).toContain('  --method SVC/METHOD  the method of --from-service-config');
    expect(options).toContain('  -q, --quiet          do not print');
  });
});

describe('flag values', () => {
  const methodError = (got: string) =>
    `--method must be Service/Method, the service fully qualified (e.g. google.pubsub.v1.Publisher/Publish), got ${got}`;
  const withMethod = (name: string) => read(['schedule', '--from-service-config', 'sc.json', '--method', name]);

  it('--method: splits at the last slash; a one-letter service is a service', () => {
    expect(withMethod('a/b')).toMatchObject({ service: 'a', method: 'b' });
    expect(withMethod('a.B/c/D')).toMatchObject({ service: 'a.B/c', method: 'D' });
  });

  it.each([
    ['/Method', '"/Method"'],
    ['Service/', '"Service/"'],
    ['a b/c', '"a b/c"'],
    ['/', '"/"'],
  ])('--method refuses %s with its one-line error', (name, shown) => {
    expect(() => withMethod(name)).toThrow(new UsageError(methodError(shown)));
  });
});
