/**
 * The command line, read into a request the entry point carries out. Strict: every flag, its
 * kind, its parser and the sub-commands that take it come from the flag table (flags.ts), so
 * an unknown flag, a missing or unexpected value, or a flag the sub-command does not take is
 * refused by one rule. Pure: the tokenizer (`node:util` `parseArgs`) is passed in, so this file
 * runs and is tested without Node APIs.
 */
import { describe } from '../util/check.js';
import { type BackoffPolicy, DEFAULT_BACKOFF, DEFAULT_DEADLINE_MS } from '../index.js';
import { scaledJitter } from '../presets/preset.js';
import { formatDuration } from './duration.js';
import { type CliCommand, FLAGS, FLAG_TABLE, type FlagName, type FlagSpec, type FlagValues, flagNamed, unknownFlag } from './flags.js';
import { CLI_PRESETS, type CliPreset, type CliPresetName } from './presets.js';
import type { ServiceConfigScheduleRequest } from './service-config.js';
import { UsageError } from './usage-error.js';

export { FLAGS } from './flags.js';
export { UsageError } from './usage-error.js';

/**
 * One token of `parseArgs({ tokens: true })`, as far as this module reads it.
 *
 * @example
 * const token: ArgToken = { kind: 'option', name: 'deadline', rawName: '--deadline', value: '90s', index: 0 };
 */
export type ArgToken =
  | { kind: 'option'; name: string; rawName: string; value?: string | undefined; index: number }
  | { kind: 'positional'; value: string; index: number }
  | { kind: 'option-terminator'; index: number };

/**
 * The part of `node:util` `parseArgs` this module uses.
 *
 * @example
 * const tokenize: TokenizeArgs = (config) => parseArgs(config);
 */
export type TokenizeArgs = (config: { args: string[]; options: typeof FLAGS; strict: false; allowPositionals: true; tokens: true }) => {
  tokens: ArgToken[];
};

/**
 * `tenacious --help`.
 *
 * @example
 * if (request.kind === 'help') process.stdout.write(USAGE);
 */
export interface HelpRequest {
  readonly kind: 'help';
}

/**
 * `tenacious --version` (or `-V`).
 *
 * @example
 * if (request.kind === 'version') process.stdout.write(`${version}\n`);
 */
export interface VersionRequest {
  readonly kind: 'version';
}

/**
 * `tenacious [options] -- command args…`: run the command, retrying failing exit codes.
 *
 * @example
 * const { command, args, maxAttempts } = readArgs(['--max-attempts', '3', '--', 'make'], tokenize) as RunRequest;
 */
export interface RunRequest {
  readonly kind: 'run';
  readonly command: string;
  readonly args: readonly string[];
  readonly backoff: Readonly<BackoffPolicy>;
  readonly deadlineMs: number;
  /** Time limit of one run of the command; `Infinity` for none. */
  readonly attemptTimeoutMs: number;
  /** Total attempts, the first included; `Infinity` when only the deadline limits them. */
  readonly maxAttempts: number;
  /** Exit codes worth retrying; `undefined` means every non-zero code. */
  readonly retryOn: ReadonlySet<number> | undefined;
  readonly quiet: boolean;
}

/**
 * `tenacious schedule [options]`: print the delays a run would wait.
 *
 * @example
 * process.stdout.write(renderSchedule(readArgs(['schedule', '--preset', 'gcs'], tokenize) as ScheduleRequest));
 */
export interface ScheduleRequest {
  readonly kind: 'schedule';
  readonly backoff: Readonly<BackoffPolicy>;
  readonly deadlineMs: number;
  /** Time limit of one attempt, shown in the title; `Infinity` for none. */
  readonly attemptTimeoutMs: number;
  /** Attempts to cover; the table has one row per retry, `attempts - 1` rows. */
  readonly attempts: number;
  /** How the policy was chosen, for the table's title. */
  readonly source: string;
}

/**
 * What the command line asks for.
 *
 * @example
 * const request: CliRequest = readArgs(process.argv.slice(2), tokenize);
 */
