import fc from 'fast-check';
import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { createLatencyWindow, nearestRank } from '../../src/fleet/latency-window.js';
import {
  type AttemptContext,
  createAdaptiveThrottle,
  createHedger,
  createRetryAfterGate,
  createRetryBudget,
  hedge,
  type HedgeEvent,
  hedging,
  RetryError,
  type RetryEvent,
  retry,
  TimeoutError,
} from '../../src/index.js';
import { retryFetch } from '../../src/fetch/index.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';
import { startLoopback } from '../helpers/loopback.js';
import { ioUntil } from '../helpers/virtual-io.js';

// Every test must leave nothing behind in the library's shared timer queue (see useVirtualClock).
const clock = useVirtualClock();

/** One scripted copy: answers `value` (or rejects with `error`) `ms` after it starts. */
type Step = { ms: number; value?: string; error?: unknown; ignoreAbort?: boolean };

/**
 * A backend whose n-th copy (`ctx.copy`) follows `steps[n - 1]`. A copy rejects with its signal's
 * reason when aborted, as fetch does, unless `ignoreAbort` (a client that does not listen).
 */
function backend(...steps: Step[]) {
  const starts: number[] = [];
  const signals: AbortSignal[] = [];
  const fn = vi.fn((ctx: AttemptContext) => {
    starts.push(Date.now());
    const step = steps[ctx.copy - 1] ?? { ms: 1_000_000 };
    const signal = ctx.signal;
    signals.push(signal);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => (step.error !== undefined ? reject(step.error) : resolve(step.value ?? `#${ctx.copy}`)), step.ms);
      if (!step.ignoreAbort) {
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      }
    });
  });
  return { fn, starts, signals };
}

describe('hedge(): timing and winners', () => {
  it('sends a second copy after delayMs and resolves with whichever answers first', async () => {
    const { fn, starts } = backend({ ms: 1000 }, { ms: 20 });
    const p = track(hedge(fn, { delayMs: 50 }));
    await clock.tickAsync(49);
    expect(starts).toEqual([0]);
    await clock.tickAsync(1);
    expect(starts).toEqual([0, 50]);
    await clock.tickAsync(19);
    expect(p.state).toBe('pending');
    await clock.tickAsync(1);
    expect(p).toMatchObject({ state: 'resolved', value: '#2' });
  });

  it('sends no hedge when the first copy answers within the delay', async () => {
    const { fn, starts } = backend({ ms: 30 });
    const p = track(hedge(fn, { delayMs: 50 }));
    await clock.tickAsync(30);
    expect(p).toMatchObject({ state: 'resolved', value: '#1' });
    await clock.tickAsync(1000);
    expect(starts).toEqual([0]);
  });

  it('aborts every loser with an AbortError and ignores their late results', async () => {
    const { fn, signals } = backend({ ms: 100, value: 'late', ignoreAbort: true }, { ms: 200 }, { ms: 10 });
    const p = track(hedge(fn, { delayMs: 40, maxCopies: 3 }));
    await clock.tickAsync(90);
    expect(p).toMatchObject({ state: 'resolved', value: '#3' });
    expect(signals.map((s) => s.aborted)).toEqual([true, true, false]);
    expect((signals[0]!.reason as Error).name).toBe('AbortError');
    // The loser that ignores its signal answers later; the call has its value already.
    await clock.tickAsync(100);
    expect(p.value).toBe('#3');
  });

  it('swallows a loser that rejects after the call has settled (no unhandled rejection)', async () => {
    // The first copy does not listen to its signal and fails late; the setup file fails
    // this test if that rejection goes unhandled.
    const { fn } = backend({ ms: 100, error: httpError(500), ignoreAbort: true }, { ms: 5 });
    const p = track(hedge(fn, { delayMs: 10 }));
    await clock.tickAsync(15);
    expect(p).toMatchObject({ state: 'resolved', value: '#2' });
    await clock.tickAsync(100);
    expect(p.state).toBe('resolved');
  });

  it('starts hedges a delay apart up to maxCopies in all (default 2)', async () => {
    const two = backend();
    const p2 = track(hedge(two.fn, { delayMs: 100, deadlineMs: 1000 }));
    const three = backend();
    const p3 = track(hedge(three.fn, { delayMs: 100, deadlineMs: 1000, maxCopies: 3 }));
    await clock.tickAsync(1000);
    expect(two.starts).toEqual([0, 100]);
    expect(three.starts).toEqual([0, 100, 200]);
    expect(p2.error).toBeInstanceOf(RetryError);
    expect(p3.error).toBeInstanceOf(RetryError);
  });

  it('a synchronous throw counts as a failed copy', async () => {
    let n = 0;
    const p = track(
      hedge(
        () => {
          if (++n === 1) throw httpError(503);
          return 'second';
        },
        { delayMs: 50 },
      ),
    );
    await clock.tickAsync(0);
    expect(p).toMatchObject({ state: 'resolved', value: 'second' });
  });
});

