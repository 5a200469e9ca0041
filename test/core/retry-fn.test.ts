// fn's side of a retry() call: the context each attempt receives, and what fn may return — a
// value, a promise (subclasses included), a thenable — each adopted like a promise, and a
// `then` that misbehaves failing only that attempt.
import { describe, expect, it, vi } from 'vitest';
import { type AttemptContext, hedging, retry } from '../../src/index.js';
import { constant, noJitter, script } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

describe('the attempt context', () => {
  it('gives fn its attempt number, elapsed and remaining time', async () => {
    const seen: Array<Pick<AttemptContext, 'attempt' | 'elapsedMs' | 'remainingMs' | 'copy'>> = [];
    const { fn } = script(httpError(503), httpError(503));
    const p = track(
      retry(
        (ctx) => {
          seen.push({ attempt: ctx.attempt, elapsedMs: ctx.elapsedMs, remainingMs: ctx.remainingMs, copy: ctx.copy });
          return fn(ctx);
        },
        { backoff: noJitter, deadlineMs: 60_000 },
      ),
    );
    await clock.tickAsync(3000);
    expect(p.state).toBe('resolved');
    expect(seen).toEqual([
      { attempt: 1, elapsedMs: 0, remainingMs: 60_000, copy: 1 },
      { attempt: 2, elapsedMs: 1000, remainingMs: 59_000, copy: 1 },
      { attempt: 3, elapsedMs: 3000, remainingMs: 57_000, copy: 1 },
    ]);
  });

  it('calls fn with no `this`, on a later attempt too and as a hedged copy: the call’s own state stays out of reach', async () => {
    const receivers: unknown[] = [];
    const failFirst = script(httpError(503));
    const retried = track(
      retry(
        function (this: unknown, ctx) {
          receivers.push(this);
          return failFirst.fn(ctx);
        },
        { backoff: noJitter },
      ),
    );
    await clock.tickAsync(1000);
    expect(retried.state).toBe('resolved');
    await retry(
      function (this: unknown) {
        receivers.push(this);
        return 'ok';
      },
      { hedge: hedging({ delayMs: 10 }) },
    );
    expect(receivers).toEqual([undefined, undefined, undefined]);
  });
});

describe('the invocation id', () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it("is one UUID for all of a call's attempts, and another call's is another", async () => {
    const ids: string[] = [];
    const { fn } = script(httpError(503), httpError(503));
    const record = (ctx: AttemptContext) => {
      ids.push(ctx.invocationId, ctx.invocationId);
      return fn(ctx);
    };
    const first = track(retry(record, { backoff: noJitter }));
    await clock.tickAsync(3000);
    expect(first.state).toBe('resolved');
    await retry(record);
    expect(ids).toHaveLength(8);
    expect(ids[0]).toMatch(UUID);
    expect(new Set(ids.slice(0, 6)).size).toBe(1);
    expect(ids[6]).toMatch(UUID);
    expect(ids[7]).toBe(ids[6]);
    expect(ids[6]).not.toBe(ids[0]);
  });

  it("is the attempt's for every hedged copy", async () => {
    const ids: string[] = [];
    const p = track(
      retry(
        (ctx) => {
          ids.push(ctx.invocationId);
          return new Promise((resolve) => setTimeout(resolve, ctx.copy === 1 ? 100 : 10, ctx.copy));
        },
        { hedge: hedging({ delayMs: 20, maxCopies: 2 }) },
      ),
    );
    await clock.tickAsync(30);
    expect(p.state).toBe('resolved');
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(UUID);
    expect(ids[1]).toBe(ids[0]);
    await clock.tickAsync(100); // copy 1's own timer
  });
});

describe('what fn returns', () => {
  it("a value that is not a promise settles with one clock read (the call's) and no timer, whatever its type", async () => {
    const nowSpy = vi.spyOn(globalThis.performance, 'now');
    const timerSpy = vi.spyOn(globalThis, 'setTimeout');
    try {
      const plain = { a: 1 };
      const fnValue = (): number => 1;
      expect(await retry(() => 42)).toBe(42);
      expect(await retry(() => 'sync')).toBe('sync');
      expect(await retry(() => plain)).toBe(plain);
      expect(await retry(() => null)).toBeNull();
      expect(await retry(() => fnValue)).toBe(fnValue);
      expect(await retry(() => ({ then: 'not a function' }))).toEqual({ then: 'not a function' });
      expect(nowSpy).toHaveBeenCalledTimes(6);
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

  it('a thenable (object or function) is adopted: its value is the answer, its rejection a failed attempt that is retried', async () => {
    const resolving = { then: (resolve: (v: string) => void) => resolve('thenable') };
    await expect(retry(() => resolving as PromiseLike<string>)).resolves.toBe('thenable');

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

  it('a Promise subclass whose then calls back at once neither queues the call twice nor runs fn after it settled', async () => {
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

  it('a Promise subclass or Proxy whose then throws fails that attempt with the thrown error', async () => {
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
      expect(calls).toBe(2);
    }
  });
});

describe('fn that throws synchronously', () => {
  it('is a failed attempt: the call sleeps its backoff, then tries again', async () => {
    const times: number[] = [];
    const p = track(
      retry(
        () => {
          times.push(Date.now());
          if (times.length === 1) throw httpError(503);
          return 'second';
        },
        { backoff: constant(100), deadlineMs: 10_000 },
      ),
    );
    await clock.tickAsync(100);
    expect(p).toMatchObject({ state: 'resolved', value: 'second' });
    expect(times).toEqual([0, 100]);
  });
});
