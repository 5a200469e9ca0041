// Edges of the predicates that the main tests (test/predicates.test.ts, test/errors.test.ts) leave
// open, found by mutation testing: every network code and message by name, argument validation
// at its bounds, and error-like values that are not Error instances.
import { describe, expect, it } from 'vitest';
import { networkError, timedOut } from '../../src/classify/network.js';
import { aborted, allOf, anyOf, errorReason, grpcCode, httpStatus, isTransient, not } from '../../src/classify/predicates.js';

const withProps = (props: Record<string, unknown>, message = 'boom'): Error => Object.assign(new Error(message), props);

function wrapped(error: unknown, levels: number): unknown {
  let current = error;
  for (let i = 0; i < levels; i++) current = new Error(`wrap ${i}`, { cause: current });
  return current;
}

describe('networkError', () => {
  it.each([
    'ECONNRESET',
    'ECONNREFUSED',
    'ECONNABORTED',
    'ETIMEDOUT',
    'ESOCKETTIMEDOUT',
    'EPIPE',
    'EAI_AGAIN',
    'ENOTFOUND',
    'ENETUNREACH',
    'ENETDOWN',
    'EHOSTUNREACH',
    'EHOSTDOWN',
    'UND_ERR_SOCKET',
    'UND_ERR_CONNECT_TIMEOUT',
    'UND_ERR_HEADERS_TIMEOUT',
    'UND_ERR_BODY_TIMEOUT',
    'UND_ERR_CLOSED',
    'ERR_STREAM_PREMATURE_CLOSE',
  ])('matches code %s, also under a cause', (code) => {
    expect(networkError(withProps({ code }))).toBe(true);
    expect(networkError(new TypeError('fetch failed', { cause: withProps({ code }) }))).toBe(true);
  });

  it('does not match other system codes', () => {
    expect(networkError(withProps({ code: 'EACCES' }))).toBe(false);
    expect(networkError(withProps({ code: 'ERR_INVALID_ARG_TYPE' }))).toBe(false);
  });

  it.each([
    'fetch failed',
    'Failed to fetch',
    'NetworkError when attempting to fetch resource.',
    'Load failed',
    'Network request failed',
    'terminated',
  ])('matches a TypeError %j (what fetch rejects with on a network failure)', (message) => {
    expect(networkError(new TypeError(message))).toBe(true);
  });

  it('matches those messages only on a TypeError', () => {
    expect(networkError(new Error('fetch failed'))).toBe(false);
    expect(networkError(new RangeError('Failed to fetch'))).toBe(false);
  });

  it('matches the socket messages as whole phrases at the start', () => {
    expect(networkError(new Error('socket hang up'))).toBe(true);
    expect(networkError(new Error('Client network socket disconnected before secure TLS connection was established'))).toBe(true);
    expect(networkError(new Error('not a socket hang up'))).toBe(false);
    expect(networkError(new Error('socket hang up, said the proxy'))).toBe(false);
    expect(networkError(new Error('the Client network socket disconnected'))).toBe(false);
  });

  it('reads messages to eight levels of cause, and ends on a cycle', () => {
    expect(networkError(wrapped(new TypeError('fetch failed'), 7))).toBe(true);
    expect(networkError(wrapped(new TypeError('fetch failed'), 8))).toBe(false);
    const cyclic = new Error('loop');
    (cyclic as { cause?: unknown }).cause = cyclic;
    expect(networkError(cyclic)).toBe(false);
  });
});

describe('timedOut', () => {
  it('matches an abort whose signal timed out, and nothing about a signal that did not', () => {
    expect(timedOut({ name: 'AbortError', config: { signal: AbortSignal.abort(new DOMException('t', 'TimeoutError')) } })).toBe(true);
    expect(timedOut({ name: 'AbortError', config: { signal: null } })).toBe(false);
    expect(timedOut({ name: 'AbortError', config: { signal: { aborted: false, reason: new DOMException('t', 'TimeoutError') } } })).toBe(false);
    expect(timedOut({ name: 'AbortError', config: { signal: AbortSignal.abort(null) } })).toBe(false);
    expect(timedOut({ name: 'AbortError', config: { signal: AbortSignal.abort('TimeoutError') } })).toBe(false);
    expect(timedOut({ name: 'AbortError', config: { signal: AbortSignal.abort(class TimeoutError {}) } })).toBe(false);
  });
});