describe('hedge(): errors', () => {
  it('ends the call with a non-retryable error from any copy, unchanged, aborting the rest', async () => {
    const forbidden = httpError(403);
    const { fn, signals } = backend({ ms: 1000 }, { ms: 5, error: forbidden });
    const p = track(hedge(fn, { delayMs: 50 }));
    await clock.tickAsync(55);
    expect(p).toMatchObject({ state: 'rejected', error: forbidden });
    expect(signals[0]?.aborted).toBe(true);
  });

  it('sends the next copy at once after a transient error, without waiting for the delay', async () => {
    const events: HedgeEvent[] = [];
    const unavailable = httpError(503);
    const { fn, starts } = backend({ ms: 10, error: unavailable }, { ms: 10 });
    const p = track(hedge(fn, { delayMs: 50, onHedge: (e) => events.push(e) }));
    await clock.tickAsync(20);
    expect(starts).toEqual([0, 10]);
    expect(p).toMatchObject({ state: 'resolved', value: '#2' });
    // The copy belongs to the call's one attempt: attempt 1, copy 2.
    expect(events).toEqual([{ attempt: 1, copy: 2, reason: 'error', error: unavailable, delayMs: 50, elapsedMs: 10 }]);
  });

  it('rejects with RetryError "attempts" (1 attempt) once every copy failed transiently', async () => {
    const last = httpError(500);
    const { fn, starts } = backend({ ms: 10, error: httpError(503) }, { ms: 10, error: last });
    const p = track(hedge(fn, { delayMs: 50 }));
    await clock.tickAsync(20);
    expect(starts).toEqual([0, 10]);
    expect(p.error).toBeInstanceOf(RetryError);
    // hedge() is one hedged attempt of retry(): the copies do not count as attempts.
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 1, cause: last });
  });

  it('waits for a copy still running when a transient error finds no copy left to send', async () => {
    const { fn } = backend({ ms: 100 }, { ms: 10, error: httpError(503) });
    const p = track(hedge(fn, { delayMs: 50 }));
    await clock.tickAsync(60);
    expect(p.state).toBe('pending');
    await clock.tickAsync(40);
    expect(p).toMatchObject({ state: 'resolved', value: '#1' });
  });

  it('reports onHedge before each delayed hedge, and a throwing hook changes nothing', async () => {
    const events: HedgeEvent[] = [];
    const { fn, starts } = backend({ ms: 500 }, { ms: 500 }, { ms: 10 });
    const p = track(
      hedge(fn, {
        delayMs: 30,
        maxCopies: 3,
        onHedge: (e) => {
          events.push(e);
          throw new Error('broken logger');
        },
      }),
    );
    await clock.tickAsync(70);
    expect(starts).toEqual([0, 30, 60]);
    expect(events.map(({ attempt, copy, reason, elapsedMs }) => ({ attempt, copy, reason, elapsedMs }))).toEqual([
      { attempt: 1, copy: 2, reason: 'delay', elapsedMs: 30 },
      { attempt: 1, copy: 3, reason: 'delay', elapsedMs: 60 },
    ]);
    expect(p.value).toBe('#3');
  });

  it('ignores the rejection of an async onHedge (no unhandled rejection)', async () => {
    const { fn, starts } = backend({ ms: 500 }, { ms: 10 });
    // A plain async function, not vi.fn: a spy listens to the promise it returns.
    let hedges = 0;
    const onHedge = async (): Promise<void> => {
      hedges++;
      throw new Error('broken async logger');
    };
    const p = track(hedge(fn, { delayMs: 30, onHedge }));
    await clock.tickAsync(40);
    expect(starts).toEqual([0, 30]);
    expect(hedges).toBe(1);
    expect(p).toMatchObject({ state: 'resolved', value: '#2' });
  });

  it('fails a copy whose promise cannot be adopted, and still settles by the deadline', async () => {
    // A promise whose `constructor` getter throws: Promise.resolve(it) throws synchronously.
    const hostile = (): Promise<string> => {
      const promise = new Promise<string>(() => {});
      Object.defineProperty(promise, 'constructor', {
        get() {
          throw new Error('hostile constructor');
        },
      });
      return promise;
    };
    // A plain function, not vi.fn: a spy reads the promise it returns, and would throw itself.
    const started: number[] = [];
    const fn = (ctx: AttemptContext): Promise<string> => {
      started.push(ctx.copy);
      return ctx.copy === 2 ? hostile() : new Promise<string>(() => {});
    };
    const p = track(hedge(fn, { delayMs: 30, maxCopies: 3, deadlineMs: 100 }));
    await clock.tickAsync(30);
    // The hostile second copy failed (a transient error): the third started at once.
    expect(started).toEqual([1, 2, 3]);
    await clock.tickAsync(70);
    expect(p.error).toBeInstanceOf(RetryError);
    expect(p.error).toMatchObject({ reason: 'deadline' });
  });

  it('surfaces an exception thrown by the retryable predicate', async () => {
    const bug = new Error('predicate bug');
    const { fn, signals } = backend({ ms: 100 }, { ms: 10, error: httpError(503) });
    const p = track(
      hedge(fn, {
        delayMs: 50,
        retryable: () => {
          throw bug;
        },
      }),
    );
    await clock.tickAsync(60);
    expect(p).toMatchObject({ state: 'rejected', error: bug });
    expect(signals[0]?.aborted).toBe(true);
  });

  it('sends no other copy after an error whose server asks to wait (Retry-After); alone, the call gives up with it as the cause', async () => {
    // Alone: no copy goes out, and hedge() (one attempt) has no attempt left to wait for: it
    // gives up with RetryError "attempts" carrying the 503. To wait and retry, use retry() with
    // hedging() (tested below).
    const busy = httpError(503, { headers: { 'retry-after': '2' } });
    const alone = backend({ ms: 5, error: busy }, { ms: 5 });
    const p = track(hedge(alone.fn, { delayMs: 20 }));
    await clock.tickAsync(100);
    expect(p.error).toBeInstanceOf(RetryError);
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 1, cause: busy });
    expect(alone.starts).toEqual([0]);

    // With a copy still running: no copy at once, none after the delay; the running one wins.
    const pushback = httpError(429, { headers: { 'retry-after': '1' } });
    const racing = backend({ ms: 100 }, { ms: 5, error: pushback }, { ms: 1 });
    const q = track(hedge(racing.fn, { delayMs: 20, maxCopies: 3 }));
    await clock.tickAsync(100);
    expect(racing.starts.map((t) => t - racing.starts[0]!)).toEqual([0, 20]);
    expect(q).toMatchObject({ state: 'resolved', value: '#1' });
  });

  it('refuses an async retryable with retry()’s TypeError naming it (the engine asks it), and sends no other copy', async () => {
    // Its promise would count as true whatever it resolves to: an async "never retry" would
    // start a copy after every failure.
    const { fn, starts } = backend({ ms: 5, error: httpError(503) }, { ms: 5, error: httpError(503) }, { ms: 5 });
    const p = track(hedge(fn, { delayMs: 50, maxCopies: 3, retryable: (async () => false) as never }));
    await clock.tickAsync(200);
    expect(p.state).toBe('rejected');
    expect(p.error).toEqual(new TypeError('retry: options.retryable must return a boolean, got a promise'));
    expect(starts).toEqual([0]);
  });
});

