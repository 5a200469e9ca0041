// What the engine tells a retry budget and an adaptive throttle, and when: the throttle admits
// each attempt and hears every judged outcome (served, or a transient failure), the budget hears
// transient failures and successes and is asked before each retry; an abandoned or aborted
// attempt is told to neither. Either one throwing fails that call with its error, and no other.
// (test/fleet has the budget's and the throttle's own rules, with real ones.)
import { describe, expect, it } from 'vitest';
import { type GiveUpReason, type RetryOptions, retry } from '../../src/index.js';
import { constant, hang, script } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

/** A budget and a throttle that admit and allow everything, and log every question and record, in order. */
function recorder(admits = Number.POSITIVE_INFINITY) {
  const log: string[] = [];
  const refusal = new Error('throttled');
  let left = admits;
  const budget = {
    record: (success: boolean) => void log.push(`budget ${success}`),
    canRetry: () => {
      log.push('canRetry');
      return true;
    },
  };
  const throttle = {
    admit: () => {
      log.push('admit');
      return left-- > 0;
    },
    record: (accepted: boolean) => void log.push(`throttle ${accepted}`),
    error: () => refusal,
  };
  return { log, budget, throttle, refusal };
}

const busy = () => httpError(503);

describe('what each outcome records', () => {
  const cases: Array<[string, (ctx: { attempt: number }) => unknown, RetryOptions, string[]]> = [
    ['a first success', () => 'ok', {}, ['admit', 'budget true', 'throttle true']],
    [
      'a transient failure, then a success',
      (ctx) => (ctx.attempt === 1 ? Promise.reject(busy()) : 'ok'),
      {},
      ['admit', 'throttle false', 'budget false', 'canRetry', 'admit', 'budget true', 'throttle true'],
    ],
    ['an error that is not transient: served, and no budget spent', () => Promise.reject(httpError(403)), {}, ['admit', 'throttle true']],
    [
      'a transient failure of an operation not to be resent: recorded, but no retry asked for',
      () => Promise.reject(busy()),
      { idempotent: false },
      ['admit', 'throttle false', 'budget false'],
    ],
    [
      'the last attempt failing: recorded, but no retry asked for',
      () => Promise.reject(busy()),
      { maxAttempts: 1 },
      ['admit', 'throttle false', 'budget false'],
    ],
    [
      'a value retryOnResult rejects (served, but spends the budget), then one it accepts',
      (ctx) => ctx.attempt,
      { retryOnResult: (n: unknown) => n === 1 },
      ['admit', 'throttle true', 'budget false', 'canRetry', 'admit', 'budget true', 'throttle true'],
    ],
    [
      'an attempt timeout: a transient failure',
      (ctx) => (ctx.attempt === 1 ? hang() : 'ok'),
      { attemptTimeoutMs: 50 },
      ['admit', 'throttle false', 'budget false', 'canRetry', 'admit', 'budget true', 'throttle true'],
    ],
    ['an attempt abandoned at the deadline: nothing', () => hang(), { deadlineMs: 50 }, ['admit']],
  ];

  it.each(cases)('%s', async (_what, fn, options, expected) => {
    const { log, budget, throttle } = recorder();
    const p = track(retry(fn as () => unknown, { backoff: constant(10), ...options, budget, throttle }));
    await clock.tickAsync(1000);
    expect(p.state).not.toBe('pending');
    expect(log).toEqual(expected);
  });

  it('an attempt the caller aborts: nothing but its admission', async () => {
    const { log, budget, throttle } = recorder();
    const controller = new AbortController();
    const p = track(retry(hang, { budget, throttle, signal: controller.signal }));
    await clock.tickAsync(100);
    controller.abort('stop');
    await clock.tickAsync(0);
    expect(p.error).toBe('stop');
    expect(log).toEqual(['admit']);
  });

  it('an attempt the throttle refuses is not made: the call rejects with its error, reason "throttled"', async () => {
    const { log, budget, throttle, refusal } = recorder(1);
    const reasons: GiveUpReason[] = [];
    const { fn } = script(busy());
    const p = track(retry(fn, { backoff: constant(10), budget, throttle, onGiveUp: ({ reason }) => void reasons.push(reason) }));
    await clock.tickAsync(1000);
    expect(p.error).toBe(refusal);
    expect(reasons).toEqual(['throttled']);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(log).toEqual(['admit', 'throttle false', 'budget false', 'canRetry', 'admit']);
  });
});

describe('a budget or throttle that throws fails that call with its error, and no other', () => {
  const broken = new Error('metrics sink down');
  const boom = () => {
    throw broken;
  };
  const faulty: Array<[string, (r: ReturnType<typeof recorder>) => RetryOptions]> = [
    ['throttle.admit, on the first attempt', (r) => ({ throttle: { ...r.throttle, admit: boom } })],
    [
      'throttle.admit, on a later attempt',
      (r) => {
        let admitted = 0;
        return { throttle: { ...r.throttle, admit: () => (++admitted > 1 ? boom() : true) } };
      },
    ],
    ['throttle.record(false)', (r) => ({ throttle: { ...r.throttle, record: (ok: boolean) => (ok ? undefined : boom()) } })],
    ['budget.record(false)', (r) => ({ budget: { ...r.budget, record: (ok: boolean) => (ok ? undefined : boom()) } })],
    ['budget.canRetry', (r) => ({ budget: { ...r.budget, canRetry: boom } })],
  ];

  it.each(faulty)('%s', async (_where, make) => {
    const reasons: GiveUpReason[] = [];
    const { fn } = script(busy());
    const p = track(retry(fn, { backoff: constant(10), ...make(recorder()), onGiveUp: ({ reason }) => void reasons.push(reason) }));
    const bystander = track(retry(script(busy()).fn, { backoff: constant(10) }));
    await clock.tickAsync(1000);
    expect(p.error).toBe(broken);
    expect(reasons).toEqual(['not-retryable']);
    expect(bystander).toMatchObject({ state: 'resolved', value: 'ok' });
  });

  it('budget.record(true) or throttle.record(true) throwing on the async success path rejects with that error', async () => {
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
});

describe('a success that the budget or throttle fails to record', () => {
  it('tells onGiveUp the reason "not-retryable" with that error, and onSuccess nothing', async () => {
    const broken = new Error('metrics sink down');
    const budget = {
      record: (success: boolean) => {
        if (success) throw broken;
      },
      canRetry: () => true,
    };
    const reasons: Array<[GiveUpReason, unknown]> = [];
    let successes = 0;
    const p = track(
      retry(async () => 'ok', {
        budget,
        onGiveUp: ({ reason, error }) => void reasons.push([reason, error]),
        onSuccess: () => void successes++,
      }),
    );
    await clock.tickAsync(0);
    expect(p.error).toBe(broken);
    expect(reasons).toEqual([['not-retryable', broken]]);
    expect(successes).toBe(0);
  });
});
