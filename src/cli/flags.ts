/**
 * The command line's flags as one table: for each flag its kind (a switch, or a flag that takes
 * a value), the parser of that value, the help text and the sub-commands that take it. The
 * tokenizer's options, strict parsing (src/cli/args.ts) and the usage text (src/cli/usage.ts)
 * are all read from it, so a flag is added in one place. Pure.
 */
import { describe } from '../util/check.js';
import { suggest } from '../util/suggest.js';
import type { Jitter } from '../index.js';
import { parseDuration } from './duration.js';
import { CLI_PRESETS, type CliPresetName } from './presets.js';
import { UsageError } from './usage-error.js';

/**
 * A sub-command: `run` (the default, `tenacious [options] -- command`) or `schedule`.
 *
 * @example
 * const command: CliCommand = 'schedule';
 */
export type CliCommand = 'run' | 'schedule';

/**
 * One row of the flag table.
 *
 * @example
 * const deadline: FlagSpec<number> = { value: 'DUR', parse: positiveDuration, commands: BOTH, help: ['stop retrying…'] };
 */
export interface FlagSpec<T> {
  /** One-letter form, `-q` for `--quiet`. */
  readonly short?: string;
  /** Placeholder of the value in the usage text (`N`, `DUR`); absent for a switch. */
  readonly value?: string;
  /**
   * Reads the value (a switch gets `''`). `flag` is the name as given (`--attempts` or
   * `--max-attempts`), for messages. Throws a {@link UsageError} naming the flag and the value.
   */
  readonly parse: (text: string, flag: string, command: CliCommand) => T;
  /** The sub-commands that take it; any other refuses it. */
  readonly commands: readonly CliCommand[];
  /** Old names still accepted. */
  readonly aliases?: readonly string[];
  /** The usage text, one entry a line. */
  readonly help: readonly string[];
}

const BOTH: readonly CliCommand[] = ['run', 'schedule'];
const RUN: readonly CliCommand[] = ['run'];
const SCHEDULE: readonly CliCommand[] = ['schedule'];
const MAX_SCHEDULE_ATTEMPTS = 1000;

const flag = <T>(spec: FlagSpec<T>): FlagSpec<T> => spec;
const present = (): true => true;

