import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hintExceeds } from '../../src/classify/error-shape.js';
import {
  createAdaptiveThrottle,
  errorReasonsOf,
  grpcCodeOf,
  httpStatusOf,
  isTransient,
  parseRetryAfter,
  retryAfterMsOf,
  statusStringOf,
  systemCodeOf,
  ThrottledError,
} from '../../src/index.js';

const withProps = (props: Record<string, unknown>, message = 'boom'): Error => Object.assign(new Error(message), props);

describe('httpStatusOf', () => {
  it.each([
    ['status', { status: 503 }, 503],
    ['statusCode', { statusCode: 429 }, 429],
    ['response.status', { response: { status: 404 } }, 404],
    ['response.statusCode', { response: { statusCode: 502 } }, 502],
    ['numeric code >= 100 (Storage ApiError)', { code: 503 }, 503],
    ['status as a numeric string in code', { code: '504' }, 504],
  ])('reads %s', (_where, props, expected) => {
    expect(httpStatusOf(withProps(props))).toBe(expected);
  });

  it('ignores gRPC-sized codes, status strings and non-errors', () => {
    expect(httpStatusOf(withProps({ code: 14 }))).toBeUndefined();
    expect(httpStatusOf(withProps({ status: 'ABORTED' }))).toBeUndefined();
    expect(httpStatusOf(withProps({ status: 99 }))).toBeUndefined();
    expect(httpStatusOf(undefined)).toBeUndefined();
    expect(httpStatusOf('503')).toBeUndefined();
  });

  it('follows cause chains, and stops at a bounded depth', () => {
    expect(httpStatusOf(new Error('outer', { cause: new Error('mid', { cause: withProps({ status: 500 }) }) }))).toBe(500);
    const cyclic: { cause?: unknown } = {};
    cyclic.cause = cyclic;
    expect(httpStatusOf(cyclic)).toBeUndefined();
    let deep: unknown = withProps({ status: 503 });
    for (let i = 0; i < 20; i++) deep = new Error(`wrap ${i}`, { cause: deep });
    expect(httpStatusOf(deep)).toBeUndefined();
  });
});

describe('the chain the readers walk: `cause`, else an error kept in `error` (regression, issue 12)', () => {
  // gaxios 6 (what @google-cloud/storage 7 throws) keeps node-fetch's error in `.error`; the
  // real thing is driven against a loopback server in test/clients/gaxios.test.ts.
  it('follows `.error` when it is an error, `cause` first when both are there, within the depth bound', () => {
    expect(systemCodeOf(withProps({ error: withProps({ code: 'ECONNRESET' }) }))).toBe('ECONNRESET');
    expect(httpStatusOf(withProps({ error: { message: 'from a plain object', status: 503 } }))).toBe(503);
    expect(systemCodeOf(withProps({ cause: withProps({ code: 'EPIPE' }), error: withProps({ code: 'ECONNRESET' }) }))).toBe('EPIPE');
    // A Google JSON error body's `error` is data, not an error under this one.
    expect(httpStatusOf({ error: { code: 409, status: 'ABORTED' } })).toBeUndefined();
    const looped = withProps({});
    (looped as { error?: unknown }).error = looped;
    expect(systemCodeOf(looped)).toBeUndefined();
    let deep: Error = withProps({ code: 'ECONNRESET' });
    for (let i = 0; i < 8; i++) deep = withProps({ error: deep });
    expect(systemCodeOf(deep)).toBeUndefined();
  });
});

// Regression (issue 13, item 10): any code starting with E was taken, so axios' and got's
// response codes passed for socket errors. axios, got and the undici package are not
// dependencies of this project; their codes are plain strings on the error, copied here.
describe('systemCodeOf: system and socket codes only', () => {
  it('skips library codes that are not about the socket, and finds the socket code under them', () => {
    for (const code of [
      'ERR_BAD_RESPONSE',
      'ERR_NON_2XX_3XX_RESPONSE',
      'UND_ERR_RESPONSE',
      'ERR_INVALID_URL',
      'UND_ERR_INVALID_ARG',
      'ERR_NETWORK',
    ]) {
      expect(systemCodeOf(withProps({ code }))).toBeUndefined();
    }
    expect(systemCodeOf(withProps({ code: 'ERR_BAD_RESPONSE', cause: withProps({ code: 'ECONNRESET' }) }))).toBe('ECONNRESET');
    for (const code of [
      'ECONNRESET',
      'EAI_AGAIN',
      'EHOSTUNREACH',
      'UND_ERR_SOCKET',
      'UND_ERR_CONNECT_TIMEOUT',
      'ERR_STREAM_PREMATURE_CLOSE',
    ]) {
      expect(systemCodeOf(withProps({ code }))).toBe(code);
    }
  });
});

