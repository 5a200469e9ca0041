// How a retry() call ends: with a value (at once, or after retries on the backoff schedule),
// with the error itself at once (not retryable, not idempotent, a predicate that throws), or
// with a RetryError once out of attempts.
import { describe, expect, it, vi } from 'vitest';
import { type AttemptContext, type AttemptMode, type GiveUpEvent, RetryError, TimeoutError, isRetryError, retry } from '../../src/index.js';
import { noJitter, script } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

// Every test must leave nothing behind in the library's shared timer queue (see useVirtualClock).
const clock = useVirtualClock();

describe('a value', () => {
  it('resolves with the value of a first success without sleeping or arming a timer', async () => {
    const fn = vi.fn(async () => 42);
    const p = retry(fn);
    expect(clock.countTimers()).toBe(0);
    await expect(p).resolves.toBe(42);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('retries transient errors with the backoff schedule, then resolves with the value', async () => {
    const { fn, calls } = script(httpError(503), httpError(500), new Error('ECONNRESET-ish'));
    const p = track(retry(fn, { backoff: noJitter }));
    await clock.tickAsync(10_000);
    expect(p).toMatchObject({ state: 'resolved', value: 'ok' });
    expect(calls).toEqual([0, 1000, 3000, 7000]);
  });

  it('uses the injected rng for jitter', async () => {
    const { fn, calls } = script(httpError(503), httpError(503));
    const p = track(retry(fn, { backoff: { ...noJitter, jitter: 'full' }, rng: () => 0.25 }));
    await clock.tickAsync(1000);
    expect(p.state).toBe('resolved');
    expect(calls).toEqual([0, 250, 750]);
  });

  it('counts a synchronous throw as a failed attempt', async () => {
    let n = 0;
    const p = track(
      retry(
        () => {
          n++;
          if (n === 1) throw new Error('sync failure');
          return 'second';
        },
        { backoff: noJitter },
      ),
    );
    await clock.tickAsync(1000);
    expect(p.state).toBe('resolved');
    expect(p.value).toBe('second');
    expect(n).toBe(2);
  });
});

describe('the error itself, at once', () => {
  it('rejects a non-retryable error unchanged and at once, and never calls fn again', async () => {
    const forbidden = httpError(403);
    const { fn } = script(forbidden);
    const p = track(retry(fn));
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect(p.error).toBe(forbidden);
    await clock.tickAsync(60_000); // a retry, had there been one, would have come by now
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('surfaces an exception thrown by the retryable predicate: one attempt, reason "not-retryable"', async () => {
    const bug = new Error('predicate bug');
    const { fn } = script(httpError(503));
    const reasons: string[] = [];
    const p = track(
      retry(fn, {
        retryable: () => {
          throw bug;
        },
        onGiveUp: ({ reason }) => void reasons.push(reason),
      }),
    );
    await clock.tickAsync(0);
    expect(p.error).toBe(bug);
    expect(reasons).toEqual(['not-retryable']);
    await clock.tickAsync(60_000);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('never retries a non-idempotent operation, even on a transient error', async () => {
    const unavailable = httpError(503);
    const { fn } = script(unavailable);
    const p = track(retry(fn, { idempotent: false }));
    await clock.tickAsync(0);
    expect(p.error).toBe(unavailable);
    await clock.tickAsync(60_000);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('asks an idempotency function with the attempt context', async () => {
    const idempotent = vi.fn((_error: unknown, ctx: AttemptContext) => ctx.attempt < 2);
    const last = httpError(503);
    const { fn } = script(httpError(503), last);
    const p = track(retry(fn, { idempotent, backoff: noJitter }));
    await clock.tickAsync(5000);
    expect(p.error).toBe(last);
    expect(idempotent.mock.calls.map(([, ctx]) => ctx.attempt)).toEqual([1, 2]);
  });

  it('idempotent(error, ctx) sees the error it is judging, for transient errors only, and decides per failure', async () => {
    const conflict = httpError(503, { sentToServer: false });
    const applied = httpError(503, { sentToServer: true });
    const forbidden = httpError(403);
    const judged: Array<[number, unknown]> = [];
    const { fn } = script(conflict, applied);
    const p = track(
      retry(fn, {
        backoff: noJitter,
        idempotent: (error, ctx) => {
          judged.push([ctx.attempt, error]);
          return (error as { sentToServer?: boolean }).sentToServer === false;
        },
      }),
    );
    await clock.tickAsync(1000);
    expect(p).toMatchObject({ state: 'rejected', error: applied });
    expect(judged).toEqual([
      [1, conflict],
      [2, applied],
    ]);
    const never = vi.fn(() => true);
    await expect(retry(script(forbidden).fn, { idempotent: never })).rejects.toBe(forbidden);
    expect(never).not.toHaveBeenCalled();
  });
});

describe('out of attempts: a RetryError', () => {
  it('gives up with RetryError "attempts" carrying the last error', async () => {
    const last = httpError(502);
    const { fn } = script(httpError(503), httpError(503), last);
    const p = track(retry(fn, { maxAttempts: 3, backoff: noJitter }));
    await clock.tickAsync(10_000);
    expect(p.error).toBeInstanceOf(RetryError);
    const error = p.error as RetryError;
    expect(error.reason).toBe('attempts');
    expect(error.attempts).toBe(3);
    expect(error.cause).toBe(last);
    expect(error.elapsedMs).toBe(3000);
    expect(error.message).toMatch(/gave up after 3 attempts in 3000 ms \(out of attempts\): HTTP 502/);
    expect(fn).toHaveBeenCalledTimes(3);
  });

  it('maxAttempts: 1 makes one attempt and gives up at once, the error as the cause', async () => {
    const busy = httpError(503);
    const { fn } = script(busy);
    const p = track(retry(fn, { maxAttempts: 1 }));
    await clock.tickAsync(0);
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 1, elapsedMs: 0, cause: busy });
    await clock.tickAsync(60_000);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('RetryError.elapsedMs is a whole number of milliseconds', () => {
    const error = new RetryError('deadline', 2, 1234.5678, new Error('x'));
    expect(error.elapsedMs).toBe(1235);
    expect(error.message).toContain('in 1235 ms');
  });

  it('a RetryError whose cause has a throwing message getter still settles the call', async () => {
    const hostile = new Error('hostile');
    Object.defineProperty(hostile, 'message', {
      get() {
        throw new Error('message getter');
      },
    });
    const p = track(retry(() => Promise.reject(hostile), { retryable: () => true, deadlineMs: 500, backoff: noJitter }));
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect(p.error).toBeInstanceOf(RetryError);
    expect((p.error as RetryError).cause).toBe(hostile);
  });

  it('isRetryError is true for what retry() gives up with, false for anything else, and never throws', async () => {
    const events: GiveUpEvent[] = [];
    const p = track(retry(() => Promise.reject(httpError(503)), { maxAttempts: 1, onGiveUp: (e) => void events.push(e) }));
    await clock.tickAsync(0);
    expect(isRetryError(p.error)).toBe(true);
    expect(events[0]?.error).toBe(p.error);
    expect(isRetryError(new TimeoutError('slow'))).toBe(false);
    expect(isRetryError(Object.assign(new Error('look-alike'), { name: 'RetryError' }))).toBe(false);
    expect(isRetryError(null)).toBe(false);
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        getPrototypeOf() {
          return null;
        },
      },
    );
    expect(isRetryError(hostile)).toBe(false);
  });
});

describe('an attempt made by a mode, through its host', () => {
  it('gives the mode the call’s throttle and budget', async () => {
    const throttle = { admit: () => true, record() {}, error: () => new Error('never') };
    const budget = { record() {}, canRetry: () => true };
    const seen: unknown[] = [];
    const hedge: AttemptMode = {
      run: (fn, ctx, host) => {
        seen.push(host.throttle, host.budget);
        return Promise.resolve(fn(ctx));
      },
    };
    expect(await retry(() => 'ok', { hedge, throttle, budget })).toBe('ok');
    expect(seen).toEqual([throttle, budget]);
  });

  it('asks the retry policy about an attempt that failed with undefined when the mode did not ask', async () => {
    const retryable = vi.fn(() => true);
    let attempts = 0;
    const hedge: AttemptMode = {
      run: (fn, ctx) => (++attempts === 1 ? Promise.reject(undefined) : Promise.resolve(fn(ctx))),
    };
    const p = track(retry(() => 'ok', { hedge, retryable, backoff: noJitter }));
    await clock.runAllAsync();
    expect(p).toMatchObject({ state: 'resolved', value: 'ok' });
    expect(retryable).toHaveBeenCalledTimes(1);
    expect(retryable).toHaveBeenCalledWith(undefined, expect.objectContaining({ attempt: 1 }));
  });
});