describe('hedge(): idempotency and limits', () => {
  it('an exception thrown by the budget ends the call with it, unchanged (a bug, not a failure to retry), aborting the copy running', async () => {
    const bug = new Error('budget bug');
    const budget = {
      record() {},
      canRetry(): boolean {
        throw bug;
      },
    };
    const { fn, starts, signals } = backend({ ms: 100 });
    const p = track(hedge(fn, { delayMs: 10, budget }));
    await clock.tickAsync(10);
    expect(p).toMatchObject({ state: 'rejected', error: bug });
    expect(starts).toEqual([0]);
    expect(signals[0]?.aborted).toBe(true);
  });

  it('sends exactly one copy when idempotent is false, passing its error on unchanged', async () => {
    const slow = backend({ ms: 500 });
    const p = track(hedge(slow.fn, { delayMs: 10, idempotent: false }));
    await clock.tickAsync(500);
    expect(slow.starts).toEqual([0]);
    expect(p.value).toBe('#1');

    const unavailable = httpError(503);
    const failing = backend({ ms: 5, error: unavailable });
    const q = track(hedge(failing.fn, { delayMs: 10, idempotent: false }));
    await clock.tickAsync(100);
    expect(q).toMatchObject({ state: 'rejected', error: unavailable });
    expect(failing.starts).toHaveLength(1);
  });

  it('asks an idempotent function once, with the attempt’s context (attempt 1, copy 1)', async () => {
    const idempotent = vi.fn((_error: unknown, _ctx: AttemptContext) => false);
    const { fn, starts } = backend({ ms: 100 });
    const p = track(hedge(fn, { delayMs: 10, idempotent }));
    await clock.tickAsync(100);
    expect(idempotent).toHaveBeenCalledTimes(1);
    const [error, asked] = idempotent.mock.calls[0] as [unknown, AttemptContext];
    expect(error).toBeUndefined();
    expect([asked.attempt, asked.copy]).toEqual([1, 1]);
    expect(starts).toEqual([0]);
    expect(p.state).toBe('resolved');
  });

  it('refuses an async idempotent with retry()’s TypeError naming it, before any copy', async () => {
    // A promise is not a "yes": an async "never resend" must not let a second copy out.
    const { fn, starts } = backend({ ms: 100 }, { ms: 10 });
    const p = track(hedge(fn, { delayMs: 10, idempotent: (async () => false) as never }));
    await clock.tickAsync(200);
    expect(p.state).toBe('rejected');
    expect(p.error).toEqual(new TypeError('retry: options.idempotent must return a boolean, got a promise'));
    expect(starts).toEqual([]);
  });

  it('stops hedging when the retry budget is spent: each hedge costs a token', async () => {
    // 2 tokens; hedges allowed while tokens > 1. The first hedge takes one, leaving 1.
    const budget = createRetryBudget({ maxTokens: 2, tokenRatio: 0.001 });
    const first = backend({ ms: 100 }, { ms: 10 });
    const a = track(hedge(first.fn, { delayMs: 20, budget }));
    await clock.tickAsync(30);
    expect(first.starts).toEqual([0, 20]);
    expect(a.value).toBe('#2');
    expect(budget.tokens).toBe(1.001);
    // 1.001 > 1: one more hedge, then the bucket is at 0.002 and refuses.
    const second = backend({ ms: 100 }, { ms: 10 });
    const b = track(hedge(second.fn, { delayMs: 20, budget }));
    await clock.tickAsync(30);
    expect(second.starts).toHaveLength(2);
    expect(b.value).toBe('#2');
    const third = backend({ ms: 100 }, { ms: 10 });
    const c = track(hedge(third.fn, { delayMs: 20, budget }));
    await clock.tickAsync(100);
    expect(third.starts).toEqual([60]);
    expect(c.value).toBe('#1');
  });

  it('sends no copy after a transient error when the budget is spent: with nothing running, RetryError "attempts"', async () => {
    const budget = createRetryBudget({ maxTokens: 2 });
    budget.record(false); // 1 token: no retry, no hedge
    const unavailable = httpError(503);
    const { fn, starts } = backend({ ms: 5, error: unavailable }, { ms: 5 });
    const p = track(hedge(fn, { delayMs: 20, budget }));
    await clock.tickAsync(100);
    // Without the budget the second copy would have gone out at 5 and won (see above).
    expect(starts).toEqual([0]);
    expect(p.error).toBeInstanceOf(RetryError);
    // hedge() is one attempt: the engine finds no attempt left before it asks the budget.
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 1, cause: unavailable });
  });

  it('keeps hedges within the hedger’s extra-load allowance: 1 + maxExtraLoad × calls', async () => {
    const hedger = createHedger({ maxExtraLoad: 0.5 });
    const hedged: number[] = [];
    for (let call = 0; call < 6; call++) {
      const { fn, starts } = backend({ ms: 100 }, { ms: 10 });
      const p = hedge(fn, { delayMs: 20, hedger });
      await clock.tickAsync(100);
      await p;
      hedged.push(starts.length - 1);
    }
    // Allowance 1 + 0.5 per call, 1 per hedge: 1.5 → 0.5, 1 → 0, 0.5, 1 → 0, 0.5, 1 → 0.
    expect(hedged).toEqual([1, 1, 0, 1, 0, 1]);
    expect({ calls: hedger.calls, hedges: hedger.hedges }).toEqual({ calls: 6, hedges: 4 });
  });

  it('asks again one delay later for a hedge the allowance refused, so the slowest calls get it', async () => {
    const hedger = createHedger({ maxExtraLoad: 0.5 });
    const options = { delayMs: 20, hedger, deadlineMs: 200 };
    const calls = [backend(), backend(), backend(), backend()];
    const results = [];
    for (const [i, at] of [0, 25, 30, 55].entries()) {
      await clock.tickAsync(at - Date.now());
      results.push(track(hedge((calls[i] as ReturnType<typeof backend>).fn, options)));
    }
    await clock.tickAsync(300);
    // Allowance: 1.5 → hedge at 20 → 0.5; 1 → hedge at 45 → 0; 0.5, refused at 50; 1 at 55;
    // the third call asks again at 70 and gets it; the fourth is refused at 75, 95, …
    expect(calls.map((c) => c.starts)).toEqual([[0, 20], [25, 45], [30, 70], [55]]);
    expect(results.map((r) => (r.error as RetryError).reason)).toEqual(['deadline', 'deadline', 'deadline', 'deadline']);
  });

  it('adapts the delay to the hedger’s percentile of recent latencies, within floor and cap', async () => {
    const hedger = createHedger({ percentile: 0.9, windowSize: 10, minDelayMs: 5, maxDelayMs: 400, maxExtraLoad: 1 });
    expect(hedger.delayMs).toBe(400); // empty window: the cap
    for (const ms of [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]) {
      const { fn } = backend({ ms });
      const p = hedge(fn, { hedger });
      await clock.tickAsync(ms);
      await p;
    }
    expect(hedger.delayMs).toBe(90);
    const { fn, starts } = backend({ ms: 1000 }, { ms: 10 });
    const t0 = Date.now();
    const p = track(hedge(fn, { hedger }));
    await clock.tickAsync(100);
    expect(starts.map((s) => s - t0)).toEqual([0, 90]);
    expect(p.value).toBe('#2');
    // The window keeps how long first copies took: at least 100 ms here, as a hedge won then.
    expect(hedger.delayMs).toBe(100);
    const floor = createHedger({ minDelayMs: 5, windowSize: 1 });
    const q = hedge(() => 'instant', { hedger: floor });
    await q;
    expect(floor.delayMs).toBe(5);
  });
});

