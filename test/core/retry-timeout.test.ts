// attemptTimeoutMs and abandoned attempts: an attempt still running at its timeout fails with a
// TimeoutError (its signal aborted) and is judged like any failure; an attempt once ended, by its
// timeout or otherwise, has an aborted signal and a late outcome that nobody reads.
import { describe, expect, it } from 'vitest';
import { type AttemptContext, RetryError, type RetryEvent, TimeoutError, retry } from '../../src/index.js';
import { constant, hang, noJitter } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

describe('attempt timeout', () => {
  it('fails a slow attempt with TimeoutError, aborts its signal, and retries', async () => {
    const signals: AbortSignal[] = [];
    const events: RetryEvent[] = [];
    const p = track(
      retry(
        (ctx) => {
          signals.push(ctx.signal);
          return ctx.attempt === 1 ? new Promise<string>(() => {}) : Promise.resolve('second');
        },
        { attemptTimeoutMs: 1000, backoff: noJitter, onRetry: (e) => events.push(e) },
      ),
    );
    await clock.tickAsync(999);
    expect(signals[0]?.aborted).toBe(false);
    await clock.tickAsync(1);
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[0]?.reason).toBeInstanceOf(TimeoutError);
    expect(events).toHaveLength(1);
    expect(events[0]?.error).toBeInstanceOf(TimeoutError);
    expect(events[0]).toMatchObject({ attempt: 1, delayMs: 1000, elapsedMs: 1000 });
    await clock.tickAsync(1000);
    expect(p.value).toBe('second');
    expect(signals[1]?.aborted).toBe(false);
  });

  it('times out a later attempt measured from its own start', async () => {
    const starts: number[] = [];
    const p = track(
      retry(
        () => {
          starts.push(Date.now());
          return hang();
        },
        { attemptTimeoutMs: 500, maxAttempts: 2, backoff: noJitter },
      ),
    );
    await clock.tickAsync(2000);
    expect(starts).toEqual([0, 1500]);
    expect((p.error as RetryError).reason).toBe('attempts');
    expect((p.error as RetryError).cause).toBeInstanceOf(TimeoutError);
    expect((p.error as RetryError).elapsedMs).toBe(2000);
  });

  it('a timed-out non-idempotent attempt rejects with the TimeoutError itself, at the timeout', async () => {
    let calls = 0;
    const p = track(
      retry(
        () => {
          calls++;
          return hang();
        },
        { attemptTimeoutMs: 100, idempotent: false },
      ),
    );
    await clock.tickAsync(99);
    expect(p.state).toBe('pending');
    await clock.tickAsync(1);
    expect(p.error).toBeInstanceOf(TimeoutError);
    expect((p.error as TimeoutError).message).toBe('attempt 1 timed out after 100 ms');
    await clock.tickAsync(60_000);
    expect(calls).toBe(1);
  });

  it('names the limit in the TimeoutError: the attempt timeout, or the deadline', async () => {
    const errors: unknown[] = [];
    const p = track(
      retry(hang, { attemptTimeoutMs: 100, deadlineMs: 250, backoff: constant(10), onRetry: ({ error }) => errors.push(error) }),
    );
    await clock.tickAsync(250);
    expect((errors[0] as Error).message).toBe('attempt 1 timed out after 100 ms');
    expect(p.error).toBeInstanceOf(RetryError);
    expect(((p.error as RetryError).cause as Error).message).toBe('attempt 3 was still running at the deadline after 250 ms');
  });

  it("asks the predicate about a timed-out attempt with that attempt's context", async () => {
    const seen: Array<Pick<AttemptContext, 'attempt' | 'elapsedMs' | 'remainingMs'>> = [];
    const p = track(
      retry(hang, {
        attemptTimeoutMs: 100,
        deadlineMs: 1000,
        maxAttempts: 1,
        retryable: (_error, ctx) => {
          seen.push({ attempt: ctx?.attempt ?? -1, elapsedMs: ctx?.elapsedMs ?? -1, remainingMs: ctx?.remainingMs ?? -1 });
          return true;
        },
      }),
    );
    await clock.tickAsync(100);
    expect(p.state).toBe('rejected');
    expect(seen).toEqual([{ attempt: 1, elapsedMs: 100, remainingMs: 900 }]);
  });
});

