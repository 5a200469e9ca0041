// `error.type` as OpenTelemetry's conventions ask: the class of an error, low-cardinality,
// never its message; found through cause chains, as the library's predicates find it.
import { describe, expect, it } from 'vitest';
import { RetryError, TimeoutError } from '../../src/index.js';
import { errorType } from '../../src/otel/error-type.js';

describe('errorType', () => {
  it.each([
    ['an HTTP status', Object.assign(new Error('Service Unavailable'), { status: 503 }), '503'],
    ['a status under a cause', new Error('wrapped', { cause: { response: { status: 429 } } }), '429'],
    ['a gRPC code, as its name', Object.assign(new Error('14 UNAVAILABLE: no healthy upstream'), { code: 14 }), 'UNAVAILABLE'],
    ['a gRPC status string', { status: 'ABORTED' }, 'ABORTED'],
    [
      "a socket code under fetch's TypeError",
      new TypeError('fetch failed', { cause: Object.assign(new Error('read'), { code: 'ECONNRESET' }) }),
      'ECONNRESET',
    ],
    ['a class of its own', new TimeoutError('attempt 2 timed out after 100 ms'), 'TimeoutError'],
    ['a built-in class', new RangeError('page size 0'), 'RangeError'],
    ['a plain Error', new Error('boom'), 'Error'],
    [
      'an error named apart from its class, by its name',
      Object.assign(new Error('operation was aborted'), { name: 'AbortError' }),
      'AbortError',
    ],
    ['a DOMException, by its name', new DOMException('This operation was aborted', 'AbortError'), 'AbortError'],
    ['an error of its own class, not its cause', new RangeError('page size 0', { cause: new TypeError('not a number') }), 'RangeError'],
    ['a subclass named only by its constructor', new (class QuotaError extends Error {})('over quota'), 'QuotaError'],
    ['a string', 'boom', '_OTHER'],
    ['undefined', undefined, '_OTHER'],
  ])('names %s', (_name, error, type) => {
    expect(errorType(error)).toBe(type);
  });

  it('names a RetryError after the error it gave up on, not after itself', () => {
    expect(errorType(new RetryError('attempts', 3, 10, Object.assign(new Error('x'), { status: 502 })))).toBe('502');
    expect(errorType(new RetryError('deadline', 3, 10, new TimeoutError('attempt 3 timed out')))).toBe('TimeoutError');
    expect(errorType(new RetryError('budget', 1, 0, undefined))).toBe('RetryError');
  });
});