describe('hedge(): deadline and abort', () => {
  it('gives up at the deadline with RetryError "deadline" (1 attempt), aborting every copy with its TimeoutError', async () => {
    const { fn, signals } = backend();
    const p = track(hedge(fn, { delayMs: 50, deadlineMs: 300 }));
    await clock.tickAsync(299);
    expect(p.state).toBe('pending');
    await clock.tickAsync(1);
    expect(p.error).toBeInstanceOf(RetryError);
    expect(p.error).toMatchObject({ reason: 'deadline', attempts: 1, elapsedMs: 300 });
    const timeout = (p.error as RetryError).cause;
    expect(timeout).toBeInstanceOf(TimeoutError);
    expect((timeout as TimeoutError).message).toBe('attempt 1 was still running at the deadline after 300 ms');
    // Both copies were aborted with the very TimeoutError the call gave up with.
    expect(signals).toHaveLength(2);
    for (const signal of signals) {
      expect(signal.aborted).toBe(true);
      expect(signal.reason).toBe(timeout);
    }
  });

  it('sends no hedge at or past the deadline', async () => {
    const { fn, starts } = backend();
    const p = track(hedge(fn, { delayMs: 300, deadlineMs: 300 }));
    await clock.tickAsync(300);
    expect(starts).toEqual([0]);
    expect(p.error).toMatchObject({ reason: 'deadline', attempts: 1 });
  });

  it('rejects with signal.reason when the caller aborts, aborting every copy and removing its listener', async () => {
    const controller = new AbortController();
    const { fn, signals } = backend();
    const p = track(hedge(fn, { delayMs: 50, signal: controller.signal }));
    await clock.tickAsync(60);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const reason = new Error('user left');
    controller.abort(reason);
    await clock.tickAsync(0);
    expect(p).toMatchObject({ state: 'rejected', error: reason });
    expect(signals.map((s) => s.reason)).toEqual([reason, reason]);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('never calls fn when the signal is already aborted', async () => {
    const fn = vi.fn(() => 'x');
    const reason = new Error('already');
    await expect(hedge(fn, { delayMs: 5, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(fn).not.toHaveBeenCalled();
  });

  it('leaves no listener on a long-lived signal after many calls', async () => {
    const controller = new AbortController();
    for (let i = 0; i < 50; i++) {
      const { fn } = backend({ ms: 60 }, { ms: 1 });
      const p = hedge(fn, { delayMs: 50, signal: controller.signal });
      await clock.tickAsync(51);
      await p;
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('a signal first read after the copy lost is already aborted', async () => {
    let late: AttemptContext | undefined;
    const p = hedge(
      (ctx) => {
        if (ctx.copy === 1) {
          late = ctx;
          return new Promise<string>(() => {});
        }
        return 'second';
      },
      { delayMs: 10 },
    );
    await clock.tickAsync(10);
    await expect(p).resolves.toBe('second');
    expect(late?.signal.aborted).toBe(true);
  });
});

describe('hedge(): options', () => {
  it('rejects bad options up front, naming the field and the value', async () => {
    const fn = () => 'x';
    await expect(hedge(fn, {})).rejects.toThrow('hedge: options.delayMs or options.hedger must be given (the hedging delay), got neither');
    await expect(hedge(fn, { delayMs: -1 })).rejects.toThrow('hedge: options.delayMs must be a finite number >= 0, got -1');
    await expect(hedge(fn, { delayMs: Number.NaN })).rejects.toThrow(RangeError);
    await expect(hedge(fn, { delayMs: 1, maxCopies: 0 })).rejects.toThrow('hedge: options.maxCopies must be a safe integer >= 1, got 0');
    await expect(hedge(fn, { delayMs: 1, deadlineMs: 0 })).rejects.toThrow('options.deadlineMs must be a number > 0');
    await expect(hedge(fn, { delayMs: 1, hedger: {} as never })).rejects.toThrow(
      'hedge: options.hedger must come from createHedger(), got {}',
    );
    await expect(hedge(fn, { delayMs: 1, onHedge: 'log' as never })).rejects.toThrow(
      'hedge: options.onHedge must be a function, got "log"',
    );
    await expect(hedge(fn, { delayMs: 1, idempotent: 'yes' as never })).rejects.toThrow(
      'options.idempotent must be a boolean or a function',
    );
    await expect(hedge(fn, { delayMs: 1, budget: {} as never })).rejects.toThrow('options.budget must come from createRetryBudget()');
    await expect(hedge(fn, { delayMs: 1, signal: {} as never })).rejects.toThrow('options.signal must be an AbortSignal');
    // retry()'s own signal rule: one that says nothing of its state is refused too.
    await expect(hedge(fn, { delayMs: 1, signal: { addEventListener() {}, removeEventListener() {} } as never })).rejects.toThrow(
      'hedge: options.signal must be an AbortSignal (aborted, addEventListener, removeEventListener), got {}',
    );
    await expect(hedge(fn, { delayMs: 1, delay: 5 } as never)).rejects.toThrow('hedge: unknown option "delay"');
    await expect(hedge('fn' as never, { delayMs: 1 })).rejects.toThrow('hedge: fn must be a function, got "fn"');
    await expect(hedge(fn, null as never)).rejects.toThrow('hedge: options must be an object, got null');
  });

  it('reads own properties only', async () => {
    const inherited = Object.create({ delayMs: 10 }) as { delayMs?: number };
    await expect(hedge(() => 'x', inherited)).rejects.toThrow('got neither');
  });

  it('createHedger rejects bad options, naming the field and the value', () => {
    expect(() => createHedger({ percentile: 0 })).toThrow('createHedger: options.percentile must be a number in (0, 1], got 0');
    expect(() => createHedger({ percentile: 1.5 })).toThrow('options.percentile');
    expect(() => createHedger({ windowSize: 2.5 })).toThrow('createHedger: options.windowSize must be an integer in [1, 10000], got 2.5');
    expect(() => createHedger({ minDelayMs: -1 })).toThrow('options.minDelayMs must be a finite number >= 0, got -1');
    expect(() => createHedger({ minDelayMs: 50, maxDelayMs: 10 })).toThrow(
      'options.maxDelayMs must be a finite number >= minDelayMs (50), got 10',
    );
    expect(() => createHedger({ maxExtraLoad: 2 })).toThrow('options.maxExtraLoad must be a number in [0, 1], got 2');
    expect(() => createHedger({ maxExtraLoad: '5%' as never })).toThrow('got "5%"');
    expect(() => createHedger({ window: 10 } as never)).toThrow('createHedger: unknown option "window"');
    expect(() => createHedger(Object.create({ windowSize: -3 }))).not.toThrow();
  });

  it('createHedger takes the ends of its ranges, and refuses a step past them', () => {
    expect(createHedger({ percentile: 1 }).delayMs).toBe(1000);
    expect(() => createHedger({ windowSize: 1 })).not.toThrow();
    expect(() => createHedger({ windowSize: 10_000 })).not.toThrow();
    expect(() => createHedger({ windowSize: 0 })).toThrow(
      new RangeError('createHedger: options.windowSize must be an integer in [1, 10000], got 0'),
    );
    expect(() => createHedger({ windowSize: 10_001 })).toThrow('options.windowSize must be an integer in [1, 10000], got 10001');
    expect(() => createHedger({ maxExtraLoad: 0 })).not.toThrow();
    expect(() => createHedger({ maxExtraLoad: 1 })).not.toThrow();
    expect(() => createHedger({ maxExtraLoad: -0.01 })).toThrow(
      new RangeError('createHedger: options.maxExtraLoad must be a number in [0, 1], got -0.01'),
    );
    // Not numbers, though `>=` and `<=` would take them for 0.5 and 0.
    expect(() => createHedger({ maxExtraLoad: '0.5' as never })).toThrow('options.maxExtraLoad must be a number in [0, 1], got "0.5"');
    expect(() => createHedger({ maxExtraLoad: null as never })).toThrow('options.maxExtraLoad must be a number in [0, 1], got null');
    // A fixed delay: the floor and the cap may be the same.
    expect(createHedger({ minDelayMs: 50, maxDelayMs: 50 }).delayMs).toBe(50);
    expect(() => createHedger({ minDelayMs: 50, maxDelayMs: 49 })).toThrow(
      new RangeError('createHedger: options.maxDelayMs must be a finite number >= minDelayMs (50), got 49'),
    );
  });

  it('counts an allowance short of a whole hedge by rounding only (1e-9 at most) as a whole one', async () => {
    // Shares of 0.999999999: eleven quick calls bank the most, 10 (whole), which ten hedges spend
    // to exactly 0; the next call's share brings it to 0.999999999, a hedge by the tolerance.
    const hedger = createHedger({ maxExtraLoad: 1 - 1e-9 });
    for (let call = 0; call < 11; call++) await hedge(() => 'quick', { delayMs: 10, hedger });
    const spender = backend();
    const spent = track(hedge(spender.fn, { delayMs: 1, maxCopies: 11, hedger, deadlineMs: 50 }));
    await clock.tickAsync(50);
    expect(spender.starts).toHaveLength(11);
    expect(spent.error).toMatchObject({ reason: 'deadline' });
    const last = backend({ ms: 100 }, { ms: 5 });
    const p = track(hedge(last.fn, { delayMs: 10, hedger }));
    await clock.tickAsync(15);
    expect(last.starts.map((t) => t - last.starts[0]!)).toEqual([0, 10]);
    expect(p.value).toBe('#2');
    expect(hedger.hedges).toBe(11);
  });
});

describe('retry() with hedging(): copies race within each attempt', () => {
  /**
   * A backend scripted per attempt and copy: `steps['2.1']` is copy 1 of attempt 2 (a copy with
   * no step never answers). Records who started when, as "attempt.copy@ms".
   */
  function perAttempt(steps: Record<string, Step>) {
    const started: string[] = [];
    const fn = (ctx: AttemptContext): Promise<string> => {
      const key = `${ctx.attempt}.${ctx.copy}`;
      started.push(`${key}@${Date.now()}`);
      const step = steps[key] ?? { ms: 1_000_000 };
      const { signal } = ctx;
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => (step.error !== undefined ? reject(step.error) : resolve(step.value ?? key)), step.ms);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
    };
    return { fn, started };
  }
  const backoff = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 1_000, jitter: 'none' as const };

  it('backs off when every copy of attempt 1 failed transiently, then attempt 2 sends copies 1 and 2 again', async () => {
    const retries: RetryEvent[] = [];
    const last = httpError(502);
    const { fn, started } = perAttempt({
      '1.1': { ms: 10, error: httpError(503) },
      '1.2': { ms: 10, error: last },
      '2.1': { ms: 500 },
      '2.2': { ms: 10 },
    });
    const p = track(retry(fn, { maxAttempts: 3, backoff, hedge: hedging({ delayMs: 50 }), onRetry: (e) => retries.push(e) }));
    await clock.tickAsync(20);
    // Copy 2 of attempt 1 went out at once after copy 1's 503; both failed: the attempt failed.
    expect(started).toEqual(['1.1@0', '1.2@10']);
    expect(retries).toEqual([{ attempt: 1, error: last, value: undefined, delayMs: 100, elapsedMs: 20 }]);
    await clock.tickAsync(99);
    expect(started).toHaveLength(2); // still backing off
    await clock.tickAsync(1);
    expect(started).toEqual(['1.1@0', '1.2@10', '2.1@120']);
    await clock.tickAsync(50);
    expect(started).toEqual(['1.1@0', '1.2@10', '2.1@120', '2.2@170']);
    await clock.tickAsync(10);
    expect(p).toMatchObject({ state: 'resolved', value: '2.2' });
  });

  it('gives up with RetryError "attempts" after maxAttempts attempts whose copies all failed', async () => {
    const last = httpError(500);
    const { fn, started } = perAttempt({
      '1.1': { ms: 5, error: httpError(503) },
      '1.2': { ms: 5, error: httpError(503) },
      '2.1': { ms: 5, error: httpError(503) },
      '2.2': { ms: 5, error: last },
    });
    const p = track(retry(fn, { maxAttempts: 2, backoff, hedge: hedging({ delayMs: 50 }) }));
    await clock.tickAsync(1_000);
    expect(started).toEqual(['1.1@0', '1.2@5', '2.1@110', '2.2@115']);
    expect(p.error).toBeInstanceOf(RetryError);
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 2, cause: last });
  });

  it('reports onHedge with the attempt and the copy of each extra copy', async () => {
    const events: HedgeEvent[] = [];
    const unavailable = httpError(503);
    const { fn } = perAttempt({ '1.1': { ms: 10, error: unavailable }, '1.2': { ms: 10, error: httpError(503) }, '2.2': { ms: 10 } });
    const p = track(retry(fn, { maxAttempts: 3, backoff, hedge: hedging({ delayMs: 50, onHedge: (e) => events.push(e) }) }));
    await clock.tickAsync(1_000);
    expect(p.value).toBe('2.2');
    expect(events).toEqual([
      { attempt: 1, copy: 2, reason: 'error', error: unavailable, delayMs: 50, elapsedMs: 10 },
      { attempt: 2, copy: 2, reason: 'delay', error: undefined, delayMs: 50, elapsedMs: 170 },
    ]);
  });

  it('waits as long as a Retry-After asks before the next attempt, sending no copy meanwhile', async () => {
    const busy = httpError(503, { headers: { 'retry-after': '2' } });
    const { fn, started } = perAttempt({ '1.1': { ms: 5, error: busy }, '2.1': { ms: 5 } });
    const p = track(retry(fn, { maxAttempts: 3, backoff, hedge: hedging({ delayMs: 20 }) }));
    await clock.tickAsync(2_004);
    expect(started).toEqual(['1.1@0']);
    await clock.tickAsync(1);
    expect(started).toEqual(['1.1@0', '2.1@2005']);
    await clock.tickAsync(5);
    expect(p).toMatchObject({ state: 'resolved', value: '2.1' });
  });

  // Regression (issue 34): the attempt failed with copy 2's plain 503 and forgot copy 1's hint:
  // the next attempt went out after the 1 ms backoff, and the gate never heard of the pause.
  it('waits the longest hint any copy got, from when it came, and tells the gate at once (loopback, real fetch)', async () => {
    const arrived: number[] = [];
    const server = await startLoopback((_req, res) => {
      arrived.push(Date.now());
      const answer =
        (status: number, headers: Record<string, string> = {}) =>
        () => {
          res.writeHead(status, headers);
          res.end(`status ${status}`);
        };
      // Copies 1 and 2 each answer 200 ms after they arrive: a 429 asking for 1 s, then a plain 503.
      if (arrived.length === 1) setTimeout(answer(429, { 'retry-after': '1' }), 200);
      else if (arrived.length === 2) setTimeout(answer(503), 200);
      else answer(200)();
    });
    try {
      const answered: number[] = [];
      const fetchFn: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        answered.push(res.status);
        return res;
      };
      const gate = createRetryAfterGate({ spread: false });
      const retries: RetryEvent[] = [];
      const constant1ms = { initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitter: 'none' as const };
      const onRetry = (e: RetryEvent) => retries.push(e);
      const options = { fetch: fetchFn, gate, backoff: constant1ms, maxAttempts: 3, hedge: hedging({ delayMs: 100 }), onRetry };
      const call = track(retryFetch(server.url, undefined, options));
      await ioUntil(() => arrived.length === 1, 'copy 1 reached the server');
      await clock.tickAsync(100);
      await ioUntil(() => arrived.length === 2, 'copy 2 reached the server');
      expect(arrived).toEqual([0, 100]);
      await clock.tickAsync(100);
      await ioUntil(() => answered.length === 1, "copy 1's 429 came back");
      expect(gate.waitMs()).toBe(1000); // told at once, while copy 2 still runs
      await clock.tickAsync(100);
      await ioUntil(() => retries.length === 1, "copy 2's 503 failed the attempt");
      expect(answered).toEqual([429, 503]);
      // The attempt failed with the last copy's 503; the wait is what is left of copy 1's second.
      expect(retries).toMatchObject([{ attempt: 1, error: { status: 503 }, delayMs: 900 }]);
      await clock.tickAsync(899);
      expect(arrived).toHaveLength(2);
      await clock.tickAsync(1);
      await ioUntil(() => call.state !== 'pending', 'the call settled');
      expect(arrived).toEqual([0, 100, 1200]);
      expect((call.value as Response).status).toBe(200);
    } finally {
      await server.close();
      await clock.runAllAsync(); // undici's own timers (its keep-alive clock) run on the virtual clock
    }
  });

  it('waits for the last copy’s own hint when it asks for longer than an earlier copy’s', async () => {
    const { fn, started } = perAttempt({
      '1.1': { ms: 200, error: httpError(429, { headers: { 'retry-after': '1' } }) },
      '1.2': { ms: 200, error: httpError(503, { headers: { 'retry-after': '2' } }) },
      '2.1': { ms: 5 },
    });
    const gate = createRetryAfterGate({ spread: false });
    const retries: RetryEvent[] = [];
    const p = track(retry(fn, { backoff, gate, hedge: hedging({ delayMs: 100 }), onRetry: (e) => retries.push(e) }));
    await clock.tickAsync(300);
    expect(retries.map((e) => e.delayMs)).toEqual([2000]);
    expect(gate.waitMs()).toBe(2000);
    await clock.tickAsync(2005);
    expect(started).toEqual(['1.1@0', '1.2@100', '2.1@2300']);
    expect(p.value).toBe('2.1');
  });

  it('tells the gate nothing of a hint on a copy’s error that is not retried', async () => {
    const refused = httpError(400, { headers: { 'retry-after': '9' } });
    const { fn } = perAttempt({ '1.1': { ms: 200 }, '1.2': { ms: 10, error: refused } });
    const gate = createRetryAfterGate({ spread: false });
    const p = track(retry(fn, { backoff, gate, hedge: hedging({ delayMs: 100 }) }));
    await clock.tickAsync(110);
    expect(p.error).toBe(refused);
    expect(gate.waitMs()).toBe(0);
  });

  it('holds a copy during a pause another call’s server asked for, and sends it when the pause ends, its spread cut to the deadline', async () => {
    const gate = createRetryAfterGate({ rng: () => 0.9 });
    const { fn, started } = perAttempt({ '1.2': { ms: 5 } });
    const p = track(retry(fn, { backoff, gate, deadlineMs: 1500, hedge: hedging({ delayMs: 100 }) }));
    await clock.tickAsync(50);
    gate.hold(1000); // until 1050: the copy due at 100 waits
    await clock.tickAsync(50);
    expect(started).toEqual(['1.1@0']);
    // 950 ms of pause, then 0.9 of the 449 ms the deadline leaves after it: at 1454.1, on the 1455 timer turn.
    await clock.tickAsync(1354);
    expect(started).toEqual(['1.1@0']);
    await clock.tickAsync(1);
    expect(started).toEqual(['1.1@0', '1.2@1455']);
    await clock.tickAsync(5);
    expect(p.value).toBe('1.2');
  });

  it('a copy’s ctx.progress() is the attempt’s: the deadline counts afresh, and a copy it held back goes out', async () => {
    // Deadline 100: copy 3 (due at 120) would be at or after it. Copy 2 reports progress at 90,
    // so the deadline moves to 190 and copy 3 goes out at 120 and wins.
    const started: number[] = [];
    const fn = (ctx: AttemptContext): Promise<string> => {
      started.push(Date.now());
      if (ctx.copy === 2) setTimeout(() => ctx.progress(), 30);
      return new Promise<string>((resolve, reject) => {
        const timer = ctx.copy === 3 ? setTimeout(() => resolve(`${ctx.attempt}.${ctx.copy}`), 10) : undefined;
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(ctx.signal.reason);
        });
      });
    };
    const p = track(retry(fn, { maxAttempts: 1, deadlineMs: 100, hedge: hedging({ delayMs: 60, maxCopies: 3 }) }));
    await clock.tickAsync(100);
    expect(p.state).toBe('pending'); // without the progress, the deadline would have ended it
    await clock.tickAsync(30);
    expect(started).toEqual([0, 60, 120]);
    expect(p).toMatchObject({ state: 'resolved', value: '1.3' });
  });

  it('without progress, sends no copy at the deadline: no onHedge, no budget token spent', async () => {
    // The next copy and the deadline are due at the same moment, 100: the copy must not go.
    const budget = createRetryBudget({ maxTokens: 10 });
    const onHedge = vi.fn();
    const started: number[] = [];
    const fn = (ctx: AttemptContext): Promise<string> => {
      started.push(Date.now());
      return new Promise<string>((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
    };
    const p = track(retry(fn, { maxAttempts: 1, deadlineMs: 100, budget, hedge: hedging({ delayMs: 100, onHedge }) }));
    await clock.tickAsync(100);
    expect(started).toEqual([0]);
    expect(onHedge).not.toHaveBeenCalled();
    expect(budget.tokens).toBe(10);
    expect(p.error).toMatchObject({ reason: 'deadline', attempts: 1 });
  });

  it('hedging() rejects bad options up front, naming hedging: options.<field>', () => {
    expect(() => hedging({})).toThrow(
      new TypeError('hedging: options.delayMs or options.hedger must be given (the hedging delay), got neither'),
    );
    expect(() => hedging({ delayMs: -1 })).toThrow('hedging: options.delayMs must be a finite number >= 0, got -1');
    expect(() => hedging({ delayMs: Number.POSITIVE_INFINITY })).toThrow(RangeError);
    expect(() => hedging({ delayMs: 1, maxCopies: 1.5 })).toThrow('hedging: options.maxCopies must be a safe integer >= 1, got 1.5');
    expect(() => hedging({ delayMs: 1, hedger: {} as never })).toThrow('hedging: options.hedger must come from createHedger(), got {}');
    expect(() => hedging({ delayMs: 1, onHedge: 'log' as never })).toThrow('hedging: options.onHedge must be a function, got "log"');
    // The call's own options belong to retry(), not to the mode.
    expect(() => hedging({ delayMs: 1, deadlineMs: 100 } as never)).toThrow('hedging: unknown option "deadlineMs"');
    expect(() => hedging(null as never)).toThrow('hedging: options must be an object, got null');
  });

  it('retry() refuses a plain object as hedge: it must come from hedging()', async () => {
    const fn = vi.fn(() => 'x');
    await expect(retry(fn, { hedge: { delayMs: 50 } as never })).rejects.toThrow(TypeError);
    await expect(retry(fn, { hedge: { delayMs: 50 } as never })).rejects.toThrow('retry: options.hedge must come from hedging()');
    expect(fn).not.toHaveBeenCalled();
  });
});

describe('retry() with hedging(): a policy that throws is a bug, not a failure to retry', () => {
  it('ends the call with what the budget threw, unchanged, though attempts remain', async () => {
    const bug = new Error('budget bug');
    const budget = {
      record() {},
      canRetry(): boolean {
        throw bug;
      },
    };
    const { fn, starts } = backend({ ms: 100 });
    const gaveUp = vi.fn();
    const p = track(retry(fn, { hedge: hedging({ delayMs: 10 }), budget, maxAttempts: 5, onGiveUp: gaveUp }));
    await clock.tickAsync(10);
    expect(p).toMatchObject({ state: 'rejected', error: bug });
    expect(starts).toEqual([0]);
    expect(gaveUp).toHaveBeenCalledWith(expect.objectContaining({ reason: 'not-retryable', error: bug, attempts: 1 }));
  });
});

describe('latency window (pure)', () => {
  it('nearestRank: the smallest value with at least p of the values at or below it', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(nearestRank(hundred, 0.95)).toBe(95);
    expect(nearestRank(hundred, 1)).toBe(100);
    expect(nearestRank(hundred, 0.001)).toBe(1);
    expect(nearestRank([7], 0.5)).toBe(7);
    expect(nearestRank([], 0.5)).toBeNaN();
  });

  it('property: the window’s percentile is nearestRank of its last `size` latencies', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 80 }),
        fc.double({ min: 0.001, max: 1, noNaN: true }),
        (size, latencies, p) => {
          const window = createLatencyWindow(size);
          for (const ms of latencies) window.record(ms);
          const kept = latencies.slice(-size).sort((a, b) => a - b);
          expect(window.count).toBe(kept.length);
          expect(Object.is(window.percentile(p), nearestRank(kept, p))).toBe(true);
        },
      ),
    );
  });

  it('property: a percentile lies within the window and grows with p', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 50 }),
        fc.double({ min: 0.001, max: 1, noNaN: true }),
        fc.double({ min: 0.001, max: 1, noNaN: true }),
        (latencies, p, q) => {
          const window = createLatencyWindow(64);
          for (const ms of latencies) window.record(ms);
          const [lo, hi] = p <= q ? [p, q] : [q, p];
          expect(window.percentile(lo)).toBeLessThanOrEqual(window.percentile(hi));
          expect(window.percentile(lo)).toBeGreaterThanOrEqual(Math.min(...latencies));
          expect(window.percentile(hi)).toBeLessThanOrEqual(Math.max(...latencies));
        },
      ),
    );
  });
});

