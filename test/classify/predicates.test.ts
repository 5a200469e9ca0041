import { describe, expect, it } from 'vitest';
import {
  aborted,
  allOf,
  anyOf,
  errorReason,
  grpcCode,
  grpcCodeOf,
  GrpcStatus,
  httpStatus,
  isTransient,
  networkError,
  not,
  retry,
  RetryError,
  timedOut,
  TimeoutError,
} from '../../src/index.js';
import { gcs, iam } from '../../src/google/index.js';
import { RECORDED_ROWS, rebuild, RUNTIME_FAILURES } from './runtime-errors.js';

const withProps = (props: Record<string, unknown>, message = 'boom'): Error => Object.assign(new Error(message), props);

describe('httpStatus / grpcCode', () => {
  it('match the listed statuses and codes only, through cause chains', () => {
    const p = httpStatus(429, 503);
    expect(p(withProps({ status: 503 }))).toBe(true);
    expect(p(new Error('wrapped', { cause: withProps({ statusCode: 429 }) }))).toBe(true);
    expect(p(withProps({ status: 500 }))).toBe(false);
    expect(p(new Error('no status'))).toBe(false);

    const serverErrors = httpStatus(408, '5xx');
    for (const status of [408, 500, 501, 503, 599]) expect(serverErrors(withProps({ status }))).toBe(true);
    for (const status of [400, 404, 429, 499]) expect(serverErrors(withProps({ status }))).toBe(false);
    // A class is exactly its hundred statuses, from x00 to x99.
    const clientErrors = httpStatus('4xx');
    for (const status of [400, 404, 499]) expect(clientErrors(withProps({ status }))).toBe(true);
    for (const status of [399, 500]) expect(clientErrors(withProps({ status }))).toBe(false);

    const g = grpcCode('UNAVAILABLE', GrpcStatus.ABORTED);
    expect(g(withProps({ code: 14 }))).toBe(true);
    expect(g(withProps({ code: 10 }))).toBe(true);
    expect(g(withProps({ status: 'UNAVAILABLE' }))).toBe(true);
    expect(g(withProps({ code: 7 }))).toBe(false);
    expect(g(withProps({ code: 503 }))).toBe(false);
  });

  it('reject bad codes up front', () => {
    expect(() => httpStatus(99)).toThrow(/httpStatus: each code must be an integer from 100 to 599 or a class such as '5xx', got 99/);
    expect(() => httpStatus(503.5)).toThrow(RangeError);
    expect(() => httpStatus('6xx' as never)).toThrow(/got "6xx"/);
    expect(() => httpStatus('5XX' as never)).toThrow(RangeError);
    expect(() => grpcCode('UNAVAILABLEE' as 'UNAVAILABLE')).toThrow(/grpcCode: .* got "UNAVAILABLEE"/);
    expect(() => grpcCode(17)).toThrow(RangeError);
  });
});

describe('anyOf / allOf / not', () => {
  const is503 = httpStatus(503);
  const is14 = grpcCode('UNAVAILABLE');

  it('compose like boolean or / and / not, passing the context along', () => {
    const either = anyOf(is503, is14);
    expect(either(withProps({ status: 503 }))).toBe(true);
    expect(either(withProps({ code: 14 }))).toBe(true);
    expect(either(withProps({ status: 404 }))).toBe(false);
    expect(anyOf()(new Error('x'))).toBe(false);
    expect(allOf()(new Error('x'))).toBe(true);

    const transientButNot503 = allOf(isTransient, not(is503));
    expect(transientButNot503(withProps({ status: 502 }))).toBe(true);
    expect(transientButNot503(withProps({ status: 503 }))).toBe(false);

    const seen: unknown[] = [];
    const spy = (_e: unknown, ctx?: unknown) => {
      seen.push(ctx);
      return false;
    };
    const ctx = {
      attempt: 2,
      copy: 1,
      invocationId: 'id',
      progress() {},
      signal: new AbortController().signal,
      elapsedMs: 5,
      remainingMs: 10,
    };
    anyOf(spy)(new Error('x'), ctx);
    allOf(not(spy))(new Error('x'), ctx);
    expect(seen).toEqual([ctx, ctx]);
  });

  it('stop at the first decisive predicate', () => {
    let calls = 0;
    const counted = () => {
      calls++;
      return true;
    };
    anyOf(() => true, counted)(new Error('x'));
    allOf(() => false, counted)(new Error('x'));
    expect(calls).toBe(0);
  });

  it('reject arguments that are not functions', () => {
    expect(() => anyOf(is503, 'nope' as never)).toThrow(/anyOf: argument 1 must be a predicate function, got "nope"/);
    expect(() => allOf(undefined as never)).toThrow(/allOf: argument 0/);
    expect(() => not(5 as never)).toThrow(/not: argument 0/);
  });
});