describe('grpcCodeOf / systemCodeOf / statusStringOf / errorReasonsOf', () => {
  it('reads gRPC codes 1..16 by number and by name', () => {
    expect(grpcCodeOf(withProps({ code: 14, details: 'unavailable' }))).toBe(14);
    expect(grpcCodeOf(withProps({ code: 'ABORTED' }))).toBe(10);
    expect(grpcCodeOf(withProps({ status: 'NOT_FOUND' }))).toBe(5);
    expect(grpcCodeOf(withProps({ code: 0 }))).toBeUndefined();
    expect(grpcCodeOf(withProps({ code: 503 }))).toBeUndefined();
    expect(grpcCodeOf(withProps({ code: 'ECONNRESET' }))).toBeUndefined();
  });

  it('reads Node and undici system codes through cause', () => {
    const fetchFailure = new TypeError('fetch failed', { cause: withProps({ code: 'ECONNREFUSED' }) });
    expect(systemCodeOf(fetchFailure)).toBe('ECONNREFUSED');
    expect(systemCodeOf(withProps({ code: 'UND_ERR_HEADERS_TIMEOUT' }))).toBe('UND_ERR_HEADERS_TIMEOUT');
    expect(systemCodeOf(withProps({ code: 'ABORTED' }))).toBeUndefined();
    expect(systemCodeOf(withProps({ code: 14 }))).toBeUndefined();
  });

  it('reads the Google status string from a JSON body, a status field or errors[]', () => {
    const body = { error: { code: 409, status: 'ABORTED', message: 'conflict' } };
    expect(statusStringOf(withProps({ response: { status: 409, data: body } }))).toBe('ABORTED');
    expect(statusStringOf(withProps({ response: { status: 409, data: JSON.stringify(body) } }))).toBe('ABORTED');
    expect(statusStringOf(withProps({ status: 'ALREADY_EXISTS' }))).toBe('ALREADY_EXISTS');
    expect(statusStringOf(withProps({ errors: [{ status: 'ABORTED' }] }))).toBe('ABORTED');
    expect(statusStringOf(withProps({ response: { data: 'not json' } }))).toBeUndefined();
  });

  it('reads errors[].reason', () => {
    expect(errorReasonsOf(withProps({ errors: [{ reason: 'rateLimitExceeded' }, { reason: 'backendError' }] }))).toEqual([
      'rateLimitExceeded',
      'backendError',
    ]);
    expect(errorReasonsOf(withProps({ response: { data: { error: { errors: [{ reason: 'backendError' }] } } } }))).toEqual([
      'backendError',
    ]);
    expect(errorReasonsOf(new Error('plain'))).toEqual([]);
  });
});