describe('a hedged attempt: what each copy is told', () => {
  it('gives a copy one signal however often it is read, which aborts when the copy loses', async () => {
    const reads: AbortSignal[] = [];
    const fn = (ctx: AttemptContext): Promise<string> => {
      if (ctx.copy === 2) return Promise.resolve('second');
      reads.push(ctx.signal, ctx.signal);
      return new Promise<string>(() => {});
    };
    const p = track(hedge(fn, { delayMs: 10 }));
    await clock.tickAsync(10);
    expect(p.value).toBe('second');
    expect(reads[1]).toBe(reads[0]);
    expect(reads[0]?.aborted).toBe(true);
  });

  it('aborts a loser whose signal is first read after the race with the AbortError naming the winner', async () => {
    let loser: AttemptContext | undefined;
    const fn = (ctx: AttemptContext): Promise<string> | string => {
      if (ctx.copy === 2) return 'second';
      loser = ctx;
      return new Promise<string>(() => {});
    };
    const p = track(hedge(fn, { delayMs: 10 }));
    await clock.tickAsync(10);
    expect(p.value).toBe('second');
    const reason = loser?.signal.reason as DOMException;
    expect(reason).toBeInstanceOf(DOMException);
    expect([reason.name, reason.message]).toEqual(['AbortError', 'copy 2 of attempt 1 won']);
  });

  it('gives a copy that ended by its own outcome, read first after it, a signal aborted with a TimeoutError naming it', async () => {
    const contexts: AttemptContext[] = [];
    const fn = (ctx: AttemptContext): Promise<string> => {
      contexts.push(ctx);
      return new Promise<string>((resolve, reject) => {
        setTimeout(() => (ctx.copy === 1 ? reject(httpError(503)) : resolve('second')), 5);
      });
    };
    const p = track(hedge(fn, { delayMs: 50 }));
    await clock.tickAsync(5);
    // Copy 1 failed; copy 2 went out at once and is running.
    expect(contexts).toHaveLength(2);
    const failed = contexts[0]?.signal as AbortSignal;
    expect(failed.aborted).toBe(true);
    expect(failed.reason).toEqual(new TimeoutError('copy 1 of attempt 1 has ended'));
    await clock.tickAsync(5);
    expect(p.value).toBe('second');
    expect(contexts[1]?.signal.reason).toEqual(new TimeoutError('copy 2 of attempt 1 has ended'));
  });

  it('tells each copy the time since the call began and the time left, from when the copy went out', async () => {
    await clock.tickAsync(1000); // the call does not begin at the clock's 0
    const told: Array<[number, number, number]> = [];
    const fn = (ctx: AttemptContext): Promise<string> => {
      told.push([ctx.copy, ctx.elapsedMs, ctx.remainingMs]);
      return new Promise<string>((resolve) => setTimeout(() => resolve(`#${ctx.copy}`), ctx.copy === 1 ? 500 : 10));
    };
    const p = track(hedge(fn, { delayMs: 50, deadlineMs: 300 }));
    await clock.tickAsync(60);
    expect(p.value).toBe('#2');
    expect(told).toEqual([
      [1, 0, 300],
      [2, 50, 250],
    ]);
    await clock.tickAsync(500); // the loser's timer
  });
});

