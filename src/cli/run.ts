/**
 * Running the command under `retry()`: when each run starts, when it is sent SIGTERM, and which
 * status the CLI exits with. Node's processes and signals stay in main.ts, behind {@link RunIO},
 * so this file runs in-process under a fake clock with fake children in the tests.
 */
import { formatDuration } from './duration.js';
import type { RunRequest } from './args.js';
import { type CommandOutcome, CommandFailed, exitStatusOf, retryLine, retryableExit } from './exit-status.js';
import { type AttemptContext, RetryError, TimeoutError, retry } from '../index.js';

/**
 * One started run of the command: a way to signal it, and how it ended.
 *
 * @example
 * const child = spawn(command, args, { stdio: 'inherit' });
 * const run: StartedRun = { kill: (signal) => child.kill(signal), outcome: exited(child) };
 */
export interface StartedRun {
  /** Sends `signal` to the command; does nothing once it has ended or if it never started. */
  kill(signal: NodeJS.Signals): void;
  /** Settles once, when the command has ended (or could not be started); never rejects. */
  readonly outcome: Promise<CommandOutcome>;
}

/**
 * What {@link runWithRetries} needs from the outside world.
 *
 * @example
 * const io: RunIO = { start: () => startCommand(request), say: (line) => process.stderr.write(`${line}\n`), signalNumbers: constants.signals };
 */
export interface RunIO {
  /** Starts one run of the command. */
  start(): StartedRun;
  /** Prints one line of tenacious's own to stderr; with --quiet only errors reach it. */
  say(line: string): void;
  /** Signal names to numbers (`os.constants.signals` on Node). */
  readonly signalNumbers: Readonly<Record<string, number>>;
}

/**
 * A run of the CLI under way: the status it will exit with, and the way to pass on SIGINT or
 * SIGTERM received by tenacious itself.
 *
 * @example
 * const run = runWithRetries(request, io);
 * process.on('SIGINT', run.interrupt);
 * process.exitCode = await run.status;
 */
export interface RetryingRun {
  /** The status to exit with: the last run's. Rejects only for a bug in tenacious. */
  readonly status: Promise<number>;
  /** Passes `signal` to the running command and stops retrying; a second one is only passed on. */
  interrupt(signal: NodeJS.Signals): void;
}

/**
 * Runs the command under `retry()`. The status is the last run's. A run still going when
 * `retry()` gives up (deadline, SIGINT/SIGTERM) is waited for, so the command is never left
 * behind and its own status is the answer.
 *
 * @example
 * process.exitCode = await runWithRetries(request, io).status;
 */
export function runWithRetries(request: RunRequest, io: RunIO): RetryingRun {
  const { quiet, maxAttempts, deadlineMs, attemptTimeoutMs } = request;
  const { signalNumbers } = io;
  const say = (line: string): void => {
    if (!quiet) io.say(line);
  };
  const stop = new AbortController();
  let running: StartedRun | undefined;
  /** The last run stopped by --attempt-timeout: its status is the answer if the retries end there. */
  let timedOut: StartedRun | undefined;
  let interruptedBy: NodeJS.Signals | undefined;

  const interrupt = (signal: NodeJS.Signals): void => {
    running?.kill(signal);
    if (interruptedBy !== undefined) return; // a second Ctrl-C is only passed on
    interruptedBy = signal;
    say(`tenacious: received ${signal}; ${running === undefined ? 'not retrying' : 'passed it to the command; not retrying'}`);
    stop.abort(new Error(`interrupted by ${signal}`));
  };

  const runOnce = async (ctx: AttemptContext): Promise<void> => {
    // Never two copies at once: a run stopped by --attempt-timeout is waited for before the next.
    if (timedOut !== undefined) await timedOut.outcome;
    const current = io.start();
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
      current.kill('SIGTERM');
    };
    signal.addEventListener('abort', onAbort);
    const outcome = await current.outcome;
    signal.removeEventListener('abort', onAbort);
    // A timed-out run may end after the next one started: leave that one in place.
    if (running === current) running = undefined;
    const status = exitStatusOf(outcome, signalNumbers);
    if (outcome.kind === 'exited' && status === 0) return;
    throw new CommandFailed(outcome, status);
  };

  const finish = async (): Promise<number> => {
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
        const status = exitStatusOf(await timedOut.outcome, signalNumbers);
        if (error instanceof RetryError) {
          say(
            `tenacious: giving up after ${error.attempts} attempt${error.attempts === 1 ? '' : 's'} (${error.reason === 'deadline' ? 'deadline' : 'no attempts left'}): the last one timed out, exit code ${status}`,
          );
        }
        return status;
      }
      const stillRunning = running;
      if (stillRunning !== undefined) return exitStatusOf(await stillRunning.outcome, signalNumbers);
      if (interruptedBy !== undefined) return 128 + (signalNumbers[interruptedBy] ?? 0);
      if (!(failure instanceof CommandFailed)) throw error;
      if (failure.outcome.kind === 'not-started') {
        io.say(`tenacious: ${failure.message}`);
      } else if (error instanceof RetryError) {
        const why =
          error.reason === 'deadline' ? `the next wait would pass the ${formatDuration(deadlineMs)} deadline` : 'no attempts left';
        say(`tenacious: giving up after ${error.attempts} attempt${error.attempts === 1 ? '' : 's'} (${why}): ${failure.message}`);
      } else {
        say(`tenacious: not retrying: exit code ${failure.exitCode} is not in --retry-on`);
      }
      return failure.exitCode;
    }
  };

  return { status: finish(), interrupt };
}