describe('retry hints', () => {
  const now = Date.UTC(2026, 10, 21, 12, 0, 0);

  it('parses Retry-After as seconds and as an HTTP-date', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30_000);
    expect(parseRetryAfter(new Date(now - 30_000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
  });

  // Regression (issue 12): the date was measured against this machine's clock, so a server
  // an hour ahead saying "retry at <its now + 2 s>" got no wait at all from a 503 past the deadline.
  it("measures an HTTP-date against the response's Date header when there is a valid one", () => {
    const serverClock = now + 3_600_000;
    const headers = (date: string) => ({
      'retry-after': new Date(serverClock + 2000).toUTCString(),
      date,
    });
    expect(retryAfterMsOf(withProps({ response: { headers: new Headers(headers(new Date(serverClock).toUTCString())) } }), now)).toBe(2000);
    expect(retryAfterMsOf(withProps({ headers: headers(new Date(serverClock).toUTCString()) }), now)).toBe(2000);
    // No usable Date: this machine's clock, as before.
    expect(retryAfterMsOf(withProps({ headers: headers('yesterday-ish') }), now)).toBe(3_602_000);
    expect(retryAfterMsOf(withProps({ headers: { 'retry-after': new Date(now + 2000).toUTCString() } }), now)).toBe(2000);
    // Delta-seconds need no clock.
    expect(retryAfterMsOf(withProps({ headers: { 'retry-after': '7', date: new Date(serverClock).toUTCString() } }), now)).toBe(7000);
  });

  it("reads a 429's or 503's quota reset from the RateLimit fields, in seconds, when there is no Retry-After", () => {
    const limited = (status: number, headers: Record<string, string>) =>
      withProps({ status, response: { status, headers: new Headers(headers) } });
    expect(retryAfterMsOf(limited(429, { 'ratelimit-reset': '5' }), now)).toBe(5000);
    expect(retryAfterMsOf(limited(503, { ratelimit: 'limit=100, remaining=0, reset=7' }), now)).toBe(7000);
    expect(retryAfterMsOf(limited(429, { ratelimit: '"default";r=0;t=12' }), now)).toBe(12_000);
    expect(retryAfterMsOf(limited(429, { ratelimit: 'reset=4, limit=10' }), now)).toBe(4000);
    expect(retryAfterMsOf(withProps({ statusCode: 429, headers: { 'RateLimit-Reset': '2' } }), now)).toBe(2000);
    // Retry-After wins; other statuses' quotas are informational; malformed values are ignored.
    expect(retryAfterMsOf(limited(429, { 'retry-after': '1', 'ratelimit-reset': '9' }), now)).toBe(1000);
    expect(retryAfterMsOf(limited(200, { 'ratelimit-reset': '5' }), now)).toBeUndefined();
    expect(retryAfterMsOf(limited(500, { 'ratelimit-reset': '5' }), now)).toBeUndefined();
    expect(retryAfterMsOf(limited(429, { 'ratelimit-reset': '-5' }), now)).toBeUndefined();
    expect(retryAfterMsOf(limited(429, { 'ratelimit-reset': '1.5' }), now)).toBeUndefined();
    expect(retryAfterMsOf(limited(429, { ratelimit: 'limit=10, remaining=0, reset=2.5' }), now)).toBeUndefined();
    expect(retryAfterMsOf(limited(429, { ratelimit: 'limit=10, preset=3' }), now)).toBeUndefined();
    expect(retryAfterMsOf(limited(429, {}), now)).toBeUndefined();
  });

  it('finds the header in Headers, plain objects, arrays; gRPC pushback; retryAfterMs', () => {
    expect(retryAfterMsOf(withProps({ response: { headers: new Headers({ 'Retry-After': '3' }) } }), now)).toBe(3000);
    expect(retryAfterMsOf(withProps({ response: { headers: { 'Retry-After': '4' } } }), now)).toBe(4000);
    expect(retryAfterMsOf(withProps({ headers: { 'retry-after': ['5'] } }), now)).toBe(5000);
    const metadata = { get: (key: string) => (key === 'grpc-retry-pushback-ms' ? ['750'] : []) };
    expect(retryAfterMsOf(withProps({ code: 14, metadata }), now)).toBe(750);
    const badPushback = { get: () => ['-1'] };
    expect(retryAfterMsOf(withProps({ code: 14, metadata: badPushback }), now)).toBeUndefined();
    expect(retryAfterMsOf(withProps({ retryAfterMs: 1234 }), now)).toBe(1234);
    expect(retryAfterMsOf(new Error('x', { cause: withProps({ retryAfterMs: 10 }) }), now)).toBe(10);
    expect(retryAfterMsOf(new Error('none'), now)).toBeUndefined();
  });
});

describe('isTransient (the default classification)', () => {
  it.each([408, 429, 500, 502, 503, 504])('retries HTTP %i', (status) => {
    expect(isTransient(withProps({ status }))).toBe(true);
    expect(isTransient(withProps({ response: { status } }))).toBe(true);
  });

  it.each([400, 401, 403, 404, 409, 412, 501, 505])('does not retry HTTP %i', (status) => {
    expect(isTransient(withProps({ statusCode: status }))).toBe(false);
  });

  it('retries HTTP 409 only when its status string is ABORTED', () => {
    expect(isTransient(withProps({ status: 409, response: { data: { error: { status: 'ABORTED' } } } }))).toBe(true);
    expect(isTransient(withProps({ status: 409, response: { data: { error: { status: 'ALREADY_EXISTS' } } } }))).toBe(false);
  });

  it('classifies numeric codes >= 100 as HTTP (Storage ApiError)', () => {
    expect(isTransient(withProps({ code: 503 }))).toBe(true);
    expect(isTransient(withProps({ code: 403 }))).toBe(false);
  });

  it.each([
    [14, true],
    [8, true],
    [4, true],
    [10, true],
    [13, true],
    [2, true],
    [7, false],
    [5, false],
    [3, false],
    [6, false],
    [16, false],
    [12, false],
  ])('gRPC code %i transient: %s', (code, expected) => {
    expect(isTransient(withProps({ code }))).toBe(expected);
  });

  it('retries Node system errors and fetch network TypeErrors', () => {
    expect(isTransient(withProps({ code: 'ECONNRESET' }))).toBe(true);
    expect(isTransient(withProps({ code: 'ETIMEDOUT' }))).toBe(true);
    expect(isTransient(new TypeError('fetch failed', { cause: withProps({ code: 'ECONNREFUSED' }) }))).toBe(true);
    expect(isTransient(new TypeError('Failed to fetch'))).toBe(true);
    expect(isTransient(new Error('socket hang up'))).toBe(true);
  });

  it('does not retry programmer errors or aborts', () => {
    expect(isTransient(new TypeError('x is not a function'))).toBe(false);
    expect(isTransient(new RangeError('bad'))).toBe(false);
    expect(isTransient(new ReferenceError('y is not defined'))).toBe(false);
    expect(isTransient(new SyntaxError('Unexpected token'))).toBe(false);
    expect(isTransient(new DOMException('stopped', 'AbortError'))).toBe(false);
  });

  it('does not retry a call the adaptive throttle refused (an outer retry must not undo it)', () => {
    const throttle = createAdaptiveThrottle({ k: 1, rng: () => 0 });
    for (let i = 0; i < 50; i++) {
      throttle.admit();
      throttle.record(false);
    }
    expect(throttle.admit()).toBe(false);
    const refused = throttle.error();
    expect(refused).toBeInstanceOf(ThrottledError);
    expect(isTransient(refused)).toBe(false);
  });

  it('retries unknown errors, timeouts and non-Error throws', () => {
    expect(isTransient(new Error('flaky'))).toBe(true);
    expect(isTransient(new DOMException('slow', 'TimeoutError'))).toBe(true);
    expect(isTransient('a string')).toBe(true);
    expect(isTransient(undefined)).toBe(true);
  });

  it('classifies through cause chains: a wrapped 404 stays permanent', () => {
    expect(isTransient(new Error('wrapper', { cause: withProps({ status: 404 }) }))).toBe(false);
    expect(isTransient(new Error('wrapper', { cause: withProps({ code: 14 }) }))).toBe(true);
  });
});

const withPropsEdge = (props: Record<string, unknown>): Error => Object.assign(new Error('boom'), props);

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
    expect(statusStringOf(withPropsEdge({ response: null }))).toBeUndefined();
  });

  it('reads functions that carry fields, as some libraries throw them', () => {
    const callable = Object.assign(() => undefined, { status: 503 });
    expect(httpStatusOf(callable)).toBe(503);
    expect(httpStatusOf(new Error('x', { cause: callable }))).toBe(503);
  });
});

