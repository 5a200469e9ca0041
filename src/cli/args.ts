/**
 * The command line, read into a request the entry point carries out. Pure: the tokenizer
 * (`node:util` `parseArgs`) is passed in, so this file runs and is tested without Node APIs.
 */
import { describe } from '../util/check.js';
import { type BackoffPolicy, DEFAULT_BACKOFF, DEFAULT_DEADLINE_MS, type Jitter } from '../index.js';
import { formatDuration, parseDuration } from './duration.js';
import { CLI_PRESETS, type CliPresetName } from './presets.js';

/**
 * The flags, in the shape `parseArgs` takes. Every value is read as a string and validated
 * here, so a bad value is reported with the flag's name.
 *
 * @example
 * parseArgs({ args, options: FLAGS, strict: false, allowPositionals: true, tokens: true });
 */
export const FLAGS = {
  help: { type: 'boolean', short: 'h' },
  quiet: { type: 'boolean', short: 'q' },
  preset: { type: 'string' },
  'max-attempts': { type: 'string' },
  deadline: { type: 'string' },
  'attempt-timeout': { type: 'string' },
  'initial-delay': { type: 'string' },
  'max-delay': { type: 'string' },
  jitter: { type: 'string' },
  'retry-on': { type: 'string' },
  /** The old name of `--max-attempts` in `tenacious schedule`, still accepted. */
  attempts: { type: 'string' },
} as const;

type FlagName = Exclude<keyof typeof FLAGS, 'attempts'>;

/** Old flag names still accepted, and the flag each stands for. */
const ALIASES: Readonly<Record<string, FlagName>> = { attempts: 'max-attempts' };

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
export type TokenizeArgs = (config: {
  args: string[];
  options: typeof FLAGS;
  strict: false;
  allowPositionals: true;
  tokens: true;
}) => { tokens: ArgToken[] };

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
export type CliRequest = HelpRequest | RunRequest | ScheduleRequest;

/**
 * A command line that cannot be carried out; the entry point prints the message and the usage
 * to stderr and exits with status 2.
 *
 * @example
 * throw new UsageError('--deadline needs a value');
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Attempts shown by `schedule` without `--max-attempts`. */
const DEFAULT_SCHEDULE_ATTEMPTS = 10;
const MAX_SCHEDULE_ATTEMPTS = 1000;

const RUN_ONLY: readonly FlagName[] = ['retry-on', 'quiet'];

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

  const values = new Map<FlagName, string | true>();
  /** The name each flag was given under (`--attempts` or `--max-attempts`), for messages. */
  const given = new Map<FlagName, string>();
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    if (token.name === 'help') return { kind: 'help' };
    // A flag given twice: the last one counts (getopt's habit), so a wrapper's defaults can be overridden.
    // Stryker disable next-line BooleanLiteral: equivalent. Only the presence of a boolean flag is read, never its value.
    const name = checkedFlag(token);
    values.set(name, token.value ?? true);
    given.set(name, token.rawName);
  }

  if (positionals[0] === 'schedule') {
    if (positionals.length > 1) throw new UsageError(`schedule: unexpected argument ${describe(positionals[1])}`);
    if (commandLine !== undefined) throw new UsageError('schedule takes no command (found "--")');
    rejectFlags(values, RUN_ONLY, 'schedule');
    return readSchedule(values, given);
  }
  if (positionals.length > 0) {
    const word = positionals[0] as string;
    throw new UsageError(`unexpected argument ${describe(word)}: put the command after "--", as in: tenacious [options] -- ${word} …`);
  }
  if (commandLine === undefined || commandLine.length === 0) {
    throw new UsageError('missing the command to run: tenacious [options] -- command [args…]');
  }
  return readRun(values, given, commandLine[0] as string, commandLine.slice(1));
}

function checkedFlag(token: { name: string; rawName: string; value?: string | undefined }): FlagName {
  if (!Object.hasOwn(FLAGS, token.name)) throw new UsageError(`unknown option ${token.rawName}`);
  const takesValue = FLAGS[token.name as keyof typeof FLAGS].type === 'string';
  const name = Object.hasOwn(ALIASES, token.name) ? (ALIASES[token.name] as FlagName) : (token.name as FlagName);
  if (takesValue && token.value === undefined) throw new UsageError(`${token.rawName} needs a value`);
  if (!takesValue && token.value !== undefined) {
    throw new UsageError(`${token.rawName} takes no value, got ${describe(token.value)}`);
  }
  return name;
}

function rejectFlags(values: ReadonlyMap<FlagName, unknown>, names: readonly FlagName[], where: string): void {
  for (const name of names) {
    if (values.has(name)) throw new UsageError(`--${name} does not apply to ${where}`);
  }
}

function readRun(
  values: ReadonlyMap<FlagName, string | true>,
  given: ReadonlyMap<FlagName, string>,
  command: string,
  args: string[],
): RunRequest {
  const { backoff, deadlineMs, attemptTimeoutMs } = readPolicy(values);
  const attempts = stringFlag(values, 'max-attempts');
  const retryOn = stringFlag(values, 'retry-on');
  return {
    kind: 'run',
    command,
    args,
    backoff,
    deadlineMs,
    attemptTimeoutMs,
    maxAttempts: attempts === undefined ? Number.POSITIVE_INFINITY : positiveInteger(given.get('max-attempts') ?? '--max-attempts', attempts, 1),
    retryOn: retryOn === undefined ? undefined : readExitCodes(retryOn),
    quiet: values.has('quiet'),
  };
}

