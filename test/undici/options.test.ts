// The interceptor's options: checked by the one options reader when the interceptor is made
// (each field, and how they fit together), every error naming tenaciousInterceptor; the errors
// the engine raises during a call name it too.
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { tenaciousInterceptor } from '../../src/undici/index.js';
import { fast, sendStatus, useLoopback } from './kit.js';

const { serve, keep } = useLoopback();
const make = (options: unknown) => () => tenaciousInterceptor(options as Parameters<typeof tenaciousInterceptor>[0]);

describe('bad options fail when the interceptor is made, naming it', () => {
  it('fetch is refused: every attempt goes down the chain', () => {
    expect(make({ fetch })).toThrow(
      new TypeError(
        'tenaciousInterceptor: options.fetch must be left out (every attempt is dispatched down the chain the interceptor is composed on), got a function (fetch)',
      ),
    );
  });

  it('an unknown option: the closest known one, else the known ones', () => {
    expect(make({ maxAttempt: 3 })).toThrow(
      new TypeError('tenaciousInterceptor: unknown option "maxAttempt" (did you mean "maxAttempts"?)'),
    );
    expect(make({ tries: 3 })).toThrow(/^tenaciousInterceptor: unknown option "tries" \(known: .*maxAttempts.*maxRetryAfterMs.*\)$/);
  });

  it.each([
    [{ maxAttempts: 0 }, RangeError, 'tenaciousInterceptor: options.maxAttempts must be a safe integer >= 1 or Infinity, got 0'],
    [
      { maxRetryAfterMs: -1 },
      RangeError,
      'tenaciousInterceptor: options.maxRetryAfterMs must be a number >= 0 (Infinity for none), got -1',
    ],
    [{ bufferBody: 'yes' }, TypeError, 'tenaciousInterceptor: options.bufferBody must be a boolean, got "yes"'],
    [{ resume: 1 }, TypeError, 'tenaciousInterceptor: options.resume must be a boolean, got 1'],
    [{ backoff: { initialDelayMs: -5 } }, RangeError, 'tenaciousInterceptor: options.backoff.initialDelayMs must'],
    [
      { maxAttempts: Infinity, deadlineMs: Infinity },
      RangeError,
      'tenaciousInterceptor: options.maxAttempts and options.deadlineMs are both Infinity',
    ],
    [5, TypeError, 'tenaciousInterceptor: options must be an object, got 5'],
  ])('%j → %o', (options, kind, message) => {
    expect(make(options)).toThrow(kind);
    expect(make(options)).toThrow(message);
  });

  it('a field inherited from a prototype is not an option', () => {
    const options = Object.create({ maxAttempts: 0 }) as object;
    expect(make(options)).not.toThrow();
  });

  it('no options, or good ones: an interceptor', () => {
    expect(tenaciousInterceptor()).toBeTypeOf('function');
    expect(tenaciousInterceptor({ maxAttempts: 2, maxRetryAfterMs: 0, bufferBody: false, resume: true })).toBeTypeOf('function');
  });
});

describe('errors during a call name the interceptor', () => {
  it('an async retryable predicate: the handler gets the engine’s TypeError', async () => {
    const server = await serve((n, res) => sendStatus(res, 503, n));
    const retryable = (async () => true) as unknown as () => boolean;
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, retryable })));
    const error = await request(server.url, { dispatcher }).catch((e: unknown) => e);
    expect(error).toEqual(new TypeError('tenaciousInterceptor: options.retryable must return a boolean, got a promise'));
    expect(server.requests).toHaveLength(1);
  });
});
