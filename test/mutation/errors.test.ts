// Edges of the error-shape readers that the main tests (test/errors.test.ts) leave open, found by
// mutation testing: exact bounds, anchored patterns, and values of the wrong type in the right
// place, which must be ignored rather than returned or thrown over.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { errorReasonsOf, grpcCodeOf, httpStatusOf, retryAfterMsOf, statusStringOf, systemCodeOf } from '../../src/classify/error-shape.js';
import { parseRetryAfter } from '../../src/util/http-headers.js';

const withProps = (props: Record<string, unknown>): Error => Object.assign(new Error('boom'), props);

/** `error` wrapped in `levels` plain Errors, each the cause of the next. */
function wrapped(error: unknown, levels: number): unknown {
  let current = error;
  for (let i = 0; i < levels; i++) current = new Error(`wrap ${i}`, { cause: current });
  return current;
}

describe('the cause chain', () => {
  it('is read to eight levels: the error and seven causes below it, not an eighth', () => {
    expect(httpStatusOf(wrapped({ status: 503 }, 7))).toBe(503);
    expect(httpStatusOf(wrapped({ status: 503 }, 8))).toBeUndefined();
  });

  it('ends at null and at primitives without throwing', () => {
    expect(httpStatusOf(null)).toBeUndefined();
    expect(httpStatusOf(new Error('x', { cause: null }))).toBeUndefined();
    expect(grpcCodeOf(null)).toBeUndefined();
    expect(retryAfterMsOf(null)).toBeUndefined();
    expect(statusStringOf(withProps({ response: null }))).toBeUndefined();
  });

  it('reads functions that carry fields, as some libraries throw them', () => {
    const callable = Object.assign(() => undefined, { status: 503 });
    expect(httpStatusOf(callable)).toBe(503);
    expect(httpStatusOf(new Error('x', { cause: callable }))).toBe(503);
  });
});

describe('httpStatusOf', () => {
  it('takes 100 to 599 and nothing outside', () => {
    expect(httpStatusOf({ status: 599 })).toBe(599);
    expect(httpStatusOf({ status: 600 })).toBeUndefined();
    expect(httpStatusOf({ status: 100 })).toBe(100);
  });

  it('takes a three-digit string and no other text or type', () => {
    expect(httpStatusOf({ code: '503' })).toBe(503);
    expect(httpStatusOf({ code: '5030' })).toBeUndefined();
    expect(httpStatusOf({ code: 'x503' })).toBeUndefined();
    expect(httpStatusOf({ status: ['503'] })).toBeUndefined();
  });
});

describe('grpcCodeOf', () => {
  it('takes the integers 1 to 16, CANCELLED included', () => {
    expect(grpcCodeOf({ code: 1 })).toBe(1);
    expect(grpcCodeOf({ code: 16 })).toBe(16);
    expect(grpcCodeOf({ code: 14.5 })).toBeUndefined();
    expect(grpcCodeOf({ code: '14' })).toBeUndefined();
  });

  it('takes a status name, but not OK and not a property every object has', () => {
    expect(grpcCodeOf({ code: 'UNAVAILABLE' })).toBe(14);
    expect(grpcCodeOf({ status: 'OK' })).toBeUndefined();
    expect(grpcCodeOf({ code: 'OK' })).toBeUndefined();
    expect(grpcCodeOf({ code: 'toString' })).toBeUndefined();
    expect(grpcCodeOf({ status: 'constructor' })).toBeUndefined();
  });

  it('takes a name only as a string', () => {
    expect(grpcCodeOf({ status: ['UNAVAILABLE'] })).toBeUndefined();
  });

  describe('in a runtime without DOMException', () => {
    afterEach(() => {
      vi.unstubAllGlobals();
    });

    it('still reads numeric codes', () => {
      vi.stubGlobal('DOMException', undefined);
      expect(grpcCodeOf({ code: 8 })).toBe(8);
    });
  });
});

describe('systemCodeOf', () => {
  it('takes a whole code, not one with a code at its start', () => {
    expect(systemCodeOf({ code: 'EPIPE' })).toBe('EPIPE');
    expect(systemCodeOf({ code: 'EPIPE-and-more' })).toBeUndefined();
    expect(systemCodeOf({ code: 'ERR_STREAM_PREMATURE_CLOSE' })).toBe('ERR_STREAM_PREMATURE_CLOSE');
  });

  it('takes only strings', () => {
    expect(systemCodeOf({ code: ['ECONNRESET'] })).toBeUndefined();
  });
});

describe('statusStringOf', () => {
  it('takes upper-case names only, whole', () => {
    expect(statusStringOf({ status: 'ABORTED' })).toBe('ABORTED');
    expect(statusStringOf({ status: 'Aborted' })).toBeUndefined();
    expect(statusStringOf({ status: 'not ABORTED' })).toBeUndefined();
    expect(statusStringOf({ status: 'ABORTED by the server' })).toBeUndefined();
    expect(statusStringOf({ status: ['ABORTED'] })).toBeUndefined();
  });
});

