/**
 * Running the command under `retry()`: when each run starts, when it is sent SIGTERM, and which
 * status the CLI exits with. Node's processes and signals stay in main.ts, behind {@link RunIO},
 * so this file runs in-process under a fake clock with fake children in the tests.
 */
import { formatDuration } from './duration.js';
import type { RunRequest } from './args.js';
import { type CommandOutcome, CommandFailed, exitStatusOf, retryLine, retryableExit } from './exit-status.js';
import { type AttemptContext, RetryError, TimeoutError, retry } from '../index.js';
import { MAX_TIMER_DELAY } from '../runtime/timer-queue.js';

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
 * A run of the CLI under way: the status it will exit with, and the way to pass on a stop
 * signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) received by tenacious itself.
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
 * `retry()` gives up (deadline, a stop signal) is waited for, so the command is never left
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
  /** The run under way, from its start until it has exited; never more than one. */
  let running: StartedRun | undefined;
  /** The error of the last run stopped by --attempt-timeout, and the status it ended with. */
  let lastTimeout: { readonly error: TimeoutError; readonly status: number } | undefined;
  let interruptedBy: NodeJS.Signals | undefined;

  const interrupt = (signal: NodeJS.Signals): void => {
    running?.kill(signal);
    if (interruptedBy !== undefined) return; // a second Ctrl-C is only passed on
    interruptedBy = signal;
    say(`tenacious: received ${signal}; ${running === undefined ? 'not retrying' : 'passed it to the command; not retrying'}`);
    // No reason needed: interruptedBy, set above, is what finish() reads.
    stop.abort();
  };

  // One attempt lasts until its run has exited, so the next attempt (which retry() starts only
  // after this one has settled and the wait has passed) can never overlap it. That is why
  // --attempt-timeout is kept here rather than by retry()'s attemptTimeoutMs: retry() abandons
  // an attempt at its timeout and moves on while the run may still be shutting down, which let
  // two attempts wait for the same slow run and both start the command when it exited.
  const runOnce = async (ctx: AttemptContext): Promise<void> => {
    const { signal } = ctx;
    const current = io.start();
    running = current;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    let terminated = false;
    const terminate = (why: string): void => {
      // One SIGTERM per run: the deadline passing while a timed-out run shuts down adds nothing.
      if (terminated) return;
      terminated = true;
      say(`${why}; sending SIGTERM to the command`);
      current.kill('SIGTERM');
    };
    const onAbort = (): void => {
      clearTimeout(timer);
      // Our own stop signal was already passed on; this is the deadline passing mid-run.
      if (!(signal.reason instanceof TimeoutError)) return;
      terminate(`tenacious: deadline of ${formatDuration(deadlineMs)} reached during attempt ${ctx.attempt}`);
    };
    // A timeout at or past the deadline would never fire first: the deadline speaks instead.
    // A timer holds at most MAX_TIMER_DELAY (a longer one fires after 1 ms): a longer timeout is taken in steps.
    const armFor = (leftMs: number): void => {
      timer = setTimeout(
        () => {
          // Stryker disable next-line EqualityOperator: equivalent: with exactly MAX_TIMER_DELAY left, >= arms one more timer, of 0 ms: the attempt ends at the same moment
          if (leftMs > MAX_TIMER_DELAY) return armFor(leftMs - MAX_TIMER_DELAY);
          timedOut = true;
          terminate(`tenacious: attempt ${ctx.attempt} still running after ${formatDuration(attemptTimeoutMs)} (--attempt-timeout)`);
        },
        Math.min(leftMs, MAX_TIMER_DELAY),
      );
    };
    if (attemptTimeoutMs < ctx.remainingMs) armFor(attemptTimeoutMs);
    signal.addEventListener('abort', onAbort);
    const outcome = await current.outcome;
    clearTimeout(timer);
    // Stryker disable next-line StringLiteral: the engine never aborts an ended attempt's signal, so a listener left on it never runs.
    signal.removeEventListener('abort', onAbort);
    running = undefined;
    const status = exitStatusOf(outcome, signalNumbers);
    if (timedOut) {
      // It hung: a failed attempt whatever status SIGTERM left it with.
      // Stryker disable next-line StringLiteral: only its identity is read (finish() and onRetry print their own text); the message is for a debugger
      const error = new TimeoutError(`attempt ${ctx.attempt} timed out after ${formatDuration(attemptTimeoutMs)}`);
      lastTimeout = { error, status };
      throw error;
    }
    // Only an exit can give 0: a signal gives 128 + its number (or 1), a failed start 126 or 127.
    if (status === 0) return;
    throw new CommandFailed(outcome, status);
  };

  const finish = async (): Promise<number> => {
    try {
      await retry(runOnce, {
        backoff: request.backoff,
        maxAttempts,
        deadlineMs,
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
      // retry() gave up mid-run (the deadline, a stop signal): that run's own status is the answer.
      const stillRunning = running;
      if (stillRunning !== undefined) return exitStatusOf(await stillRunning.outcome, signalNumbers);
      if (interruptedBy !== undefined) return 128 + (signalNumbers[interruptedBy] ?? 0);
      const failure = error instanceof RetryError ? error.cause : error;
      // Called once retry() gave up on its own: a TimeoutError or CommandFailed reaches here only
      // in a RetryError (both are retried), and an abort returned above.
      const gaveUp = (what: string): void => {
        const { reason, attempts } = error as RetryError;
        const why = reason === 'deadline' ? `the next wait would pass the ${formatDuration(deadlineMs)} deadline` : 'no attempts left';
        say(`tenacious: giving up after ${attempts} attempt${attempts === 1 ? '' : 's'} (${why}): ${what}`);
      };
      if (lastTimeout !== undefined && failure === lastTimeout.error) {
        gaveUp(`the last one timed out, exit code ${lastTimeout.status}`);
        return lastTimeout.status;
      }
      if (!(failure instanceof CommandFailed)) throw error;
      if (failure.outcome.kind === 'not-started') {
        io.say(`tenacious: ${failure.message}`);
      } else if (error instanceof RetryError) {
        gaveUp(failure.message);
      } else {
        say(`tenacious: not retrying: exit code ${failure.exitCode} is not in --retry-on`);
      }
      return failure.exitCode;
    }
  };

  return { status: finish(), interrupt };
}