describe('a hedged attempt: when it ends', () => {
  it('aborts the copies still running with an AbortError saying the attempt failed, when one fails for good', async () => {
    const { fn, signals } = backend({ ms: 1000 }, { ms: 5, error: httpError(403) });
    const p = track(hedge(fn, { delayMs: 50 }));
    await clock.tickAsync(55);
    expect(p.state).toBe('rejected');
    const reason = signals[0]?.reason as DOMException;
    expect(reason).toBeInstanceOf(DOMException);
    expect([reason.name, reason.message]).toEqual(['AbortError', 'the hedged attempt has failed']);
  });

  it('keeps a loser that answers late out of the hedger’s window', async () => {
    // The window keeps the largest latency with percentile 1: the attempt's, 60 ms, not the loser's 100.
    const hedger = createHedger({ percentile: 1, maxExtraLoad: 1 });
    const { fn } = backend({ ms: 100, ignoreAbort: true }, { ms: 10 });
    const p = track(hedge(fn, { hedger, delayMs: 50 }));
    await clock.tickAsync(60);
    expect(p.value).toBe('#2');
    await clock.tickAsync(40);
    expect(hedger.delayMs).toBe(60);
  });

  it('asks the retryable predicate nothing about a loser that fails late', async () => {
    const late = httpError(503);
    const retryable = vi.fn(() => true);
    const { fn } = backend({ ms: 100, error: late, ignoreAbort: true }, { ms: 10 });
    const p = track(hedge(fn, { delayMs: 50, maxCopies: 3, retryable }));
    await clock.tickAsync(60);
    expect(p.value).toBe('#2');
    await clock.tickAsync(100);
    expect(retryable).not.toHaveBeenCalled();
  });

  it('sends nothing more when a loser reports progress after the attempt ended', async () => {
    let loser: AttemptContext | undefined;
    const started: number[] = [];
    const fn = (ctx: AttemptContext): Promise<string> => {
      started.push(Date.now());
      if (ctx.copy === 2) return new Promise<string>((resolve) => setTimeout(() => resolve('second'), 10));
      loser = ctx;
      return new Promise<string>(() => {});
    };
    const p = track(hedge(fn, { delayMs: 50, maxCopies: 3 }));
    await clock.tickAsync(60);
    expect(p.value).toBe('second');
    loser?.progress();
    await clock.tickAsync(200);
    expect(started).toEqual([0, 50]);
  });

  it('sends no copy when onHedge aborts the call', async () => {
    const controller = new AbortController();
    const reason = new Error('user left');
    const { fn, starts } = backend();
    const p = track(hedge(fn, { delayMs: 10, signal: controller.signal, onHedge: () => controller.abort(reason) }));
    await clock.tickAsync(10);
    expect(p).toMatchObject({ state: 'rejected', error: reason });
    expect(starts).toEqual([0]);
  });

  it('calls no copy when the call was aborted as its attempt began (an onEvent listener did it)', async () => {
    const controller = new AbortController();
    const reason = new Error('user left');
    const fn = vi.fn(() => 'x');
    const p = track(
      retry(fn, {
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === 'attempt') controller.abort(reason);
        },
        hedge: hedging({ delayMs: 10 }),
      }),
    );
    await clock.tickAsync(100);
    expect(p).toMatchObject({ state: 'rejected', error: reason });
    expect(fn).not.toHaveBeenCalled();
  });

  it('rejects with the caller’s reason when it aborts the backoff after a failed hedged attempt, and the ended attempt raises nothing', async () => {
    const controller = new AbortController();
    const reason = new Error('user left');
    const { fn, starts } = backend({ ms: 5, error: httpError(503) }, { ms: 5, error: httpError(503) });
    // A fixed 1 s backoff: a jittered one could end inside the 20 ms looked at.
    const backoff = { initialDelayMs: 1000, multiplier: 1, maxDelayMs: 1000, jitter: 'none' } as const;
    const p = track(retry(fn, { signal: controller.signal, maxAttempts: 3, backoff, hedge: hedging({ delayMs: 50 }) }));
    await clock.tickAsync(20);
    expect(starts).toEqual([0, 5]); // copy 2 goes at once when copy 1 fails; then the call sleeps
    controller.abort(reason);
    await clock.tickAsync(0);
    expect(p).toMatchObject({ state: 'rejected', error: reason });
  });
});