describe('errorReasonsOf', () => {
  it('keeps only string reasons, skipping entries without one', () => {
    expect(errorReasonsOf({ errors: [null, { message: 'no reason' }, { reason: 5 }, { reason: 'backendError' }] })).toEqual([
      'backendError',
    ]);
  });

  it('looks further down the chain past an empty list', () => {
    const inner = withProps({ errors: [{ reason: 'rateLimitExceeded' }] });
    expect(errorReasonsOf(new Error('outer', { cause: inner }))).toEqual(['rateLimitExceeded']);
    expect(errorReasonsOf(Object.assign(new Error('outer', { cause: inner }), { errors: [] }))).toEqual(['rateLimitExceeded']);
  });
});

describe('retryAfterMsOf', () => {
  const now = Date.UTC(2026, 10, 21, 12, 0, 0);

  it('takes a retryAfterMs of 0', () => {
    expect(retryAfterMsOf({ retryAfterMs: 0 }, now)).toBe(0);
  });

  it('ignores a retryAfterMs that is negative, infinite or not a number', () => {
    expect(retryAfterMsOf({ retryAfterMs: -5 }, now)).toBeUndefined();
    expect(retryAfterMsOf({ retryAfterMs: Number.POSITIVE_INFINITY }, now)).toBeUndefined();
    expect(retryAfterMsOf({ retryAfterMs: '5000' }, now)).toBeUndefined();
    expect(retryAfterMsOf({ retryAfterMs: -5, headers: { 'retry-after': '2' } }, now)).toBe(2000);
  });

  it('reads a numeric header value in a plain object (any spelling of the name)', () => {
    expect(retryAfterMsOf({ headers: { 'Retry-After': 3 } }, now)).toBe(3000);
  });

  it('reads the first of several values', () => {
    expect(retryAfterMsOf({ headers: { 'retry-after': ['7', '8'] } }, now)).toBe(7000);
  });

  it('ignores header values that are neither text nor a number', () => {
    expect(retryAfterMsOf({ headers: { 'retry-after': null } }, now)).toBeUndefined();
    expect(retryAfterMsOf({ headers: { 'retry-after': [3] } }, now)).toBeUndefined();
    expect(retryAfterMsOf({ headers: { 'retry-after': [] } }, now)).toBeUndefined();
    expect(retryAfterMsOf({ headers: { 'retry-after': {}, 'Retry-After': '4' } }, now)).toBe(4000);
  });

  it('reads a Headers object without the header as no hint', () => {
    expect(retryAfterMsOf({ headers: new Headers() }, now)).toBeUndefined();
    expect(retryAfterMsOf({ response: { headers: new Headers() }, headers: new Headers() }, now)).toBeUndefined();
  });

  it('reads gRPC pushback given as a Buffer, with surrounding space, and ignores units or no get()', () => {
    const metadataOf = (value: unknown) => ({ get: (key: string) => (key === 'grpc-retry-pushback-ms' ? [value] : []) });
    expect(retryAfterMsOf({ metadata: metadataOf(Buffer.from('250')) }, now)).toBe(250);
    expect(retryAfterMsOf({ metadata: metadataOf(' 250 ') }, now)).toBe(250);
    expect(retryAfterMsOf({ metadata: metadataOf('250ms') }, now)).toBeUndefined();
    expect(retryAfterMsOf({ metadata: metadataOf(undefined) }, now)).toBeUndefined();
    expect(retryAfterMsOf({ metadata: {} }, now)).toBeUndefined();
    expect(retryAfterMsOf({ metadata: { get: 'not a function' } }, now)).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 10, 21, 12, 0, 0);

  it('takes only an HTTP-date (it names a day or month), not an ISO timestamp', () => {
    expect(parseRetryAfter('Sat, 21 Nov 2026 12:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('2026-11-21T12:00:10Z', now)).toBeUndefined();
  });
});

describe('the chain under an error', () => {
  it('follows `error` when `cause` is null or undefined, and only an error-like one', () => {
    const reset = Object.assign(new Error('reset'), { code: 'ECONNRESET' });
    expect(systemCodeOf({ cause: null, error: reset })).toBe('ECONNRESET');
    expect(systemCodeOf({ cause: undefined, error: reset })).toBe('ECONNRESET');
    expect(systemCodeOf({ error: { code: 'ECONNRESET' } })).toBeUndefined();
    expect(systemCodeOf({ error: 'ECONNRESET' })).toBeUndefined();
  });

  it('takes undici socket codes whole, and no other undici code', () => {
    for (const code of ['UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']) {
      expect(systemCodeOf({ code })).toBe(code);
    }
    for (const code of ['UND_ERR_RESPONSE', 'UND_ERR_SOCKETS', 'XUND_ERR_SOCKET', 'EAI_', 'E', 'ERR_STREAM_PREMATURE_CLOSED']) {
      expect(systemCodeOf({ code })).toBeUndefined();
    }
  });

  it('measures a Retry-After date against the Date of the same headers it came from', () => {
    const now = Date.UTC(2026, 0, 1);
    const inResponse = { response: { headers: { 'retry-after': new Date(now + 5000).toUTCString(), date: new Date(now + 1000).toUTCString() } } };
    expect(retryAfterMsOf(inResponse, now)).toBe(4000);
    // The Date of the response's headers is not used for a hint found on the error's own headers.
    const split = { response: { headers: { date: new Date(now + 1000).toUTCString() } }, headers: { 'retry-after': new Date(now + 5000).toUTCString() } };
    expect(retryAfterMsOf(split, now)).toBe(5000);
  });
});

