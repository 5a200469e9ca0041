// gRPC service configs refused: errors name the path in the document and the value, at the
// bounds of each rule; the caller's method name and options are checked too.
import { describe, expect, it } from 'vitest';
import { fromGrpcServiceConfig, readGrpcServiceConfig } from '../../src/google/index.js';
import { thrown } from '../helpers/thrown.js';

const retryPolicy = {
  maxAttempts: 4,
  initialBackoff: '0.1s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE', 8],
};

const document = { methodConfig: [{ name: [{ service: 'echo.Echo' }], retryPolicy }] };

describe('fromGrpcServiceConfig: errors name the path and the value', () => {
  const at = (policy: Record<string, unknown>) => ({ methodConfig: [{ name: [{ service: 's.S' }], retryPolicy: policy }] });
  const read = (config: unknown) => () => fromGrpcServiceConfig(config, { service: 's.S' });

  it.each([
    [{ ...retryPolicy, initialBackoff: '100ms' }, 'methodConfig[0].retryPolicy.initialBackoff must be a proto3 JSON duration > 0'],
    [{ ...retryPolicy, maxBackoff: '0s' }, 'methodConfig[0].retryPolicy.maxBackoff must be a proto3 JSON duration > 0'],
    [{ ...retryPolicy, maxAttempts: 1 }, 'methodConfig[0].retryPolicy.maxAttempts must be a whole number >= 2 (gRFC A6), got 1'],
    [
      { ...retryPolicy, maxAttempts: undefined },
      'methodConfig[0].retryPolicy.maxAttempts must be a whole number >= 2 (gRFC A6), got undefined',
    ],
    [{ ...retryPolicy, maxAttempts: 5.5 }, 'methodConfig[0].retryPolicy.maxAttempts must be a whole number >= 2 (gRFC A6), got 5.5'],
    [
      { ...retryPolicy, maxAttempts: -Infinity },
      'methodConfig[0].retryPolicy.maxAttempts must be a whole number >= 2 (gRFC A6), got -Infinity',
    ],
    [{ ...retryPolicy, maxAttempts: Number.NaN }, 'methodConfig[0].retryPolicy.maxAttempts must be a whole number >= 2 (gRFC A6), got NaN'],
    [{ ...retryPolicy, backoffMultiplier: 0.5 }, 'methodConfig[0].retryPolicy.backoffMultiplier must be a number >= 1'],
    [{ ...retryPolicy, retryableStatusCodes: [] }, 'methodConfig[0].retryPolicy.retryableStatusCodes must list at least one status code'],
    [
      { ...retryPolicy, retryableStatusCodes: ['UNAVAILABLE', 'UNAVAILBLE'] },
      'methodConfig[0].retryPolicy.retryableStatusCodes[1] must be a gRPC status code name such as "UNAVAILABLE", got "UNAVAILBLE" (did you mean "UNAVAILABLE"?)',
    ],
    [
      { ...retryPolicy, retryableStatusCodes: [17] },
      'methodConfig[0].retryPolicy.retryableStatusCodes[0] must be a gRPC status code from 0 to 16, got 17',
    ],
    [{ ...retryPolicy, maxAttemps: 3 }, 'unknown field "maxAttemps" in methodConfig[0].retryPolicy (did you mean "maxAttempts"?)'],
  ])('%j', (policy, message) => {
    expect(read(at(policy))).toThrow(`fromGrpcServiceConfig: ${message}`);
  });

  it('refuses a maxAttempts of the wrong kind with a TypeError, one out of range with a RangeError', () => {
    expect(read(at({ ...retryPolicy, maxAttempts: '5' }))).toThrow(TypeError);
    expect(read(at({ ...retryPolicy, maxAttempts: 1 }))).toThrow(RangeError);
  });

  it('names the path for the method config itself, its names, timeout and the throttling', () => {
    expect(read({ methodConfig: [{ name: [{ service: 's.S' }], timeout: 5 }] })).toThrow(
      'fromGrpcServiceConfig: methodConfig[0].timeout must be a proto3 JSON duration > 0: seconds with up to 9 decimals and "s", such as "0.1s", got 5',
    );
    expect(read({ methodConfig: [{ name: [{ method: 'M' }] }] })).toThrow(
      'fromGrpcServiceConfig: methodConfig[0].name[0].method must come with a service, got "M"',
    );
    expect(read({ methodConfig: [{ name: [{ service: 's.S' }] }, { name: [{ service: 's.S' }] }] })).toThrow(
      'fromGrpcServiceConfig: methodConfig[1].name[0] names "s.S" again (first in methodConfig[0].name[0])',
    );
    expect(read({ methodConfig: [{ name: [{ service: 's.S' }], retryPolicy, hedgingPolicy: { maxAttempts: 2 } }] })).toThrow(
      'methodConfig[0] has both retryPolicy and hedgingPolicy',
    );
    expect(read({ methodConfig: [{ name: [{ service: 's.S' }] }], retryThrottling: { maxTokens: 0, tokenRatio: 0.1 } })).toThrow(
      'fromGrpcServiceConfig: retryThrottling.maxTokens must be a number > 0 and <= 1000, got 0',
    );
    expect(read({ methodConfig: [{ name: [{ service: 's.S' }] }], retryThrotling: {} })).toThrow(
      'unknown field "retryThrotling" at the top of the document (did you mean "retryThrottling"?)',
    );
    expect(read('{ not json')).toThrow(/^fromGrpcServiceConfig: the service config is not JSON/);
    expect(read([])).toThrow('fromGrpcServiceConfig: the document must be an object, got []');
  });

  it('refuses a bad method name from the caller', () => {
    expect(() => fromGrpcServiceConfig(document, { service: '' })).toThrow(
      'fromGrpcServiceConfig: service must be a fully qualified service name',
    );
  });
});

