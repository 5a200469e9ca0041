// judge(): the policies of a call asked once each, in order, and only those the decision needs;
// their answers handed to the pure decide(). The engine's own tests check that it acts on them.
import { describe, expect, it, vi } from 'vitest';
import { type AttemptEnd, judge } from '../../src/core/judge.js';
import { failure } from '../../src/core/outcome.js';
import { readOptions } from '../../src/core/read-options.js';
import { CallState } from '../../src/core/call-state.js';
import { type RetryOptions, createRetryBudget } from '../../src/index.js';
import { attemptContext } from '../helpers/context.js';

const ctx = attemptContext();
const notSettled = () => false;

/** judge() of a failure with `error` on attempt `attempt`, under `options`. */
function judged(options: RetryOptions, error: unknown = new Error('x'), attempt = 1) {
  return judge(
    readOptions(options),
    ctx,
    { outcome: failure(error), known: undefined, attempt, elapsedMs: 0, progressAt: undefined, state: undefined },
    notSettled,
  );
}

describe('judge', () => {
  it('asks neither budget nor rng when the error is not transient, and records it as served', () => {
    const canRetry = vi.fn(() => true);
    const record = vi.fn();
    const rng = vi.fn(() => 0.5);
    const error = new Error('no');
    expect(judged({ retryable: () => false, budget: { canRetry, record }, rng }, error)).toEqual({
      action: 'give-up',
      reason: 'not-retryable',
      error,
    });
    expect(canRetry).not.toHaveBeenCalled();
    expect(rng).not.toHaveBeenCalled();
    expect(record).not.toHaveBeenCalled();
  });

  it('asks neither budget nor rng on the last attempt', () => {
    const canRetry = vi.fn(() => true);
    const rng = vi.fn(() => 0.5);
    expect(judged({ maxAttempts: 2, budget: { canRetry, record() {} }, rng }, new Error('x'), 2)).toMatchObject({ reason: 'attempts' });
    expect(canRetry).not.toHaveBeenCalled();
    expect(rng).not.toHaveBeenCalled();
  });

  it('asks the budget after recording the failure, and the rng only when the budget allows', () => {
    const budget = createRetryBudget({ maxTokens: 2 });
    const rng = vi.fn(() => 0.5);
    // 2 tokens, one failure recorded: 1 left, not more than half: refused, no draw.
    expect(judged({ budget, rng })).toMatchObject({ reason: 'budget' });
    expect(rng).not.toHaveBeenCalled();
    expect(judged({ rng, backoff: { initialDelayMs: 100, jitter: 'full' } })).toEqual({ action: 'wait', delayMs: 50, source: 'backoff' });
    expect(rng).toHaveBeenCalledTimes(1);
  });

  it('draws nothing for jitter none', () => {
    const rng = vi.fn(() => 0.5);
    expect(judged({ rng, backoff: { initialDelayMs: 100, jitter: 'none' } })).toEqual({ action: 'wait', delayMs: 100, source: 'backoff' });
    expect(rng).not.toHaveBeenCalled();
  });

  it("reads the server's hint from the error, an HTTP-date measured from the response's Date", () => {
    const headers = { date: 'Wed, 21 Oct 2015 07:28:00 GMT', 'retry-after': 'Wed, 21 Oct 2015 07:28:05 GMT' };
    const error = Object.assign(new Error('busy'), { status: 503, response: { status: 503, headers } });
    expect(judged({ backoff: { initialDelayMs: 1, jitter: 'none' } }, error)).toEqual({ action: 'wait', delayMs: 5000, source: 'server' });
  });

  it('lets a budget or rng that throws throw (the loop settles the call with it)', () => {
    const budget = {
      record() {},
      canRetry: () => {
        throw new Error('budget broke');
      },
    };
    expect(() => judged({ budget })).toThrow('budget broke');
    expect(() => judged({ rng: () => 2 })).toThrow(/^retry: options\.rng must return a number in \[0, 1\], got 2$/);
  });

  it('stops asking once user code settled the call (it aborted the caller signal)', () => {
    const idempotent = vi.fn(() => true);
    const judgement = judge(
      readOptions({ idempotent }),
      ctx,
      { outcome: failure(new Error('x')), known: undefined, attempt: 1, elapsedMs: 0, progressAt: undefined, state: undefined },
      () => true,
    );
    expect(judgement).toEqual({ action: 'settled' });
    expect(idempotent).not.toHaveBeenCalled();
  });

  it('asks idempotent once about a value retryOnResult rejected', () => {
    const idempotent = vi.fn(() => true);
    const judgement = judge(
      readOptions({ idempotent, retryOnResult: () => true, backoff: { initialDelayMs: 100, jitter: 'none' } }),
      ctx,
      { outcome: { ok: true, value: 'pending' }, known: undefined, attempt: 1, elapsedMs: 0, progressAt: undefined, state: undefined },
      notSettled,
    );
    expect(judgement).toEqual({ action: 'wait', delayMs: 100, source: 'backoff' });
    expect(idempotent).toHaveBeenCalledTimes(1);
  });

  it('records nothing once idempotent, asked about a rejected value, settled the call', () => {
    let settled = false;
    const budget = { record: vi.fn(), canRetry: vi.fn(() => true) };
    const throttle = { admit: () => true, record: vi.fn(), error: () => new Error('never') };
    const judgement = judge(
      readOptions({
        budget,
        throttle,
        retryOnResult: () => true,
        idempotent: () => {
          settled = true; // as when it aborts the caller's signal
          return true;
        },
      }),
      ctx,
      { outcome: { ok: true, value: 'pending' }, known: undefined, attempt: 1, elapsedMs: 0, progressAt: undefined, state: undefined },
      () => settled,
    );
    expect(judgement).toEqual({ action: 'settled' });
    expect(budget.record).not.toHaveBeenCalled();
    expect(budget.canRetry).not.toHaveBeenCalled();
    expect(throttle.record).not.toHaveBeenCalled();
  });

  it('takes a mode’s remembered answer instead of asking the retry policy again', () => {
    const retryable = vi.fn(() => true);
    const error = new Error('x');
    const judgement = judge(
      readOptions({ retryable }),
      ctx,
      { outcome: failure(error), known: false, attempt: 1, elapsedMs: 0, progressAt: undefined, state: undefined },
      notSettled,
    );
    expect(judgement).toEqual({ action: 'give-up', reason: 'not-retryable', error });
    expect(retryable).not.toHaveBeenCalled();
  });

  it('tells no gate when there is none, and still waits as the hint says (a budget alone)', () => {
    const error = Object.assign(new Error('busy'), { status: 503, response: { status: 503, headers: { 'retry-after': '2' } } });
    const budget = { record() {}, canRetry: () => true };
    expect(judged({ budget, backoff: { initialDelayMs: 1, jitter: 'none' } }, error)).toEqual({
      action: 'wait',
      delayMs: 2000,
      source: 'server',
    });
  });

  it('gives delay the time left in the current run: the deadline counted from the last progress', () => {
    const seen: number[] = [];
    const config = readOptions({ deadlineMs: 1000, delay: (c) => seen.push(c.remainingMs) && 5 });
    const outcome: AttemptEnd = { ...FAILED, elapsedMs: 700, state: new CallState(0) };
    expect(judge(config, ctx, { ...outcome, progressAt: { attempts: 1, elapsedMs: 500 } }, notSettled)).toEqual({
      action: 'wait',
      delayMs: 5,
      source: 'backoff',
    });
    expect(judge(config, ctx, { ...outcome, progressAt: undefined }, notSettled)).toMatchObject({ action: 'wait', delayMs: 5 });
    expect(seen).toEqual([800, 300]);
  });

  for (const option of ['countsAsAttempt', 'delay'] as const) {
    it(`asks nothing more once ${option} settled the call (it aborted the caller signal)`, () => {
      let settled = false;
      const budget = { record: vi.fn(), canRetry: vi.fn(() => true) };
      const settle = () => {
        settled = true;
        return option === 'delay' ? 5 : false;
      };
      const config = readOptions({ budget, backoff: { initialDelayMs: 10, jitter: 'none' }, [option]: settle });
      const state = new CallState(0);
      expect(judge(config, ctx, { ...FAILED, state }, () => settled)).toEqual({ action: 'settled' });
      // countsAsAttempt is asked with the other policies, before anything is recorded.
      if (option === 'countsAsAttempt') expect(budget.record).not.toHaveBeenCalled();
      if (option === 'countsAsAttempt') expect(budget.canRetry).not.toHaveBeenCalled();
      expect(state.previousDelayMs).toBeUndefined();
    });
  }
});

const FAILED: AttemptEnd = {
  outcome: failure(new Error('x')),
  known: undefined,
  attempt: 1,
  elapsedMs: 0,
  progressAt: undefined,
  state: undefined,
};