describe('abandoned attempts', () => {
  it('ignores the value of an attempt that timed out, even while a later attempt runs', async () => {
    const finishes = [150, 200]; // attempt 1 runs 0–100 (then times out), attempt 2 runs 110–200
    const values = ['late first', 'second'];
    let n = 0;
    const fn = () => {
      const i = n++;
      return new Promise<string>((resolve) => setTimeout(() => resolve(values[i] as string), (finishes[i] as number) - Date.now()));
    };
    const p = track(retry(fn, { attemptTimeoutMs: 100, backoff: constant(10) }));
    await clock.tickAsync(199);
    expect(p.state).toBe('pending'); // attempt 1's value at 150 was not the answer
    await clock.tickAsync(1);
    expect(p.value).toBe('second');
  });

  it('ignores the error of an attempt that timed out, even while a later attempt runs', async () => {
    // Attempt 1 times out at 100 and fails late, at 150; attempt 2 runs from 110 to 190.
    let calls = 0;
    const fn = () =>
      ++calls === 1
        ? new Promise<string>((_, reject) => setTimeout(() => reject(httpError(503)), 150))
        : new Promise<string>((resolve) => setTimeout(() => resolve(`attempt ${calls}`), 80));
    const p = track(retry(fn, { attemptTimeoutMs: 100, backoff: constant(10) }));
    await clock.tickAsync(190);
    expect(p.value).toBe('attempt 2');
    expect(calls).toBe(2);
  });

  it('gives an ended attempt an aborted signal, read first after a later attempt began or after the call settled', async () => {
    const contexts: AttemptContext[] = [];
    let lateSignal: AbortSignal | undefined;
    const fn = (ctx: AttemptContext) => {
      contexts.push(ctx);
      if (ctx.attempt === 1) return Promise.reject(httpError(503));
      lateSignal = (contexts[0] as AttemptContext).signal; // attempt 1's, first read now
      return new Promise<string>((resolve) => setTimeout(() => resolve('ok'), 10));
    };
    const p = track(retry(fn, { backoff: constant(100) }));
    await clock.tickAsync(110);
    expect(p.value).toBe('ok');
    expect(lateSignal?.aborted).toBe(true);
    expect(lateSignal?.reason).toBeInstanceOf(TimeoutError);
    expect((lateSignal!.reason as Error).message).toBe('attempt 1 has ended');
    // Attempt 2's signal, first read now that the call has resolved.
    const settledSignal = (contexts[1] as AttemptContext).signal;
    expect(settledSignal.aborted).toBe(true);
    expect((settledSignal.reason as Error).message).toBe('attempt 2 has ended');
  });
});

describe('a growing attempt timeout ({ initialMs, multiplier, maxMs })', () => {
  it('gives attempt n min(initialMs · multiplier^(n−1), maxMs), names it in the TimeoutError, and lets the deadline cut the last', async () => {
    const starts: number[] = [];
    const errors: unknown[] = [];
    const p = track(
      retry(
        () => {
          starts.push(Date.now());
          return hang();
        },
        {
          attemptTimeoutMs: { initialMs: 100, multiplier: 2, maxMs: 300 },
          deadlineMs: 1300,
          backoff: constant(10),
          onRetry: ({ error }) => errors.push(error),
        },
      ),
    );
    await clock.tickAsync(1300);
    // 100, 200, 300, 300, 300 (capped), then the deadline at 1300 cuts the sixth (started at 1250).
    expect(starts).toEqual([0, 110, 320, 630, 940, 1250]);
    expect(errors.map((e) => (e as Error).message)).toEqual([
      'attempt 1 timed out after 100 ms',
      'attempt 2 timed out after 200 ms',
      'attempt 3 timed out after 300 ms',
      'attempt 4 timed out after 300 ms',
      'attempt 5 timed out after 300 ms',
    ]);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).cause).toBeInstanceOf(TimeoutError);
  });

  it('with maxMs Infinity grows without a cap of its own, and counts afresh from progress', async () => {
    const starts: number[] = [];
    const errors: unknown[] = [];
    const p = track(
      retry(
        (ctx) => {
          starts.push(Date.now());
          if (ctx.attempt === 3) ctx.progress();
          return hang();
        },
        {
          attemptTimeoutMs: { initialMs: 100, multiplier: 3, maxMs: Infinity },
          maxAttempts: 3,
          backoff: constant(10),
          onRetry: ({ error }) => errors.push(error),
        },
      ),
    );
    await clock.tickAsync(10_000);
    // 100, 300, then progress in attempt 3: it is the run's first (100), then 300, 900, and the
    // run's three attempts are made.
    expect(starts).toEqual([0, 110, 420, 530, 840]);
    // Each TimeoutError names the limit its attempt had: the run's, after progress.
    expect(errors.map((e) => (e as Error).message)).toEqual([
      'attempt 1 timed out after 100 ms',
      'attempt 2 timed out after 300 ms',
      'attempt 3 timed out after 100 ms',
      'attempt 4 timed out after 300 ms',
    ]);
    expect(((p.error as RetryError).cause as Error).message).toBe('attempt 5 timed out after 900 ms');
    expect((p.error as RetryError).reason).toBe('attempts');
    expect((p.error as RetryError).elapsedMs).toBe(1740);
  });

  it('lets a fast attempt succeed without any timer of the growth firing', async () => {
    const p = track(retry(async () => 'ok', { attemptTimeoutMs: { initialMs: 5, multiplier: 2, maxMs: 50 } }));
    await clock.tickAsync(0);
    expect(p.value).toBe('ok');
  });
});