describe('fromGrpcServiceConfig: the exact messages of the document errors', () => {
  const read = (config: unknown) => () => fromGrpcServiceConfig(config, { service: 's.S' });

  it('refuses a methodConfig or a name that is no list', () => {
    expect(thrown(read({ methodConfig: {} }))).toEqual(new TypeError('fromGrpcServiceConfig: methodConfig must be a list, got {}'));
    expect(thrown(read({ methodConfig: [{ name: 's.S' }] }))).toEqual(
      new TypeError('fromGrpcServiceConfig: methodConfig[0].name must be a list of names ({ service, method }), got "s.S"'),
    );
  });

  it('refuses a service or a method in a name that is no string', () => {
    expect(thrown(read({ methodConfig: [{ name: [{ service: 1 }] }] }))).toEqual(
      new TypeError('fromGrpcServiceConfig: methodConfig[0].name[0].service must be a string, got 1'),
    );
    expect(thrown(read({ methodConfig: [{ name: [{ service: 's.S', method: 2 }] }] }))).toEqual(
      new TypeError('fromGrpcServiceConfig: methodConfig[0].name[0].method must be a string, got 2'),
    );
  });

  it('names a second default entry as {}', () => {
    expect(thrown(read({ methodConfig: [{ name: [{}] }, { name: [{ service: '' }] }] }))).toEqual(
      new TypeError('fromGrpcServiceConfig: methodConfig[1].name[0] names {} again (first in methodConfig[0].name[0])'),
    );
  });
});

describe('fromGrpcServiceConfig: retryThrottling at its bounds', () => {
  const throttled = (retryThrottling: unknown) => () => readGrpcServiceConfig({ retryThrottling });

  it('takes maxTokens up to 1000 and tokenRatio from 0.001, in snake_case too', () => {
    expect(throttled({ maxTokens: 1000, tokenRatio: 0.001 })().budget).toBeDefined();
    expect(throttled({ max_tokens: 1000, token_ratio: 0.001 })().budget).toBeDefined();
  });

  it('refuses maxTokens above 1000 and tokenRatio below 0.001, with a RangeError', () => {
    const tokens = thrown(throttled({ maxTokens: 1001, tokenRatio: 0.1 }));
    expect(tokens).toBeInstanceOf(RangeError);
    expect(tokens.message).toBe('fromGrpcServiceConfig: retryThrottling.maxTokens must be a number > 0 and <= 1000, got 1001');
    const ratio = thrown(throttled({ maxTokens: 10, tokenRatio: 0.0009 }));
    expect(ratio).toBeInstanceOf(RangeError);
    expect(ratio.message).toBe(
      'fromGrpcServiceConfig: retryThrottling.tokenRatio must be a number >= 0.001 (three decimals are kept), got 0.0009',
    );
  });

  it('gives options no budget key without retryThrottling', () => {
    expect(Object.keys(fromGrpcServiceConfig(document, { service: 'echo.Echo' }))).not.toContain('budget');
  });
});

