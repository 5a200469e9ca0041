// The library's errors (src/errors.ts), every class the same way: one brand, so `instanceof`
// holds across two copies of the library; the class's own name wherever it is printed; no own
// field for what was never given; messages that quote the root cause, safe against a hostile
// cause; and `permanent()`, which stops retry() from inside fn.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import * as errors from '../src/errors.js';
import { GcsUploadError, HttpStatusError, PermanentError, RetryError, TimeoutError, isPermanent, permanent } from '../src/errors.js';
import { createRetryBudget, isTransient, retry } from '../src/index.js';
import { httpError, installClock, track, useVirtualClock } from './helpers/clock.js';

type ErrorsModule = typeof errors;
/** The module as the tests import it (the first copy), to index by class name. */
const first: ErrorsModule = errors;

/** One error of each class, made by the given copy of the module. */
const makers = {
  RetryError: (m: ErrorsModule) => new m.RetryError('attempts', 3, 10, new Error('busy')),
  TimeoutError: (m: ErrorsModule) => new m.TimeoutError('slow'),
  ThrottledError: (m: ErrorsModule) => new m.ThrottledError(0.5, 10, 2),
  HttpStatusError: (m: ErrorsModule) => new m.HttpStatusError(new Response(null, { status: 503 }), 'GET'),
  ResumeError: (m: ErrorsModule) => new m.ResumeError('changed', 10, 'overwritten'),
  GcsUploadError: (m: ErrorsModule) => new m.GcsUploadError('session-expired', 410, 'gone'),
  PermanentError: (m: ErrorsModule) => m.permanent(new Error('forbidden')),
} as const;
type ClassName = keyof typeof makers;
const classNames = Object.keys(makers) as ClassName[];

