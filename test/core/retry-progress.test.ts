// The runs of a call (docs/architecture.md, "Runs of a call"): ctx.progress() from the running
// attempt begins a new run, and the limits — deadlineMs, maxAttempts, attemptTimeoutMs — and
// the backoff count from its start; attempt numbers, elapsedMs and the hooks stay the call's,
// onSuccess and onGiveUp once. A call that never reports progress is bounded from its start;
// progress from an attempt that is no longer running changes nothing.
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  type AttemptContext,
  type GiveUpEvent,
  RetryError,
  type RetryEvent,
  type SuccessEvent,
  type TimeoutError,
  retry,
} from '../../src/index.js';
import { queueState } from '../../src/runtime/timer-queue.js';
import { constant, hang, noJitter } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

/** Calls `report`, then answers `answer`: a predicate or a delay that reports progress. */
const reportThen = <A>(report: () => void, answer: A): A => {
  report();
  return answer;
};

/** A promise that rejects with a 503 after `ms`. */
const failAfter = (ms: number) => new Promise<never>((_, reject) => setTimeout(() => reject(httpError(503)), ms));

describe('ctx.progress() begins a new run: the limits count from it', () => {
  it('the deadline: an attempt that reported progress is abandoned deadlineMs after it, once', async () => {
    let signal: AbortSignal | undefined;
    const onGiveUp = vi.fn((_event: GiveUpEvent) => {});
    const p = track(
      retry(
        (ctx) => {
          signal = ctx.signal;
          setTimeout(() => ctx.progress(), 600);
          return hang();
        },
        { deadlineMs: 1000, onGiveUp },
      ),
    );
    await clock.tickAsync(1599);
    expect(p.state).toBe('pending');
    expect(signal?.aborted).toBe(false);
    await clock.tickAsync(1);
    const error = p.error as RetryError;
    expect(error).toBeInstanceOf(RetryError);
    // The call's numbers: its attempts and its time since retry() was called.
    expect(error).toMatchObject({ reason: 'deadline', attempts: 1, elapsedMs: 1600 });
    expect((error.cause as TimeoutError).message).toBe('attempt 1 was still running at the deadline after 1000 ms');
    expect(signal?.reason).toBe(error.cause);
    expect(onGiveUp.mock.calls).toEqual([[{ reason: 'deadline', error, attempts: 1, elapsedMs: 1600 }]]);
  });

  it('each progress restarts it again', async () => {
    const p = track(
      retry(
        (ctx) => {
          for (const at of [600, 1200, 1800]) setTimeout(() => ctx.progress(), at);
          return hang();
        },
        { deadlineMs: 1000 },
      ),
    );
    await clock.tickAsync(2799);
    expect(p.state).toBe('pending');
    await clock.tickAsync(1);
    expect(p.error).toMatchObject({ reason: 'deadline', attempts: 1, elapsedMs: 2800 });
  });

  it('maxAttempts: failures count from the attempt that progressed; the RetryError numbers the call’s attempts', async () => {
    for (const [progressOn, attempts] of [
      [undefined, 2],
      [1, 2],
      [2, 3],
    ] as const) {
      const p = track(
        retry(
          (ctx) => {
            if (ctx.attempt === progressOn) ctx.progress();
            return Promise.reject(httpError(503));
          },
          { maxAttempts: 2, backoff: constant(10) },
        ),
      );
      await clock.tickAsync(1000);
      expect(p.error, `progress on attempt ${progressOn}`).toMatchObject({ reason: 'attempts', attempts });
    }
  });

  it('an attempt that progresses before each failure never runs out of attempts; onRetry each time, onSuccess once', async () => {
    const onRetry = vi.fn((_event: RetryEvent) => {});
    const onSuccess = vi.fn((_event: SuccessEvent) => {});
    const onGiveUp = vi.fn();
    const p = track(
      retry(
        (ctx) => {
          if (ctx.attempt === 7) return 'done';
          ctx.progress();
          return Promise.reject(httpError(503));
        },
        { maxAttempts: 2, backoff: constant(10), onRetry, onSuccess, onGiveUp },
      ),
    );
    await clock.tickAsync(1000);
    expect(p).toMatchObject({ state: 'resolved', value: 'done' });
    expect(onRetry.mock.calls.map(([event]) => event.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(onSuccess.mock.calls).toEqual([[{ attempts: 7, elapsedMs: 60, value: 'done' }]]);
    expect(onGiveUp).not.toHaveBeenCalled();
  });

  it('the backoff: the first retry after progress waits the first delay again; elapsedMs goes on, remainingMs counts from it', async () => {
    const events: RetryEvent[] = [];
    const seen: Array<Pick<AttemptContext, 'attempt' | 'elapsedMs' | 'remainingMs'>> = [];
    const p = track(
      retry(
        (ctx) => {
          seen.push({ attempt: ctx.attempt, elapsedMs: ctx.elapsedMs, remainingMs: ctx.remainingMs });
          if (ctx.attempt === 5) return 'ok';
          if (ctx.attempt !== 3) return Promise.reject(httpError(503));
          setTimeout(() => ctx.progress(), 100);
          return failAfter(200);
        },
        { backoff: noJitter, deadlineMs: 60_000, onRetry: (e) => void events.push(e) },
      ),
    );
    await clock.tickAsync(10_000);
    expect(p.value).toBe('ok');
    // Attempt 3 runs 3000–3200 and reports progress at 3100.
    expect(events.map(({ attempt, delayMs, elapsedMs }) => [attempt, delayMs, elapsedMs])).toEqual([
      [1, 1000, 0],
      [2, 2000, 1000],
      [3, 1000, 3200],
      [4, 2000, 4200],
    ]);
    expect(seen).toEqual([
      { attempt: 1, elapsedMs: 0, remainingMs: 60_000 },
      { attempt: 2, elapsedMs: 1000, remainingMs: 59_000 },
      { attempt: 3, elapsedMs: 3000, remainingMs: 57_000 },
      { attempt: 4, elapsedMs: 4200, remainingMs: 58_900 },
      { attempt: 5, elapsedMs: 6200, remainingMs: 56_900 },
    ]);
  });

  it('attemptTimeoutMs: the running attempt times out attemptTimeoutMs after its progress, first attempt or later', async () => {
    const events: RetryEvent[] = [];
    const p = track(
      retry(
        (ctx) => {
          if (ctx.attempt === 3) return 'ok';
          setTimeout(() => ctx.progress(), ctx.attempt === 1 ? 80 : 50);
          return hang();
        },
        { attemptTimeoutMs: 100, backoff: constant(10), onRetry: (e) => void events.push(e) },
      ),
    );
    await clock.tickAsync(1000);
    expect(p.value).toBe('ok');
    // Attempt 1: progress at 80, timed out at 180. Attempt 2: 190, progress at 240, timed out at 340.
    expect(events.map((e) => e.elapsedMs)).toEqual([180, 340]);
    expect(events.map((e) => (e.error as Error).message)).toEqual(['attempt 1 timed out after 100 ms', 'attempt 2 timed out after 100 ms']);
  });

  it('a first attempt reporting progress synchronously, after synchronous work: the deadline counts from that moment', async () => {
    const p = track(
      retry(
        (ctx) => {
          clock.tick(300); // 300 ms of synchronous work that persisted something
          ctx.progress();
          return hang();
        },
        { deadlineMs: 100 },
      ),
    );
    await clock.tickAsync(99);
    expect(p.state).toBe('pending'); // without the progress it would have given up at 300
    await clock.tickAsync(1);
    expect(p.error).toMatchObject({ reason: 'deadline', attempts: 1, elapsedMs: 400 });
  });

  it('a first attempt reporting progress synchronously, after synchronous work: its attempt timeout counts from that moment', async () => {
    const events: RetryEvent[] = [];
    const p = track(
      retry(
        (ctx) => {
          if (ctx.attempt > 1) return 'ok';
          clock.tick(300);
          ctx.progress();
          return hang();
        },
        { attemptTimeoutMs: 100, backoff: constant(10), onRetry: (e) => void events.push(e) },
      ),
    );
    await clock.tickAsync(1000);
    expect(p.value).toBe('ok');
    expect(events.map((e) => e.elapsedMs)).toEqual([400]);
  });
});

describe('progress from an attempt that is not running is ignored', () => {
  it('from an attempt abandoned at its timeout, while a later attempt runs', async () => {
    const events: RetryEvent[] = [];
    const p = track(
      retry(
        (ctx) => {
          if (ctx.attempt === 1) setTimeout(() => ctx.progress(), 150); // 50 ms after it timed out
          return hang();
        },
        { attemptTimeoutMs: 100, maxAttempts: 3, backoff: constant(10), onRetry: (e) => void events.push(e) },
      ),
    );
    await clock.tickAsync(1000);
    // Attempt 2 (110–210) keeps its own timeout and attempt 3 (220–320) is the last: were the
    // progress at 150 taken, attempt 2 would time out at 250 and a fourth attempt would follow.
    expect(events.map((e) => e.elapsedMs)).toEqual([100, 210]);
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 3, elapsedMs: 320 });
  });

  it('from a failed attempt during the sleep after it, and from any attempt once the call has settled', async () => {
    const contexts: AttemptContext[] = [];
    const p = track(
      retry(
        (ctx) => {
          contexts.push(ctx);
          return ctx.attempt === 1 ? Promise.reject(httpError(503)) : hang();
        },
        { backoff: noJitter, deadlineMs: 1200 },
      ),
    );
    await clock.tickAsync(500);
    contexts[0]?.progress(); // attempt 1 failed at 0; the call sleeps until 1000
    await clock.tickAsync(699);
    expect(p.state).toBe('pending');
    await clock.tickAsync(1); // were the progress taken, the deadline would be at 1700
    expect(p.error).toMatchObject({ reason: 'deadline', attempts: 2, elapsedMs: 1200 });
    for (const ctx of contexts) ctx.progress();
    expect(queueState()).toEqual({ queued: 0, timerArmed: false });
  });

  // A hook or a predicate runs once the attempt has failed: its progress would restart the limits
  // after every failure, and the call would never end (10,001 attempts in 100 s before the fix).
  it.each([
    ['onRetry', (report: () => void) => ({ onRetry: report })],
    ['onEvent', (report: () => void) => ({ onEvent: report })],
    ['retryable', (report: () => void) => ({ retryable: () => reportThen(report, true) })],
    ['countsAsAttempt', (report: () => void) => ({ countsAsAttempt: () => reportThen(report, true) })],
    ['delay', (report: () => void) => ({ delay: () => reportThen(report, 10) })],
  ])('from %s, once the attempt has failed: the call still ends within its limits', async (_name, options) => {
    let current: AttemptContext | undefined;
    const p = track(
      retry(
        (ctx) => {
          current = ctx;
          return Promise.reject(httpError(503));
        },
        { maxAttempts: 3, deadlineMs: 1000, backoff: constant(10), ...options(() => current?.progress()) },
      ),
    );
    await clock.tickAsync(100);
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 3 });
  });
});

