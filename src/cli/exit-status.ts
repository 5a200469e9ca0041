/**
 * How a finished command is judged and reported: its exit status as one number (the shell's
 * convention), whether that number is worth another attempt, and the lines printed about it.
 */
import { formatDuration } from './duration.js';

/**
 * How one run of the command ended, as `child_process` reports it.
 *
 * @example
 * child.once('exit', (code, signal) => done({ kind: 'exited', code, signal }));
 */
export type CommandOutcome =
  | { readonly kind: 'exited'; readonly code: number | null; readonly signal: string | null }
  | { readonly kind: 'not-started'; readonly errorCode: string | undefined; readonly message: string };

/**
 * The attempt failed: the command exited with a non-zero status, died of a signal, or could
 * not be started. `retry()` sees this error; the entry point exits with `exitCode`.
 *
 * @example
 * throw new CommandFailed({ kind: 'exited', code: 1, signal: null }, 1); // message: 'exit code 1'
 */
export class CommandFailed extends Error {
  override readonly name = 'CommandFailed';

  constructor(
    readonly outcome: CommandOutcome,
    /** The status the CLI exits with if this is the last attempt. */
    readonly exitCode: number,
  ) {
    super(describeOutcome(outcome, exitCode));
  }
}

/**
 * One exit status for any outcome, as a shell reports it: the exit code; 128 + the signal's
 * number for a command killed by a signal (SIGKILL → 137, SIGTERM → 143); 127 for a command
 * that does not exist and 126 for one that cannot be executed.
 *
 * @param signalNumbers signal names to numbers (`os.constants.signals` on Node).
 * @example
 * exitStatusOf({ kind: 'exited', code: null, signal: 'SIGKILL' }, { SIGKILL: 9 }); // 137
 */
export function exitStatusOf(outcome: CommandOutcome, signalNumbers: Readonly<Record<string, number>>): number {
  if (outcome.kind === 'not-started') return outcome.errorCode === 'ENOENT' ? 127 : 126;
  if (outcome.code !== null) return outcome.code;
  // No signal (null) reads signalNumbers.null: no signal has that name, so undefined.
  const number = signalNumbers[outcome.signal as string];
  // Node always reports a code or a signal; if the signal is one it cannot name, still fail.
  return number === undefined ? 1 : 128 + number;
}

/**
 * The retry predicate of a run: a command that could not be started is never retried (it
 * will not appear by waiting); a failing status is retried if it is listed in `retryOn`, or
 * when no list is given, always.
 *
 * @example
 * retry(runOnce, { retryable: retryableExit(new Set([75])) }); // retry only EX_TEMPFAIL
 */
export function retryableExit(retryOn: ReadonlySet<number> | undefined): (error: unknown) => boolean {
  return (error) => {
    if (!(error instanceof CommandFailed) || error.outcome.kind === 'not-started') return false;
    return retryOn === undefined || retryOn.has(error.exitCode);
  };
}

/**
 * The failure part of a report line: `exit code 1`, `killed by SIGKILL, exit code 137`, or
 * why the command could not start.
 *
 * @example
 * describeOutcome({ kind: 'exited', code: 3, signal: null }, 3); // 'exit code 3'
 */
export function describeOutcome(outcome: CommandOutcome, exitCode: number): string {
  if (outcome.kind === 'not-started') return `could not start the command: ${outcome.message}`;
  if (outcome.code === null && outcome.signal !== null) return `killed by ${outcome.signal}, exit code ${exitCode}`;
  return `exit code ${exitCode}`;
}

/**
 * The stderr line announcing a retry: which attempt failed and how, and the wait.
 *
 * @example
 * retryLine(1, 5, 'exit code 1', 1250); // 'tenacious: attempt 1 of 5 failed (exit code 1); retrying in 1.25s'
 */
export function retryLine(attempt: number, maxAttempts: number, failure: string, delayMs: number): string {
  const of = Number.isFinite(maxAttempts) ? ` of ${maxAttempts}` : '';
  return `tenacious: attempt ${attempt}${of} failed (${failure}); retrying in ${formatDuration(delayMs)}`;
}