/** Throws on every operation: the worst a caller can hand over as a cause or a value. */
const hostile = (): object => {
  const trap = () => {
    throw new Error('trap');
  };
  return new Proxy({}, { get: trap, has: trap, getPrototypeOf: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
};

// A second copy of the module, as an app that loads the ESM and the CommonJS build (or two
// versions) has: fresh module instances, so fresh classes. test/package/dual-package.test.ts
// checks the same on the real build.
let copy: ErrorsModule;
beforeAll(async () => {
  vi.resetModules();
  copy = await import('../src/errors.js');
});

describe('every error class', () => {
  it('is covered here: the makers above name every class src/errors.ts exports', () => {
    const exported = Object.entries(errors)
      .filter(([, value]) => typeof value === 'function' && value.prototype instanceof Error)
      .map(([name]) => name);
    expect(exported.sort()).toEqual([...classNames].sort());
  });

  it('has a second copy to be checked against (the copy is real)', () => {
    for (const name of classNames) expect(copy[name]).not.toBe(first[name]);
  });

  it.each(classNames)('%s: instanceof holds across the two copies, for that class only', (name) => {
    for (const [maker, other] of [
      [errors, copy],
      [copy, errors],
    ] as const) {
      const error = makers[name](maker);
      expect(error).toBeInstanceOf(Error);
      for (const cls of classNames) {
        expect(error instanceof maker[cls], `${name} instanceof own ${cls}`).toBe(cls === name);
        expect(error instanceof other[cls], `${name} instanceof other ${cls}`).toBe(cls === name);
      }
    }
  });

  it.each(classNames)('%s: a look-alike with its name is no instance, and a hostile value answers false without throwing', (name) => {
    const lookAlike = Object.assign(new Error('fake'), { name });
    for (const m of [errors, copy]) {
      expect(lookAlike instanceof m[name]).toBe(false);
      expect(() => hostile() instanceof m[name]).not.toThrow();
      expect(hostile() instanceof m[name]).toBe(false);
    }
  });

  it.each(classNames)('%s: a user’s subclass counts as the class, from either copy, and not the reverse', (name) => {
    const base = first[name] as unknown as new (...args: never[]) => Error;
    class Mine extends base {}
    const made = makers[name](errors);
    const mine = Object.setPrototypeOf(made, Mine.prototype) as Error;
    expect(mine instanceof first[name]).toBe(true);
    expect(mine instanceof copy[name]).toBe(true);
    expect(makers[name](copy) instanceof Mine).toBe(false);
    expect(makers[name](errors) instanceof Mine).toBe(false);
  });

  it.each(classNames)('%s: says its own name: name, constructor, String(), the stack and util.inspect', (name) => {
    const error = makers[name](errors);
    expect(error.name).toBe(name);
    expect(error.constructor.name).toBe(name);
    expect(String(error)).toBe(`${name}: ${error.message}`);
    // The getter is read while Error builds the stack: its first line names the class.
    expect(error.stack?.startsWith(`${name}: `)).toBe(true);
    expect(inspect(error).startsWith(`${name}: `)).toBe(true);
  });

  it.each(classNames)('%s: its name can be reassigned, as any Error’s, and it stays an instance', (name) => {
    // Read-only in the types, as it was; at run time an own, writable property, as on any Error.
    const error: Error = makers[name](errors);
    error.name = 'Renamed';
    expect(error.name).toBe('Renamed');
    expect(error instanceof copy[name]).toBe(true);
  });

  it.each(classNames)('%s: its own name is configured as Error.prototype’s: writable, configurable, not enumerable', (name) => {
    const error = makers[name](errors);
    expect(Object.getOwnPropertyDescriptor(error, 'name')).toEqual({ value: name, writable: true, enumerable: false, configurable: true });
    // Configurable, so a logger or a subclass may redefine it, or delete it to read the class's getter.
    expect(delete (error as { name?: string }).name).toBe(true);
    expect(error.name).toBe(name);
  });

  it.each(classNames)('%s: Symbol.hasInstance answers a boolean, false for a hostile value', (name) => {
    for (const m of [errors, copy]) {
      expect(m[name][Symbol.hasInstance](hostile())).toBe(false);
      expect(m[name][Symbol.hasInstance](makers[name](errors))).toBe(true);
    }
  });

  it.each(classNames)('%s: has no own property for what it was not given', (name) => {
    const error = makers[name](errors) as unknown as Record<string, unknown>;
    for (const key of Object.keys(error)) expect(error[key], `${name}.${key}`).not.toBeUndefined();
    expect(Object.hasOwn(error, 'value')).toBe(false);
    expect(Object.keys(error)).not.toContain('name');
  });
});

describe('fields only when given', () => {
  it('RetryError: `value` only for a value retryOnResult rejected, `cause` only for an error', () => {
    const failed = new RetryError('attempts', 3, 10, new Error('busy'));
    expect(Object.hasOwn(failed, 'value')).toBe(false);
    expect(Object.keys(failed)).toEqual(['reason', 'attempts', 'elapsedMs']);
    expect(failed.cause).toEqual(new Error('busy'));

    const polled = new RetryError('deadline', 2, 10, undefined, { done: false });
    expect(polled.value).toEqual({ done: false });
    expect(Object.hasOwn(polled, 'cause')).toBe(false);
    expect(polled.message).toBe('gave up after 2 attempts in 10 ms (deadline reached): retryOnResult rejected the last value');
  });

  it('TimeoutError and ResumeError: no `cause` unless one was given', () => {
    expect(Object.hasOwn(new TimeoutError('slow'), 'cause')).toBe(false);
    expect(Object.hasOwn(new TimeoutError('slow', { cause: undefined }), 'cause')).toBe(false);
    const reset = new Error('reset');
    expect(new TimeoutError('slow', { cause: reset }).cause).toBe(reset);
    expect(Object.hasOwn(new errors.ResumeError('changed', 1, 'x'), 'cause')).toBe(false);
    expect(new errors.ResumeError('unpinned', 1, 'x', reset).cause).toBe(reset);
  });

  it('HttpStatusError: `retryAfterMs` only when the response has a valid Retry-After', () => {
    expect(Object.hasOwn(new HttpStatusError(new Response(null, { status: 503 }), 'GET'), 'retryAfterMs')).toBe(false);
    const hinted = new HttpStatusError(new Response(null, { status: 503, headers: { 'retry-after': '3' } }), 'GET');
    expect(hinted.retryAfterMs).toBe(3000);
  });
});

describe('messages', () => {
  it('HttpStatusError: the status, the status text when there is one, and the method', () => {
    expect(new HttpStatusError(new Response('', { status: 503 }), 'GET').message).toBe('HTTP 503 (GET)');
    expect(new HttpStatusError(new Response('', { status: 503, statusText: 'Service Unavailable' }), 'PUT').message).toBe(
      'HTTP 503 Service Unavailable (PUT)',
    );
    expect(new GcsUploadError('protocol', 400, 'odd Range').message).toBe('gcsResumableUpload: odd Range');
  });

  it('RetryError: why the loop stopped, how many attempts it made, and the cause', () => {
    expect(new RetryError('deadline', 1, 0.4, new Error('boom')).message).toBe('gave up after 1 attempt in 0 ms (deadline reached): boom');
    expect(new RetryError('budget', 2, 1500, new Error('busy')).message).toBe(
      'gave up after 2 attempts in 1500 ms (retry budget exhausted): busy',
    );
    expect(new RetryError('attempts', 3, 10, 'a string').message).toBe('gave up after 3 attempts in 10 ms (out of attempts)');
  });

  it('RetryError: quotes the socket error under a real fetch failure (nothing listens on the port)', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const failure: unknown = await fetch(`http://127.0.0.1:${port}/`).catch((error: unknown) => error);
    expect(failure).toMatchObject({ message: 'fetch failed', cause: { code: 'ECONNREFUSED', address: '127.0.0.1', port } });
    expect(new RetryError('attempts', 3, 2104, failure).message).toBe(
      `gave up after 3 attempts in 2104 ms (out of attempts): fetch failed (ECONNREFUSED 127.0.0.1:${port})`,
    );
  });

  it('RetryError: quotes each address of an AggregateError (Node trying IPv6 and IPv4), and a code the message lacks', () => {
    const refused = (address: string) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}:39999`), { code: 'ECONNREFUSED', address, port: 39999 });
    const both = Object.assign(new AggregateError([refused('::1'), refused('127.0.0.1')], ''), { code: 'ECONNREFUSED' });
    expect(new RetryError('attempts', 3, 2104, new TypeError('fetch failed', { cause: both })).message).toBe(
      'gave up after 3 attempts in 2104 ms (out of attempts): fetch failed (ECONNREFUSED ::1:39999, ECONNREFUSED 127.0.0.1:39999)',
    );
    const hangUp = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(new RetryError('attempts', 2, 5, hangUp).message).toBe(
      'gave up after 2 attempts in 5 ms (out of attempts): socket hang up (ECONNRESET)',
    );
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND example.invalid'), { code: 'ENOTFOUND', hostname: 'example.invalid' });
    expect(new RetryError('deadline', 2, 5, new TypeError('fetch failed', { cause: dns })).message).toBe(
      'gave up after 2 attempts in 5 ms (deadline reached): fetch failed (getaddrinfo ENOTFOUND example.invalid)',
    );
  });

  it('RetryError: quotes nothing twice, and reads the root down `cause` and gaxios’ `error`, bounded', () => {
    const direct = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED', address: '127.0.0.1', port: 1 });
    expect(new RetryError('attempts', 1, 0, direct).message).toBe(
      'gave up after 1 attempt in 0 ms (out of attempts): connect ECONNREFUSED 127.0.0.1:1',
    );
    const status = new HttpStatusError(new Response(null, { status: 503, statusText: 'Service Unavailable' }), 'GET');
    expect(new RetryError('attempts', 3, 7, status).message).toBe(
      'gave up after 3 attempts in 7 ms (out of attempts): HTTP 503 Service Unavailable (GET)',
    );
    const gaxios = Object.assign(new Error('request to https://storage.googleapis.com failed'), { error: new Error('socket hang up') });
    expect(new RetryError('attempts', 2, 0, gaxios).message).toMatch(
      /: request to https:\/\/storage\.googleapis\.com failed \(socket hang up\)$/,
    );
    const cycle: Error & { cause?: unknown } = new Error('loop');
    cycle.cause = new Error('inner', { cause: cycle });
    expect(new RetryError('attempts', 2, 0, cycle).message).toMatch(/^gave up after 2 attempts in 0 ms \(out of attempts\): loop/);
  });

  it('RetryError: quotes the first three errors of an AggregateError, and the message of one that holds none', () => {
    const refused = (port: number) =>
      Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), { code: 'ECONNREFUSED', address: '127.0.0.1', port });
    const four = new AggregateError([refused(1), refused(2), refused(3), refused(4)], '');
    expect(new RetryError('attempts', 2, 5, new TypeError('fetch failed', { cause: four })).message).toBe(
      'gave up after 2 attempts in 5 ms (out of attempts): fetch failed (ECONNREFUSED 127.0.0.1:1, ECONNREFUSED 127.0.0.1:2, ECONNREFUSED 127.0.0.1:3)',
    );
    const none = new AggregateError([], 'no address to try');
    expect(new RetryError('attempts', 2, 5, new TypeError('fetch failed', { cause: none })).message).toBe(
      'gave up after 2 attempts in 5 ms (out of attempts): fetch failed (no address to try)',
    );
  });

  it('RetryError: quotes the path of a Unix socket, which has no port (a real fetch over a socket file nothing serves)', async () => {
    // Node's fetch takes an undici dispatcher; its Agent class is the global dispatcher's.
    await fetch('http://127.0.0.1:1/').catch(() => {});
    const Agent = (globalThis as Record<symbol, { constructor: new (options: object) => { close(): Promise<void> } }>)[
      Symbol.for('undici.globalDispatcher.1')
    ]!.constructor;
    const socketPath = join(tmpdir(), `tenacious-${process.pid}-nothing.sock`);
    const dispatcher = new Agent({ connect: { socketPath } });
    try {
      const failure: unknown = await fetch('http://localhost/', { dispatcher } as RequestInit).catch((error: unknown) => error);
      expect(failure).toMatchObject({ message: 'fetch failed', cause: { code: 'ENOENT', address: socketPath } });
      expect(Object.hasOwn((failure as Error).cause as object, 'port')).toBe(false);
      expect(new RetryError('attempts', 3, 9, failure).message).toBe(
        `gave up after 3 attempts in 9 ms (out of attempts): fetch failed (ENOENT ${socketPath})`,
      );
    } finally {
      await dispatcher.close();
    }
  });

  it('RetryError: a thrown undefined is not taken for a value retryOnResult rejected, and a cause beside a value is quoted', async () => {
    const clock = installClock();
    try {
      const p = track(
        retry(
          () => {
            throw undefined;
          },
          { maxAttempts: 2, backoff: { initialDelayMs: 10, jitter: 'none' } },
        ),
      );
      await clock.tickAsync(10);
      expect(p.error).toBeInstanceOf(RetryError);
      expect((p.error as RetryError).message).toBe('gave up after 2 attempts in 10 ms (out of attempts)');
    } finally {
      clock.uninstall();
    }
    expect(new RetryError('attempts', 1, 0, new Error('busy'), { done: false }).message).toBe(
      'gave up after 1 attempt in 0 ms (out of attempts): busy',
    );
  });

  it('PermanentError: quotes what it wraps', () => {
    expect(permanent(new Error('forbidden')).message).toBe('permanent failure: forbidden');
    expect(permanent('no').message).toBe('permanent failure');
  });
});

describe('a hostile cause', () => {
  const throwingMessage = Object.defineProperty(new Error('x'), 'message', {
    get() {
      throw new Error('message getter');
    },
  });
  const throwingCause = Object.defineProperty(new Error('outer'), 'cause', {
    get() {
      throw new Error('cause getter');
    },
  });
  const throwingPort = new TypeError('fetch failed', {
    cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED', address: '127.0.0.1', port: { toString: hostile } }),
  });
  const nullInAggregate = new TypeError('fetch failed', { cause: new AggregateError([null], '') });
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const causes: Array<[string, unknown, string]> = [
    ['a throwing message getter', throwingMessage, ''],
    ['a Proxy whose every trap throws', hostile(), ''],
    ['a revoked Proxy', revoked.proxy, ''],
    ['a throwing cause getter (the message read first is kept)', throwingCause, ': outer'],
    ['a root whose port throws when printed', throwingPort, ': fetch failed'],
    ['an AggregateError holding null', nullInAggregate, ': fetch failed'],
  ];

  it.each(causes)('%s: never makes an error class throw, and the message keeps what could be read', (_label, cause, detail) => {
    expect(new RetryError('attempts', 3, 10, cause).message).toBe(`gave up after 3 attempts in 10 ms (out of attempts)${detail}`);
    expect(permanent(cause).message).toBe(`permanent failure${detail}`);
    expect(() => new TimeoutError('slow', { cause })).not.toThrow();
    expect(() => new errors.ResumeError('unpinned', 1, 'x', cause)).not.toThrow();
  });
});

describe('permanent()', () => {
  it('wraps once: the wrapper carries the error, and a wrapper passed in is returned as it is', () => {
    const inner = new Error('forbidden');
    const wrapped = permanent(inner);
    expect(wrapped).toBeInstanceOf(PermanentError);
    expect(wrapped.cause).toBe(inner);
    expect(permanent(wrapped)).toBe(wrapped);
    expect(permanent(copy.permanent(inner)).cause).toBe(inner);
  });

  it('isPermanent: true for a wrapper from either copy, false for the error inside, look-alikes and hostile values', () => {
    const inner = new Error('forbidden');
    expect(isPermanent(permanent(inner))).toBe(true);
    expect(isPermanent(copy.permanent(inner))).toBe(true);
    expect(copy.isPermanent(permanent(inner))).toBe(true);
    expect(isPermanent(inner)).toBe(false);
    expect(isPermanent(Object.assign(new Error('fake'), { name: 'PermanentError', cause: inner }))).toBe(false);
    expect(isPermanent(undefined)).toBe(false);
    expect(isPermanent(hostile())).toBe(false);
  });

  it('is never transient by default, whatever it wraps', () => {
    expect(isTransient(httpError(503))).toBe(true);
    expect(isTransient(permanent(httpError(503)))).toBe(false);
    expect(isTransient(copy.permanent(httpError(503)))).toBe(false);
  });
});

describe('permanent() thrown from fn', () => {
  const clock = useVirtualClock();

  function hooks() {
    return {
      retryable: vi.fn(() => true),
      idempotent: vi.fn(() => true),
      onRetry: vi.fn(),
      onGiveUp: vi.fn(),
    };
  }

  it('rejects at once with the error itself: one attempt, no predicate asked, no onRetry, onGiveUp "not-retryable"', async () => {
    const inner = httpError(503); // transient: only the wrapper stops it
    const options = hooks();
    const fn = vi.fn(async () => {
      throw permanent(inner);
    });
    const p = track(retry(fn, { ...options, maxAttempts: 5 }));
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect(p.error).toBe(inner);
    expect(clock.countTimers()).toBe(0);
    await clock.tickAsync(120_000);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(options.retryable).not.toHaveBeenCalled();
    expect(options.idempotent).not.toHaveBeenCalled();
    expect(options.onRetry).not.toHaveBeenCalled();
    expect(options.onGiveUp).toHaveBeenCalledTimes(1);
    expect(options.onGiveUp).toHaveBeenCalledWith({ reason: 'not-retryable', error: inner, attempts: 1, elapsedMs: 0 });
  });

  it('stops a later attempt the same way, thrown synchronously or from another copy of the library', async () => {
    for (const wrap of [permanent, copy.permanent]) {
      const inner = new Error('quota exceeded for good');
      const options = hooks();
      let n = 0;
      const fn = vi.fn(() => {
        n++;
        if (n === 1) throw httpError(503);
        throw wrap(inner);
      });
      const p = track(retry(fn, { ...options, backoff: { initialDelayMs: 100, jitter: 'none' } }));
      await clock.tickAsync(100);
      expect(p.state).toBe('rejected');
      expect(p.error).toBe(inner);
      expect(fn).toHaveBeenCalledTimes(2);
      expect(options.retryable).toHaveBeenCalledTimes(1); // asked about the 503 only
      expect(options.onRetry).toHaveBeenCalledTimes(1);
      expect(options.onGiveUp).toHaveBeenCalledWith({ reason: 'not-retryable', error: inner, attempts: 2, elapsedMs: 100 });
    }
  });

  it('counts as served for the throttle, and spends nothing of the budget', async () => {
    const throttle = { admit: () => true, record: vi.fn(), error: () => new Error('throttled') };
    const budget = createRetryBudget({ maxTokens: 4 });
    const p = track(
      retry(
        () => {
          throw permanent(new Error('forbidden'));
        },
        { throttle, budget },
      ),
    );
    await clock.tickAsync(0);
    expect(p.state).toBe('rejected');
    expect(throttle.record).toHaveBeenCalledWith(true);
    expect(budget.canRetry()).toBe(true);
    expect(budget.tokens).toBe(4);
  });
});
