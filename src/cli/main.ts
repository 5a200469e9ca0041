/**
 * The `tenacious` command: runs a command and retries it with backoff while it fails, or
 * prints a policy's schedule. The only file of the package that uses Node APIs (processes,
 * signals); the decisions live in the pure modules under `src/cli/` and in the library.
 *
 * @example
 * // tenacious --preset gcs --max-attempts 5 -- curl --fail -sS -o big.tar https://storage.googleapis.com/bucket/big.tar
 * // tenacious schedule --preset iam --max-attempts 8
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import { type CliRequest, type RunRequest, type TokenizeArgs, UsageError, readArgs } from './args.js';
import type { CommandOutcome } from './exit-status.js';
import { type StartedRun, runWithRetries } from './run.js';
import { renderSchedule } from './schedule.js';
import { type ServiceConfigScheduleRequest, serviceConfigSchedule } from './service-config.js';
import { USAGE } from './usage.js';

/** Exit status for a command line that cannot be carried out (the convention of getopt tools). */
const USAGE_STATUS = 2;
/** Exit status for a bug in tenacious itself (sysexits' EX_SOFTWARE), distinct from usual command codes. */
const INTERNAL_ERROR_STATUS = 70;

const SIGNAL_NUMBERS: Readonly<Record<string, number>> = constants.signals;

/**
 * The signals that ask tenacious to stop, passed on to the command. Each one's default action
 * would end tenacious alone and leave the command running, orphaned: Ctrl-C (SIGINT), `kill`
 * (SIGTERM), a closed terminal or ssh session (SIGHUP), Ctrl-\ (SIGQUIT).
 */
const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

/** The package's version, written in by the build (tsup.config.ts). */
declare const __TENACIOUS_VERSION__: string;

const tokenize: TokenizeArgs = (config) => parseArgs(config);

main(process.argv.slice(2)).then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    process.stderr.write(`tenacious: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = INTERNAL_ERROR_STATUS;
  },
);

async function main(argv: string[]): Promise<number> {
  let request: CliRequest;
  try {
    request = readArgs(argv, tokenize);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // The problem, and where the usage is: the whole usage would bury the one line that matters.
    process.stderr.write(`tenacious: ${error.message}\nsee tenacious --help\n`);
    return USAGE_STATUS;
  }
  if (request.kind === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (request.kind === 'version') {
    process.stdout.write(`${__TENACIOUS_VERSION__}\n`);
    return 0;
  }
  if (request.kind === 'schedule') {
    process.stdout.write(renderSchedule(request));
    return 0;
  }
  if (request.kind === 'schedule-service-config') return printServiceConfigSchedule(request);
  return runCommand(request);
}

/** Reads the service config and prints its schedule; a file or document it cannot use is one line on stderr. */
function printServiceConfigSchedule(request: ServiceConfigScheduleRequest): number {
  try {
    let text: string;
    try {
      text = readFileSync(request.file, 'utf8');
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new UsageError(
        `--from-service-config: cannot read ${JSON.stringify(request.file)} (${typeof code === 'string' ? code : String(error)})`,
      );
    }
    process.stdout.write(renderSchedule(serviceConfigSchedule(request, text)));
    return 0;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`tenacious: ${error.message}\n`);
    return USAGE_STATUS;
  }
}

/** Runs the command with retries, passing tenacious's own stop signals (FORWARDED) on to it. */
async function runCommand(request: RunRequest): Promise<number> {
  const run = runWithRetries(request, {
    start: () => start(request),
    say: (line) => process.stderr.write(`${line}\n`),
    signalNumbers: SIGNAL_NUMBERS,
  });
  const onSignal = (signal: NodeJS.Signals): void => run.interrupt(signal);
  for (const signal of FORWARDED) process.on(signal, onSignal);
  try {
    return await run.status;
  } finally {
    for (const signal of FORWARDED) process.off(signal, onSignal);
  }
}

/** Starts the command with inherited stdio (its output streams through, untouched). */
function start(request: RunRequest): StartedRun {
  let child: ChildProcess;
  try {
    child = spawn(request.command, request.args, { stdio: 'inherit' });
  } catch (error) {
    // spawn throws synchronously for some bad arguments (e.g. a NUL byte in the command).
    return { kill: () => {}, outcome: Promise.resolve(notStarted(error)) };
  }
  const outcome = new Promise<CommandOutcome>((resolve) => {
    // 'error' also reports a failed kill() of a running child; only a child without a pid never started.
    child.on('error', (error) => {
      if (child.pid === undefined) resolve(notStarted(error));
    });
    child.once('exit', (code, signal) => resolve({ kind: 'exited', code, signal }));
  });
  return {
    kill: (signal) => {
      child.kill(signal);
    },
    outcome,
  };
}

function notStarted(error: unknown): CommandOutcome {
  const errorCode = (error as { code?: unknown }).code;
  return {
    kind: 'not-started',
    errorCode: typeof errorCode === 'string' ? errorCode : undefined,
    message: error instanceof Error ? error.message : String(error),
  };
}
