import { describe, expect, expectTypeOf, it } from 'vitest';
import { RetryError, hedging, withRetry } from '../../src/index.js';
import { noJitter } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

describe('withRetry()', () => {
  it('returns a function with fn’s parameters that resolves with fn’s value', async () => {
    const add = withRetry(async (a: number, b: number) => a + b);
    expectTypeOf(add).toEqualTypeOf<(this: unknown, a: number, b: number) => Promise<number>>();
    const sync = withRetry((s: string) => s.length);
    expectTypeOf(sync).returns.toEqualTypeOf<Promise<number>>();
    await expect(add(2, 3)).resolves.toBe(5);
    await expect(sync('four')).resolves.toBe(4);
  });

  it('passes every call’s own arguments and `this` to each of its attempts', async () => {
    const seen: unknown[] = [];
    const counter = {
      base: 10,
      next: withRetry(
        function (this: { base: number }, step: number) {
          seen.push([this.base, step]);
          if (seen.length === 1) throw httpError(503);
          return this.base + step;
        },
        { backoff: noJitter },
      ),
    };
    const p = track(counter.next(5));
    await clock.tickAsync(1000);
    expect(p).toMatchObject({ state: 'resolved', value: 15 });
    expect(seen).toEqual([
      [10, 5],
      [10, 5],
    ]);
  });

  it('hands a plain call exactly its own arguments, however many, at every attempt, and never the context', async () => {
    const seen: unknown[][] = [];
    const record = withRetry(
      function (this: unknown, ...args: unknown[]) {
        seen.push([this, ...args]);
        // Each call's first attempt fails (the calls are told apart by their argument counts).
        if (seen.filter((s) => s.length === args.length + 1).length === 1) throw httpError(503);
        return args.length;
      },
      { backoff: noJitter },
    );
    const calls = [track(record()), track(record('a')), track(record('a', undefined, 3))];
    await clock.tickAsync(1000);
    expect(calls.map((c) => c.value)).toEqual([0, 1, 3]);
    // A call's attempts run one after another, but the three calls interleave: sort by call.
    expect(seen.sort((a, b) => a.length - b.length)).toEqual([
      [undefined],
      [undefined],
      [undefined, 'a'],
      [undefined, 'a'],
      [undefined, 'a', undefined, 3],
      [undefined, 'a', undefined, 3],
    ]);
  });

  it('keeps `this` for a method called with no arguments', async () => {
    const account = {
      balance: 7,
      read: withRetry(function (this: { balance: number }) {
        return this.balance;
      }),
    };
    await expect(account.read()).resolves.toBe(7);
  });

  it('keeps a hedged call’s arguments for each of its copies', async () => {
    const seen: unknown[][] = [];
    const slowThenFast = withRetry(
      (id: string) => {
        seen.push([id]);
        return new Promise<string>((resolve) => setTimeout(() => resolve(id), seen.length === 1 ? 500 : 10));
      },
      { hedge: hedging({ delayMs: 50, maxCopies: 2 }) },
    );
    const p = track(slowThenFast('x'));
    await clock.tickAsync(100);
    expect(p).toMatchObject({ state: 'resolved', value: 'x' });
    expect(seen).toEqual([['x'], ['x']]);
    await clock.tickAsync(500); // the first copy's own timer
  });

  it('retries each call on its own: own attempts, own deadline counted from that call', async () => {
    let calls = 0;
    const failing = withRetry(
      async () => {
        calls++;
        throw httpError(503);
      },
      { backoff: noJitter, maxAttempts: 3, deadlineMs: 60_000 },
    );
    const first = track(failing());
    await clock.tickAsync(500);
    const second = track(failing());
    await clock.tickAsync(2500); // first: attempts at 0, 1000, 3000
    expect(first.state).toBe('rejected');
    expect(first.error).toBeInstanceOf(RetryError);
    expect((first.error as RetryError).attempts).toBe(3);
    expect(second.state).toBe('pending'); // its attempts are at 500, 1500, 3500
    await clock.tickAsync(500);
    expect(second.state).toBe('rejected');
    expect((second.error as RetryError).elapsedMs).toBe(3000);
    expect(calls).toBe(6);
  });

  it('rejects at once with a non-retryable error, unchanged', async () => {
    const forbidden = httpError(403);
    const call = withRetry(() => {
      throw forbidden;
    });
    await expect(call()).rejects.toBe(forbidden);
  });

  it('checks the options once, when wrapping: bad ones throw then, and later changes do not apply', async () => {
    expect(() => withRetry(async () => 1, { maxAttempts: 0 })).toThrow(
      new RangeError('withRetry: options.maxAttempts must be a safe integer >= 1 or Infinity, got 0'),
    );
    expect(() => withRetry(async () => 1, { nope: 1 } as never)).toThrow(/^withRetry: unknown option "nope"/);
    expect(() => withRetry('not a function' as never)).toThrow(new TypeError('withRetry: fn must be a function, got "not a function"'));

    let reads = 0;
    const options = {
      get maxAttempts() {
        reads++;
        return 2;
      },
      backoff: noJitter,
    };
    let calls = 0;
    const call = withRetry(async () => {
      calls++;
      throw httpError(503);
    }, options);
    expect(reads).toBe(1);
    Object.defineProperty(options, 'maxAttempts', { value: 5 });
    for (let i = 0; i < 3; i++) {
      const p = track(call());
      await clock.tickAsync(1000);
      expect(p.state).toBe('rejected');
    }
    expect(reads).toBe(1);
    expect(calls).toBe(6);
  });
});