describe('a call is bounded from its start, or from the last progress of a running attempt (property)', () => {
  // 'late-progress' hangs and reports progress at 70 ms, after its 50 ms timeout: ignored.
  type Step = 'ok' | 'busy' | 'slow-busy' | 'hang' | 'progress-busy' | 'progress-hang' | 'late-progress';

  it('settles within deadlineMs of its last progress (or its start), with at most maxAttempts attempts since', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Step>('ok', 'busy', 'slow-busy', 'hang', 'progress-busy', 'progress-hang', 'late-progress'), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 3000 }),
        fc.boolean(),
        async (steps, maxAttempts, deadlineMs, withProgress) => {
          const start = Date.now();
          // Where the current run began: the call's start, or the last progress the engine could take.
          let runStart = start;
          let runBase = 0;
          let attempts = 0;
          let settledAt: number | undefined;
          const fn = (ctx: AttemptContext) => {
            attempts = ctx.attempt;
            // Past the script, plain failures: progress without end would keep a call going, as it should.
            const step = steps[ctx.attempt - 1] ?? 'busy';
            const progressing = withProgress && step.includes('progress');
            if (progressing) {
              setTimeout(
                () => {
                  // The running attempt's signal is not aborted; an ended one's is (or is read as such).
                  if (!ctx.signal.aborted) [runStart, runBase] = [Date.now(), ctx.attempt - 1];
                  ctx.progress();
                },
                step === 'late-progress' ? 70 : 5,
              );
            }
            if (step === 'ok') return Promise.resolve(ctx.attempt);
            if (step === 'busy') return Promise.reject(httpError(503));
            return step === 'slow-busy' || step === 'progress-busy' ? failAfter(10) : hang();
          };
          const settle = () => {
            settledAt = Date.now();
          };
          const p = track(
            retry(fn, { maxAttempts, deadlineMs, attemptTimeoutMs: 50, backoff: constant(20), onSuccess: settle, onGiveUp: settle }),
          );
          await clock.tickAsync(20_000);
          expect(p.state).not.toBe('pending');
          expect(settledAt).toBeDefined();
          expect((settledAt as number) - runStart).toBeLessThanOrEqual(deadlineMs);
          expect(attempts - runBase).toBeLessThanOrEqual(maxAttempts);
          if (!withProgress) {
            expect((settledAt as number) - start).toBeLessThanOrEqual(deadlineMs);
            expect(attempts).toBeLessThanOrEqual(maxAttempts);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