describe('networkError', () => {
  it.each(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT'])(
    'matches %s, also under fetch’s TypeError',
    (code) => {
      expect(networkError(withProps({ code }))).toBe(true);
      expect(networkError(new TypeError('fetch failed', { cause: withProps({ code }) }))).toBe(true);
    },
  );

  it('matches socket hang up and cut bodies, not other errors', () => {
    expect(networkError(new Error('socket hang up'))).toBe(true);
    expect(networkError(new TypeError('terminated'))).toBe(true);
    expect(networkError(new TypeError('x is not a function'))).toBe(false);
    expect(networkError(withProps({ code: 'ENOENT' }))).toBe(false);
    expect(networkError(withProps({ status: 503 }))).toBe(false);
  });
});

describe('networkError: fetch failures by cause (regression, issue 12 defect 6)', () => {
  // The real Node shapes are proved against loopback servers in test/clients/fetch.test.ts;
  // the other runtimes' shapes are the ones test/runtimes/ records from each runtime
  // (runtime-errors.ts), rebuilt here.
  it('a "fetch failed" is a network error only when its cause is one (any system errno counts)', () => {
    const failed = (cause: unknown) => new TypeError('fetch failed', { cause });
    expect(networkError(failed(withProps({ code: 'EMFILE' }, 'connect EMFILE')))).toBe(true);
    expect(networkError(failed(new DOMException('timed out', 'TimeoutError')))).toBe(true);
    expect(networkError(failed(new Error('redirect count exceeded')))).toBe(false);
    expect(networkError(failed(withProps({ code: 'ERR_INVALID_URL' }, 'Invalid URL')))).toBe(false);
    expect(networkError(failed(withProps({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' })))).toBe(false);
    expect(isTransient(failed(new Error('bad port')))).toBe(false);
  });

  // Regression (issue 21, item 11): Deno 2.9.6 rejects with TypeError('fetch failed') and puts
  // hyper's reason on the plain Error under it, which was read only on a TypeError: no network
  // failure was retried on Deno.
  it('Deno 2: "fetch failed" over "error sending request …" (refused, DNS, closed) or an io error (reset) is a network failure', () => {
    const deno = RUNTIME_FAILURES.deno;
    for (const failure of ['refused', 'dns', 'close', 'reset'] as const) {
      const error = rebuild(deno[failure].shape);
      expect([failure, isTransient(error), networkError(error)]).toEqual([failure, true, true]);
    }
    // The body cut short: a TypeError of its own, without a cause.
    expect(isTransient(rebuild(deno.cut.shape))).toBe(true);
  });

  it('Deno: what fails the same way every time is not a network failure', () => {
    // Recorded from Deno 2.9.6 on loopback (once; the suite does not provoke these).
    const failed = (message: string) => new TypeError('fetch failed', { cause: new Error(message) });
    const tls = failed(
      'error sending request for url (https://127.0.0.1:34603/): client error (Connect): received corrupt message of type InvalidContentType',
    );
    expect(isTransient(tls)).toBe(false);
    expect(networkError(tls)).toBe(false);
    expect(isTransient(new TypeError('Fetch failed: Maximum number of redirects (20) reached'))).toBe(false);
    expect(isTransient(new TypeError("Fetch failed: Encountered redirect while redirect mode is set to 'error'"))).toBe(false);
    expect(isTransient(new TypeError('Fetch failed: Requests to port 0 are blocked'))).toBe(false);
    expect(isTransient(new TypeError('Request with GET/HEAD method cannot have body'))).toBe(false);
    // Deno's words out of place: not at the start, or an io error's errno not at the end.
    expect(networkError(new Error('the proxy said: error sending request for url (x): client error (Connect): tcp connect error'))).toBe(
      false,
    );
    expect(isTransient(new TypeError('while error reading a body from connection'))).toBe(false);
    expect(isTransient(new TypeError('Connection reset by peer (os error 104) in a test'))).toBe(false);
    expect(isTransient(new TypeError('error sending request for url (x): missing a reason'))).toBe(false);
  });

  it('Deno 1: "error sending request …" on the TypeError itself, when its reason is the network', () => {
    // Deno 1's shape (not re-recorded: the suite runs Deno 2).
    const refused = new TypeError(
      'error sending request for url (http://127.0.0.1:1/): error trying to connect: tcp connect error: Connection refused (os error 111)',
    );
    expect(networkError(refused)).toBe(true);
    expect(isTransient(refused)).toBe(true);
    const certificate = new TypeError(
      'error sending request for url (https://x.test/): error trying to connect: invalid peer certificate: UnknownIssuer',
    );
    expect(isTransient(certificate)).toBe(false);
  });

  it('workerd: "Network connection lost." is a network failure, so the presets built on networkError retry it', () => {
    expect(networkError(rebuild(RUNTIME_FAILURES.workerd.refused.shape))).toBe(true);
    expect(networkError(new Error('Network connection lost'))).toBe(false);
    expect(networkError(new Error('Network connection lost. Or not'))).toBe(false);
  });

  it("Bun 1.4: Node's codes on its TypeError", () => {
    for (const failure of ['refused', 'reset', 'dns'] as const) {
      expect(isTransient(rebuild(RUNTIME_FAILURES.bun[failure].shape))).toBe(true);
    }
  });

  it('older Bun: a plain Error with code "TooManyRedirects" is permanent; "ConnectionRefused" is not', () => {
    // The codes Bun's fetch had before it took Node's (not re-recorded: the suite runs Bun 1.4).
    expect(isTransient(withProps({ code: 'TooManyRedirects' }, 'The response redirected too many times.'))).toBe(false);
    expect(isTransient(withProps({ code: 'ConnectionRefused' }, 'Unable to connect. Is the computer able to access the url?'))).toBe(true);
  });

  it('older Bun: its connection codes are network errors, so the presets built on networkError retry them', () => {
    for (const code of ['ConnectionRefused', 'ConnectionClosed', 'FailedToOpenSocket', 'DNSLookupFailed']) {
      expect(networkError(withProps({ code }))).toBe(true);
    }
    expect(networkError(withProps({ code: 'TooManyRedirects' }))).toBe(false);
  });

  it.each(RECORDED_ROWS)('%s, %s: isTransient and networkError of what the runtime really throws', (_runtime, _failure, recorded) => {
    const error = rebuild(recorded.shape);
    expect({ isTransient: isTransient(error), networkError: networkError(error) }).toEqual({
      isTransient: recorded.isTransient,
      networkError: recorded.networkError,
    });
  });
});

describe('timedOut', () => {
  it('matches errors named TimeoutError: retry()’s, AbortSignal.timeout’s, wrapped ones', () => {
    expect(timedOut(new TimeoutError('attempt 1 timed out'))).toBe(true);
    expect(timedOut(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))).toBe(true);
    expect(timedOut(new Error('gaxios', { cause: new DOMException('t', 'TimeoutError') }))).toBe(true);
    expect(timedOut(withProps({ code: 'TimeoutError' }))).toBe(true);
  });

  it('matches socket and undici timeout codes, and node-fetch v2 timeouts', () => {
    for (const code of ['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']) {
      expect(timedOut(new TypeError('fetch failed', { cause: withProps({ code }) }))).toBe(true);
    }
    expect(timedOut(withProps({ name: 'FetchError', type: 'request-timeout' }))).toBe(true);
    expect(timedOut(withProps({ name: 'FetchError', type: 'body-timeout' }))).toBe(true);
    expect(timedOut(withProps({ name: 'FetchError', type: 'system', code: 'ECONNRESET' }))).toBe(false);
  });

  it('tells an abort caused by a timeout signal from the caller’s own abort', () => {
    const byTimeout = withProps({ config: { signal: AbortSignal.abort(new DOMException('t', 'TimeoutError')) } });
    byTimeout.cause = withProps({ name: 'AbortError' });
    expect(timedOut(byTimeout)).toBe(true);
    const byCaller = withProps({ config: { signal: AbortSignal.abort() } });
    expect(timedOut(byCaller)).toBe(false);
    const notAborted = withProps({ config: { signal: new AbortController().signal } });
    expect(timedOut(notAborted)).toBe(false);
    expect(timedOut(new DOMException('stop', 'AbortError'))).toBe(false);
    expect(timedOut(withProps({ config: null }))).toBe(false);
    expect(timedOut(undefined)).toBe(false);
  });
});

describe('errorReason', () => {
  it('matches errors[].reason case-insensitively, on the error or in a JSON body', () => {
    const p = errorReason('rateLimitExceeded', 'econnreset');
    expect(p(withProps({ errors: [{ reason: 'notFound' }, { reason: 'rateLimitExceeded' }] }))).toBe(true);
    expect(p(withProps({ errors: [{ reason: 'ECONNRESET' }] }))).toBe(true);
    expect(p(withProps({ response: { data: { error: { errors: [{ reason: 'ratelimitexceeded' }] } } } }))).toBe(true);
    expect(p(withProps({ response: { body: JSON.stringify({ error: { errors: [{ reason: 'rateLimitExceeded' }] } }) } }))).toBe(true);
    expect(p(withProps({ errors: [{ reason: 'notFound' }] }))).toBe(false);
    expect(p(new Error('none'))).toBe(false);
  });

  it('rejects reasons that are not non-empty strings', () => {
    expect(() => errorReason('')).toThrow(/errorReason: each reason must be a non-empty string, got ""/);
    expect(() => errorReason(5 as never)).toThrow(TypeError);
  });
});

describe('aborted', () => {
  it('is HTTP 409 with status ABORTED, or gRPC ABORTED; never 409 ALREADY_EXISTS or a bare 409', () => {
    expect(aborted(withProps({ status: 409, response: { data: { error: { status: 'ABORTED' } } } }))).toBe(true);
    expect(aborted(withProps({ code: 10 }))).toBe(true);
    expect(aborted(withProps({ status: 409, response: { data: { error: { status: 'ALREADY_EXISTS' } } } }))).toBe(false);
    expect(aborted(withProps({ status: 409 }))).toBe(false);
    expect(aborted(withProps({ code: 6 }))).toBe(false);
  });
});

describe('isTransient and aborts', () => {
  it('does not retry an AbortError found under cause, unless the abort was a timeout', () => {
    const callerAbort = withProps({ config: { signal: AbortSignal.abort() } });
    callerAbort.cause = withProps({ name: 'AbortError', type: 'aborted' });
    expect(isTransient(callerAbort)).toBe(false);
    const timeoutAbort = withProps({ config: { signal: AbortSignal.abort(new DOMException('t', 'TimeoutError')) } });
    timeoutAbort.cause = withProps({ name: 'AbortError', type: 'aborted' });
    expect(isTransient(timeoutAbort)).toBe(true);
    expect(isTransient(new Error('wrapper', { cause: new DOMException('slow', 'TimeoutError') }))).toBe(true);
  });

  // Regression (issue 13): axios' abort, a CanceledError with no cause, was called transient.
  it('does not retry axios’ CanceledError, unless its request signal aborted with a timeout', () => {
    const canceled = withProps({ name: 'CanceledError', code: 'ERR_CANCELED', message: 'canceled' });
    expect(isTransient(canceled)).toBe(false);
    expect(isTransient(new Error('wrapper', { cause: canceled }))).toBe(false);
    const byTimeout = withProps({
      name: 'CanceledError',
      code: 'ERR_CANCELED',
      config: { signal: AbortSignal.abort(new TimeoutError('slow')) },
    });
    expect(isTransient(byTimeout)).toBe(true);
  });
});

describe('DOMException codes are not gRPC codes', () => {
  it('ignores the legacy numeric code of a DOMException', () => {
    // NotFoundError's legacy code is 8 (RESOURCE_EXHAUSTED as a gRPC code), InvalidStateError's 11.
    expect(grpcCodeOf(new DOMException('gone', 'NotFoundError'))).toBeUndefined();
    expect(grpcCodeOf(new DOMException('bad state', 'InvalidStateError'))).toBeUndefined();
    expect(isTransient(new DOMException('bad state', 'InvalidStateError'))).toBe(true);
    expect(grpcCodeOf(withProps({ code: 8 }))).toBe(8);
  });
});

// Regression (issue 13, "one retry layer"): the outer default retried the inner RetryError,
// so 3 attempts inside 3 attempts made 9 calls.
describe('one retry layer: a RetryError is permanent', () => {
  const tiny = { backoff: { initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitter: 'none' as const }, maxAttempts: 3 };
  const busy = () => Object.assign(new Error('busy'), { status: 503 });

  it.each([
    ['the default', {}],
    ['iam()', iam()],
    ['iam({ retryNotFound })', iam({ retryNotFound: true })],
    ['gcs()', gcs({ operation: 'objects.get' })],
  ])('an outer retry() with %s does not retry an inner one that gave up: 3 calls, not 9', async (_name, preset) => {
    let calls = 0;
    const inner = () =>
      retry(
        () => {
          calls++;
          throw busy();
        },
        { ...preset, ...tiny },
      );
    const error = await retry(inner, { ...preset, ...tiny }).catch((e: unknown) => e);
    expect(calls).toBe(3);
    // The inner RetryError comes out unchanged: not retryable, so not wrapped again.
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).attempts).toBe(3);
    expect((error as RetryError).cause).toMatchObject({ status: 503 });
  });

  it('isTransient is false for a RetryError by name (another copy of the library), also under cause', () => {
    const foreign = Object.assign(new Error('gave up'), { name: 'RetryError', cause: busy() });
    expect(isTransient(foreign)).toBe(false);
    expect(isTransient(new Error('wrapped', { cause: foreign }))).toBe(false);
    expect(isTransient(busy())).toBe(true);
  });
});

function wrapped(error: unknown, levels: number): unknown {
  let current = error;
  for (let i = 0; i < levels; i++) current = new Error(`wrap ${i}`, { cause: current });
  return current;
}

describe('networkError: edge cases', () => {
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

  it('matches workerd\'s "Network connection lost." only as the whole message', () => {
    expect(networkError(new Error('Network connection lost.'))).toBe(true);
    expect(networkError(new Error('upstream said: Network connection lost.'))).toBe(false);
  });

  it('takes a fetch TypeError whose cause is null as one without a cause: a network failure', () => {
    expect(networkError(new TypeError('Failed to fetch', { cause: null }))).toBe(true);
    expect(isTransient(new TypeError('fetch failed', { cause: null }))).toBe(true);
  });

  it('reads messages to eight levels of cause, and ends on a cycle', () => {
    expect(networkError(wrapped(new TypeError('fetch failed'), 7))).toBe(true);
    expect(networkError(wrapped(new TypeError('fetch failed'), 8))).toBe(false);
    const cyclic = new Error('loop');
    (cyclic as { cause?: unknown }).cause = cyclic;
    expect(networkError(cyclic)).toBe(false);
  });
});

describe('timedOut: edge cases', () => {
  it('matches an abort whose signal timed out, and nothing about a signal that did not', () => {
    expect(timedOut({ name: 'AbortError', config: { signal: AbortSignal.abort(new DOMException('t', 'TimeoutError')) } })).toBe(true);
    expect(timedOut({ name: 'AbortError', config: { signal: null } })).toBe(false);
    expect(timedOut({ name: 'AbortError', config: { signal: { aborted: false, reason: new DOMException('t', 'TimeoutError') } } })).toBe(
      false,
    );
    expect(timedOut({ name: 'AbortError', config: { signal: AbortSignal.abort(null) } })).toBe(false);
    expect(timedOut({ name: 'AbortError', config: { signal: AbortSignal.abort('TimeoutError') } })).toBe(false);
    expect(timedOut({ name: 'AbortError', config: { signal: AbortSignal.abort(class TimeoutError {}) } })).toBe(false);
  });
});

describe('aborted: edge cases', () => {
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

  it("reads an object's name and code only when it has a string name: nameless, even Bun's TooManyRedirects is retried", () => {
    expect(isTransient({ name: 'Error', code: 'TooManyRedirects' })).toBe(false);
    expect(isTransient({ code: 'TooManyRedirects' })).toBe(true);
    expect(isTransient({ name: 5, code: 'TooManyRedirects' })).toBe(true);
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

  it('takes a class only as a string: an array or an object that prints as one is refused', () => {
    expect(() => httpStatus(['5xx'] as never)).toThrow(
      new RangeError(`httpStatus: each code must be an integer from 100 to 599 or a class such as '5xx', got ["5xx"]`),
    );
    expect(() => httpStatus({ toString: () => '4xx' } as never)).toThrow(RangeError);
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

  it('takes a name only as a string, and says what it wants of a bad one', () => {
    expect(() => grpcCode(['UNAVAILABLE'] as never)).toThrow(
      new RangeError('grpcCode: each code must be a gRPC code name or 0..16, got ["UNAVAILABLE"]'),
    );
    expect(() => grpcCode({ toString: () => 'ABORTED' } as never)).toThrow(RangeError);
    expect(grpcCode('ABORTED')(withProps({ code: 10 }))).toBe(true);
  });
});

describe('errorReason: edge cases', () => {
  it('takes non-empty strings only', () => {
    expect(() => errorReason('')).toThrow(new TypeError('errorReason: each reason must be a non-empty string, got ""'));
    expect(() => errorReason(5 as never)).toThrow(new TypeError('errorReason: each reason must be a non-empty string, got 5'));
    expect(() => errorReason('backendError', undefined as never)).toThrow(
      /^errorReason: each reason must be a non-empty string, got undefined$/,
    );
    expect(errorReason('backendError')(withProps({ errors: [{ reason: 'BackendError' }] }))).toBe(true);
  });
});

describe('anyOf / allOf / not: edge cases', () => {
  it('reject an argument that is not a function, naming its position', () => {
    const yes = (): boolean => true;
    expect(() => anyOf(yes, 5 as never)).toThrow(/anyOf: argument 1 must be a predicate function, got 5/);
    expect(() => allOf('x' as never)).toThrow(/allOf: argument 0 must be a predicate function, got "x"/);
    expect(() => not(undefined as never)).toThrow(/not: argument 0/);
    expect(anyOf(yes)(new Error('x'))).toBe(true);
  });
});
