// The library's errors (src/errors.ts), every class the same way: one brand, so `instanceof`
// holds across two copies of the library; the class's own name wherever it is printed; no own
// field for what was never given.
import { inspect } from 'node:util';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import * as errors from '../src/errors.js';
import { GcsUploadError, HttpStatusError, RetryError, TimeoutError } from '../src/errors.js';

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
});