describe('httpStatusOf: edge cases', () => {
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
    const inner = withPropsEdge({ errors: [{ reason: 'rateLimitExceeded' }] });
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
    const inResponse = {
      response: { headers: { 'retry-after': new Date(now + 5000).toUTCString(), date: new Date(now + 1000).toUTCString() } },
    };
    expect(retryAfterMsOf(inResponse, now)).toBe(4000);
    // The Date of the response's headers is not used for a hint found on the error's own headers.
    const split = {
      response: { headers: { date: new Date(now + 1000).toUTCString() } },
      headers: { 'retry-after': new Date(now + 5000).toUTCString() },
    };
    expect(retryAfterMsOf(split, now)).toBe(5000);
  });
});

describe('hintExceeds: the one test of maxRetryAfterMs, for every field a hint comes in', () => {
  const fields: ReadonlyArray<readonly [string, (seconds: number) => unknown]> = [
    ['Retry-After', (s) => withProps({ status: 503, response: { headers: { 'retry-after': String(s) } } })],
    ['RateLimit-Reset', (s) => withProps({ status: 429, response: { headers: { 'ratelimit-reset': String(s) } } })],
    ['RateLimit reset=', (s) => withProps({ status: 429, headers: { ratelimit: `limit=1, remaining=0, reset=${s}` } })],
    ['RateLimit t=', (s) => withProps({ status: 503, headers: new Headers({ ratelimit: `"q";r=0;t=${s}` }) })],
    ['grpc-retry-pushback-ms', (s) => withProps({ code: 8, metadata: new Map([['grpc-retry-pushback-ms', [String(s * 1000)]]]) })],
    [
      'Retry-After as a date',
      (s) => withProps({ status: 503, headers: { date: new Date(0).toUTCString(), 'retry-after': new Date(s * 1000).toUTCString() } }),
    ],
  ];

  it('is true exactly when the hint, from any of its fields, is longer than the limit', () => {
    fc.assert(
      fc.property(fc.constantFrom(...fields), fc.nat(10 ** 6), fc.double({ min: 0, noNaN: true }), ([, make], seconds, limitMs) => {
        expect(hintExceeds(make(seconds), limitMs)).toBe(seconds * 1000 > limitMs);
      }),
    );
  });

  it('is false without a hint, or with a malformed one, whatever the limit', () => {
    expect(hintExceeds(withProps({ status: 503 }), 0)).toBe(false);
    expect(hintExceeds(withProps({ status: 503, headers: { 'retry-after': 'soon' } }), 0)).toBe(false);
    expect(hintExceeds(new Error('reset'), 0)).toBe(false);
  });

  it('holds a hint too large for a double (Infinity ms) to any finite limit, and not to Infinity', () => {
    const huge = withProps({ status: 429, headers: { 'ratelimit-reset': '9'.repeat(400) } });
    expect(hintExceeds(huge, Number.MAX_VALUE)).toBe(true);
    expect(hintExceeds(huge, Infinity)).toBe(false);
  });
});
