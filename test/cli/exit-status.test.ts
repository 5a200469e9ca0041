// How a finished command is judged and reported.
import { describe, expect, it } from 'vitest';
import { CommandFailed, type CommandOutcome, describeOutcome, exitStatusOf, retryLine, retryableExit } from '../../src/cli/exit-status.js';

describe('exit statuses', () => {
  const signals = { SIGKILL: 9, SIGTERM: 15 };
  const exited = (code: number | null, signal: string | null = null): CommandOutcome => ({ kind: 'exited', code, signal });
  const notStarted = (errorCode: string): CommandOutcome => ({ kind: 'not-started', errorCode, message: errorCode });

  it('follows the shell: the code, 128 + signal number, 127 not found, 126 not executable', () => {
    expect(exitStatusOf(exited(0), signals)).toBe(0);
    expect(exitStatusOf(exited(3), signals)).toBe(3);
    expect(exitStatusOf(exited(null, 'SIGKILL'), signals)).toBe(137);
    expect(exitStatusOf(exited(null, 'SIGTERM'), signals)).toBe(143);
    expect(exitStatusOf(exited(null, 'SIGWEIRD'), signals)).toBe(1);
    expect(exitStatusOf(notStarted('ENOENT'), signals)).toBe(127);
    expect(exitStatusOf(notStarted('EACCES'), signals)).toBe(126);
  });

  it('retries every failing status without --retry-on, only the listed ones with it, never a command that did not start', () => {
    const any = retryableExit(undefined);
    const listed = retryableExit(new Set([75, 137]));
    expect(any(new CommandFailed(exited(1), 1))).toBe(true);
    expect(any(new CommandFailed(exited(null, 'SIGKILL'), 137))).toBe(true);
    expect(any(new CommandFailed(notStarted('ENOENT'), 127))).toBe(false);
    expect(any(new Error('not a command failure'))).toBe(false);
    expect(listed(new CommandFailed(exited(75), 75))).toBe(true);
    expect(listed(new CommandFailed(exited(null, 'SIGKILL'), 137))).toBe(true);
    expect(listed(new CommandFailed(exited(1), 1))).toBe(false);
  });

  it('reports a retry with the attempt, the failure and the wait', () => {
    expect(retryLine(1, 5, 'exit code 1', 1250)).toBe('tenacious: attempt 1 of 5 failed (exit code 1); retrying in 1.25s');
    expect(retryLine(2, Number.POSITIVE_INFINITY, 'killed by SIGKILL, exit code 137', 10)).toBe(
      'tenacious: attempt 2 failed (killed by SIGKILL, exit code 137); retrying in 10ms',
    );
    expect(new CommandFailed(exited(null, 'SIGKILL'), 137).message).toBe('killed by SIGKILL, exit code 137');
  });

  it('name their error and say how the command ended', () => {
    expect(new CommandFailed(exited(3), 3).name).toBe('CommandFailed');
    expect(new CommandFailed(exited(3), 3).message).toBe('exit code 3');
    expect(describeOutcome(exited(null, null), 1)).toBe('exit code 1');
    expect(describeOutcome(exited(2, 'SIGTERM'), 2)).toBe('exit code 2');
    expect(describeOutcome({ kind: 'not-started', errorCode: 'ENOENT', message: 'spawn nope ENOENT' }, 127)).toBe(
      'could not start the command: spawn nope ENOENT',
    );
  });
});