describe('a hedged attempt: the call’s policies', () => {
  it('a copy’s hint with a budget and no gate: heard, and the next attempt waits it', async () => {
    const sent: number[] = [];
    const fn = () => {
      sent.push(clock.now);
      if (sent.length === 1) return Promise.reject(httpError(503, { headers: { 'retry-after': '1' } }));
      return Promise.resolve('ok');
    };
    const p = track(
      retry(fn, { budget: createRetryBudget(), hedge: hedging({ delayMs: 20 }), backoff: { initialDelayMs: 1, jitter: 'none' } }),
    );
    await clock.tickAsync(1000);
    expect(p.value).toBe('ok');
    expect(sent).toEqual([0, 1000]);
  });

  it('a hint that has run out by the time the attempt fails is no hint: the gate hears only the one asked', async () => {
    // Copy 1 (sent at 0) fails at 10 asking for a second; copy 2 (sent at 1) fails, plainly, as
    // that second ends or after it: the attempt fails with copy 2's error and no hint is left.
    for (const lastFailsAt of [1010, 1500]) {
      const held: number[] = [];
      const gate = { waitMs: () => 0, hold: (ms: number) => void held.push(ms) };
      let copies = 0;
      const fn = () => {
        copies++;
        if (copies === 1)
          return new Promise((_, reject) => setTimeout(() => reject(httpError(503, { headers: { 'retry-after': '1' } })), 10));
        if (copies === 2) return new Promise((_, reject) => setTimeout(() => reject(httpError(503)), lastFailsAt - 1));
        return Promise.resolve('ok');
      };
      const events: RetryEvent[] = [];
      const p = track(
        retry(fn, {
          gate,
          hedge: hedging({ delayMs: 1, maxCopies: 2 }),
          backoff: { initialDelayMs: 10, jitter: 'none' },
          onRetry: (e) => void events.push(e),
        }),
      );
      await clock.tickAsync(lastFailsAt + 10);
      expect(p.value).toBe('ok');
      expect({ lastFailsAt, held, copies }).toEqual({ lastFailsAt, held: [1000], copies: 3 });
      expect(events.map((e) => e.delayMs)).toEqual([10]);
    }
  });

  it('asks no idempotent rule when maxCopies is 1: no copy could be sent', async () => {
    const idempotent = vi.fn(() => true);
    const { fn, starts } = backend({ ms: 100 });
    const p = track(hedge(fn, { delayMs: 10, maxCopies: 1, idempotent }));
    await clock.tickAsync(100);
    expect(p.value).toBe('#1');
    expect(starts).toEqual([0]);
    expect(idempotent).not.toHaveBeenCalled();
  });

  it('asks the throttle to admit each extra copy, and asks again one delay after it refused', async () => {
    const answers = [true, false, true]; // the attempt, the first ask for copy 2, the second
    const admit = vi.fn(() => answers.shift() ?? false);
    const throttle = { admit, record() {}, error: () => new Error('throttled') };
    const { fn, starts } = backend({ ms: 1000 }, { ms: 5 });
    const p = track(retry(fn, { throttle, hedge: hedging({ delayMs: 20 }) }));
    await clock.tickAsync(45);
    expect(starts).toEqual([0, 40]);
    expect(admit).toHaveBeenCalledTimes(3);
    expect(p.value).toBe('#2');
  });

  // Regression (issue 34): the allowance was taken before throttle.admit(), so a copy the throttle
  // refused counted in hedger.hedges and used the allowance up: the copy it later admitted never went.
  it('charges the hedger only for copies sent: one the throttle refused keeps the allowance for a later one', async () => {
    const hedger = createHedger({ maxExtraLoad: 0 }); // an allowance of exactly one hedge, ever
    const draws = [0.9, 0.1, 0.9]; // admit the attempt, refuse the first ask for copy 2, admit the second
    const throttle = createAdaptiveThrottle({ k: 1, minRequests: 0, rng: () => draws.shift() ?? 0 });
    for (let i = 0; i < 3; i++) throttle.record(false); // an overloaded server: rejection probability 3/4
    const { fn, starts } = backend({ ms: 1000 }, { ms: 5 });
    const p = track(retry(fn, { throttle, hedge: hedging({ delayMs: 20, hedger }) }));
    await clock.tickAsync(20);
    expect(starts).toEqual([0]); // the throttle refused copy 2
    expect(hedger.hedges).toBe(0);
    await clock.tickAsync(25);
    expect(starts).toEqual([0, 40]);
    expect(hedger.hedges).toBe(1);
    expect(p.value).toBe('#2');
  });

  it('records with the throttle a copy that failed while another raced on, as a request not accepted', async () => {
    const throttle = createAdaptiveThrottle();
    const { fn } = backend({ ms: 30, error: httpError(503) }, { ms: 20 });
    const p = track(retry(fn, { throttle, hedge: hedging({ delayMs: 20 }) }));
    await clock.tickAsync(40);
    expect(p.value).toBe('#2');
    expect([throttle.requests, throttle.accepts]).toEqual([2, 1]);
  });

  it('reports a copy sent after a transient error, while another copy races on, as reason "error"', async () => {
    const events: HedgeEvent[] = [];
    const unavailable = httpError(503);
    const { fn, starts } = backend({ ms: 1000 }, { ms: 5, error: unavailable }, { ms: 5 });
    const p = track(hedge(fn, { delayMs: 50, maxCopies: 3, onHedge: (e) => events.push(e) }));
    await clock.tickAsync(60);
    expect(starts).toEqual([0, 50, 55]);
    expect(events.map(({ copy, reason, error }) => ({ copy, reason, error }))).toEqual([
      { copy: 2, reason: 'delay', error: undefined },
      { copy: 3, reason: 'error', error: unavailable },
    ]);
    expect(p.value).toBe('#3');
  });

  it('sends no copy for a transient error at the very deadline: the attempt fails with it, no token spent', async () => {
    // The copy's failure is due at 100 as the deadline is, and its timer comes first.
    let fail: (error: unknown) => void = () => {};
    const unavailable = httpError(503);
    setTimeout(() => fail(unavailable), 100);
    const budget = createRetryBudget({ maxTokens: 10 });
    const onHedge = vi.fn();
    const started: number[] = [];
    const fn = (ctx: AttemptContext): Promise<string> => {
      started.push(Date.now());
      return new Promise<string>((_, reject) => {
        if (ctx.copy === 1) fail = reject;
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
      });
    };
    const p = track(hedge(fn, { delayMs: 1000, deadlineMs: 100, budget, onHedge }));
    await clock.tickAsync(100);
    expect(started).toEqual([0]);
    expect(onHedge).not.toHaveBeenCalled();
    expect(budget.tokens).toBe(9); // the 503's own cost, as any failure's
    expect(p.error).toMatchObject({ reason: 'attempts', attempts: 1, cause: unavailable });
  });

  it('asks again for a copy the budget refused one delay later, whatever progress comes meanwhile', async () => {
    let open = false;
    const budget = { record() {}, canRetry: () => open };
    const started: number[] = [];
    const fn = (ctx: AttemptContext): Promise<string> => {
      started.push(Date.now());
      if (ctx.copy === 1) {
        setTimeout(() => {
          open = true;
          ctx.progress();
        }, 70);
      }
      return new Promise<string>((resolve) => setTimeout(() => resolve(`#${ctx.copy}`), ctx.copy === 1 ? 1000 : 10));
    };
    const p = track(hedge(fn, { delayMs: 50, budget }));
    await clock.tickAsync(110);
    // Refused at 50, asked again at 100: the progress at 70 did not hasten it.
    expect(started).toEqual([0, 100]);
    expect(p.value).toBe('#2');
    await clock.tickAsync(1000); // the loser's timer
  });

  it('sends at once, on progress, a copy the old deadline held back after the budget refused it', async () => {
    // Deadline 150. Refused at 50 and at 100; the next ask, at 150, falls on the deadline and is
    // not queued. Progress at 110 lifts the deadline: the copy goes at once.
    let open = false;
    const budget = { record() {}, canRetry: () => open };
    const started: number[] = [];
    const fn = (ctx: AttemptContext): Promise<string> => {
      started.push(Date.now());
      if (ctx.copy === 1) {
        setTimeout(() => {
          open = true;
          ctx.progress();
        }, 110);
      }
      return new Promise<string>((resolve) => setTimeout(() => resolve(`#${ctx.copy}`), ctx.copy === 1 ? 1000 : 10));
    };
    const p = track(hedge(fn, { delayMs: 50, deadlineMs: 150, budget }));
    await clock.tickAsync(125);
    // At once: on the timer's next turn, which a fake clock puts 1 ms on.
    expect(started).toHaveLength(2);
    expect(started[1]).toBeGreaterThanOrEqual(110);
    expect(started[1]).toBeLessThanOrEqual(111);
    expect(p.value).toBe('#2');
    await clock.tickAsync(1000); // the loser's timer
  });
});

