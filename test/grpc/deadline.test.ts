// Time and cancellation, in virtual time over a real grpc-js channel (the fake clock drives
// grpc-js's deadlines, the server's view of them, and tenacious's waits alike): each attempt's
// gRPC deadline is its limit clipped to what the call's deadline leaves, the call's deadline
// bounds the whole call, pushback lengthens a wait, call.cancel() ends the call at once, and the
// statuses the interceptor makes itself when no attempt answers.
import { type ClientUnaryCall, Metadata, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_CHANNEL_RETRIES, grpcRetryInterceptor } from '../../src/grpc/index.js';
import type { GrpcInterceptorOptions } from '../../src/grpc/index.js';
import { type RetryEvent, ThrottledError, createRetryAfterGate } from '../../src/index.js';
import { useVirtualClock } from '../helpers/clock.js';
import {
  type Answer,
  type LoopbackClient,
  type Outcome,
  type ScriptedServer,
  connect,
  echo,
  listening,
  scriptedServer,
  until,
} from './server.js';

const clock = useVirtualClock();
let server: ScriptedServer | undefined;
let client: LoopbackClient | undefined;
afterEach(() => {
  client?.close();
  server?.close();
  client = undefined;
  server = undefined;
});

const none = { jitter: 'none' } as const;

/** The waits the call has begun (onRetry), in the order it began them. */
let waits: number[] = [];

