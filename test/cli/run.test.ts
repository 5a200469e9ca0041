// The CLI's run logic in-process: retry() on a virtual clock, with fake commands whose runs
// end when their script says, so the timing of starts, signals and exits is exact.
import { describe, expect, it } from 'vitest';
import type { RunRequest } from '../../src/cli/args.js';
import type { CommandOutcome } from '../../src/cli/exit-status.js';
import { type StartedRun, runWithRetries } from '../../src/cli/run.js';
import { track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

/** How one fake run behaves. */
interface Script {
  /** Ends by itself this long after its start, with `code`; never if absent. */
  readonly exitAfterMs?: number;
  readonly code?: number;
  /** Ends this long after a signal, killed by it (default 0); a slow shutdown if larger. */
  readonly signalExitAfterMs?: number;
  /** Cannot be started (as spawn's ENOENT). */
  readonly notStarted?: boolean;
}

/**
 * A fake command: run n follows scripts[n − 1] (the last script once they run out). Records
 * every start, signal and exit with its virtual time, and how many runs were alive at once.
 */
function fakeCommand(...scripts: Script[]) {
  const events: string[] = [];
  let alive = 0;
  let runs = 0;
  const state = { events, maxAlive: 0, runs: () => runs };
  const start = (): StartedRun => {
    runs++;
    const n = runs;
    const script = scripts[Math.min(n, scripts.length) - 1] as Script;
    if (script.notStarted) {
      events.push(`not-started ${n}`);
      return {
        kill: () => {},
        outcome: Promise.resolve({ kind: 'not-started', errorCode: 'ENOENT', message: 'spawn cmd ENOENT' }),
      };
    }
    alive++;
    state.maxAlive = Math.max(state.maxAlive, alive);
    events.push(`start ${n} @${clock.now}`);
    let settle: (outcome: CommandOutcome) => void = () => {};
    const outcome = new Promise<CommandOutcome>((resolve) => {
      settle = resolve;
    });
    let ended = false;
    const timers: Array<ReturnType<typeof setTimeout>> = [];
    const end = (result: CommandOutcome): void => {
      if (ended) return;
      ended = true;
      alive--;
      for (const timer of timers) clearTimeout(timer);
      events.push(`exit ${n} @${clock.now}`);
      settle(result);
    };
    if (script.exitAfterMs !== undefined) {
      timers.push(setTimeout(() => end({ kind: 'exited', code: script.code ?? 0, signal: null }), script.exitAfterMs));
    }
    return {
      kill(signal) {
        if (ended) return;
        events.push(`${signal} ${n} @${clock.now}`);
        timers.push(setTimeout(() => end({ kind: 'exited', code: null, signal }), script.signalExitAfterMs ?? 0));
      },
      outcome,
    };
  };
  return { start, state };
}

const SIGNALS = { SIGINT: 2, SIGTERM: 15, SIGKILL: 9 };

function request(overrides: Partial<RunRequest> = {}): RunRequest {
  return {
    kind: 'run',
    command: 'cmd',
    args: [],
    backoff: { initialDelayMs: 10, multiplier: 2, maxDelayMs: 1000, jitter: 'none' },
    deadlineMs: 60_000,
    attemptTimeoutMs: Number.POSITIVE_INFINITY,
    maxAttempts: Number.POSITIVE_INFINITY,
    retryOn: undefined,
    quiet: false,
    ...overrides,
  };
}

/** Runs the CLI logic to its end in virtual time; returns the status and the lines it printed. */
async function runToEnd(req: RunRequest, command: ReturnType<typeof fakeCommand>) {
  const lines: string[] = [];
  const run = runWithRetries(req, { start: command.start, say: (line) => lines.push(line), signalNumbers: SIGNALS });
  const status = track(run.status);
  await clock.runAllAsync();
  expect(status.state).toBe('resolved');
  return { status: status.value, lines };
}

describe('runWithRetries', () => {
  it('retries failing runs until one succeeds, printing each retry, and exits 0', async () => {
    const command = fakeCommand({ exitAfterMs: 5, code: 1 }, { exitAfterMs: 5, code: 1 }, { exitAfterMs: 5, code: 0 });
    const { status, lines } = await runToEnd(request({ maxAttempts: 5 }), command);
    expect(status).toBe(0);
    expect(command.state.runs()).toBe(3);
    expect(lines).toEqual([
      'tenacious: attempt 1 of 5 failed (exit code 1); retrying in 10ms',
      'tenacious: attempt 2 of 5 failed (exit code 1); retrying in 20ms',
    ]);
  });

  it("gives up after --max-attempts with the last run's exit code", async () => {
    const command = fakeCommand({ exitAfterMs: 5, code: 4 }, { exitAfterMs: 5, code: 6 });
    const { status, lines } = await runToEnd(request({ maxAttempts: 2 }), command);
    expect(status).toBe(6);
    expect(lines.at(-1)).toBe('tenacious: giving up after 2 attempts (no attempts left): exit code 6');
  });

  it('does not retry an exit code missing from --retry-on', async () => {
    const command = fakeCommand({ exitAfterMs: 5, code: 75 }, { exitAfterMs: 5, code: 3 });
    const { status, lines } = await runToEnd(request({ retryOn: new Set([75]) }), command);
    expect(status).toBe(3);
    expect(command.state.runs()).toBe(2);
    expect(lines.at(-1)).toBe('tenacious: not retrying: exit code 3 is not in --retry-on');
  });

  it('exits 127 without retrying a command that cannot be started, and says so even with --quiet', async () => {
    const command = fakeCommand({ notStarted: true });
    const { status, lines } = await runToEnd(request({ quiet: true }), command);
    expect(status).toBe(127);
    expect(command.state.runs()).toBe(1);
    expect(lines).toEqual(['tenacious: could not start the command: spawn cmd ENOENT']);
  });

  it('prints nothing of its own with --quiet', async () => {
    const command = fakeCommand({ exitAfterMs: 5, code: 1 }, { exitAfterMs: 5, code: 0 });
    const { status, lines } = await runToEnd(request({ quiet: true }), command);
    expect(status).toBe(0);
    expect(lines).toEqual([]);
  });

  it('sends SIGTERM to a run still going at the deadline and exits with its status once it ends', async () => {
    const command = fakeCommand({ signalExitAfterMs: 300 });
    const { status, lines } = await runToEnd(request({ deadlineMs: 1000 }), command);
    expect(status).toBe(143);
    expect(command.state.events).toEqual(['start 1 @0', 'SIGTERM 1 @1000', 'exit 1 @1300']);
    expect(lines).toEqual(['tenacious: deadline of 1s reached during attempt 1; sending SIGTERM to the command']);
  });

  it('passes SIGINT to the running command, stops retrying and exits with its status', async () => {
    const command = fakeCommand({ signalExitAfterMs: 50 });
    const lines: string[] = [];
    const run = runWithRetries(request(), { start: command.start, say: (line) => lines.push(line), signalNumbers: SIGNALS });
    const status = track(run.status);
    await clock.tickAsync(100);
    run.interrupt('SIGINT');
    run.interrupt('SIGINT'); // a second Ctrl-C is passed on, not announced again
    await clock.runAllAsync();
    expect(status.value).toBe(130);
    expect(command.state.events).toEqual(['start 1 @0', 'SIGINT 1 @100', 'SIGINT 1 @100', 'exit 1 @150']);
    expect(lines).toEqual(['tenacious: received SIGINT; passed it to the command; not retrying']);
  });

  it('stops during a wait and exits with 128 + the signal number', async () => {
    const command = fakeCommand({ exitAfterMs: 5, code: 1 });
    const lines: string[] = [];
    const run = runWithRetries(request({ backoff: { initialDelayMs: 30_000, multiplier: 2, maxDelayMs: 30_000, jitter: 'none' } }), {
      start: command.start,
      say: (line) => lines.push(line),
      signalNumbers: SIGNALS,
    });
    const status = track(run.status);
    await clock.tickAsync(1000);
    run.interrupt('SIGTERM');
    await clock.runAllAsync();
    expect(status.value).toBe(143);
    expect(command.state.runs()).toBe(1);
    expect(lines.at(-1)).toBe('tenacious: received SIGTERM; not retrying');
  });
});

describe('runWithRetries with --attempt-timeout', () => {
  // Regression (issue 34): setTimeout takes a delay above 2^31 − 1 ms (about 24.8 days) as 1 ms,
  // so a 30-day --attempt-timeout sent SIGTERM to the command 1 ms after its start.
  it('a timeout longer than a timer holds (30 days) is kept: a run that ends after an hour is not signalled', async () => {
    const day = 24 * 3600 * 1000;
    const command = fakeCommand({ exitAfterMs: 3600 * 1000, code: 0 });
    const { status, lines } = await runToEnd(request({ attemptTimeoutMs: 30 * day, deadlineMs: 60 * day }), command);
    expect(status).toBe(0);
    expect(lines).toEqual([]);
    expect(command.state.events).toEqual(['start 1 @0', 'exit 1 @3600000']);
  });

  it('a timeout longer than a timer holds still fires on time: SIGTERM 30 days after the start', async () => {
    const day = 24 * 3600 * 1000;
    const command = fakeCommand({ signalExitAfterMs: 0 }, { exitAfterMs: 5, code: 0 });
    const { status } = await runToEnd(request({ attemptTimeoutMs: 30 * day, deadlineMs: 60 * day }), command);
    expect(status).toBe(0);
    expect(command.state.events.slice(0, 2)).toEqual(['start 1 @0', `SIGTERM 1 @${30 * day}`]);
  });

  it('sends SIGTERM to a run still going after the timeout and retries it once it has ended', async () => {
    const command = fakeCommand({ signalExitAfterMs: 0 }, { exitAfterMs: 5, code: 0 });
    const { status, lines } = await runToEnd(request({ attemptTimeoutMs: 400 }), command);
    expect(status).toBe(0);
    expect(command.state.runs()).toBe(2);
    expect(lines).toEqual([
      'tenacious: attempt 1 still running after 400ms (--attempt-timeout); sending SIGTERM to the command',
      'tenacious: attempt 1 failed (timed out after 400ms); retrying in 10ms',
    ]);
  });

  it("retries a timed-out run whatever --retry-on lists, and exits with the last run's status when the attempts run out", async () => {
    const command = fakeCommand({ signalExitAfterMs: 0 });
    const { status, lines } = await runToEnd(request({ attemptTimeoutMs: 300, maxAttempts: 2, retryOn: new Set([3]) }), command);
    expect(status).toBe(143);
    expect(command.state.runs()).toBe(2);
    expect(lines.at(-1)).toBe('tenacious: giving up after 2 attempts (no attempts left): the last one timed out, exit code 143');
  });

  it('regression (issue 21, defect 12): a run slow to exit after SIGTERM never overlaps the next, and every run past its timeout gets SIGTERM', async () => {
    // Each of the first three runs hangs, and takes 500 ms to exit after SIGTERM: longer than
    // the 100 ms timeout plus the wait. The fourth succeeds.
    const slowToExit = { signalExitAfterMs: 500 };
    const command = fakeCommand(slowToExit, slowToExit, slowToExit, { exitAfterMs: 5, code: 0 });
    const { status } = await runToEnd(request({ attemptTimeoutMs: 100, maxAttempts: 10 }), command);
    const { events, maxAlive } = command.state;
    expect(maxAlive).toBe(1);
    expect(status).toBe(0);
    expect(command.state.runs()).toBe(4);
    // Each run starts only after the one before it has exited, and each hung run got SIGTERM
    // a full timeout after its own start.
    expect(events).toEqual([
      'start 1 @0',
      'SIGTERM 1 @100',
      'exit 1 @600',
      'start 2 @610',
      'SIGTERM 2 @710',
      'exit 2 @1210',
      'start 3 @1230',
      'SIGTERM 3 @1330',
      'exit 3 @1830',
      'start 4 @1870',
      'exit 4 @1875',
    ]);
  });

  it('sends one SIGTERM only when the deadline passes while a timed-out run shuts down, and exits with its status', async () => {
    const command = fakeCommand({ signalExitAfterMs: 500 });
    const { status, lines } = await runToEnd(request({ attemptTimeoutMs: 100, deadlineMs: 300 }), command);
    expect(status).toBe(143);
    expect(command.state.events).toEqual(['start 1 @0', 'SIGTERM 1 @100', 'exit 1 @600']);
    expect(lines).toEqual(['tenacious: attempt 1 still running after 100ms (--attempt-timeout); sending SIGTERM to the command']);
  });

  it('counts a timed-out run as failed even when it exits 0 after SIGTERM', async () => {
    const command = fakeCommand({ exitAfterMs: 250, code: 0 }, { exitAfterMs: 5, code: 0 });
    // The fake command ignores the signal: it ends at 250 ms with status 0, 150 ms after SIGTERM.
    const { status, lines } = await runToEnd(request({ attemptTimeoutMs: 100, maxAttempts: 1 }), {
      ...command,
      start: () => {
        const run = command.start();
        return { kill: () => {}, outcome: run.outcome };
      },
    });
    expect(status).toBe(0);
    expect(lines.at(-1)).toBe('tenacious: giving up after 1 attempt (no attempts left): the last one timed out, exit code 0');
  });

  it('regression (issue 21, defect 12): when the attempts run out on a run slow to exit, no other run starts and its status is the answer', async () => {
    const command = fakeCommand({ signalExitAfterMs: 500 });
    const { status, lines } = await runToEnd(request({ attemptTimeoutMs: 100, maxAttempts: 3 }), command);
    expect(command.state.maxAlive).toBe(1);
    expect(command.state.runs()).toBe(3);
    expect(status).toBe(143);
    expect(lines.at(-1)).toBe('tenacious: giving up after 3 attempts (no attempts left): the last one timed out, exit code 143');
  });
});

describe('runWithRetries: how it gives up', () => {
  it('gives up when the next wait would pass the deadline, and says so', async () => {
    const command = fakeCommand({ exitAfterMs: 5, code: 1 });
    const { status, lines } = await runToEnd(request({ deadlineMs: 25 }), command);
    expect(status).toBe(1);
    expect(command.state.runs()).toBe(2);
    expect(lines.at(-1)).toBe('tenacious: giving up after 2 attempts (the next wait would pass the 25ms deadline): exit code 1');
  });

  it('names only the run still going at the deadline, not the ones that ended before it', async () => {
    const command = fakeCommand({ exitAfterMs: 5, code: 1 }, { signalExitAfterMs: 0 });
    const { status, lines } = await runToEnd(request({ deadlineMs: 100 }), command);
    expect(status).toBe(143);
    expect(lines).toEqual([
      'tenacious: attempt 1 failed (exit code 1); retrying in 10ms',
      'tenacious: deadline of 100ms reached during attempt 2; sending SIGTERM to the command',
    ]);
  });

  it('lets the deadline speak when --attempt-timeout is exactly the time left', async () => {
    const command = fakeCommand({ signalExitAfterMs: 0 });
    const { status, lines } = await runToEnd(request({ attemptTimeoutMs: 1000, deadlineMs: 1000 }), command);
    expect(status).toBe(143);
    expect(command.state.events.slice(0, 2)).toEqual(['start 1 @0', 'SIGTERM 1 @1000']);
    expect(lines).toEqual(['tenacious: deadline of 1s reached during attempt 1; sending SIGTERM to the command']);
  });

  it("answers with the last run's failure, not an earlier run's timeout", async () => {
    const command = fakeCommand({ signalExitAfterMs: 0 }, { exitAfterMs: 5, code: 3 });
    const { status, lines } = await runToEnd(request({ attemptTimeoutMs: 100, maxAttempts: 2 }), command);
    expect(status).toBe(3);
    expect(lines.at(-1)).toBe('tenacious: giving up after 2 attempts (no attempts left): exit code 3');
  });

  it('rejects with what starting the command threw, as it is', async () => {
    const boom = new Error('spawn exploded');
    const run = runWithRetries(request(), {
      start: () => {
        throw boom;
      },
      say: () => {},
      signalNumbers: SIGNALS,
    });
    const status = track(run.status);
    await clock.runAllAsync();
    expect(status.state).toBe('rejected');
    expect(status.error).toBe(boom);
  });
});