// Found by the simulation (test/sim): Promise.resolve hands a native promise back as it is, and
// its own `then` was called outside the copy's try: thrown from the first copy, the attempt
// failed but its hedge timer lived on; thrown from a copy the timer sent, it escaped the timer.
describe('a hedged copy whose promise has a then that throws', () => {
  /** A native promise that never settles, with an own `then` that throws a 503. */
  const throwingThen = (): Promise<never> =>
    Object.assign(new Promise<never>(() => {}), {
      then() {
        throw httpError(503);
      },
    });

  it('from the first copy: the copy failed with it, the next copy goes at its time, and nothing goes after the call ends', async () => {
    const sent: number[] = [];
    const p = track(
      retry(
        () => {
          sent.push(clock.now);
          return sent.length === 1 ? throwingThen() : 'second';
        },
        { hedge: hedging({ delayMs: 100, maxCopies: 2 }), maxAttempts: 1 },
      ),
    );
    await clock.tickAsync(1000);
    expect(p.value).toBe('second');
    expect(sent).toEqual([0, 0]);
  });

  it('from a copy the timer sent: the attempt fails with it, no exception escapes, the call ends', async () => {
    const sent: number[] = [];
    const p = track(
      retry(
        () => {
          sent.push(clock.now);
          return sent.length === 1 ? new Promise<never>(() => {}) : throwingThen();
        },
        { hedge: hedging({ delayMs: 100, maxCopies: 2 }), maxAttempts: 1, deadlineMs: 5000 },
      ),
    );
    await clock.tickAsync(5000);
    expect(sent).toEqual([0, 100]);
    expect(p.state).not.toBe('pending');
  });
});
