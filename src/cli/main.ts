/**
 * The `tenacious` command: runs a command and retries it with backoff while it fails, or
 * prints a policy's schedule. The only file of the package that uses Node APIs (processes,
 * signals); the decisions live in the pure modules under `src/cli/` and in the library.
 *
 * @example
 * // tenacious --preset gcs --max-attempts 5 -- gsutil cp big.tar gs://bucket/
 * // tenacious schedule --preset iam --max-attempts 8
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import { type CliRequest, type RunRequest, type TokenizeArgs, UsageError, readArgs } from './args.js';
import { formatDuration } from './duration.js';
import { type CommandOutcome, CommandFailed, exitStatusOf, retryLine, retryableExit } from './exit-status.js';
import { renderSchedule } from './schedule.js';
import { USAGE } from './usage.js';
import { type AttemptContext, RetryError, TimeoutError, retry } from '../index.js';

/** Exit status for a command line that cannot be carried out (the convention of getopt tools). */
const USAGE_STATUS = 2;
/** Exit status for a bug in tenacious itself (sysexits' EX_SOFTWARE), distinct from usual command codes. */
const INTERNAL_ERROR_STATUS = 70;

const SIGNAL_NUMBERS: Readonly<Record<string, number>> = constants.signals;

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
    process.stderr.write(`tenacious: ${error.message}\n\n${USAGE}`);
    return USAGE_STATUS;
  }
  if (request.kind === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (request.kind === 'schedule') {
    process.stdout.write(renderSchedule(request));
    return 0;
  }
  return runWithRetries(request);
}

/** One started run of the command. */
interface Running {
  readonly child: ChildProcess | undefined;
  readonly outcome: Promise<CommandOutcome>;
}

/**
 * Runs the command under `retry()` and returns the status to exit with: the last run's.
 * A run still going when `retry()` gives up (deadline, SIGINT/SIGTERM) is waited for, so the
 * command is never left behind and its own status is the answer.
 */
