// Hooks: onRetry before each sleep; onSuccess and onGiveUp, each called exactly once per call,
// for every way a call ends; hooks never change the outcome, whatever they throw or return.
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  type AttemptThrottle,
  type GiveUpEvent,
  RetryError,
  type RetryEvent,
  type RetryOptions,
  type SuccessEvent,
  ThrottledError,
  createRetryBudget,
  retry,
  withRetry,
} from '../../src/index.js';
import { instant } from '../../src/testing/index.js';
import { constant, noJitter, script as scripted } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

/** Both hooks as spies, and a call that runs `fn` with them and `options`. */
function hooked(options: RetryOptions = {}) {
  const onSuccess = vi.fn((_event: SuccessEvent) => {});
  const onGiveUp = vi.fn((_event: GiveUpEvent) => {});
  return { onSuccess, onGiveUp, options: { backoff: noJitter, ...options, onSuccess, onGiveUp } };
}

/** fn that fails with the given errors in order, then returns 'ok'. */
const script = (...failures: unknown[]) => scripted(...failures).fn;

describe('onRetry', () => {
  it('reports each retry before its sleep and ignores a throwing hook', async () => {
    const events: RetryEvent[] = [];
    const e1 = httpError(503);
    const e2 = httpError(504);
    const sleeping: number[] = [];
    const p = track(
      retry(script(e1, e2), {
        backoff: noJitter,
        onRetry: (event) => {
          events.push(event);
          sleeping.push(clock.countTimers()); // the sleep is not armed yet
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
    expect(sleeping).toEqual([0, 0]);
  });

  it('an async onRetry that rejects changes nothing (no unhandled rejection)', async () => {
    let hooks = 0;
    // A plain async function: vi.fn would itself listen to the promise it returns.
    const onRetry = async (): Promise<void> => {
      hooks++;
      throw new Error('log sink down');
    };
    const p = track(retry(script(httpError(503)), { backoff: noJitter, onRetry }));
    await clock.tickAsync(1000);
    expect(p.value).toBe('ok');
    expect(hooks).toBe(1);
  });
});

// p-retry's onFailedAttempt and axios-retry's onRetry are awaited: callers refresh a token or a
// connection there before the next attempt. An async onRetry holds the next attempt the same way,
// alongside the backoff, within the deadline and the signal (issue 35, item 3).
describe('an async onRetry holds the next attempt until it settles', () => {
  /** An onRetry that settles `ms` after it is called (rejecting when `fails`), noting when it is. */
  const slowHook =
    (ms: number, calls: number[], fails = false) =>
    () =>
      new Promise<void>((resolve, reject) => {
        calls.push(clock.now);
        setTimeout(() => (fails ? reject(new Error('refresh failed')) : resolve()), ms);
      });

  it('longer than the backoff: the next attempt goes when the hook settles', async () => {
    const hooks: number[] = [];
    const sent: number[] = [];
    const fn = () => {
      sent.push(clock.now);
      return sent.length < 3 ? Promise.reject(httpError(503)) : Promise.resolve('ok');
    };
    const p = track(retry(fn, { backoff: constant(100), onRetry: slowHook(500, hooks) }));
    await clock.tickAsync(2000);
    expect(p.value).toBe('ok');
    expect(hooks).toEqual([0, 500]);
    expect(sent).toEqual([0, 500, 1000]);
  });

  it('shorter than the backoff: the backoff alone decides (they run side by side)', async () => {
    const sent: number[] = [];
    const fn = () => {
      sent.push(clock.now);
      return sent.length < 2 ? Promise.reject(httpError(503)) : Promise.resolve('ok');
    };
    const p = track(retry(fn, { backoff: constant(100), onRetry: slowHook(30, []) }));
    await clock.tickAsync(1000);
    expect(p.value).toBe('ok');
    expect(sent).toEqual([0, 100]);
  });

  it('one that rejects is ignored once it has settled: the attempt goes then', async () => {
    const sent: number[] = [];
    const fn = () => {
      sent.push(clock.now);
      return sent.length < 2 ? Promise.reject(httpError(503)) : Promise.resolve('ok');
    };
    const p = track(retry(fn, { backoff: constant(100), onRetry: slowHook(400, [], true) }));
    await clock.tickAsync(1000);
    expect(p.value).toBe('ok');
    expect(sent).toEqual([0, 400]);
  });

  it('the deadline ends a call whose hook is still running, with RetryError "deadline"', async () => {
    const sent: number[] = [];
    const fn = () => {
      sent.push(clock.now);
      return Promise.reject(httpError(503));
    };
    const p = track(retry(fn, { backoff: constant(100), deadlineMs: 1000, onRetry: () => new Promise<void>(() => {}) }));
    await clock.tickAsync(999);
    expect(p.state).toBe('pending');
    await clock.tickAsync(1);
    expect(p.error).toBeInstanceOf(RetryError);
    expect(p.error).toMatchObject({ reason: 'deadline', attempts: 1, elapsedMs: 1000 });
    expect(sent).toEqual([0]);
  });

  it('the caller’s signal aborts a call whose hook is still running, at once', async () => {
    const controller = new AbortController();
    const fn = () => Promise.reject(httpError(503));
    const p = track(retry(fn, { backoff: constant(100), signal: controller.signal, onRetry: () => new Promise<void>(() => {}) }));
    await clock.tickAsync(300);
    expect(p.state).toBe('pending');
    const reason = new Error('user left');
    controller.abort(reason);
    await clock.tickAsync(0);
    expect(p.error).toBe(reason);
  });

  it('one that settles after the call was aborted sends nothing more', async () => {
    const controller = new AbortController();
    const sent: number[] = [];
    const fn = () => {
      sent.push(clock.now);
      return Promise.reject(httpError(503));
    };
    const p = track(retry(fn, { backoff: constant(100), signal: controller.signal, onRetry: slowHook(500, []) }));
    await clock.tickAsync(300);
    controller.abort(new Error('user left'));
    await clock.tickAsync(1000);
    expect(p.error).toEqual(new Error('user left'));
    expect(sent).toEqual([0]);
  });

  it('a gate or throttle that throws when the hook lets the attempt go fails the call with its error', async () => {
    const broken = new Error('gate store down');
    let asked = 0;
    const gate = {
      waitMs: () => {
        if (++asked > 1) throw broken;
        return 0;
      },
      hold: () => {},
    };
    const p = track(retry(() => Promise.reject(httpError(503)), { backoff: constant(100), gate, onRetry: slowHook(500, []) }));
    await clock.tickAsync(500);
    expect(p.error).toBe(broken);
    expect(asked).toBe(2);
  });

  it('instant() (the testing kit) waits for it too', async () => {
    const sent: number[] = [];
    const fn = () => {
      sent.push(clock.now);
      return sent.length < 2 ? Promise.reject(httpError(503)) : Promise.resolve('ok');
    };
    const p = track(retry(fn, instant({ backoff: constant(100), onRetry: slowHook(250, []) })));
    await clock.tickAsync(1000);
    expect(p.value).toBe('ok');
    expect(sent).toEqual([0, 250]);
  });
});

describe('onSuccess', () => {
  it('is called once with the attempts, the whole elapsed milliseconds and the value', async () => {
    const { onSuccess, onGiveUp, options } = hooked();
    const p = track(retry(script(httpError(503), httpError(503)), options));
    await clock.tickAsync(3000);
    expect(p).toMatchObject({ state: 'resolved', value: 'ok' });
    expect(onSuccess).toHaveBeenCalledTimes(1);
    expect(onSuccess).toHaveBeenCalledWith({ attempts: 3, elapsedMs: 3000, value: 'ok' });
    expect(onGiveUp).not.toHaveBeenCalled();
  });

  it('reports a first success as 1 attempt in 0 ms, and runs before the caller’s await resumes', async () => {
    const order: string[] = [];
    const result = retry(async () => 7, {
      onSuccess: ({ attempts, elapsedMs, value }) => void order.push(`hook ${attempts} ${elapsedMs} ${value}`),
    });
    order.push(`caller ${await result}`);
    expect(order).toEqual(['hook 1 0 7', 'caller 7']);
  });
});

describe('onGiveUp: every way a call ends without a value, each reported once', () => {
  it("'attempts': out of attempts, with the RetryError the call rejects with", async () => {
    const { onSuccess, onGiveUp, options } = hooked({ maxAttempts: 2 });
    const p = track(retry(script(httpError(503), httpError(503)), options));
    await clock.tickAsync(1000);
    expect(p.state).toBe('rejected');
    expect(p.error).toBeInstanceOf(RetryError);
    expect(onGiveUp).toHaveBeenCalledTimes(1);
    expect(onGiveUp).toHaveBeenCalledWith({ reason: 'attempts', error: p.error, attempts: 2, elapsedMs: 1000 });
    expect(onSuccess).not.toHaveBeenCalled();
  });

  it("'deadline': the next wait would pass it, or an attempt is still running at it", async () => {
    const early = hooked({ deadlineMs: 2500 });
    const p = track(retry(script(httpError(503), httpError(503), httpError(503)), early.options));
    await clock.tickAsync(1000); // attempt 2 fails at 1000; the 2000 ms wait would end at 3000
    expect(p.state).toBe('rejected');
    expect(early.onGiveUp).toHaveBeenCalledWith({ reason: 'deadline', error: p.error, attempts: 2, elapsedMs: 1000 });

    const overrun = hooked({ deadlineMs: 500 });
    const q = track(retry(() => new Promise(() => {}), overrun.options));
    await clock.tickAsync(500);
    expect(q.state).toBe('rejected');
    expect(overrun.onGiveUp).toHaveBeenCalledWith({ reason: 'deadline', error: q.error, attempts: 1, elapsedMs: 500 });
    expect(overrun.onSuccess).not.toHaveBeenCalled();
  });

  it("'budget': the retry budget refused the retry", async () => {
    const budget = createRetryBudget({ maxTokens: 2, tokenRatio: 0.1 });
    const { onGiveUp, options } = hooked({ budget });
    const p = track(retry(script(httpError(503), httpError(503)), options));
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect(onGiveUp).toHaveBeenCalledWith({ reason: 'budget', error: p.error, attempts: 1, elapsedMs: 0 });
  });

  it("'not-retryable' and 'not-idempotent': the error itself, unchanged", async () => {
    const forbidden = httpError(403);
    const a = hooked();
    await expect(retry(script(forbidden), a.options)).rejects.toBe(forbidden);
    expect(a.onGiveUp).toHaveBeenCalledWith({ reason: 'not-retryable', error: forbidden, attempts: 1, elapsedMs: 0 });

    const busy = httpError(503);
    const b = hooked({ idempotent: false });
    await expect(retry(script(busy), b.options)).rejects.toBe(busy);
    expect(b.onGiveUp).toHaveBeenCalledWith({ reason: 'not-idempotent', error: busy, attempts: 1, elapsedMs: 0 });
  });

  it("'aborted': the caller's signal, before the first attempt, in an attempt or in a wait", async () => {
    const before = new AbortController();
    before.abort(new Error('not wanted any more'));
    const a = hooked({ signal: before.signal });
    await expect(retry(script(), a.options)).rejects.toThrow('not wanted any more');
    expect(a.onGiveUp).toHaveBeenCalledWith({ reason: 'aborted', error: before.signal.reason, attempts: 0, elapsedMs: 0 });

    const during = new AbortController();
    const b = hooked({ signal: during.signal });
    let finish: (value: string) => void = () => {};
    const p = track(retry(() => new Promise<string>((resolve) => (finish = resolve)), b.options));
    await clock.tickAsync(200);
    during.abort();
    finish('too late');
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect(b.onGiveUp).toHaveBeenCalledTimes(1);
    expect(b.onGiveUp).toHaveBeenCalledWith({ reason: 'aborted', error: during.signal.reason, attempts: 1, elapsedMs: 200 });
    expect(b.onSuccess).not.toHaveBeenCalled();

    const sleeping = new AbortController();
    const c = hooked({ signal: sleeping.signal });
    const q = track(retry(script(httpError(503)), c.options));
    await clock.tickAsync(300);
    sleeping.abort();
    await clock.tickAsync(0);
    expect(q.state).toBe('rejected');
    expect(c.onGiveUp).toHaveBeenCalledWith({ reason: 'aborted', error: sleeping.signal.reason, attempts: 1, elapsedMs: 300 });
  });

  it("'throttled': the adaptive throttle refused an attempt", async () => {
    let admits = 1;
    const refusal = new ThrottledError(0.9, 100, 10);
    const throttle: AttemptThrottle = { admit: () => admits-- > 0, record: () => {}, error: () => refusal };
    const { onGiveUp, options } = hooked({ throttle });
    const p = track(retry(script(httpError(503)), options));
    await clock.tickAsync(1000);
    expect(p).toMatchObject({ state: 'rejected', error: refusal });
    expect(onGiveUp).toHaveBeenCalledWith({ reason: 'throttled', error: refusal, attempts: 1, elapsedMs: 1000 });
  });

  it('reads the clock for the elapsed time only when there is a hook to tell it', async () => {
    const plain = new AbortController();
    const p = track(retry(() => new Promise<never>(() => {}), { signal: plain.signal }));
    const told = new AbortController();
    const { onGiveUp, options } = hooked({ signal: told.signal });
    track(retry(() => new Promise<never>(() => {}), options));
    await clock.tickAsync(100);
    const reads = vi.spyOn(globalThis.performance, 'now');
    try {
      plain.abort();
      expect(reads).not.toHaveBeenCalled();
      told.abort();
      expect(reads).toHaveBeenCalledTimes(1);
      expect(onGiveUp).toHaveBeenCalledWith({ reason: 'aborted', error: told.signal.reason, attempts: 1, elapsedMs: 100 });
    } finally {
      reads.mockRestore();
    }
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
  });
});

describe('hooks never change the outcome', () => {
  it('a hook that throws, or rejects, leaves the value or error as it was and raises no unhandled rejection', async () => {
    const throwing = () => {
      throw new Error('hook bug');
    };
    const rejecting = () => Promise.reject(new Error('async hook bug'));
    for (const hook of [throwing, rejecting]) {
      await expect(retry(async () => 'fine', { onSuccess: hook })).resolves.toBe('fine');
      const forbidden = httpError(403);
      await expect(retry(script(forbidden), { onGiveUp: hook })).rejects.toBe(forbidden);
    }
    // fail-on-unhandled (test/setup) fails the file if a rejection went unhandled.
    await clock.tickAsync(0);
  });

  it('waits for no async hook: the call settles at once', async () => {
    const slowHook = () => new Promise<void>((resolve) => setTimeout(resolve, 60_000));
    const p = track(retry(async () => 1, { onSuccess: slowHook }));
    await clock.tickAsync(0);
    expect(p.state).toBe('resolved');
    await clock.tickAsync(60_000);
  });

  it('a hook that aborts the caller’s signal after the outcome changes nothing', async () => {
    const controller = new AbortController();
    await expect(retry(async () => 'kept', { signal: controller.signal, onSuccess: () => controller.abort() })).resolves.toBe('kept');
    expect(controller.signal.aborted).toBe(true);
  });

  it('accepts hooks only as functions', async () => {
    await expect(retry(async () => 1, { onSuccess: 'log' as never })).rejects.toThrow(
      new TypeError('retry: options.onSuccess must be a function, got "log"'),
    );
    await expect(retry(async () => 1, { onGiveUp: {} as never })).rejects.toThrow(
      new TypeError('retry: options.onGiveUp must be a function, got {}'),
    );
  });

  it('fire once per call of a withRetry-wrapped function', async () => {
    const { onSuccess, options } = hooked();
    const double = withRetry(async (n: number) => n * 2, options);
    await expect(Promise.all([double(1), double(2), double(3)])).resolves.toEqual([2, 4, 6]);
    expect(onSuccess.mock.calls.map(([event]) => event.value)).toEqual([2, 4, 6]);
  });
});

describe('exactly one hook, exactly once, matching the outcome (property)', () => {
  type Step = 'ok' | 'busy' | 'forbidden' | 'hang';
  it('holds for any script of attempts and limits', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Step>('ok', 'busy', 'busy', 'forbidden', 'hang'), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 8000 }),
        fc.option(fc.integer({ min: 0, max: 6000 }), { nil: undefined }),
        async (steps, maxAttempts, deadlineMs, abortAt) => {
          const controller = new AbortController();
          const { onSuccess, onGiveUp, options } = hooked({ maxAttempts, deadlineMs, attemptTimeoutMs: 700, signal: controller.signal });
          let i = 0;
          const fn = () => {
            const step = steps[Math.min(i++, steps.length - 1)];
            if (step === 'ok') return Promise.resolve(i);
            if (step === 'hang') return new Promise<number>(() => {});
            return Promise.reject(httpError(step === 'busy' ? 503 : 403));
          };
          const p = track(retry(fn, options));
          if (abortAt !== undefined) setTimeout(() => controller.abort(), abortAt);
          await clock.tickAsync(10_000);
          expect(p.state).not.toBe('pending');
          expect(onSuccess.mock.calls.length + onGiveUp.mock.calls.length).toBe(1);
          if (p.state === 'resolved') {
            expect(onSuccess.mock.calls[0]?.[0]).toMatchObject({ value: p.value, attempts: p.value });
          } else {
            const event = onGiveUp.mock.calls[0]?.[0] as GiveUpEvent;
            expect(event.error).toBe(p.error);
            expect(event.reason === 'attempts' || event.reason === 'deadline').toBe(p.error instanceof RetryError);
            if (p.error instanceof RetryError)
              expect(event).toMatchObject({ reason: p.error.reason, attempts: p.error.attempts, elapsedMs: p.error.elapsedMs });
            if (event.reason === 'aborted') expect(event.error).toBe(controller.signal.reason);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