/** A duration, its parser's message under the flag's name. */
export function duration(flag: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`);
  }
}

const anyDuration = (text: string, flag: string): number => duration(flag, text);

function positiveDuration(text: string, flag: string): number {
  const ms = duration(flag, text);
  if (ms <= 0) throw new UsageError(`${flag} must be longer than 0, got ${describe(text)}`);
  return ms;
}

/** A run takes any number of attempts from 1; a schedule prints from 2 (one retry) to 1000. */
function attemptCount(text: string, flag: string, command: CliCommand): number {
  const [min, max] = command === 'run' ? [1, Number.MAX_SAFE_INTEGER] : [2, MAX_SCHEDULE_ATTEMPTS];
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(Number.isSafeInteger(n) && n >= min && n <= max)) {
    const range = command === 'run' ? `>= ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${flag} must be a whole number ${range}, got ${describe(text)}`);
  }
  return n;
}

function presetName(text: string): CliPresetName {
  if (!Object.hasOwn(CLI_PRESETS, text)) throw new UsageError(`--preset must be iam or gcs, got ${describe(text)}`);
  return text as CliPresetName;
}

/**
 * `full`, `none`, `equal`, `decorrelated` or `additive:AMOUNT`. AMOUNT is a duration, or a bare number of
 * milliseconds, as the library's `{ additiveMs }` has it.
 */
function jitter(text: string): Jitter {
  if (text === 'full' || text === 'none' || text === 'equal' || text === 'decorrelated') return text;
  const additive = /^additive:(.+)$/.exec(text);
  if (additive === null) {
    throw new UsageError(`--jitter must be full, none, equal, decorrelated or additive:AMOUNT (e.g. additive:1000), got ${describe(text)}`);
  }
  const amount = additive[1] as string;
  const additiveMs = /^\d+(\.\d+)?$/.test(amount) ? Number(amount) : duration('--jitter additive', amount);
  // 400 digits read as Infinity: refuse it here, as parseDuration does for a unit.
  if (!Number.isFinite(additiveMs)) throw new UsageError(`--jitter additive: amount ${describe(amount)} is too large`);
  return { additiveMs };
}

/** A path, read by main.ts (the one file of the CLI that touches the file system). */
function filePath(text: string, flag: string): string {
  if (text === '') throw new UsageError(`${flag} needs a file name, got ""`);
  return text;
}

/**
 * `Service/Method`, the service fully qualified as a gRPC service config names it
 * (`google.pubsub.v1.Publisher/Publish`); split at the last slash, neither part empty (a slash
 * first leaves no service).
 */
function methodName(text: string, flag: string): { readonly service: string; readonly method: string } {
  const slash = text.lastIndexOf('/');
  const service = text.slice(0, slash);
  const method = text.slice(slash + 1);
  if (slash <= 0 || method === '' || /\s/.test(text)) {
    throw new UsageError(
      `${flag} must be Service/Method, the service fully qualified (e.g. google.pubsub.v1.Publisher/Publish), got ${describe(text)}`,
    );
  }
  return { service, method };
}

/** Exit codes 1–255, comma-separated. 0 is success and is never retried. */
function exitCodes(text: string): ReadonlySet<number> {
  const codes = text.split(',').map((part) => (/^\d+$/.test(part.trim()) ? Number(part) : Number.NaN));
  if (!codes.every((code) => code >= 1 && code <= 255)) {
    throw new UsageError(`--retry-on must list exit codes from 1 to 255 separated by commas (e.g. 1,75), got ${describe(text)}`);
  }
  return new Set(codes);
}

/**
 * Every flag, in the order of the usage text.
 *
 * @example
 * FLAG_TABLE.deadline.parse('90s', '--deadline', 'run'); // 90000
 */
export const FLAG_TABLE = {
  preset: flag({
    value: 'iam|gcs',
    parse: presetName,
    commands: BOTH,
    help: [
      "Google Cloud's documented policies: wait 1s x2 up to 32s (iam)",
      'or 64s (gcs), plus up to 1s at random; deadline 300s (iam) or',
      '600s (gcs). The flags below override single parts.',
    ],
  }),
  'max-attempts': flag({
    value: 'N',
    parse: attemptCount,
    commands: BOTH,
    aliases: ['attempts'],
    help: ['attempts in all, the first included (default: no limit;', 'schedule: 2 to 1000, default 10; --attempts is an old name)'],
  }),
  deadline: flag({
    value: 'DUR',
    parse: positiveDuration,
    commands: BOTH,
    help: ['stop retrying this long after the first start (default 120s);', 'a command still running then is sent SIGTERM'],
  }),
  'attempt-timeout': flag({
    value: 'DUR',
    parse: positiveDuration,
    commands: BOTH,
    help: ['send SIGTERM to a run still going after DUR and retry it', '(default: none)'],
  }),
  'initial-delay': flag({
    value: 'DUR',
    parse: anyDuration,
    commands: BOTH,
    help: ['wait before the first retry, before jitter (default 1s)'],
  }),
  'max-delay': flag({ value: 'DUR', parse: anyDuration, commands: BOTH, help: ['cap on any one wait (default 32s)'] }),
  jitter: flag({
    value: 'MODE',
    parse: jitter,
    commands: BOTH,
    help: ['full | none | equal | decorrelated | additive:AMOUNT (default full)'],
  }),
  'from-service-config': flag({
    value: 'FILE',
    parse: filePath,
    commands: SCHEDULE,
    help: ['schedule the retryPolicy of a gRPC service config (JSON) for', '--method; capped at 5 attempts, as gRPC clients cap them'],
  }),
  method: flag({
    value: 'SVC/METHOD',
    parse: methodName,
    commands: SCHEDULE,
    help: ['the method of --from-service-config, the service fully', 'qualified: google.pubsub.v1.Publisher/Publish'],
  }),
  'retry-on': flag({
    value: 'CODES',
    parse: exitCodes,
    commands: RUN,
    help: ['retry only these exit codes, e.g. 1,75 (default: every non-zero)'],
  }),
  quiet: flag({ short: 'q', parse: present, commands: RUN, help: ['do not print retries and the final verdict'] }),
  help: flag({ short: 'h', parse: present, commands: BOTH, help: ['print this help'] }),
  version: flag({ short: 'V', parse: present, commands: BOTH, help: ["print tenacious's version"] }),
} as const;

/**
 * A flag's name, as `--name`.
 *
 * @example
 * const name: FlagName = 'max-attempts';
 */
export type FlagName = keyof typeof FLAG_TABLE;

/**
 * The flags given, each read by its parser.
 *
 * @example
 * const values: FlagValues = { deadline: 90_000, quiet: true };
 */
export type FlagValues = { -readonly [K in FlagName]?: ReturnType<(typeof FLAG_TABLE)[K]['parse']> };

/**
 * The flags in the shape `node:util` `parseArgs` takes, aliases included, derived from the
 * table. Every value is read as a string and parsed by the table, so a bad value is reported
 * with the flag's name.
 *
 * @example
 * parseArgs({ args, options: FLAGS, strict: false, allowPositionals: true, tokens: true });
 */
export const FLAGS: Readonly<Record<string, { readonly type: 'string' | 'boolean'; readonly short?: string }>> = Object.fromEntries(
  Object.entries(FLAG_TABLE as Readonly<Record<string, FlagSpec<unknown>>>).flatMap(([name, spec]) => {
    const type = spec.value === undefined ? 'boolean' : 'string';
    const own = spec.short === undefined ? { type } : { type, short: spec.short };
    return [[name, own], ...(spec.aliases ?? []).map((alias) => [alias, { type }])];
  }),
);

/**
 * The table's flag for a name or an old name, `undefined` for an unknown one.
 *
 * @example
 * flagNamed('attempts'); // 'max-attempts'
 */
export function flagNamed(name: string): FlagName | undefined {
  if (Object.hasOwn(FLAG_TABLE, name)) return name as FlagName;
  const entries = Object.entries(FLAG_TABLE as Readonly<Record<string, FlagSpec<unknown>>>);
  return entries.find(([, spec]) => spec.aliases?.includes(name))?.[0] as FlagName | undefined;
}

/**
 * The complaint about an option the table does not know, as typed (`rawName`: `--jiter`,
 * `-z`), with the closest flag when one is close enough to be the one meant.
 *
 * @example
 * unknownFlag('--jiter'); // 'unknown option --jiter (did you mean --jitter?)'
 */
export function unknownFlag(rawName: string): string {
  // Compared without dashes (suggest normalizes names): a short option's one letter is near none.
  const near = suggest(rawName, Object.keys(FLAG_TABLE));
  return `unknown option ${rawName}${near === undefined ? '' : ` (did you mean --${near}?)`}`;
}
