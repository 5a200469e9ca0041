// The fetch policy (src/fetch/fetch-policy.ts): what the engine is told is worth retrying, safe
// to resend and allowed to be hedged: the policies asked directly, with real errors, and the cap
// on server hints as retryFetch keeps it against a real node:http server in virtual time.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { httpStatus } from '../../src/classify/predicates.js';
import { HttpStatusError, ResumeError } from '../../src/errors.js';
import { type FetchPolicyOptions, fetchPolicy } from '../../src/fetch/fetch-policy.js';
import { retryFetch } from '../../src/fetch/retry-fetch.js';
import type { AttemptContext, AttemptMode } from '../../src/types.js';
import { type InstalledClock, installClock, track } from '../helpers/clock.js';
import { closeServersAfterEach, quick, reply, scriptedServer } from './loopback.js';

const GET = { method: 'GET', idempotent: true, replayable: true };
const POST = { method: 'POST', idempotent: false, replayable: true };
const STREAMED_PUT = { method: 'PUT', idempotent: true, replayable: false };
const none: FetchPolicyOptions = { maxRetryAfterMs: Infinity };

/** The context the engine would pass; the policies only hand it on. */
const ctx = { attempt: 1, copy: 1 } as AttemptContext;

function statusError(status: number, headers: Record<string, string> = {}): HttpStatusError {
  return new HttpStatusError(new Response(null, { status, headers }), 'GET');
}

/** fetch's TypeError for a connection refused: the request never left the client. */
function refused(): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) });
}

/** fetch's TypeError for a connection reset after the request went out. */
function reset(): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
}

describe('the retry policy', () => {
  it('retries what the default classification calls transient: 503 and a reset, not 404', () => {
    const { retryable } = fetchPolicy(GET, none);
    expect(retryable(statusError(503), ctx)).toBe(true);
    expect(retryable(reset(), ctx)).toBe(true);
    expect(retryable(statusError(404), ctx)).toBe(false);
  });

  it("asks the caller's predicate instead, with the error and the attempt's context", () => {
    const asked: unknown[] = [];
    const only404 = (error: unknown, c?: AttemptContext): boolean => {
      asked.push([error, c]);
      return httpStatus(404)(error);
    };
    const { retryable } = fetchPolicy(GET, { ...none, retryable: only404 });
    const notFound = statusError(404);
    expect(retryable(notFound, ctx)).toBe(true);
    expect(retryable(statusError(503), ctx)).toBe(false);
    expect(asked[0]).toEqual([notFound, ctx]);
  });

  it('never retries a ResumeError, whatever the caller says (the next answer would be refused alike)', () => {
    const { retryable } = fetchPolicy(GET, { ...none, retryable: () => true });
    expect(retryable(new ResumeError('changed', 10, 'the ETag changed'), ctx)).toBe(false);
    expect(retryable(new Error('anything else'), ctx)).toBe(true);
  });

  it('does not retry a response asking for a longer wait than maxRetryAfterMs; one equal to it is retried', () => {
    const { retryable } = fetchPolicy(GET, { maxRetryAfterMs: 3000 });
    expect(retryable(statusError(503, { 'retry-after': '4' }), ctx)).toBe(false);
    expect(retryable(statusError(503, { 'retry-after': '3' }), ctx)).toBe(true);
  });

  it('with maxRetryAfterMs 0, returns any response asking to wait, and retries one that does not ask', () => {
    const { retryable } = fetchPolicy(GET, { maxRetryAfterMs: 0 });
    expect(retryable(statusError(429, { 'retry-after': '1' }), ctx)).toBe(false);
    expect(retryable(statusError(503, { 'retry-after': '0' }), ctx)).toBe(true);
    expect(retryable(statusError(503), ctx)).toBe(true);
  });

  it.each([
    ['RateLimit-Reset: 4', { 'ratelimit-reset': '4' }],
    ['RateLimit: …, reset=4', { ratelimit: 'limit=10, remaining=0, reset=4' }],
    ['RateLimit: …;t=4', { ratelimit: '"default";r=0;t=4' }],
    ['Retry-After: a date 4 s after the Date', { date: 'Wed, 21 Oct 2015 07:28:00 GMT', 'retry-after': 'Wed, 21 Oct 2015 07:28:04 GMT' }],
  ])('holds a 429 whose %s to maxRetryAfterMs as it holds a Retry-After', (_name, hint) => {
    expect(fetchPolicy(GET, { maxRetryAfterMs: 3000 }).retryable(statusError(429, hint), ctx)).toBe(false);
    expect(fetchPolicy(GET, { maxRetryAfterMs: 4000 }).retryable(statusError(429, hint), ctx)).toBe(true);
  });

  it('applies maxRetryAfterMs to responses only: a network error carrying a longer hint is still retried', () => {
    const { retryable } = fetchPolicy(GET, { maxRetryAfterMs: 1000 });
    expect(retryable(Object.assign(reset(), { retryAfterMs: 5000 }), ctx)).toBe(true);
  });
});

