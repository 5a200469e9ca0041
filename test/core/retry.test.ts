import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import {
  type AttemptContext,
  httpStatus,
  retry,
  RetryError,
  type RetryEvent,
  type RetryOptions,
  TimeoutError,
  isRetryError,
} from '../../src/index.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

// Every test must leave nothing behind in the library's shared timer queue (see useVirtualClock).
const clock = useVirtualClock();

const noJitter = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: 'none' } as const;

/** fn that fails with the given errors in order, then returns 'ok'; records call times. */
function script(...failures: unknown[]) {
  const calls: number[] = [];
  const fn = vi.fn(async (_ctx: AttemptContext) => {
    calls.push(Date.now());
    const next = failures.shift();
    if (next !== undefined) throw next;
    return 'ok';
  });
  return { fn, calls };
}

describe('retry(): outcomes', () => {
  it('resolves with the value of a first success without sleeping or arming a timer', async () => {
    const fn = vi.fn(async () => 42);
    const p = retry(fn);
    expect(clock.countTimers()).toBe(0);
    await expect(p).resolves.toBe(42);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('rejects with a TypeError naming the option when a predicate is async, and sends nothing again', async () => {
    const fn = vi.fn(async () => {
      throw httpError(503);
    });
    const reasons: string[] = [];
    const p = retry(fn, { retryable: (async () => false) as never, onGiveUp: ({ reason }) => void reasons.push(reason) });
    await expect(p).rejects.toThrow(new TypeError('retry: options.retryable must return a boolean, got a promise'));
    expect(fn).toHaveBeenCalledTimes(1);
    expect(reasons).toEqual(['not-retryable']);
    expect(clock.countTimers()).toBe(0);
  });

  it('accepts synchronous values and non-Promise thenables', async () => {
    await expect(retry(() => 'sync')).resolves.toBe('sync');
    const thenable = { then: (resolve: (v: string) => void) => resolve('thenable') };
    await expect(retry(() => thenable as PromiseLike<string>)).resolves.toBe('thenable');
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

  it('retries transient errors with the backoff schedule, then resolves', async () => {
    const { fn, calls } = script(httpError(503), httpError(500), new Error('ECONNRESET-ish'));
    const p = track(retry(fn, { backoff: noJitter }));
    await clock.tickAsync(10_000);
    expect(p.state).toBe('resolved');
    expect(calls).toEqual([0, 1000, 3000, 7000]);
  });

  it('rejects a non-retryable error unchanged and at once', async () => {
    const forbidden = httpError(403);
    const { fn } = script(forbidden);
    const p = track(retry(fn));
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect(p.error).toBe(forbidden);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('never retries a non-idempotent operation, even on a transient error', async () => {
    const unavailable = httpError(503);
    const { fn } = script(unavailable);
    const p = track(retry(fn, { idempotent: false }));
    await clock.tickAsync(0);
    expect(p.error).toBe(unavailable);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('asks an idempotency function with the attempt context', async () => {
    const idempotent = vi.fn((ctx: AttemptContext) => ctx.attempt < 2);
    const last = httpError(503);
    const { fn } = script(httpError(503), last);
    const p = track(retry(fn, { idempotent, backoff: noJitter }));
    await clock.tickAsync(5000);
    expect(p.error).toBe(last);
    expect(idempotent.mock.calls.map(([ctx]) => ctx.attempt)).toEqual([1, 2]);
  });

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

  it('maxAttempts: 1 makes one attempt', async () => {
    const { fn } = script(httpError(503));
    const p = track(retry(fn, { maxAttempts: 1 }));
    await clock.tickAsync(0);
    expect((p.error as RetryError).reason).toBe('attempts');
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('uses the injected rng for jitter', async () => {
    const { fn, calls } = script(httpError(503), httpError(503));
    const p = track(retry(fn, { backoff: { ...noJitter, jitter: 'full' }, rng: () => 0.25 }));
    await clock.tickAsync(1000);
    expect(p.state).toBe('resolved');
    expect(calls).toEqual([0, 250, 750]);
  });

  it('surfaces an exception thrown by the retryable predicate', async () => {
    const bug = new Error('predicate bug');
    const p = track(
      retry(script(httpError(503)).fn, {
        retryable: () => {
          throw bug;
        },
      }),
    );
    await clock.tickAsync(0);
    expect(p.error).toBe(bug);
  });
});

describe('retry(): the deadline is a promise', () => {
  it('gives up at once when the next delay would end past the deadline', async () => {
    const { fn, calls } = script(...Array.from({ length: 10 }, () => httpError(503)));
    const p = track(retry(fn, { deadlineMs: 10_000, backoff: noJitter }));
    await clock.tickAsync(7000);
    // Attempts at 0, 1 s, 3 s, 7 s; the next would start at 15 s, past the 10 s deadline.
    expect(calls).toEqual([0, 1000, 3000, 7000]);
    expect(p.state).toBe('rejected');
    const error = p.error as RetryError;
    expect(error.reason).toBe('deadline');
    expect(error.elapsedMs).toBe(7000);
    expect(error.attempts).toBe(4);
  });

  it('abandons a hung first attempt exactly at the deadline and aborts its signal', async () => {
    let signal: AbortSignal | undefined;
    const p = track(
      retry(
        (ctx) => {
          signal = ctx.signal;
          return new Promise<never>(() => {});
        },
        { deadlineMs: 5000 },
      ),
    );
    await clock.tickAsync(4999);
    expect(p.state).toBe('pending');
    expect(signal?.aborted).toBe(false);
    await clock.tickAsync(1);
    expect(p.state).toBe('rejected');
    const error = p.error as RetryError;
    expect(error.reason).toBe('deadline');
    expect(error.elapsedMs).toBe(5000);
    expect(error.cause).toBeInstanceOf(TimeoutError);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBe(error.cause);
  });

  it('abandons a hung later attempt at the deadline and swallows its late outcome', async () => {
    let rejectLate: ((e: Error) => void) | undefined;
    let calls = 0;
    const first = httpError(503);
    const p = track(
      retry(
        () => {
          calls++;
          if (calls === 1) return Promise.reject(first);
          return new Promise<never>((_resolve, reject) => {
            rejectLate = reject;
          });
        },
        { deadlineMs: 3000, backoff: noJitter },
      ),
    );
    await clock.tickAsync(3000);
    const error = p.error as RetryError;
    expect(error.reason).toBe('deadline');
    expect(error.elapsedMs).toBe(3000);
    // The abandoned attempt's timeout remembers what failed before it.
    expect((error.cause as TimeoutError).cause).toBe(first);
    // A late rejection of the abandoned attempt is nobody's unhandled rejection.
    rejectLate?.(new Error('late'));
    await clock.tickAsync(10_000);
    expect(calls).toBe(2);
  });

  it('gives up at once when a Retry-After hint passes the deadline', async () => {
    const busy = httpError(503, { response: { status: 503, headers: { 'retry-after': '30' } } });
    const { fn } = script(busy);
    const p = track(retry(fn, { deadlineMs: 10_000 }));
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).cause).toBe(busy);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('regression (fuzz): a zero delay counts as one timer turn against the deadline', async () => {
    const first = httpError(503);
    let calls = 0;
    const events: RetryEvent[] = [];
    const p = track(
      retry(
        () => {
          calls++;
          return calls === 1 ? new Promise((_, reject) => setTimeout(() => reject(first), 197)) : Promise.resolve('late');
        },
        { deadlineMs: 198, backoff: { ...noJitter, initialDelayMs: 0, maxDelayMs: 0 }, onRetry: (e) => events.push(e) },
      ),
    );
    await clock.tickAsync(300);
    // The retry could only start at 198 ms, the deadline: give up at 197 ms, with no onRetry.
    expect(calls).toBe(1);
    expect(events).toHaveLength(0);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).elapsedMs).toBe(197);
  });

  it('regression (fuzz): a fractional delay counts as the whole milliseconds its timer waits', async () => {
    const events: RetryEvent[] = [];
    let calls = 0;
    const p = track(
      retry(
        () => {
          calls++;
          return new Promise((_, reject) => setTimeout(() => reject(httpError(503)), 2));
        },
        {
          deadlineMs: 4,
          // Equal jitter with a draw of 0: half of 3 ms, 1.5 ms, which the timer waits as 2.
          backoff: { initialDelayMs: 3, multiplier: 1, maxDelayMs: 3, jitter: 'equal' },
          rng: () => 0,
          onRetry: (e) => events.push(e),
        },
      ),
    );
    await clock.tickAsync(10);
    // Failed at 2 ms; the retry could start only at 4 ms, the deadline: give up at 2 ms, with no onRetry.
    expect(calls).toBe(1);
    expect(events).toHaveLength(0);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).elapsedMs).toBe(2);
  });

  it('regression (fuzz): a sleep whose timer fires late, past the deadline, gives up instead of starting an attempt', async () => {
    const first = httpError(503);
    let calls = 0;
    const p = track(
      retry(
        () => {
          calls++;
          return calls === 1 ? Promise.reject(first) : Promise.resolve('too late');
        },
        { deadlineMs: 1500, backoff: noJitter },
      ),
    );
    await clock.tickAsync(0);
    // A busy event loop: the 1000 ms sleep's timer only runs at 1600 ms.
    clock.jump(1600);
    await clock.tickAsync(0);
    expect(calls).toBe(1);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).cause).toBe(first);
    expect((p.error as RetryError).elapsedMs).toBe(1600);
  });

  it('a hung attempt with neither timeout nor deadline left open arms no timer of its own', async () => {
    let finish: ((v: string) => void) | undefined;
    const p = track(
      retry(() => new Promise<string>((resolve) => (finish = resolve)), { deadlineMs: Number.POSITIVE_INFINITY, maxAttempts: 3 }),
    );
    await clock.tickAsync(60_000);
    expect(clock.countTimers()).toBe(0);
    finish?.('done');
    await clock.tickAsync(0);
    expect(p.value).toBe('done');
  });
});

describe('retry(): attempt timeout', () => {
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
          return new Promise<never>(() => {});
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

  it('regression (fuzz): a stale Retry-After from an earlier attempt does not lengthen the wait after a timeout', async () => {
    const busy = httpError(503, { response: { status: 503, headers: { 'retry-after': '1' } } });
    const events: RetryEvent[] = [];
    let calls = 0;
    const p = track(
      retry(
        () => {
          calls++;
          if (calls === 1) return Promise.reject(busy);
          if (calls === 2) return new Promise<never>(() => {});
          return Promise.resolve('third');
        },
        { attemptTimeoutMs: 10, backoff: { ...noJitter, initialDelayMs: 0, maxDelayMs: 0 }, onRetry: (e) => events.push(e) },
      ),
    );
    await clock.tickAsync(1100);
    expect(p.value).toBe('third');
    expect(events.map((e) => e.delayMs)).toEqual([1000, 0]);
  });

  it('a timed-out non-idempotent attempt rejects with the TimeoutError itself', async () => {
    const p = track(retry(() => new Promise<never>(() => {}), { attemptTimeoutMs: 100, idempotent: false }));
    await clock.tickAsync(100);
    expect(p.error).toBeInstanceOf(TimeoutError);
  });
});

describe('retry(): the caller’s AbortSignal', () => {
  it('rejects at once with signal.reason during an attempt and aborts the attempt signal', async () => {
    const controller = new AbortController();
    let attemptSignal: AbortSignal | undefined;
    const p = track(
      retry(
        (ctx) => {
          attemptSignal = ctx.signal;
          return new Promise<never>(() => {});
        },
        { signal: controller.signal },
      ),
    );
    await clock.tickAsync(100);
    const reason = new Error('user cancelled');
    controller.abort(reason);
    await clock.tickAsync(0);
    expect(p.error).toBe(reason);
    expect(attemptSignal?.aborted).toBe(true);
    expect(attemptSignal?.reason).toBe(reason);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects at once during a sleep, clearing the timer, and calls fn no more', async () => {
    const controller = new AbortController();
    const { fn } = script(httpError(503), httpError(503));
    const p = track(retry(fn, { signal: controller.signal, backoff: noJitter }));
    await clock.tickAsync(500);
    expect(clock.countTimers()).toBe(1);
    controller.abort();
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect((p.error as DOMException).name).toBe('AbortError');
    expect(clock.countTimers()).toBe(0);
    await clock.tickAsync(10_000);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('rejects without calling fn when the signal is already aborted', async () => {
    const fn = vi.fn(async () => 1);
    const reason = new Error('already');
    await expect(retry(fn, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(fn).not.toHaveBeenCalled();
  });

  it('an abort raised from onRetry stops the loop before the sleep', async () => {
    const controller = new AbortController();
    const { fn } = script(httpError(503));
    const p = track(retry(fn, { signal: controller.signal, onRetry: () => controller.abort('stop') }));
    await clock.tickAsync(0);
    expect(p.error).toBe('stop');
    expect(fn).toHaveBeenCalledTimes(1);
  });

  // Found by reading a surviving mutant (an unreachable-looking guard in the timer callback).
  describe('regression (mutation): an abort raised by fn itself settles the call with signal.reason', () => {
    const outcomes = {
      'throws a transient error': () => {
        throw httpError(503);
      },
      'returns a value': () => 'late value',
      'returns a pending promise': () => new Promise<string>(() => {}),
    };
    for (const [what, after] of Object.entries(outcomes)) {
      for (const attempt of [1, 2]) {
        it(`on attempt ${attempt}, when fn then ${what}`, async () => {
          const controller = new AbortController();
          const retryable = vi.fn(() => true);
          const onRetry = vi.fn();
          const fn = vi.fn((ctx: AttemptContext) => {
            if (ctx.attempt < attempt) throw httpError(503);
            controller.abort('stop');
            return after();
          });
          const p = track(retry(fn, { signal: controller.signal, retryable, onRetry, backoff: noJitter, attemptTimeoutMs: 5000 }));
          await clock.tickAsync(attempt === 1 ? 0 : 1000);
          expect(p.state).toBe('rejected');
          expect(p.error).toBe('stop');
          // Nothing of the call is left running: no timer, no more judging, no more attempts.
          expect(clock.countTimers()).toBe(0);
          expect(retryable).toHaveBeenCalledTimes(attempt - 1);
          expect(onRetry).toHaveBeenCalledTimes(attempt - 1);
          await clock.tickAsync(60_000);
          expect(fn).toHaveBeenCalledTimes(attempt);
        });
      }
    }
  });

  it('many concurrent calls on one signal share one listener: no MaxListenersExceededWarning, all rejected at once', async () => {
    const controller = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const calls = Array.from({ length: 50 }, () => track(retry(() => new Promise<never>(() => {}), { signal: controller.signal })));
      await clock.tickAsync(10);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
      controller.abort('shutdown');
      await clock.tickAsync(0);
      expect(calls.every((c) => c.state === 'rejected' && c.error === 'shutdown')).toBe(true);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      // Node reports the warning on the next turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      controller.abort('cleanup'); // settles every call even when an assertion above failed
      await clock.tickAsync(0);
    }
  });

  it('leaves no listener on a signal reused for 10,000 calls', async () => {
    const controller = new AbortController();
    for (let i = 0; i < 10_000; i++) {
      await retry(async () => i, { signal: controller.signal });
    }
    const { fn } = script(httpError(503), httpError(503));
    const failing = track(retry(fn, { signal: controller.signal, backoff: noJitter }));
    await clock.tickAsync(3000);
    expect(failing.state).toBe('resolved');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('retry(): server hints', () => {
  it('Retry-After in seconds lengthens the delay', async () => {
    const { fn, calls } = script(httpError(429, { response: { status: 429, headers: new Headers({ 'Retry-After': '5' }) } }));
    const p = track(retry(fn, { backoff: noJitter }));
    await clock.tickAsync(5000);
    expect(calls).toEqual([0, 5000]);
    expect(p.state).toBe('resolved');
  });

  it('Retry-After as an HTTP-date lengthens the delay', async () => {
    const date = new Date(7000).toUTCString();
    const { fn, calls } = script(httpError(503, { response: { status: 503, headers: { 'retry-after': date } } }));
    const p = track(retry(fn, { backoff: noJitter }));
    await clock.tickAsync(7000);
    expect(calls).toEqual([0, 7000]);
    expect(p.state).toBe('resolved');
  });

  it('a hint never shortens the delay', async () => {
    const { fn, calls } = script(httpError(503, { response: { status: 503, headers: { 'retry-after': '0' } } }));
    const events: RetryEvent[] = [];
    const p = track(retry(fn, { backoff: noJitter, onRetry: (e) => events.push(e) }));
    await clock.tickAsync(1000);
    expect(calls).toEqual([0, 1000]);
    expect(events[0]?.delayMs).toBe(1000);
    expect(p.state).toBe('resolved');
  });

  it('gRPC pushback lengthens the delay', async () => {
    const metadata = { get: () => ['2500'] };
    const { fn, calls } = script(Object.assign(new Error('unavailable'), { code: 14, metadata }));
    const p = track(retry(fn, { backoff: noJitter }));
    await clock.tickAsync(2500);
    expect(calls).toEqual([0, 2500]);
    expect(p.state).toBe('resolved');
  });
});

describe('retry(): onRetry and the attempt context', () => {
  it('reports each retry before its sleep and ignores a throwing hook', async () => {
    const events: RetryEvent[] = [];
    const e1 = httpError(503);
    const e2 = httpError(504);
    const { fn } = script(e1, e2);
    const p = track(
      retry(fn, {
        backoff: noJitter,
        onRetry: (event) => {
          events.push(event);
          throw new Error('hook bug');
        },
      }),
    );
    await clock.tickAsync(3000);
    expect(p.value).toBe('ok');
    expect(events).toEqual([
      { attempt: 1, error: e1, delayMs: 1000, elapsedMs: 0 },
      { attempt: 2, error: e2, delayMs: 2000, elapsedMs: 1000 },
    ]);
  });

  it('gives fn its attempt number, elapsed and remaining time', async () => {
    const seen: Array<Pick<AttemptContext, 'attempt' | 'elapsedMs' | 'remainingMs'>> = [];
    const { fn } = script(httpError(503), httpError(503));
    const p = track(
      retry(
        (ctx) => {
          seen.push({ attempt: ctx.attempt, elapsedMs: ctx.elapsedMs, remainingMs: ctx.remainingMs });
          return fn(ctx);
        },
        { backoff: noJitter, deadlineMs: 60_000 },
      ),
    );
    await clock.tickAsync(3000);
    expect(p.state).toBe('resolved');
    expect(seen).toEqual([
      { attempt: 1, elapsedMs: 0, remainingMs: 60_000 },
      { attempt: 2, elapsedMs: 1000, remainingMs: 59_000 },
      { attempt: 3, elapsedMs: 3000, remainingMs: 57_000 },
    ]);
  });

  it('a signal read after its attempt ended is already aborted', async () => {
    let ctx1: AttemptContext | undefined;
    const p = track(
      retry((ctx) => {
        ctx1 = ctx;
        return 'done';
      }),
    );
    await clock.tickAsync(0);
    expect(p.value).toBe('done');
    expect(ctx1?.signal.aborted).toBe(true);
  });

  it('runs many concurrent calls on one shared timer', async () => {
    const results = Array.from({ length: 100 }, (_, i) => {
      const { fn } = script(httpError(503));
      return track(retry(fn, { backoff: { ...noJitter, initialDelayMs: 100 + i, maxDelayMs: 1000 } }));
    });
    await clock.tickAsync(0);
    expect(clock.countTimers()).toBe(1);
    await clock.tickAsync(199);
    expect(results.every((r) => r.state === 'resolved')).toBe(true);
  });
});

describe('retry(): regressions of issue 12 (no call can take another down; the deadline counts from the call)', () => {
  it('defect 1: a promise fn returns after aborting the caller’s signal is still listened to (no unhandled rejection)', async () => {
    for (const attempt of [1, 2]) {
      const controller = new AbortController();
      let n = 0;
      const p = track(
        retry(
          async () => {
            if (++n < attempt) throw httpError(503);
            // "Cancel the siblings, then fail", in one synchronous step.
            controller.abort(new Error('siblings cancelled'));
            throw new Error('and this one failed too');
          },
          { signal: controller.signal, backoff: noJitter },
        ),
      );
      await clock.tickAsync(1000);
      expect(p.state).toBe('rejected');
      expect((p.error as Error).message).toBe('siblings cancelled');
    }
  });

  it('defect 2: the deadline counts from the call, fn’s synchronous part included', async () => {
    const p = track(
      retry(
        () => {
          clock.tick(300); // 300 ms of synchronous work, then it hangs
          return new Promise<never>(() => {});
        },
        { deadlineMs: 100 },
      ),
    );
    // Settles on the first timer turn after the work, not 100 ms after it (before: at 400).
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect(p.error).toBeInstanceOf(RetryError);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect((p.error as RetryError).elapsedMs).toBe(300);
  });

  it('defect 2: the deadline counts from the call, the caller’s own synchronous code after it included', async () => {
    const p = track(retry(() => new Promise<never>(() => {}), { deadlineMs: 100 }));
    clock.tick(60); // the caller keeps the thread 60 ms before the first microtask
    await clock.tickAsync(40);
    expect(p.state).toBe('rejected');
    expect((p.error as RetryError).elapsedMs).toBe(100);
  });

  it('issue 13: RetryError.elapsedMs is a whole number of milliseconds', () => {
    const error = new RetryError('deadline', 2, 1234.5678, new Error('x'));
    expect(error.elapsedMs).toBe(1235);
    expect(error.message).toContain('in 1235 ms');
  });

  it('defect 4: a RetryError whose cause has a throwing message getter still settles the call', async () => {
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

  it('defect 4: a Promise subclass whose then calls back at once neither queues the call twice nor runs fn after it settled', async () => {
    class SyncPromise<T> extends Promise<T> {
      constructor(private readonly value: T) {
        super(() => {});
      }
      override then<A = T, B = never>(onValue?: ((value: T) => A | PromiseLike<A>) | null): Promise<A | B> {
        onValue?.(this.value);
        return Promise.resolve() as Promise<A | B>;
      }
    }
    let calls = 0;
    const p = track(retry(() => (++calls === 1 ? Promise.reject(httpError(503)) : new SyncPromise('sync')), { backoff: noJitter }));
    await clock.tickAsync(1000);
    expect(p.value).toBe('sync');
    await clock.tickAsync(200_000); // past the deadline that was once left queued
    expect(calls).toBe(2);
  });

  it('defect 4: a Promise subclass or Proxy whose then throws fails that attempt with the thrown error', async () => {
    const forbidden = httpError(403);
    class Throwing<T> extends Promise<T> {
      override then(): never {
        throw forbidden;
      }
    }
    const proxied = new Proxy(Promise.resolve('x'), {
      get(target, key) {
        if (key === 'then') throw forbidden;
        return Reflect.get(target, key);
      },
    });
    for (const make of [() => new Throwing<string>(() => {}), () => proxied]) {
      let calls = 0;
      const p = track(retry(() => (++calls === 1 ? Promise.reject(httpError(503)) : make()), { backoff: noJitter }));
      await clock.tickAsync(1000); // attempt 2 runs from the shared timer
      expect(p.state).toBe('rejected');
      expect(p.error).toBe(forbidden);
    }
  });

  it('defect 5: budget.record(true) or throttle.record(true) throwing on the async success path rejects with that error', async () => {
    const broken = new Error('metrics sink down');
    const budget = {
      record: (success: boolean) => {
        if (success) throw broken;
      },
      canRetry: () => true,
    };
    const throttle = { admit: () => true, record: budget.record, error: () => new Error('never') };
    for (const options of [{ budget }, { throttle }]) {
      // Settles after the adoption microtask: the returned promise's settle functions are in use.
      const later = track(retry(() => new Promise<string>((resolve) => setTimeout(resolve, 10, 'late')), options));
      const atOnce = track(retry(async () => 'now', options));
      await clock.tickAsync(10);
      expect(later.state).toBe('rejected');
      expect(later.error).toBe(broken);
      expect(atOnce.error).toBe(broken);
    }
  });

  it('defect 8: an async onRetry that rejects changes nothing (no unhandled rejection)', async () => {
    const { fn } = script(httpError(503));
    let hooks = 0;
    // A plain async function: vi.fn would itself listen to the promise it returns.
    const onRetry = async (): Promise<void> => {
      hooks++;
      throw new Error('log sink down');
    };
    const p = track(retry(fn, { backoff: noJitter, onRetry }));
    await clock.tickAsync(1000);
    expect(p.value).toBe('ok');
    expect(hooks).toBe(1);
  });

  it('defect 11: a signal-like object that dispatches without currentTarget still aborts the call', async () => {
    const listeners = new Set<() => void>();
    const signal = {
      aborted: false,
      reason: new Error('custom abort'),
      addEventListener: (_type: string, listener: () => void) => listeners.add(listener),
      removeEventListener: (_type: string, listener: () => void) => listeners.delete(listener),
    };
    const p = track(retry(() => new Promise<never>(() => {}), { signal: signal as unknown as AbortSignal }));
    await clock.tickAsync(0);
    signal.aborted = true;
    for (const listener of [...listeners]) listener();
    await clock.tickAsync(0);
    expect(p.error).toBe(signal.reason);
    expect(listeners.size).toBe(0);
  });
});

const constant = (ms: number) => ({ initialDelayMs: ms, multiplier: 1, maxDelayMs: ms, jitter: 'none' }) as const;

describe('what fn returns', () => {
  it("a value that is not a promise settles with one clock read (the call's) and no timer, whatever its type", async () => {
    const nowSpy = vi.spyOn(globalThis.performance, 'now');
    const timerSpy = vi.spyOn(globalThis, 'setTimeout');
    try {
      const plain = { a: 1 };
      const fnValue = (): number => 1;
      expect(await retry(() => 42)).toBe(42);
      expect(await retry(() => plain)).toBe(plain);
      expect(await retry(() => null)).toBeNull();
      expect(await retry(() => fnValue)).toBe(fnValue);
      expect(await retry(() => ({ then: 'not a function' }))).toEqual({ then: 'not a function' });
      expect(nowSpy).toHaveBeenCalledTimes(5);
      expect(timerSpy).not.toHaveBeenCalled();
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('a promise is subscribed to at once, with its own then: a lazy promise starts its work inside retry()', async () => {
    const calls: string[] = [];
    class Lazy<T> extends Promise<T> {
      override then<A = T, B = never>(
        onValue?: ((value: T) => A | PromiseLike<A>) | null,
        onError?: ((reason: unknown) => B | PromiseLike<B>) | null,
      ): Promise<A | B> {
        calls.push('then');
        return super.then(onValue, onError);
      }
    }
    const p = retry(() => Lazy.resolve('lazy') as Promise<string>);
    expect(calls).toEqual(['then']);
    await expect(p).resolves.toBe('lazy');
  });

  it('a thenable that rejects (object or function) is a failed attempt, and retried', async () => {
    let calls = 0;
    const objectThenable = (): PromiseLike<string> =>
      ({
        then: (resolve, reject) => (++calls === 1 ? reject?.(httpError(503)) : resolve?.('object')),
      }) as PromiseLike<string>;
    const p = track(retry(objectThenable, { backoff: constant(100) }));
    await clock.tickAsync(100);
    expect(p.value).toBe('object');
    expect(calls).toBe(2);

    let fnCalls = 0;
    const functionThenable = (): PromiseLike<string> =>
      Object.assign(() => undefined, {
        then: (resolve: (v: string) => void, reject: (e: unknown) => void) =>
          ++fnCalls === 1 ? reject(httpError(503)) : resolve('function'),
      }) as unknown as PromiseLike<string>;
    const q = track(retry(functionThenable, { backoff: constant(100) }));
    await clock.tickAsync(100);
    expect(q.value).toBe('function');
    expect(fnCalls).toBe(2);
  });

  it('a thenable that calls back synchronously, on a later attempt too, is adopted like a promise', async () => {
    const starts: number[] = [];
    const failsAtOnce = (): PromiseLike<never> => {
      starts.push(Date.now());
      return { then: (_resolve, reject) => reject?.(httpError(503)) } as PromiseLike<never>;
    };
    const p = track(retry(failsAtOnce, { backoff: constant(100), maxAttempts: 3 }));
    await clock.tickAsync(1000);
    expect(p.state).toBe('rejected');
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect(starts).toEqual([0, 100, 200]);
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
    await clock.tickAsync(200);
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

  it('gives an ended attempt an aborted signal, read first after a later attempt began', async () => {
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
    expect(contexts[1]?.signal.aborted).toBe(true);
  });
});

describe('timeouts and the deadline', () => {
  it('names the limit in the TimeoutError: the attempt timeout, or the deadline', async () => {
    const errors: unknown[] = [];
    const hang = () => new Promise<never>(() => {});
    const p = track(
      retry(hang, { attemptTimeoutMs: 100, deadlineMs: 250, backoff: constant(10), onRetry: ({ error }) => errors.push(error) }),
    );
    await clock.tickAsync(250);
    expect((errors[0] as Error).message).toBe('attempt 1 timed out after 100 ms');
    expect(p.error).toBeInstanceOf(RetryError);
    expect(((p.error as RetryError).cause as Error).message).toBe('attempt 3 was still running at the deadline after 250 ms');
  });

  it('gives up at the deadline with RetryError, whatever the predicate says of timeouts, and asks it nothing then', async () => {
    const asked: unknown[] = [];
    const only503 = httpStatus(503);
    let n = 0;
    const fn = () => (++n === 1 ? Promise.reject(httpError(503)) : new Promise<never>(() => {}));
    const budget = { record: vi.fn(), canRetry: () => true };
    const p = track(
      retry(fn, {
        backoff: constant(100),
        deadlineMs: 1000,
        budget,
        retryable: (error) => {
          asked.push(error);
          return only503(error);
        },
      }),
    );
    await clock.tickAsync(1000);
    expect(p.error).toBeInstanceOf(RetryError);
    expect((p.error as RetryError).reason).toBe('deadline');
    expect(asked).toHaveLength(1);
    expect(budget.record.mock.calls).toEqual([[false]]);
  });

  it("asks the predicate about a timed-out attempt with that attempt's context", async () => {
    const seen: Array<Pick<AttemptContext, 'attempt' | 'elapsedMs' | 'remainingMs'>> = [];
    const p = track(
      retry(() => new Promise<never>(() => {}), {
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

  it('does not start an attempt when a late wake-up comes exactly at the deadline', async () => {
    let calls = 0;
    const p = track(
      retry(
        () => {
          calls++;
          return Promise.reject(httpError(503));
        },
        { backoff: constant(500), deadlineMs: 1000 },
      ),
    );
    await clock.tickAsync(0);
    clock.jump(1000); // the 500 ms wake-up fires late, at 1000
    await clock.tickAsync(0);
    expect(calls).toBe(1);
    expect(p.error).toMatchObject({ reason: 'deadline', attempts: 1 });
  });
});

describe('the caller aborting from policy code', () => {
  it("settles the call once when the predicate aborts the caller's signal: no sleep, no further attempt", async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    let calls = 0;
    const p = track(
      retry(
        () => {
          calls++;
          return Promise.reject(httpError(503));
        },
        {
          signal: controller.signal,
          backoff: constant(100),
          retryable: () => {
            controller.abort(reason);
            return true;
          },
        },
      ),
    );
    await clock.tickAsync(1000);
    expect(p.error).toBe(reason);
    expect(calls).toBe(1);
  });

  it('rejects with the abort reason, not a RetryError, when the next delay would pass the deadline', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const p = track(
      retry(
        () => {
          throw httpError(503); // synchronously: the call has not been handed its settle functions yet
        },
        {
          signal: controller.signal,
          backoff: constant(5000),
          deadlineMs: 1000,
          retryable: () => {
            controller.abort(reason);
            return true;
          },
        },
      ),
    );
    await clock.tickAsync(0);
    expect(p.error).toBe(reason);
  });
});

describe('a caller signal shared by several calls', () => {
  it('still aborts the calls that remain when one of them has ended', async () => {
    const controller = new AbortController();
    const reason = new Error('shutdown');
    const quick = track(
      retry(() => new Promise<string>((resolve) => setTimeout(() => resolve('done'), 10)), { signal: controller.signal }),
    );
    const slow = track(retry(() => new Promise<never>(() => {}), { signal: controller.signal }));
    await clock.tickAsync(10);
    expect(quick.value).toBe('done');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort(reason);
    await clock.tickAsync(0);
    expect(slow.error).toBe(reason);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('options', () => {
  it('retries transient errors with no options at all (idempotent by default)', async () => {
    let n = 0;
    const p = track(retry(() => (++n === 1 ? Promise.reject(httpError(503)) : Promise.resolve('second'))));
    await clock.tickAsync(1000);
    expect(p.value).toBe('second');
  });

  it('reads an options object afresh on each call unless it is frozen', async () => {
    const options: RetryOptions = { maxAttempts: 1, backoff: constant(10) };
    const fail = () => Promise.reject(httpError(503));
    const first = track(retry(fail, options));
    await clock.tickAsync(0);
    expect(first.error).toMatchObject({ attempts: 1 });
    options.maxAttempts = 2;
    const second = track(retry(fail, options));
    await clock.tickAsync(10);
    expect(second.error).toMatchObject({ attempts: 2 });
  });

  it('lists every known option for an unknown one', () => {
    expect(() => retry(() => 1, { retries: 3 } as RetryOptions)).toThrow(
      'retry: unknown option "retries" (known: backoff, maxAttempts, deadlineMs, attemptTimeoutMs, retryable, idempotent, retryOnResult, signal, onRetry, onSuccess, onGiveUp, onEvent, budget, throttle, rng, unref, hedge)',
    );
  });

  it.each([
    ['x', 'retry: options must be an object, got "x"'],
    [{ backoff: null }, 'retry: options.backoff must be an object, got null'],
    [{ deadlineMs: '1000' }, 'retry: options.deadlineMs must be a number > 0 (Infinity for none), got "1000"'],
    [{ attemptTimeoutMs: '100' }, 'retry: options.attemptTimeoutMs must be a number > 0, got "100"'],
    [{ signal: null }, 'retry: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got null'],
    [{ signal: {} }, 'retry: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got {}'],
    [
      { signal: { aborted: false } },
      'retry: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got {"aborted":false}',
    ],
    [
      { signal: { addEventListener() {} } },
      'retry: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got {}',
    ],
    [{ budget: null }, 'retry: options.budget must come from createRetryBudget() (record, canRetry), got null'],
    [{ throttle: null }, 'retry: options.throttle must come from createAdaptiveThrottle() (admit, record, error), got null'],
  ])('refuses %j, naming it', (options, message) => {
    expect(() => retry(() => 1, options as RetryOptions)).toThrow(message);
  });

  it('refuses signals and budgets that are functions, however they are dressed', () => {
    const signalLike = Object.assign(() => undefined, { aborted: false, addEventListener() {}, removeEventListener() {} });
    expect(() => retry(() => 1, { signal: signalLike as unknown as AbortSignal })).toThrow(
      /^retry: options\.signal must be an AbortSignal/,
    );
    const budgetLike = Object.assign(() => undefined, { record() {}, canRetry: () => true });
    expect(() => retry(() => 1, { budget: budgetLike })).toThrow(/^retry: options\.budget must come from createRetryBudget\(\)/);
  });
});

describe('isRetryError', () => {
  it('is true for what retry() gives up with, false for anything else, and never throws', async () => {
    const p = track(retry(() => Promise.reject(httpError(503)), { maxAttempts: 1 }));
    await clock.tickAsync(0);
    expect(isRetryError(p.error)).toBe(true);
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

describe('idempotent(ctx, error)', () => {
  it('sees the error it is judging, for transient errors only, and decides per failure', async () => {
    const conflict = httpError(503, { sentToServer: false });
    const applied = httpError(503, { sentToServer: true });
    const forbidden = httpError(403);
    const judged: Array<[number, unknown]> = [];
    const { fn } = script(conflict, applied);
    const p = track(
      retry(fn, {
        backoff: noJitter,
        idempotent: (ctx, error) => {
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
