// GAPIC client configs at the bounds of each rule: a small hand-written document, each error's
// exact message (path and value), and the fields a method or its params may leave out.
import { describe, expect, it } from 'vitest';
import { fromGaxClientConfig } from '../../src/google/index.js';
import { thrown } from '../helpers/thrown.js';

const PARAMS = {
  initial_retry_delay_millis: 100,
  retry_delay_multiplier: 2,
  max_retry_delay_millis: 1000,
  initial_rpc_timeout_millis: 5000,
  rpc_timeout_multiplier: 1,
  max_rpc_timeout_millis: 5000,
  total_timeout_millis: 30_000,
};
const config = (method: Record<string, unknown> = {}, params: Record<string, unknown> = {}) => ({
  interfaces: {
    's.S': {
      retry_codes: { idempotent: ['UNAVAILABLE'], none: [] },
      retry_params: { p: { ...PARAMS, ...params } },
      methods: { M: { timeout_millis: 60_000, retry_codes_name: 'idempotent', retry_params_name: 'p', ...method } },
    },
  },
});
const read = (method?: Record<string, unknown>, params?: Record<string, unknown>) =>
  fromGaxClientConfig(config(method, params), 's.S', 'M');
const AT_METHOD = 'fromGaxClientConfig: interfaces["s.S"].methods["M"]';
const AT_PARAMS = 'fromGaxClientConfig: interfaces["s.S"].retry_params["p"]';

describe('fromGaxClientConfig: the retry params at their bounds', () => {
  it('takes a first delay of 0 and a delay cap equal to the first delay', () => {
    expect(read({}, { initial_retry_delay_millis: 0 }).backoff).toEqual({
      initialDelayMs: 0,
      multiplier: 2,
      maxDelayMs: 1000,
      jitter: 'full',
    });
    expect(read({}, { max_retry_delay_millis: 100 }).backoff).toEqual({
      initialDelayMs: 100,
      multiplier: 2,
      maxDelayMs: 100,
      jitter: 'full',
    });
  });

  it.each([
    [{ initial_retry_delay_millis: -1 }, 'initial_retry_delay_millis must be a number of milliseconds >= 0, got -1'],
    [{ max_retry_delay_millis: 99 }, 'max_retry_delay_millis must be a number of milliseconds >= initial_retry_delay_millis (100), got 99'],
    [{ total_timeout_millis: 0 }, 'total_timeout_millis must be a number of milliseconds > 0 (the method retries until then), got 0'],
    [{ rpc_timeout_multiplier: 0.5 }, 'rpc_timeout_multiplier must be a number >= 1, got 0.5'],
    [{ initial_rpc_timeout_millis: 0 }, 'initial_rpc_timeout_millis must be a number of milliseconds > 0, got 0'],
  ])('refuses %j with a RangeError naming the param', (params, message) => {
    const error = thrown(() => read({}, params));
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toBe(`${AT_PARAMS}.${message}`);
  });

  it("takes the params' first RPC timeout over timeout_millis, and timeout_millis only when the params give none", () => {
    expect(read().attemptTimeoutMs).toEqual({ initialMs: 5000, multiplier: 1, maxMs: 5000 });
    expect(read({}, { initial_rpc_timeout_millis: undefined, max_rpc_timeout_millis: 60_000 }).attemptTimeoutMs).toEqual({
      initialMs: 60_000,
      multiplier: 1,
      maxMs: 60_000,
    });
    expect(thrown(() => read({ timeout_millis: undefined }, { initial_rpc_timeout_millis: undefined }))).toEqual(
      new TypeError(`${AT_PARAMS}.initial_rpc_timeout_millis must be a number of milliseconds > 0, got undefined`),
    );
  });
});

describe('fromGaxClientConfig: the method', () => {
  it('names the retry_params_name that points at no params', () => {
    expect(thrown(() => read({ retry_params_name: 'q' }))).toEqual(
      new TypeError(
        'fromGaxClientConfig: no retry params (interfaces["s.S"].methods["M"].retry_params_name) "q" in interfaces["s.S"].retry_params (did you mean "p"?)',
      ),
    );
  });

  it('needs no timeout_millis: the params time each attempt', () => {
    expect(read({ timeout_millis: undefined })).toMatchObject({ deadlineMs: 30_000, attemptTimeoutMs: { initialMs: 5000 } });
  });

  it('sends once without retry codes: timeout_millis is its attempt timeout and deadline, and without one there is neither', () => {
    expect(read({ retry_codes_name: 'none' })).toMatchObject({ maxAttempts: 1, deadlineMs: 60_000, attemptTimeoutMs: 60_000 });
    const bare = read({ retry_codes_name: 'none', timeout_millis: undefined });
    expect(bare).toMatchObject({ maxAttempts: 1, deadlineMs: Number.POSITIVE_INFINITY });
    expect(Object.keys(bare)).not.toContain('attemptTimeoutMs');
  });

  it('refuses a timeout_millis of 0 and a retry_codes_name that is no string, with the exact message', () => {
    const zero = thrown(() => read({ timeout_millis: 0 }));
    expect(zero).toBeInstanceOf(RangeError);
    expect(zero.message).toBe(`${AT_METHOD}.timeout_millis must be a number of milliseconds > 0, got 0`);
    expect(thrown(() => read({ retry_codes_name: 5 }))).toEqual(new TypeError(`${AT_METHOD}.retry_codes_name must be a string, got 5`));
  });
});

describe('fromGaxClientConfig: the caller and the document shape', () => {
  it('refuses an interface or method name that is no string', () => {
    expect(thrown(() => fromGaxClientConfig(config(), 1 as never, 'M'))).toEqual(
      new TypeError('fromGaxClientConfig: interfaceName must be a string such as "google.iam.v2.Policies", got 1'),
    );
    expect(thrown(() => fromGaxClientConfig(config(), 's.S', null as never))).toEqual(
      new TypeError('fromGaxClientConfig: methodName must be a string such as "GetPolicy", got null'),
    );
  });

  it('refuses interfaces that are no object, naming them', () => {
    expect(thrown(() => fromGaxClientConfig({ interfaces: 3 }, 's.S', 'M'))).toEqual(
      new TypeError('fromGaxClientConfig: interfaces must be an object, got 3'),
    );
  });
});