export type CliRequest = HelpRequest | VersionRequest | RunRequest | ScheduleRequest | ServiceConfigScheduleRequest;

/** Each flag given: its text and the name it was given under (`--attempts` or `--max-attempts`), for messages. */
type Given = Map<FlagName, { text: string; flag: string }>;

/** Attempts shown by `schedule` without `--max-attempts`. */
const DEFAULT_SCHEDULE_ATTEMPTS = 10;

/**
 * Reads `argv` (without the node and script paths) into a request. Everything after the
 * first `--` is the command, passed on untouched. Throws a {@link UsageError} naming the
 * flag and the value for anything it cannot accept.
 *
 * @example
 * readArgs(['--max-attempts', '3', '--', 'make', 'test'], parseArgs);
 * // { kind: 'run', command: 'make', args: ['test'], maxAttempts: 3, … }
 */
export function readArgs(argv: readonly string[], tokenize: TokenizeArgs): CliRequest {
  const cut = argv.indexOf('--');
  const flagArgs = cut < 0 ? [...argv] : argv.slice(0, cut);
  const commandLine = cut < 0 ? undefined : argv.slice(cut + 1);
  const { tokens } = tokenize({ args: flagArgs, options: FLAGS, strict: false, allowPositionals: true, tokens: true });

  const given: Given = new Map();
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const name = flagNamed(token.name);
    if (name === undefined) throw new UsageError(unknownFlag(token.rawName));
    if (name === 'help') return { kind: 'help' };
    if (name === 'version') return { kind: 'version' };
    const takesValue = (FLAG_TABLE[name] as FlagSpec<unknown>).value !== undefined;
    if (takesValue && token.value === undefined) throw new UsageError(`${token.rawName} needs a value`);
    if (!takesValue && token.value !== undefined) throw new UsageError(`${token.rawName} takes no value, got ${describe(token.value)}`);
    // A flag given twice: the last one counts (getopt's habit), so a wrapper's defaults can be overridden.
    // Stryker disable next-line StringLiteral: a switch's parser (present) ignores the text; '' is what FlagSpec promises it.
    given.set(name, { text: token.value ?? '', flag: token.rawName });
  }

  const command: CliCommand = positionals[0] === 'schedule' ? 'schedule' : 'run';
  if (command === 'schedule') {
    if (positionals.length > 1) throw new UsageError(`schedule: unexpected argument ${describe(positionals[1])}`);
    if (commandLine !== undefined) throw new UsageError('schedule takes no command (found "--")');
  } else if (positionals.length > 0) {
    const word = positionals[0] as string;
    throw new UsageError(`unexpected argument ${describe(word)}: put the command after "--", as in: tenacious [options] -- ${word} …`);
  }
  if (command === 'schedule') return readSchedule(readValues(given, command), given);
  if (commandLine === undefined || commandLine.length === 0) {
    throw new UsageError('missing the command to run: tenacious [options] -- command [args…]');
  }
  return readRun(readValues(given, command), given, commandLine[0] as string, commandLine.slice(1));
}

/** Every flag given, refused if `command` does not take it, then read by its parser, in table order. */
function readValues(given: Given, command: CliCommand): FlagValues {
  for (const name of given.keys()) {
    if (!FLAG_TABLE[name].commands.includes(command)) throw new UsageError(`--${name} does not apply to ${command}`);
  }
  const values: Record<string, unknown> = {};
  for (const name of Object.keys(FLAG_TABLE) as FlagName[]) {
    const value = given.get(name);
    if (value !== undefined) values[name] = (FLAG_TABLE[name] as FlagSpec<unknown>).parse(value.text, value.flag, command);
  }
  return values as FlagValues;
}

function readRun(values: FlagValues, given: Given, command: string, args: string[]): RunRequest {
  const { backoff, deadlineMs, attemptTimeoutMs } = readPolicy(values, given);
  return {
    kind: 'run',
    command,
    args,
    backoff,
    deadlineMs,
    attemptTimeoutMs,
    maxAttempts: values['max-attempts'] ?? Number.POSITIVE_INFINITY,
    retryOn: values['retry-on'],
    quiet: values.quiet === true,
  };
}