async function runWithRetries(request: RunRequest): Promise<number> {
  const { quiet, maxAttempts, deadlineMs, attemptTimeoutMs } = request;
  const say = (line: string): void => {
    if (!quiet) process.stderr.write(`${line}\n`);
  };
  const stop = new AbortController();
  let running: Running | undefined;
  /** The last run stopped by --attempt-timeout: its status is the answer if the retries end there. */
  let timedOut: Running | undefined;
  let interruptedBy: NodeJS.Signals | undefined;

  const onSignal = (signal: NodeJS.Signals): void => {
    running?.child?.kill(signal);
    if (interruptedBy !== undefined) return; // a second Ctrl-C is only passed on
    interruptedBy = signal;
    say(`tenacious: received ${signal}; ${running === undefined ? 'not retrying' : 'passed it to the command; not retrying'}`);
    stop.abort(new Error(`interrupted by ${signal}`));
  };

  const runOnce = async (ctx: AttemptContext): Promise<void> => {
    // Never two copies at once: a run stopped by --attempt-timeout is waited for before the next.
    if (timedOut !== undefined) await timedOut.outcome;
    const current = start(request);
    running = current;
    const { signal } = ctx;
    // Which limit aborts this attempt: its own timeout if that comes before the deadline.
    const byAttemptTimeout = attemptTimeoutMs < ctx.remainingMs;
    const onAbort = (): void => {
      // Our own SIGINT/SIGTERM was already passed on; this is a time limit passing mid-run.
      if (!(signal.reason instanceof TimeoutError)) return;
      if (byAttemptTimeout) {
        timedOut = current;
        say(
          `tenacious: attempt ${ctx.attempt} still running after ${formatDuration(attemptTimeoutMs)} (--attempt-timeout); sending SIGTERM to the command`,
        );
      } else {
        say(`tenacious: deadline of ${formatDuration(deadlineMs)} reached during attempt ${ctx.attempt}; sending SIGTERM to the command`);
      }
      current.child?.kill('SIGTERM');
    };
    signal.addEventListener('abort', onAbort);
    const outcome = await current.outcome;
    signal.removeEventListener('abort', onAbort);
    // A timed-out run may end after the next one started: leave that one in place.
    if (running === current) running = undefined;
    const status = exitStatusOf(outcome, SIGNAL_NUMBERS);
    if (outcome.kind === 'exited' && status === 0) return;
    throw new CommandFailed(outcome, status);
  };

  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await retry(runOnce, {
      backoff: request.backoff,
      maxAttempts,
      deadlineMs,
      attemptTimeoutMs: Number.isFinite(attemptTimeoutMs) ? attemptTimeoutMs : undefined,
      // A run stopped by --attempt-timeout is retried whatever --retry-on lists: it hung, it did not fail.
      retryable: (error) => error instanceof TimeoutError || retryableExit(request.retryOn)(error),
      signal: stop.signal,
      onRetry: ({ attempt, error, delayMs }) => {
        const failure =
          error instanceof TimeoutError
            ? `timed out after ${formatDuration(attemptTimeoutMs)}`
            : error instanceof CommandFailed
              ? error.message
              : String(error);
        say(retryLine(attempt, maxAttempts, failure, delayMs));
      },
    });
    return 0;
  } catch (error) {
    const failure = error instanceof RetryError ? error.cause : error;
    const lastTimedOut = timedOut !== undefined && (running === undefined || running === timedOut);
    if (failure instanceof TimeoutError && lastTimedOut && interruptedBy === undefined && timedOut !== undefined) {
      // The last attempt hit --attempt-timeout: once it has ended, its status is the answer.
      const status = exitStatusOf(await timedOut.outcome, SIGNAL_NUMBERS);
      if (error instanceof RetryError) {
        say(
          `tenacious: giving up after ${error.attempts} attempt${error.attempts === 1 ? '' : 's'} (${error.reason === 'deadline' ? 'deadline' : 'no attempts left'}): the last one timed out, exit code ${status}`,
        );
      }
      return status;
    }
    const stillRunning = running;
    if (stillRunning !== undefined) return exitStatusOf(await stillRunning.outcome, SIGNAL_NUMBERS);
    if (interruptedBy !== undefined) return 128 + (SIGNAL_NUMBERS[interruptedBy] ?? 0);
    if (!(failure instanceof CommandFailed)) throw error;
    if (failure.outcome.kind === 'not-started') {
      process.stderr.write(`tenacious: ${failure.message}\n`);
    } else if (error instanceof RetryError) {
      const why = error.reason === 'deadline' ? `the next wait would pass the ${formatDuration(deadlineMs)} deadline` : 'no attempts left';
      say(`tenacious: giving up after ${error.attempts} attempt${error.attempts === 1 ? '' : 's'} (${why}): ${failure.message}`);
    } else {
      say(`tenacious: not retrying: exit code ${failure.exitCode} is not in --retry-on`);
    }
    return failure.exitCode;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Starts the command with inherited stdio (its output streams through, untouched). */
function start(request: RunRequest): Running {
  let child: ChildProcess;
  try {
    child = spawn(request.command, request.args, { stdio: 'inherit' });
  } catch (error) {
    // spawn throws synchronously for some bad arguments (e.g. a NUL byte in the command).
    return { child: undefined, outcome: Promise.resolve(notStarted(error)) };
  }
  const outcome = new Promise<CommandOutcome>((resolve) => {
    // 'error' also reports a failed kill() of a running child; only a child without a pid never started.
    child.on('error', (error) => {
      if (child.pid === undefined) resolve(notStarted(error));
    });
    child.once('exit', (code, signal) => resolve({ kind: 'exited', code, signal }));
  });
  return { child, outcome };
}

function notStarted(error: unknown): CommandOutcome {
  const errorCode = (error as { code?: unknown }).code;
  return {
    kind: 'not-started',
    errorCode: typeof errorCode === 'string' ? errorCode : undefined,
    message: error instanceof Error ? error.message : String(error),
  };
}