describe("fromGrpcServiceConfig: the caller's name and options", () => {
  it('takes maxAttemptsLimit 1, and refuses 0 with a RangeError', () => {
    expect(fromGrpcServiceConfig(document, { service: 'echo.Echo', maxAttemptsLimit: 1 }).maxAttempts).toBe(1);
    expect(thrown(() => fromGrpcServiceConfig(document, { service: 'echo.Echo', maxAttemptsLimit: 0 }))).toBeInstanceOf(RangeError);
  });

  it('refuses a count past 2^53 − 1 once maxAttemptsLimit: Infinity lifts the cap: no exact count to take', () => {
    const huge = { methodConfig: [{ name: [{ service: 's.S' }], retryPolicy: { ...retryPolicy, maxAttempts: 2 ** 53 } }] };
    expect(thrown(() => fromGrpcServiceConfig(huge, { service: 's.S', maxAttemptsLimit: Infinity }))).toEqual(
      new RangeError(
        'fromGrpcServiceConfig: methodConfig[0].retryPolicy.maxAttempts must be a whole number from 2 to 9007199254740991 without a cap (maxAttemptsLimit: Infinity), got 9007199254740992',
      ),
    );
    const safe = { methodConfig: [{ name: [{ service: 's.S' }], retryPolicy: { ...retryPolicy, maxAttempts: 2 ** 53 - 1 } }] };
    expect(fromGrpcServiceConfig(safe, { service: 's.S', maxAttemptsLimit: Infinity }).maxAttempts).toBe(2 ** 53 - 1);
  });

  it('reads null options as none: the cap of 5', () => {
    const big = { methodConfig: [{ name: [{ service: 's.S' }], retryPolicy: { ...retryPolicy, maxAttempts: 9 } }] };
    expect(readGrpcServiceConfig(big, null as never).forMethod({ service: 's.S' }).maxAttempts).toBe(5);
  });

  it('refuses a service or a method that is no string, with the exact message', () => {
    const config = readGrpcServiceConfig(document);
    expect(thrown(() => config.forMethod({ service: 1 as never }))).toEqual(
      new TypeError('fromGrpcServiceConfig: service must be a fully qualified service name such as "google.pubsub.v1.Publisher", got 1'),
    );
    expect(thrown(() => config.forMethod({ service: 'echo.Echo', method: 3 as never }))).toEqual(
      new TypeError('fromGrpcServiceConfig: method must be a string, got 3'),
    );
  });

  it('reads method "" as no method: the service-wide entry, and the service alone in the error', () => {
    const config = readGrpcServiceConfig(document);
    expect(config.forMethod({ service: 'echo.Echo', method: '' })).toBe(config.forMethod({ service: 'echo.Echo' }));
    expect(thrown(() => config.forMethod({ service: 'echo.Echo2', method: '' })).message).toBe(
      'fromGrpcServiceConfig: no entry, service-wide entry or default for "echo.Echo2" in methodConfig (did you mean "echo.Echo"?)',
    );
  });

  it('without a method, never takes the entry of a method named "undefined"', () => {
    const config = readGrpcServiceConfig({
      methodConfig: [
        { name: [{ service: 's.S', method: 'undefined' }], retryPolicy },
        { name: [{ service: 's.S' }], timeout: '1s' },
      ],
    });
    expect(config.forMethod({ service: 's.S' }).maxAttempts).toBe(1);
    expect(config.forMethod({ service: 's.S', method: 'undefined' }).maxAttempts).toBe(4);
  });
});