describe('the idempotency policy', () => {
  it("takes the plan's rule (the method, an Idempotency-Key) when the caller gives none", () => {
    expect(fetchPolicy(GET, none).idempotent(statusError(503), ctx)).toBe(true);
    expect(fetchPolicy(POST, none).idempotent(statusError(503), ctx)).toBe(false);
    expect(fetchPolicy(POST, none).idempotent(reset(), ctx)).toBe(false);
  });

  it("replaces the plan's rule by the caller's, a boolean or a function of the context and the error", () => {
    expect(fetchPolicy(GET, { ...none, idempotent: false }).idempotent(statusError(503), ctx)).toBe(false);
    expect(fetchPolicy(POST, { ...none, idempotent: true }).idempotent(statusError(503), ctx)).toBe(true);
    const seen: unknown[] = [];
    const after503 = (error: unknown, c: AttemptContext): boolean => {
      seen.push([c, error]);
      return error instanceof HttpStatusError && error.status === 503;
    };
    const { idempotent } = fetchPolicy(POST, { ...none, idempotent: after503 });
    const busy = statusError(503);
    expect(idempotent(busy, ctx)).toBe(true);
    expect(idempotent(statusError(500), ctx)).toBe(false);
    expect(seen[0]).toEqual([ctx, busy]);
  });

  it('resends whatever the rule says when the failure proves the request never left (connection refused)', () => {
    expect(fetchPolicy(POST, none).idempotent(refused(), ctx)).toBe(true);
    expect(fetchPolicy(GET, { ...none, idempotent: () => false }).idempotent(refused(), ctx)).toBe(true);
  });

  it('never resends a body that cannot be read again, not even one that never left', () => {
    const { idempotent } = fetchPolicy(STREAMED_PUT, { ...none, idempotent: true });
    expect(idempotent(statusError(503), ctx)).toBe(false);
    expect(idempotent(refused(), ctx)).toBe(false);
  });
});

describe('hedging', () => {
  const mode: AttemptMode = { run: (fn, c) => Promise.resolve(fn(c)) };

  it.each(['GET', 'HEAD'])('lets a %s be hedged', (method) => {
    expect(fetchPolicy({ ...GET, method }, { ...none, hedge: mode }).hedge).toBe(mode);
    expect(fetchPolicy({ ...GET, method }, { ...none, hedge: mode, maxAttempts: 2 }).hedge).toBe(mode);
  });

  it.each(['POST', 'PUT', 'DELETE', 'OPTIONS'])('never hedges a %s, though it may be resent', (method) => {
    expect(fetchPolicy({ ...GET, method }, { ...none, hedge: mode })).not.toHaveProperty('hedge');
  });

  it('never hedges with maxAttempts 1: one request, always', () => {
    expect(fetchPolicy(GET, { ...none, hedge: mode, maxAttempts: 1 })).not.toHaveProperty('hedge');
  });

  it('leaves hedge out of the engine options when none was asked for', () => {
    expect(Object.keys(fetchPolicy(GET, none)).sort()).toEqual(['idempotent', 'retryable']);
  });
});

describe('retryFetch with maxRetryAfterMs, against a real server', () => {
  closeServersAfterEach();
  // Installed in each test, after the server started; global fetch (undici) arms timers of its
  // own on it, so the clock is simply removed after each test.
  let clock: InstalledClock | undefined;
  afterEach(() => {
    clock?.uninstall();
    clock = undefined;
  });
  const THREE_SECONDS: ReadonlyArray<readonly [string, Record<string, string>]> = [
    ['Retry-After: 3', { 'retry-after': '3' }],
    ['RateLimit-Reset: 3', { 'ratelimit-reset': '3' }],
    ['RateLimit: …, reset=3', { ratelimit: 'limit=10, remaining=0, reset=3' }],
    ['RateLimit: …;t=3', { ratelimit: '"default";r=0;t=3' }],
  ];

  it.each(THREE_SECONDS)('a 429 with %s under a 300 ms cap is the answer at once: one request, no virtual time', async (_name, hint) => {
    const server = await scriptedServer([reply(429, 'slow down', hint)]);
    clock = installClock();
    const call = track(retryFetch(server.url, undefined, { ...quick, maxRetryAfterMs: 300 }));
    // The clock never moves: a call that waited for the hint would still be pending.
    await vi.waitFor(() => expect(call.state).toBe('resolved'));
    expect(call.value?.status).toBe(429);
    expect(await call.value?.text()).toBe('slow down');
    expect(server.seen).toHaveLength(1);
  });

  it.each(THREE_SECONDS)('a 429 with %s under a 5 s cap is retried 3 s (virtual) later', async (_name, hint) => {
    const server = await scriptedServer([reply(429, 'slow down', hint)]);
    const virtual = installClock();
    clock = virtual;
    const call = track(retryFetch(server.url, undefined, { ...quick, maxRetryAfterMs: 5_000 }));
    await vi.waitFor(() => expect(server.seen).toHaveLength(1));
    await virtual.tickAsync(2_990);
    expect(server.seen).toHaveLength(1);
    await virtual.tickAsync(10);
    await vi.waitFor(() => expect(call.state).toBe('resolved'));
    expect(call.value?.status).toBe(200);
    await call.value?.text();
    expect(server.seen).toHaveLength(2);
  });
});