function readSchedule(values: ReadonlyMap<FlagName, string | true>, given: ReadonlyMap<FlagName, string>): ScheduleRequest {
  const { backoff, deadlineMs, attemptTimeoutMs, source } = readPolicy(values);
  const attempts = stringFlag(values, 'max-attempts');
  const flag = given.get('max-attempts') ?? '--max-attempts';
  return {
    kind: 'schedule',
    backoff,
    deadlineMs,
    attemptTimeoutMs,
    attempts: attempts === undefined ? DEFAULT_SCHEDULE_ATTEMPTS : positiveInteger(flag, attempts, 2, MAX_SCHEDULE_ATTEMPTS),
    source,
  };
}

/** The preset (or the library defaults) with the backoff and deadline flags laid over it. */
function readPolicy(values: ReadonlyMap<FlagName, string | true>): {
  backoff: BackoffPolicy;
  deadlineMs: number;
  attemptTimeoutMs: number;
  source: string;
} {
  const presetName = stringFlag(values, 'preset');
  if (presetName !== undefined && !Object.hasOwn(CLI_PRESETS, presetName)) {
    throw new UsageError(`--preset must be iam or gcs, got ${describe(presetName)}`);
  }
  const preset = presetName === undefined ? undefined : CLI_PRESETS[presetName as CliPresetName];
  const backoff: BackoffPolicy = { ...(preset?.backoff ?? DEFAULT_BACKOFF) };
  let deadlineMs = preset?.deadlineMs ?? DEFAULT_DEADLINE_MS;

  const deadline = stringFlag(values, 'deadline');
  if (deadline !== undefined) {
    deadlineMs = duration('--deadline', deadline);
    if (deadlineMs <= 0) throw new UsageError(`--deadline must be longer than 0, got ${describe(deadline)}`);
  }
  const timeout = stringFlag(values, 'attempt-timeout');
  let attemptTimeoutMs = Number.POSITIVE_INFINITY;
  if (timeout !== undefined) {
    attemptTimeoutMs = duration('--attempt-timeout', timeout);
    if (attemptTimeoutMs <= 0) throw new UsageError(`--attempt-timeout must be longer than 0, got ${describe(timeout)}`);
  }
  const initial = stringFlag(values, 'initial-delay');
  if (initial !== undefined) backoff.initialDelayMs = duration('--initial-delay', initial);
  const max = stringFlag(values, 'max-delay');
  if (max !== undefined) backoff.maxDelayMs = duration('--max-delay', max);
  if (backoff.maxDelayMs < backoff.initialDelayMs) {
    const maxText = max === undefined ? `${formatDuration(backoff.maxDelayMs)} (the default)` : describe(max);
    const initialText = initial === undefined ? `${formatDuration(backoff.initialDelayMs)} (the default)` : describe(initial);
    throw new UsageError(`--max-delay ${maxText} must not be shorter than --initial-delay ${initialText}`);
  }
  const jitter = stringFlag(values, 'jitter');
  if (jitter !== undefined) backoff.jitter = readJitter(jitter);
  else if (preset !== undefined) backoff.jitter = scaledJitter(preset.backoff, backoff.initialDelayMs);

  const source = presetName === undefined ? 'default policy' : `${presetName} preset`;
  const changed = [deadline, initial, max, jitter].some((v) => v !== undefined);
  return { backoff, deadlineMs, attemptTimeoutMs, source: changed ? `${source}, changed by flags` : source };
}

/**
 * A preset's additive jitter under another `--initial-delay`, as `iam()` and `gcs()` scale it:
 * Google's formula adds up to one first delay at random, so the random part follows the base.
 */
function scaledJitter(preset: Readonly<BackoffPolicy>, initialDelayMs: number): Jitter {
  const { jitter } = preset;
  if (typeof jitter !== 'object' || initialDelayMs === preset.initialDelayMs) return jitter;
  return { ...jitter, additiveMs: (jitter.additiveMs * initialDelayMs) / preset.initialDelayMs };
}

/** The value of a flag that takes one (checkedFlag made sure it has one), if given. */
function stringFlag(values: ReadonlyMap<FlagName, string | true>, name: FlagName): string | undefined {
  return values.get(name) as string | undefined;
}

function duration(flag: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`);
  }
}

function positiveInteger(flag: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(Number.isSafeInteger(n) && n >= min && n <= max)) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${flag} must be a whole number ${range}, got ${describe(text)}`);
  }
  return n;
}

/**
 * `full`, `none`, `equal` or `additive:AMOUNT`. AMOUNT is a duration, or a bare number of
 * milliseconds, as the issue's `additive:1000` and the library's `{ additiveMs }` have it.
 */
function readJitter(text: string): Jitter {
  if (text === 'full' || text === 'none' || text === 'equal') return text;
  const additive = /^additive:(.+)$/.exec(text);
  if (additive !== null) {
    const amount = additive[1] as string;
    const additiveMs = /^\d+(\.\d+)?$/.test(amount) ? Number(amount) : duration('--jitter additive', amount);
    // 400 digits read as Infinity: refuse it here, as parseDuration does for a unit.
    if (!Number.isFinite(additiveMs)) throw new UsageError(`--jitter additive: amount ${describe(amount)} is too large`);
    return { additiveMs };
  }
  throw new UsageError(`--jitter must be full, none, equal or additive:AMOUNT (e.g. additive:1000), got ${describe(text)}`);
}

/** Exit codes 1–255, comma-separated. 0 is success and is never retried. */
function readExitCodes(text: string): ReadonlySet<number> {
  const parts = text.split(',').map((part) => part.trim());
  const codes = parts.map((part) => (/^\d+$/.test(part) ? Number(part) : Number.NaN));
  if (!codes.every((code) => code >= 1 && code <= 255)) {
    throw new UsageError(`--retry-on must list exit codes from 1 to 255 separated by commas (e.g. 1,75), got ${describe(text)}`);
  }
  return new Set(codes);
}
