// The caller's AbortSignal: an abort settles the call at once with signal.reason — during an
// attempt (whose own signal aborts too), during a sleep, before the call, or raised from fn, a
// policy or onRetry — and nothing of the call runs after it. Listener hygiene: one listener per
// signal however many calls share it, none left once they have ended.
import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { type AttemptContext, retry } from '../../src/index.js';
import { constant, hang, noJitter, script } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

describe('an abort settles the call at once with signal.reason', () => {
  it('during an attempt, aborting the attempt signal too', async () => {
    const controller = new AbortController();
    let attemptSignal: AbortSignal | undefined;
    const p = track(
      retry(
        (ctx) => {
          attemptSignal = ctx.signal;
          return hang();
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

  it('during a sleep, clearing the timer, and calls fn no more', async () => {
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

  it('without calling fn when the signal is already aborted', async () => {
    const fn = vi.fn(async () => 1);
    const reason = new Error('already');
    await expect(retry(fn, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(fn).not.toHaveBeenCalled();
  });

  it('raised from onRetry: before the sleep, which never ends in another attempt', async () => {
    const controller = new AbortController();
    const { fn } = script(httpError(503));
    const p = track(retry(fn, { signal: controller.signal, onRetry: () => controller.abort('stop') }));
    await clock.tickAsync(0);
    expect(p.error).toBe('stop');
    expect(clock.countTimers()).toBe(0);
    await clock.tickAsync(60_000); // the sleep, had it begun, would have ended by now
    expect(fn).toHaveBeenCalledTimes(1);
  });
});

// Found by reading a surviving mutant (an unreachable-looking guard in the timer callback).
describe('an abort raised by fn itself settles the call with signal.reason', () => {
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

  it('when fn then returns a rejected promise, on either attempt: the promise is still listened to (no unhandled rejection)', async () => {
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
      expect(n).toBe(attempt);
    }
  });
});

describe('an abort raised from policy code', () => {
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

describe('listener hygiene', () => {
  it('many concurrent calls on one signal share one listener: no MaxListenersExceededWarning, all rejected at once', async () => {
    const controller = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const calls = Array.from({ length: 50 }, () => track(retry(hang, { signal: controller.signal })));
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

  it('a signal shared by several calls still aborts the calls that remain when one of them has ended', async () => {
    const controller = new AbortController();
    const reason = new Error('shutdown');
    const quick = track(
      retry(() => new Promise<string>((resolve) => setTimeout(() => resolve('done'), 10)), { signal: controller.signal }),
    );
    const slow = track(retry(hang, { signal: controller.signal }));
    await clock.tickAsync(10);
    expect(quick.value).toBe('done');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort(reason);
    await clock.tickAsync(0);
    expect(slow.error).toBe(reason);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
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

  it('a signal-like object that dispatches without currentTarget still aborts the call, and is let go', async () => {
    const listeners = new Set<() => void>();
    const signal = {
      aborted: false,
      reason: new Error('custom abort'),
      addEventListener: (_type: string, listener: () => void) => listeners.add(listener),
      removeEventListener: (_type: string, listener: () => void) => listeners.delete(listener),
    };
    const p = track(retry(hang, { signal: signal as unknown as AbortSignal }));
    await clock.tickAsync(0);
    expect(listeners.size).toBe(1);
    signal.aborted = true;
    for (const listener of [...listeners]) listener();
    await clock.tickAsync(0);
    expect(p.error).toBe(signal.reason);
    expect(listeners.size).toBe(0);
  });
});

describe('an abort raised by a listener on the attempt signal', () => {
  it('when the attempt times out: the call rejects with that reason, and the predicates are asked nothing', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const retryable = vi.fn(() => true);
    const onRetry = vi.fn();
    let calls = 0;
    const p = track(
      retry(
        (ctx) => {
          calls++;
          ctx.signal.addEventListener('abort', () => controller.abort(reason));
          return hang();
        },
        { signal: controller.signal, attemptTimeoutMs: 100, backoff: constant(10), retryable, onRetry },
      ),
    );
    await clock.tickAsync(1000);
    expect(p.error).toBe(reason);
    expect(calls).toBe(1);
    expect(retryable).not.toHaveBeenCalled();
    expect(onRetry).not.toHaveBeenCalled();
  });
});

describe('an abort raised by a predicate', () => {
  for (const which of ['retryable', 'idempotent'] as const) {
    it(`${which}: onRetry is not told, no sleep is queued, and the call rejects with the reason`, async () => {
      const controller = new AbortController();
      const reason = new Error('stop');
      const onRetry = vi.fn();
      const abort = () => {
        controller.abort(reason);
        return true;
      };
      const p = track(
        retry(() => Promise.reject(httpError(503)), { signal: controller.signal, backoff: constant(100), onRetry, [which]: abort }),
      );
      await clock.tickAsync(0);
      expect(p.error).toBe(reason);
      expect(onRetry).not.toHaveBeenCalled();
      expect(clock.countTimers()).toBe(0);
    });
  }
});

describe('an idempotent predicate that aborts and answers false', () => {
  it('the call gives up once, for the abort: onGiveUp is told "aborted" and nothing else', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const reasons: string[] = [];
    const p = track(
      retry(() => Promise.reject(httpError(503)), {
        signal: controller.signal,
        idempotent: () => {
          controller.abort(reason);
          return false;
        },
        onGiveUp: (event) => void reasons.push(event.reason),
      }),
    );
    await clock.tickAsync(0);
    expect(p.error).toBe(reason);
    expect(reasons).toEqual(['aborted']);
  });
});
