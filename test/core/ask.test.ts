// The questions a call asks its caller's policies (src/core/ask.ts): each asked at most once,
// in order, only when the answer matters, and none after one of them settled the call.
import { describe, expect, it, vi } from 'vitest';
import { isWorthRetrying, mayResend, verdictOn } from '../../src/core/ask.js';
import { failure } from '../../src/core/outcome.js';
import { readOptions } from '../../src/core/read-options.js';
import { type RetryOptions, permanent } from '../../src/index.js';
import { attemptContext } from '../helpers/context.js';

const config = (options: RetryOptions = {}) => readOptions({ rng: () => 0.5, ...options });
const attemptCtx = attemptContext();
const never = () => false;

describe('verdictOn', () => {
  it('asks retryable, then idempotent, then countsAsAttempt, each once, with the error and the context', () => {
    const asked: string[] = [];
    const error = new Error('x');
    const ask = (name: string, answer: boolean) => (e: unknown, c: unknown) => {
      asked.push(name);
      expect([e, c]).toEqual([error, attemptCtx]);
      return answer;
    };
    const options = {
      retryable: ask('retryable', true),
      idempotent: ask('idempotent', true),
      countsAsAttempt: ask('countsAsAttempt', false),
    };
    const verdict = verdictOn(config(options), attemptCtx, failure(error), undefined, never);
    expect(verdict).toEqual({ transient: true, idempotent: true, uncounted: true });
    expect(asked).toEqual(['retryable', 'idempotent', 'countsAsAttempt']);
  });

  it('asks nothing further about an outcome not worth retrying, nor countsAsAttempt about one not to be resent', () => {
    const idempotent = vi.fn(() => false);
    const countsAsAttempt = vi.fn(() => false);
    const notTransient = verdictOn(
      config({ retryable: () => false, idempotent, countsAsAttempt }),
      attemptCtx,
      failure(1),
      undefined,
      never,
    );
    expect(notTransient).toEqual({ transient: false, idempotent: false, uncounted: false });
    expect(idempotent).not.toHaveBeenCalled();
    const notResent = verdictOn(config({ retryable: () => true, idempotent, countsAsAttempt }), attemptCtx, failure(1), undefined, never);
    expect(notResent).toEqual({ transient: true, idempotent: false, uncounted: false });
    expect(idempotent).toHaveBeenCalledTimes(1);
    expect(countsAsAttempt).not.toHaveBeenCalled();
  });

  it("takes a mode's remembered answer instead of asking retryable", () => {
    const retryable = vi.fn(() => false);
    expect(verdictOn(config({ retryable }), attemptCtx, failure(1), true, never)).toMatchObject({ transient: true });
    expect(retryable).not.toHaveBeenCalled();
  });

  it('asks idempotent about a refused value with no error', () => {
    const idempotent = vi.fn(() => true);
    const options = { retryOnResult: (value: unknown) => value === 'pending', idempotent };
    expect(verdictOn(config(options), attemptCtx, { ok: true, value: 'pending' }, undefined, never)).toMatchObject({ idempotent: true });
    expect(idempotent).toHaveBeenCalledWith(undefined, attemptCtx);
  });

  it('counts a failure unless countsAsAttempt answers false itself', () => {
    for (const answer of [undefined, 0, null, '', true]) {
      const options = { deadlineMs: 1000, countsAsAttempt: () => answer as boolean };
      expect(verdictOn(config(options), attemptCtx, failure(new Error('x')), undefined, never)).toMatchObject({ uncounted: false });
    }
  });

  it('stops asking as soon as an answer settled the call (it aborted the caller signal), after any of the three', () => {
    for (const settler of ['retryable', 'idempotent', 'countsAsAttempt']) {
      let settled = false;
      const asked: string[] = [];
      const ask = (name: string) => () => {
        asked.push(name);
        if (name === settler) settled = true;
        return name !== 'countsAsAttempt';
      };
      const options = {
        deadlineMs: 1000,
        retryable: ask('retryable'),
        idempotent: ask('idempotent'),
        countsAsAttempt: ask('countsAsAttempt'),
      };
      expect(verdictOn(config(options), attemptCtx, failure(1), undefined, () => settled)).toBeUndefined();
      const order = ['retryable', 'idempotent', 'countsAsAttempt'];
      expect(asked).toEqual(order.slice(0, order.indexOf(settler) + 1));
    }
  });

  it('never retries an error thrown as permanent(e), whatever retryable says', () => {
    const retryable = vi.fn(() => true);
    expect(isWorthRetrying(config({ retryable }), attemptCtx, failure(permanent(new Error('no'))))).toBe(false);
    expect(retryable).not.toHaveBeenCalled();
  });

  it('refuses a countsAsAttempt that returns a promise, by name', () => {
    const options = { deadlineMs: 1000, countsAsAttempt: (async () => false) as never };
    expect(() => verdictOn(config(options), attemptCtx, failure(1), undefined, never)).toThrow(
      new TypeError('retry: options.countsAsAttempt must return a boolean, got a promise'),
    );
  });
});

describe('mayResend', () => {
  it('answers a boolean as it is, and asks a function with the context and the error', () => {
    const ctx = attemptContext({ attempt: 2, elapsedMs: 5, remainingMs: 10 });
    const error = new Error('reset');
    expect(mayResend(config({ idempotent: false }), ctx, error)).toBe(false);
    expect(mayResend(config(), ctx, error)).toBe(true);
    const seen: unknown[] = [];
    expect(
      mayResend(
        config({
          idempotent: (e, c) => {
            seen.push(c, e);
            return true;
          },
        }),
        ctx,
        error,
      ),
    ).toBe(true);
    expect(seen).toEqual([ctx, error]);
  });
});

describe('isWorthRetrying', () => {
  const ctx = attemptContext();

  it('asks retryable about an error and retryOnResult about a value, as true or false', () => {
    const options = {
      retryable: (error: unknown) => (error === 'again' ? 1 : 0),
      retryOnResult: (value: unknown) => value === 'pending',
    } as never;
    expect(isWorthRetrying(config(options), ctx, failure('again'))).toBe(true);
    expect(isWorthRetrying(config(options), ctx, failure('stop'))).toBe(false);
    expect(isWorthRetrying(config(options), ctx, { ok: true, value: 'pending' })).toBe(true);
    expect(isWorthRetrying(config(options), ctx, { ok: true, value: 'done' })).toBe(false);
  });

  it('refuses an async predicate, whose promise would count as true whatever it resolves to', () => {
    const no = async () => false;
    expect(() => isWorthRetrying(config({ retryable: no as never }), ctx, failure(new Error('x')))).toThrow(
      new TypeError('retry: options.retryable must return a boolean, got a promise'),
    );
    expect(() => isWorthRetrying(config({ retryOnResult: no as never }), ctx, { ok: true, value: 1 })).toThrow(
      /options\.retryOnResult must return a boolean, got a promise/,
    );
    expect(() => mayResend(config({ idempotent: no as never }), ctx, new Error('x'))).toThrow(
      /options\.idempotent must return a boolean, got a promise/,
    );
  });
});