/** Resolves once the call has begun its wait after attempt `n`: the client has the answer (real I/O), the timer is set. */
async function waitedAfter(n: number): Promise<void> {
  for (let turn = 0; waits.length < n; turn++) {
    if (turn === 1000) throw new Error(`no wait after attempt ${n}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A server answering `script`, and a client retrying under `options`; the call's outcome, still to come. */
async function start(
  script: readonly Answer[],
  options: GrpcInterceptorOptions,
  callOptions: object = {},
  onCall?: (call: ClientUnaryCall) => void,
): Promise<{ readonly outcome: Promise<Outcome> }> {
  server = await scriptedServer(script, 'UNAVAILABLE');
  waits = [];
  const onRetry = (event: RetryEvent) => waits.push(event.delayMs);
  client = connect(server.address, { ...NO_CHANNEL_RETRIES, interceptors: [grpcRetryInterceptor({ onRetry, ...options })] });
  // In a box: an async function's promise would adopt the outcome's, and wait for the whole call.
  return { outcome: echo(client, callOptions, onCall) };
}

describe('deadlines', () => {
  it('each attempt’s gRPC deadline is attemptTimeoutMs, clipped to what the call’s deadline leaves', async () => {
    const { outcome } = await start(
      ['stall', 'stall', 'stall', 'stall'],
      { attemptTimeoutMs: 3000, backoff: { initialDelayMs: 1, maxDelayMs: 1, ...none } },
      {
        deadline: Date.now() + 10_000,
      },
    );
    for (let n = 1; n <= 4; n++) {
      await server?.seen(n);
      await clock.tickAsync(3001);
    }
    const { error } = await outcome;
    // Attempts start at 0, 3001, 6002 and 9003 ms: the last may run only the 997 ms left.
    expect(server?.calls.map((c) => c.deadlineInMs)).toEqual([3000, 3000, 3000, 997]);
    await until(() => server?.calls.every((c) => c.cancelled) === true, 'the server’s cancels');
    // The engine's deadline came first (its timer was set first): the attempt cancelled with grpc-js's words.
    expect(error).toMatchObject({ code: status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
  });

  it('without a call deadline, deadlineMs bounds the call (120 s by default), and is each attempt’s deadline', async () => {
    const { outcome } = await start(['OK'], {});
    await expect(outcome).resolves.toMatchObject({ value: { ok: true } });
    expect(server?.calls.map((c) => c.deadlineInMs)).toEqual([120_000]);
  });

  it('the sooner of the call’s deadline and deadlineMs bounds the call', async () => {
    await (await start(['OK'], { deadlineMs: 5000 }, { deadline: new Date(Date.now() + 8000) })).outcome;
    const seen = [server?.calls[0]?.deadlineInMs];
    client?.close();
    server?.close();
    await (await start(['OK'], { deadlineMs: 5000 }, { deadline: new Date(Date.now() + 2000) })).outcome;
    seen.push(server?.calls[0]?.deadlineInMs);
    expect(seen).toEqual([5000, 2000]);
  });

  it('a call deadline, as epoch milliseconds or a Date, counts from now: the clock far past 0', async () => {
    await clock.tickAsync(50_000);
    await (await start(['OK'], {}, { deadline: Date.now() + 2000 })).outcome;
    const seen = [server?.calls[0]?.deadlineInMs];
    client?.close();
    server?.close();
    await (await start(['OK'], {}, { deadline: new Date(Date.now() + 3000) })).outcome;
    seen.push(server?.calls[0]?.deadlineInMs);
    expect(seen).toEqual([2000, 3000]);
  });

  it('gives up once the next wait would end past the call’s deadline, with the last answer', async () => {
    const { outcome } = await start(
      [],
      { backoff: { initialDelayMs: 1000, multiplier: 1, maxDelayMs: 1000, ...none } },
      {
        deadline: Date.now() + 3500,
      },
    );
    for (let n = 1; n <= 3; n++) {
      await waitedAfter(n);
      await clock.tickAsync(1000);
    }
    const { error } = await outcome;
    expect(server?.calls).toHaveLength(4);
    expect(Date.now()).toBe(3000);
    expect(error).toMatchObject({ code: status.UNAVAILABLE, details: 'loopback says UNAVAILABLE' });
  });
});

describe('DEADLINE_EXCEEDED is retried only when the call is idempotent', () => {
  it('an attempt that runs out of time, idempotent (the default): retried', async () => {
    const { outcome } = await start(['stall', 'OK'], { attemptTimeoutMs: 1000, backoff: { initialDelayMs: 1, ...none } });
    await server?.seen(1);
    await clock.tickAsync(1000);
    await waitedAfter(1);
    await clock.tickAsync(1);
    await expect(outcome).resolves.toMatchObject({ value: { ok: true } });
    await until(() => server?.calls[0]?.cancelled === true, 'the server’s cancel');
    expect(server?.calls.map((c) => [c.answer, c.cancelled])).toEqual([
      ['stall', true],
      ['OK', false],
    ]);
  });

  it('idempotent: false: the DEADLINE_EXCEEDED of its one attempt', async () => {
    const { outcome } = await start(['stall', 'OK'], { attemptTimeoutMs: 1000, idempotent: false });
    await server?.seen(1);
    await clock.tickAsync(1000);
    const { error } = await outcome;
    expect(error?.code).toBe(status.DEADLINE_EXCEEDED);
    await clock.tickAsync(10_000);
    expect(server?.calls).toHaveLength(1);
  });

  it('a later attempt that runs out of time, when only UNAVAILABLE may be resent: its DEADLINE_EXCEEDED', async () => {
    // From the second attempt on, the engine sets its timer before the call: its limit comes first.
    const idempotent = (error: unknown) => (error as { code?: number }).code === status.UNAVAILABLE;
    const { outcome } = await start(['UNAVAILABLE', 'stall'], {
      attemptTimeoutMs: 1000,
      idempotent,
      backoff: { initialDelayMs: 1, ...none },
    });
    await waitedAfter(1);
    await clock.tickAsync(1);
    await server?.seen(2);
    await clock.tickAsync(1000);
    const { error } = await outcome;
    expect(error).toMatchObject({ code: status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
    await until(() => server?.calls[1]?.cancelled === true, 'the server’s cancel');
    expect(server?.calls.map((c) => [c.answer, c.deadlineInMs, c.cancelled])).toEqual([
      ['UNAVAILABLE', 1000, false],
      ['stall', 1000, true],
    ]);
  });
});

describe('pushback', () => {
  it('grpc-retry-pushback-ms lengthens the wait: the retry comes 30 s later, not 1 ms', async () => {
    const { outcome } = await start([{ status: 'UNAVAILABLE', pushbackMs: '30000' }, 'OK'], { backoff: { initialDelayMs: 1, ...none } });
    await waitedAfter(1);
    expect(waits).toEqual([30_000]);
    await clock.tickAsync(29_999);
    expect(server?.calls).toHaveLength(1);
    await clock.tickAsync(1);
    await expect(outcome).resolves.toMatchObject({ value: { ok: true } });
    expect(server?.calls.map((c) => c.previousAttempts)).toEqual([undefined, '1']);
  });

  it('a pushback past the deadline: the answer at once', async () => {
    const { outcome } = await start([{ status: 'UNAVAILABLE', pushbackMs: '30000' }], { deadlineMs: 10_000 });
    const { error } = await outcome;
    expect(Date.now()).toBe(0);
    expect(error?.metadata.get('grpc-retry-pushback-ms')).toEqual(['30000']);
  });
});

describe('maxRetryAfterMs and pushback too long to wait for', () => {
  it('a pushback past maxRetryAfterMs: the answer at once, one call, though the deadline leaves time', async () => {
    const { outcome } = await start([{ status: 'UNAVAILABLE', pushbackMs: '30000' }], { maxRetryAfterMs: 10_000 });
    const { error } = await outcome;
    expect(Date.now()).toBe(0);
    expect(error).toMatchObject({ code: status.UNAVAILABLE, details: 'loopback says UNAVAILABLE' });
    expect(error?.metadata.get('grpc-retry-pushback-ms')).toEqual(['30000']);
    expect(server?.calls).toHaveLength(1);
  });

  it('a pushback within maxRetryAfterMs is waited for', async () => {
    const { outcome } = await start([{ status: 'UNAVAILABLE', pushbackMs: '10000' }, 'OK'], { maxRetryAfterMs: 10_000 });
    await waitedAfter(1);
    expect(waits).toEqual([10_000]);
    await clock.tickAsync(10_000);
    await expect(outcome).resolves.toMatchObject({ value: { ok: true } });
    expect(server?.calls).toHaveLength(2);
  });

  it('maxRetryAfterMs is checked with the other options, naming the value', () => {
    expect(() => grpcRetryInterceptor({ maxRetryAfterMs: -1 })).toThrow(
      new RangeError('grpcRetryInterceptor: options.maxRetryAfterMs must be a number >= 0 (Infinity for none), got -1'),
    );
  });

  // A timer holds at most 2^31 − 1 ms; the engine's own sleep is taken in steps of that.
  it('a 30-day pushback without a deadline: the retry comes 30 days later, not at once', async () => {
    const month = 30 * 24 * 3600 * 1000;
    const { outcome } = await start([{ status: 'UNAVAILABLE', pushbackMs: String(month) }, 'OK'], { deadlineMs: Infinity, maxAttempts: 2 });
    await waitedAfter(1);
    expect(waits).toEqual([month]);
    await clock.tickAsync(2 ** 31);
    expect(server?.calls).toHaveLength(1);
    await clock.tickAsync(month - 2 ** 31 - 1);
    expect(server?.calls).toHaveLength(1);
    await clock.tickAsync(1);
    await expect(outcome).resolves.toMatchObject({ value: { ok: true } });
    expect(server?.calls).toHaveLength(2);
  });

  it('a pushback of 400 digits (Infinity ms) without a deadline: the answer at once', async () => {
    const { outcome } = await start([{ status: 'UNAVAILABLE', pushbackMs: '9'.repeat(400) }], { deadlineMs: Infinity, maxAttempts: 3 });
    const { error } = await outcome;
    expect(Date.now()).toBe(0);
    expect(error).toMatchObject({ code: status.UNAVAILABLE });
    expect(server?.calls).toHaveLength(1);
  });

  // Regression (issue 34): grpc-js's server reads a grpc-timeout into a 32-bit integer, so an
  // attempt deadline more than 2^31 − 1 ms away reached it negative, and it ended the attempt
  // at once with DEADLINE_EXCEEDED.
  it('a deadlineMs of 30 days: the server keeps the attempt, and answers it (no DEADLINE_EXCEEDED at once)', async () => {
    const { outcome } = await start([{ status: 'UNAVAILABLE', delayMs: 1000 }], { deadlineMs: 30 * 24 * 3600 * 1000, maxAttempts: 1 });
    await server?.seen(1);
    await clock.tickAsync(1000);
    const { error } = await outcome;
    expect(error).toMatchObject({ code: status.UNAVAILABLE, details: 'loopback says UNAVAILABLE' });
  });

  // Regression: grpc-js's client sends a timeout of 10^8 ms or more in whole seconds, rounded
  // up, and its server multiplies them back into 32 bits: a limit within a timer's 2^31 − 1 ms
  // but past 2,147,483 s (2^31 − 1 ms itself) still reached the server negative, and it ended
  // the attempt at once with DEADLINE_EXCEEDED.
  it('a deadlineMs of 2^31 − 1 ms: the server keeps the attempt, and answers it (no DEADLINE_EXCEEDED at once)', async () => {
    const { outcome } = await start([{ status: 'UNAVAILABLE', delayMs: 1000 }], { deadlineMs: 2 ** 31 - 1, maxAttempts: 1 });
    await server?.seen(1);
    await clock.tickAsync(1000);
    const { error } = await outcome;
    expect(error).toMatchObject({ code: status.UNAVAILABLE, details: 'loopback says UNAVAILABLE' });
    expect(server?.calls.map((c) => c.deadlineInMs)).toEqual([Number.POSITIVE_INFINITY]);
  });

  it('a limit of 2,147,483 s, the longest the server reads right: sent as the attempt’s gRPC deadline; a millisecond more is not', async () => {
    await (await start(['OK'], { deadlineMs: 2_147_483_000 })).outcome;
    const seen = [server?.calls[0]?.deadlineInMs];
    client?.close();
    server?.close();
    await (await start(['OK'], { deadlineMs: 2_147_483_001 })).outcome;
    seen.push(server?.calls[0]?.deadlineInMs);
    expect(seen).toEqual([2_147_483_000, Number.POSITIVE_INFINITY]);
  });
});

describe('call.cancel()', () => {
  it('during an attempt: CANCELLED at once, as grpc-js says it; the server sees the call cancelled', async () => {
    let call: ClientUnaryCall | undefined;
    const { outcome } = await start(['stall'], {}, {}, (made) => (call = made));
    await server?.seen(1);
    call?.cancel();
    const { error } = await outcome;
    expect(error).toMatchObject({ code: status.CANCELLED, details: 'Cancelled on client', message: '1 CANCELLED: Cancelled on client' });
    expect(error?.metadata).toBeInstanceOf(Metadata);
    expect(error?.metadata.getMap()).toEqual({});
    await until(() => server?.calls[0]?.cancelled === true, 'the server’s cancel');
  });

  it('an interceptor under it sees the running attempt end with the caller’s status', async () => {
    server = await scriptedServer(['stall']);
    const under: Array<[number, string]> = [];
    const interceptors = [grpcRetryInterceptor({}), listening({ onReceiveStatus: (s) => under.push([s.code, s.details]) })];
    client = connect(server.address, { ...NO_CHANNEL_RETRIES, interceptors });
    let call: ClientUnaryCall | undefined;
    const outcome = echo(client, {}, (made) => (call = made));
    await server.seen(1);
    call?.cancel();
    const { error } = await outcome;
    expect(error).toMatchObject({ code: status.CANCELLED, details: 'Cancelled on client' });
    await until(() => under.length > 0, 'the attempt’s status');
    expect(under).toEqual([[status.CANCELLED, 'Cancelled on client']]);
    await until(() => server?.calls[0]?.cancelled === true, 'the server’s cancel');
  });

  it('during a wait: CANCELLED, and no attempt after it; cancelling twice changes nothing', async () => {
    let call: ClientUnaryCall | undefined;
    const { outcome } = await start(['UNAVAILABLE'], { backoff: { initialDelayMs: 5000, ...none } }, {}, (made) => (call = made));
    await waitedAfter(1);
    await clock.tickAsync(100);
    call?.cancel();
    call?.cancel();
    const result = await outcome;
    expect(result).toMatchObject({ error: { code: status.CANCELLED, details: 'Cancelled on client' }, statusEvents: 1 });
    await clock.tickAsync(10_000);
    expect(server?.calls).toHaveLength(1);
  });
});

describe('statuses of the interceptor’s own', () => {
  it('a gate’s pause that outlasts the deadline: DEADLINE_EXCEEDED, nothing sent; no peer meanwhile', async () => {
    const gate = createRetryAfterGate();
    gate.hold(60_000);
    let call: ClientUnaryCall | undefined;
    const { outcome } = await start(['OK'], { gate, deadlineMs: 5000 }, {}, (made) => (call = made));
    expect([call?.getPeer(), call?.getAuthContext()]).toEqual(['unknown', null]);
    const { error } = await outcome;
    expect(error).toMatchObject({ code: status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
    expect(error?.metadata.getMap()).toEqual({});
    expect(server?.calls).toEqual([]);
  });

  it('a throttle that refuses the first attempt: UNAVAILABLE with its reason, nothing sent', async () => {
    const refusal = new ThrottledError(1, 10, 0);
    const throttle = { admit: () => false, record: () => {}, error: () => refusal };
    const { error } = await (await start(['OK'], { throttle })).outcome;
    expect(error).toMatchObject({ code: status.UNAVAILABLE, details: refusal.message });
    expect(server?.calls).toEqual([]);
  });

  it('a throttle that refuses a retry: the last answer', async () => {
    let admitted = 0;
    const throttle = { admit: () => ++admitted === 1, record: () => {}, error: () => new ThrottledError(1, 10, 0) };
    const { outcome } = await start(['UNAVAILABLE'], { throttle, backoff: { initialDelayMs: 1, ...none } });
    await waitedAfter(1);
    await clock.tickAsync(1);
    const { error } = await outcome;
    expect(error).toMatchObject({ code: status.UNAVAILABLE, details: 'loopback says UNAVAILABLE' });
    expect(server?.calls).toHaveLength(1);
  });

  it('a retry policy that throws: INTERNAL naming its error, not the answer it hid', async () => {
    const retryable = () => {
      throw new TypeError('the policy broke');
    };
    const { error } = await (await start(['UNAVAILABLE'], { retryable })).outcome;
    expect(error).toMatchObject({ code: status.INTERNAL, details: 'grpcRetryInterceptor: TypeError: the policy broke' });
    expect(server?.calls).toHaveLength(1);
  });

  it('a policy that throws undefined: INTERNAL all the same', async () => {
    const retryable = () => {
      throw undefined;
    };
    const { error } = await (await start(['UNAVAILABLE'], { retryable })).outcome;
    expect(error).toMatchObject({ code: status.INTERNAL, details: 'grpcRetryInterceptor: undefined' });
  });

  it('a telemetry that throws as the call begins: INTERNAL, nothing sent', async () => {
    const telemetry = () => {
      throw new Error('no exporter');
    };
    const { error } = await (await start(['OK'], { telemetry })).outcome;
    expect(error).toMatchObject({ code: status.INTERNAL, details: 'grpcRetryInterceptor: Error: no exporter' });
    expect(server?.calls).toEqual([]);
  });
});