describe('aborted', () => {
  it('needs HTTP 409 for an ABORTED status string in an HTTP error', () => {
    const body = { error: { status: 'ABORTED' } };
    expect(aborted(withProps({ status: 409, response: { data: body } }))).toBe(true);
    expect(aborted(withProps({ status: 400, response: { data: body } }))).toBe(false);
  });
});

describe('isTransient on error-like values that are not Error instances', () => {
  it('treats a plain object named like a programmer error as one', () => {
    expect(isTransient({ name: 'TypeError', message: 'x is not a function' })).toBe(false);
    expect(isTransient({ name: 'RangeError', message: 'bad' })).toBe(false);
    expect(isTransient({ name: 'ThrottledError', message: 'refused' })).toBe(false);
  });

  it('retries other plain objects, null, and objects without a string name', () => {
    expect(isTransient({ name: 'Oops', message: 'x' })).toBe(true);
    expect(isTransient({ name: 5 })).toBe(true);
    expect(isTransient(null)).toBe(true);
  });
});

describe('httpStatus', () => {
  it('takes a class of statuses', () => {
    const fiveHundreds = httpStatus('5xx');
    expect(fiveHundreds(withProps({ status: 500 }))).toBe(true);
    expect(fiveHundreds(withProps({ status: 599 }))).toBe(true);
    expect(fiveHundreds(withProps({ status: 499 }))).toBe(false);
    expect(httpStatus('1xx')(withProps({ status: 100 }))).toBe(true);
  });

  it('takes 100 and 599, and rejects what lies outside or is not a whole class', () => {
    expect(httpStatus(100)(withProps({ status: 100 }))).toBe(true);
    expect(httpStatus(599)(withProps({ status: 599 }))).toBe(true);
    for (const bad of [99, 600, 404.5, '6xx', '0xx', '55xx', 'x5xx', '5xxx', '5XX', '404']) {
      expect(() => httpStatus(bad as never), String(bad)).toThrow(RangeError);
    }
  });

  it('does not match an error without a status', () => {
    expect(httpStatus('5xx')(new Error('no status'))).toBe(false);
  });
});

describe('grpcCode', () => {
  it('takes 0 to 16 by number', () => {
    expect(grpcCode(16)(withProps({ code: 16 }))).toBe(true);
    expect(() => grpcCode(0)).not.toThrow();
  });

  it('rejects other numbers and strings that are not names', () => {
    for (const bad of [-1, 17, 14.5, '14', 'unavailable', 'toString']) {
      expect(() => grpcCode(bad as never), String(bad)).toThrow(RangeError);
    }
  });
});

describe('errorReason', () => {
  it('takes non-empty strings only', () => {
    expect(() => errorReason('')).toThrow(new TypeError('errorReason: each reason must be a non-empty string, got ""'));
    expect(() => errorReason(5 as never)).toThrow(new TypeError('errorReason: each reason must be a non-empty string, got 5'));
    expect(() => errorReason('backendError', undefined as never)).toThrow(/^errorReason: each reason must be a non-empty string, got undefined$/);
    expect(errorReason('backendError')(withProps({ errors: [{ reason: 'BackendError' }] }))).toBe(true);
  });
});

describe('anyOf / allOf / not', () => {
  it('reject an argument that is not a function, naming its position', () => {
    const yes = (): boolean => true;
    expect(() => anyOf(yes, 5 as never)).toThrow(/anyOf: argument 1 must be a predicate function, got 5/);
    expect(() => allOf('x' as never)).toThrow(/allOf: argument 0 must be a predicate function, got "x"/);
    expect(() => not(undefined as never)).toThrow(/not: argument 0/);
    expect(anyOf(yes)(new Error('x'))).toBe(true);
  });
});
