// One method config's policy read on its own: durations at their bounds, the paths errors name,
// the optional fields of a retryPolicy and a hedgingPolicy.
import { describe, expect, it } from 'vitest';
import { methodPolicy, readDurationMs } from '../../src/google/grpc-method-policy.js';
import { thrown } from '../helpers/thrown.js';

const DURATION_RULE = 'seconds with up to 9 decimals and "s", such as "0.1s"';
const retryPolicy = { maxAttempts: 3, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: [14] };

describe('readDurationMs', () => {
  it('takes "0s" where zero is allowed, and refuses it where the duration must be positive', () => {
    expect(readDurationMs('w', 'p', '0s', false)).toBe(0);
    expect(readDurationMs('w', 'p', '0.25s', true)).toBe(250);
    expect(thrown(() => readDurationMs('w', 'p', '0s', true))).toEqual(
      new TypeError(`w: p must be a proto3 JSON duration > 0: ${DURATION_RULE}, got "0s"`),
    );
  });

  it('refuses what is no duration, zero allowed or not', () => {
    expect(thrown(() => readDurationMs('w', 'p', '100ms', false))).toEqual(
      new TypeError(`w: p must be a proto3 JSON duration: ${DURATION_RULE}, got "100ms"`),
    );
    expect(thrown(() => readDurationMs('w', 'p', undefined, false))).toEqual(
      new TypeError(`w: p must be a proto3 JSON duration: ${DURATION_RULE}, got undefined`),
    );
  });
});

describe('methodPolicy: retryPolicy', () => {
  it('takes a multiplier of 1 (waits that stay the same)', () => {
    expect(methodPolicy('w', 'm', { retryPolicy: { ...retryPolicy, backoffMultiplier: 1 } }, 5).backoff).toEqual({
      initialDelayMs: 100,
      multiplier: 1,
      maxDelayMs: 1000,
      jitter: 'full',
    });
  });

  it('sets attemptTimeoutMs from perAttemptRecvTimeout, and leaves it out without one', () => {
    expect(methodPolicy('w', 'm', { retryPolicy: { ...retryPolicy, perAttemptRecvTimeout: '2s' } }, 5).attemptTimeoutMs).toBe(2000);
    expect('attemptTimeoutMs' in methodPolicy('w', 'm', { retryPolicy }, 5)).toBe(false);
    expect(thrown(() => methodPolicy('w', 'm', { retryPolicy: { ...retryPolicy, perAttemptRecvTimeout: '0s' } }, 5))).toEqual(
      new TypeError(`w: m.retryPolicy.perAttemptRecvTimeout must be a proto3 JSON duration > 0: ${DURATION_RULE}, got "0s"`),
    );
  });
});

describe('methodPolicy: hedgingPolicy', () => {
  it('reads snake_case fields and a hedgingDelay of "0s"', () => {
    const policy = methodPolicy('w', 'm', { hedgingPolicy: { max_attempts: 2, hedging_delay: '0s' } }, 5);
    expect(policy.maxAttempts).toBe(1);
    expect(typeof policy.hedge?.run).toBe('function');
  });

  it('names each field of the hedgingPolicy in its errors', () => {
    const error = thrown(() => methodPolicy('w', 'm', { hedgingPolicy: { maxAttempts: 1 } }, 5));
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toBe('w: m.hedgingPolicy.maxAttempts must be a whole number >= 2 (gRFC A6), got 1');
    expect(thrown(() => methodPolicy('w', 'm', { hedgingPolicy: { maxAttempts: 2, hedgingDelay: '-1s' } }, 5))).toEqual(
      new TypeError(`w: m.hedgingPolicy.hedgingDelay must be a proto3 JSON duration: ${DURATION_RULE}, got "-1s"`),
    );
    expect(thrown(() => methodPolicy('w', 'm', { hedgingPolicy: { maxAttempts: 2, nonFatalStatusCodes: 14 } }, 5))).toEqual(
      new TypeError('w: m.hedgingPolicy.nonFatalStatusCodes must be a list of gRPC status codes, got 14'),
    );
  });

  it('retries no error without nonFatalStatusCodes, and the listed codes with them', () => {
    const unavailable = Object.assign(new Error('unavailable'), { code: 14 });
    expect(methodPolicy('w', 'm', { hedgingPolicy: { maxAttempts: 2 } }, 5).retryable(unavailable)).toBe(false);
    expect(methodPolicy('w', 'm', { hedgingPolicy: { maxAttempts: 2, nonFatalStatusCodes: [] } }, 5).retryable(unavailable)).toBe(false);
    expect(methodPolicy('w', 'm', { hedgingPolicy: { maxAttempts: 2, nonFatalStatusCodes: [14] } }, 5).retryable(unavailable)).toBe(true);
  });
});