/** The flags that shape a policy: a service config is the policy, so they cannot go with it. */
const POLICY_FLAGS: readonly FlagName[] = ['preset', 'initial-delay', 'max-delay', 'jitter', 'attempt-timeout'];

function readSchedule(values: FlagValues, given: Given): ScheduleRequest | ServiceConfigScheduleRequest {
  const file = values['from-service-config'];
  const name = values.method;
  if (file !== undefined || name !== undefined) {
    if (file === undefined) throw new UsageError('--method needs --from-service-config FILE');
    if (name === undefined) throw new UsageError('--from-service-config needs --method Service/Method');
    const clash = POLICY_FLAGS.find((flag) => given.has(flag));
    if (clash !== undefined) throw new UsageError(`--${clash} does not apply with --from-service-config: the document gives the policy`);
    // Flags not given stay undefined: serviceConfigSchedule takes the document's values for them.
    return { kind: 'schedule-service-config', file, ...name, attempts: values['max-attempts'], deadlineMs: values.deadline };
  }
  const { backoff, deadlineMs, attemptTimeoutMs, source } = readPolicy(values, given);
  return { kind: 'schedule', backoff, deadlineMs, attemptTimeoutMs, attempts: values['max-attempts'] ?? DEFAULT_SCHEDULE_ATTEMPTS, source };
}

/** The preset (or the library defaults) with the backoff and deadline flags laid over it. */
function readPolicy(
  values: FlagValues,
  given: Given,
): {
  backoff: BackoffPolicy;
  deadlineMs: number;
  attemptTimeoutMs: number;
  source: string;
} {
  const { preset: presetName, deadline, 'attempt-timeout': timeout, 'initial-delay': initial, 'max-delay': max, jitter } = values;
  // Without --preset this reads CLI_PRESETS.undefined: no preset.
  const preset: CliPreset | undefined = CLI_PRESETS[presetName as CliPresetName];
  const backoff: BackoffPolicy = { ...(preset?.backoff ?? DEFAULT_BACKOFF) };
  if (initial !== undefined) backoff.initialDelayMs = initial;
  // A default cap rises to the first delay given, as the library's does: it must not undercut what was set.
  backoff.maxDelayMs = max ?? Math.max(backoff.maxDelayMs, backoff.initialDelayMs);
  // A value as the command line gave it, or the default it fell back to.
  const text = (ms: number, name: FlagName): string => {
    const flag = given.get(name);
    return flag === undefined ? `${formatDuration(ms)} (the default)` : describe(flag.text);
  };
  if (backoff.maxDelayMs < backoff.initialDelayMs) {
    throw new UsageError(
      `--max-delay ${text(backoff.maxDelayMs, 'max-delay')} must not be shorter than --initial-delay ${text(backoff.initialDelayMs, 'initial-delay')}`,
    );
  }
  if (jitter !== undefined) backoff.jitter = jitter;
  // As iam() and gcs() scale it: Google's formula adds up to one first delay at random.
  else if (preset !== undefined) backoff.jitter = scaledJitter(preset.backoff, backoff.initialDelayMs);
  // Each decorrelated wait is drawn up from the last: from 0 every wait would be 0 (the library refuses it too).
  if (backoff.jitter === 'decorrelated' && backoff.initialDelayMs === 0) {
    throw new UsageError(`--jitter decorrelated needs an --initial-delay longer than 0, got ${text(0, 'initial-delay')}`);
  }

  const source = presetName === undefined ? 'default policy' : `${presetName} preset`;
  const changed = [deadline, initial, max, jitter].some((v) => v !== undefined);
  return {
    backoff,
    deadlineMs: deadline ?? preset?.deadlineMs ?? DEFAULT_DEADLINE_MS,
    attemptTimeoutMs: timeout ?? Number.POSITIVE_INFINITY,
    source: changed ? `${source}, changed by flags` : source,
  };
}
