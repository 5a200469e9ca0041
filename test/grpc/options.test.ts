// grpcRetryInterceptor's options: checked by the one options reader, each error naming the field
// and the value it got; options given as an object are checked when the interceptor is made, a
// policy function's answer when a call of the method is made (then the client's method throws).
import { Metadata } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { iam } from '../../src/google/index.js';
import { NO_CHANNEL_RETRIES, grpcRetryInterceptor } from '../../src/grpc/index.js';
import type { GrpcInterceptorOptions, GrpcInterceptorPolicy } from '../../src/grpc/index.js';
import { type LoopbackClient, type ScriptedServer, connect, scriptedServer } from './server.js';

/** Makes an interceptor of options that break the types on purpose, as a JavaScript caller may. */
const make = (policy: unknown) => () => grpcRetryInterceptor(policy as GrpcInterceptorPolicy);

describe('options given as an object: checked when the interceptor is made', () => {
  it.each([
    [{ maxAttempt: 3 }, TypeError, 'grpcRetryInterceptor: unknown option "maxAttempt" (did you mean "maxAttempts"?)'],
    [{ maxAttempts: 0 }, RangeError, 'grpcRetryInterceptor: options.maxAttempts must be a safe integer >= 1 or Infinity, got 0'],
    [{ retryable: 'UNAVAILABLE' }, TypeError, 'grpcRetryInterceptor: options.retryable must be a function, got "UNAVAILABLE"'],
    [
      { signal: new AbortController().signal },
      TypeError,
      'grpcRetryInterceptor: options.signal must be left out (cancel the call with call.cancel(), or give it a deadline), got an AbortSignal',
    ],
    [
      { hedge: { run: () => {} } },
      TypeError,
      /^grpcRetryInterceptor: options\.hedge must be left out \(each attempt is one gRPC call\), got /,
    ],
    [
      { attemptTimeoutMs: { initialMs: 1 } },
      RangeError,
      'grpcRetryInterceptor: options.attemptTimeoutMs.multiplier must be a finite number >= 1, got undefined',
    ],
    [
      { maxAttempts: Infinity, deadlineMs: Infinity },
      RangeError,
      /^grpcRetryInterceptor: options\.maxAttempts and options\.deadlineMs are both Infinity/,
    ],
    [5, TypeError, 'grpcRetryInterceptor: options must be an object, got 5'],
    [null, TypeError, 'grpcRetryInterceptor: options must be an object, got null'],
    [[], TypeError, 'grpcRetryInterceptor: options must be a plain object, got []'],
  ] as const)('%j: %s', (options, kind, message) => {
    expect(make(options)).toThrow(kind);
    expect(make(options)).toThrow(message);
  });

  it('takes no options, a preset, or retry()’s options', () => {
    for (const policy of [undefined, {}, iam(), { maxAttempts: 3, attemptTimeoutMs: { initialMs: 100, multiplier: 2, maxMs: 1000 } }]) {
      expect(typeof grpcRetryInterceptor(policy as GrpcInterceptorOptions)).toBe('function');
    }
  });
});

describe('a policy function: its answer is checked when a call of the method is made', () => {
  let server: ScriptedServer | undefined;
  let client: LoopbackClient | undefined;
  afterEach(() => {
    client?.close();
    server?.close();
  });

  async function calling(policy: (path: string) => unknown): Promise<() => void> {
    server = await scriptedServer([]);
    const made = connect(server.address, { ...NO_CHANNEL_RETRIES, interceptors: [grpcRetryInterceptor(policy as GrpcInterceptorPolicy)] });
    client = made;
    return () => made.Echo({}, new Metadata(), {}, () => {});
  }

  it('is not called before a call is made', () => {
    let asked = 0;
    grpcRetryInterceptor(() => {
      asked++;
      return undefined;
    });
    expect(asked).toBe(0);
  });

  it.each([
    [
      { maxAttempts: -1 },
      RangeError,
      'grpcRetryInterceptor: policy("/tenacious.test.Loopback/Echo").maxAttempts must be a safe integer >= 1 or Infinity, got -1',
    ],
    [
      { deadlinMs: 5 },
      TypeError,
      /^grpcRetryInterceptor: unknown option "deadlinMs" in policy\("\/tenacious\.test\.Loopback\/Echo"\) \(did you mean "deadlineMs"\?\)$/,
    ],
    ['iam', TypeError, 'grpcRetryInterceptor: policy("/tenacious.test.Loopback/Echo") must be an object, got "iam"'],
  ] as const)('answering %j: the client’s method throws %s, naming the method', async (answer, kind, message) => {
    const call = await calling(() => answer);
    expect(call).toThrow(kind);
    expect(call).toThrow(message);
    expect(server?.calls).toEqual([]);
  });
});

describe('NO_CHANNEL_RETRIES', () => {
  it('is the channel option that turns grpc-js’s retries off, and cannot be changed', () => {
    expect(NO_CHANNEL_RETRIES).toEqual({ 'grpc.enable_retries': 0 });
    expect(() => Object.assign(NO_CHANNEL_RETRIES, { 'grpc.enable_retries': 1 })).toThrow(TypeError);
  });
});
