// A server stream under grpcRetryInterceptor, on a real grpc-js channel in virtual time: it is
// retried until its first message (that is the engine's call), and from there on the attempt's
// stream is the caller's, read as the caller reads it, never retried, cancelled by call.cancel().
import { type ClientReadableStream, type Interceptor, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_CHANNEL_RETRIES, grpcRetryInterceptor } from '../../src/grpc/index.js';
import type { GrpcInterceptorOptions } from '../../src/grpc/index.js';
import type { RetryEvent } from '../../src/index.js';
import { useVirtualClock } from '../helpers/clock.js';
import {
  type Answer,
  type LoopbackClient,
  type ScriptedServer,
  connect,
  listening,
  scriptedServer,
  settled,
  until,
  withTrailers,
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

const fast = { backoff: { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' } } as const;

/** What the caller read of the stream: its messages, its error, and how many metadata and status events it had. */
interface Read {
  readonly messages: unknown[];
  readonly error: ServiceError | undefined;
  readonly metadataEvents: number;
  readonly statusEvents: number;
}

let waits: number[] = [];
/** What the listener of an interceptor before the retrying one was told: messages, and `status <code>`. */
let told: unknown[] = [];

/** Watch, retried under `options`, against a server answering `script`; the stream and what will have been read of it. */
async function watch(
  script: readonly Answer[],
  options: GrpcInterceptorOptions,
  callOptions: object = {},
  under: Interceptor[] = [],
): Promise<{ stream: ClientReadableStream<unknown>; read: Promise<Read> }> {
  server = await scriptedServer(script);
  waits = [];
  told = [];
  const onRetry = (event: RetryEvent) => waits.push(event.delayMs);
  const recorder = listening({ onReceiveMessage: (m) => told.push(m), onReceiveStatus: (s) => told.push(`status ${s.code}`) });
  const interceptors = [recorder, grpcRetryInterceptor({ onRetry, ...fast, ...options }), ...under];
  client = connect(server.address, { ...NO_CHANNEL_RETRIES, interceptors });
  const stream = client.Watch({}, new Metadata(), callOptions);
  const messages: unknown[] = [];
  let error: ServiceError | undefined;
  let metadataEvents = 0;
  stream.on('data', (message) => messages.push(message));
  stream.on('error', (e: ServiceError) => (error = e));
  stream.on('metadata', () => metadataEvents++);
  const read = new Promise<Read>((resolve) => {
    let statusEvents = 0;
    stream.on('status', () => {
      statusEvents++;
      setImmediate(() => resolve({ messages, error, metadataEvents, statusEvents }));
    });
  });
  return { stream, read };
}

describe('a server stream', () => {
  it('UNAVAILABLE, UNAVAILABLE, then three messages: retried before its first message, then read to its end', async () => {
    const { read } = await watch(['UNAVAILABLE', 'UNAVAILABLE'], {});
    await settled(read, clock);
    await expect(read).resolves.toEqual({ messages: [{ n: 1 }, { n: 2 }, { n: 3 }], error: undefined, metadataEvents: 1, statusEvents: 1 });
    expect(told).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, 'status 0']);
    expect(server?.calls.map((c) => [c.method, c.answer, c.previousAttempts])).toEqual([
      ['Watch', 'UNAVAILABLE', undefined],
      ['Watch', 'UNAVAILABLE', '1'],
      ['Watch', 'OK', '2'],
    ]);
  });

  it('a failure after its first message is the caller’s: that message, then the error; no retry', async () => {
    const { read } = await watch(['midway'], {});
    await settled(read, clock);
    const { messages, error } = await read;
    expect(messages).toEqual([{ n: 1 }]);
    expect(error).toMatchObject({ code: status.UNAVAILABLE, details: 'loopback says UNAVAILABLE' });
    expect(server?.calls).toHaveLength(1);
  });

  it('answered at once: every message read, in order, none taken by the attempt’s own read of its first', async () => {
    const { read } = await watch([], {});
    await settled(read, clock);
    await expect(read).resolves.toEqual({ messages: [{ n: 1 }, { n: 2 }, { n: 3 }], error: undefined, metadataEvents: 1, statusEvents: 1 });
    expect(told).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, 'status 0']);
  });

  it('an interceptor under it that hands a message on only with the status: that message, then the status', async () => {
    // The status comes before the retried call has handed the stream over to the caller.
    const { read } = await watch(['midway'], {}, {}, [withTrailers]);
    await settled(read, clock);
    await until(() => told.length === 2, 'the message and the status');
    expect(told).toEqual([{ n: 1 }, 'status 14']);
    const { messages, error, statusEvents } = await read;
    expect(messages).toEqual([{ n: 1 }]);
    expect(error).toMatchObject({ code: status.UNAVAILABLE, details: 'loopback says UNAVAILABLE' });
    expect(statusEvents).toBe(1);
    expect(server?.calls).toHaveLength(1);
  });

  it('a stream that ends without a message: OK, nothing read, one call', async () => {
    const { read } = await watch(['empty'], {});
    await settled(read, clock);
    // A trailers-only answer: no headers, so no metadata event.
    await expect(read).resolves.toEqual({ messages: [], error: undefined, metadataEvents: 0, statusEvents: 1 });
    expect(told).toEqual(['status 0']);
    expect(server?.calls).toHaveLength(1);
  });

  it('gives up with the last error before any message, as grpc-js reports it', async () => {
    const { read } = await watch(['UNAVAILABLE', 'UNAVAILABLE'], { maxAttempts: 2 });
    await settled(read, clock);
    const { messages, error } = await read;
    expect(messages).toEqual([]);
    expect(error?.message).toBe('14 UNAVAILABLE: loopback says UNAVAILABLE');
    expect(server?.calls).toHaveLength(2);
    // No null message for a stream, as grpc-js's streaming calls tell none.
    expect(told).toEqual(['status 14']);
  });
});

describe('retryOnResult on a server stream', () => {
  it('judges the first message; a refused stream is cancelled, and the next attempt’s is read', async () => {
    const judged: unknown[] = [];
    const retryOnResult = (message: unknown) => judged.push(message) === 1;
    const { read } = await watch(['first-then-stall'], { retryOnResult });
    await settled(read, clock);
    await expect(read).resolves.toMatchObject({ messages: [{ n: 1 }, { n: 2 }, { n: 3 }], error: undefined });
    expect(judged).toEqual([{ n: 1 }, { n: 1 }]);
    await until(() => server?.calls[0]?.cancelled === true, 'the server’s cancel');
    expect(server?.calls.map((c) => [c.answer, c.cancelled])).toEqual([
      ['first-then-stall', true],
      ['OK', false],
    ]);
  });

  it('a first message still refused when attempts run out: that stream is the answer', async () => {
    const { read } = await watch(['OK', 'OK'], { retryOnResult: () => true, maxAttempts: 2 });
    await settled(read, clock);
    await expect(read).resolves.toMatchObject({ messages: [{ n: 1 }, { n: 2 }, { n: 3 }], error: undefined });
    expect(server?.calls).toHaveLength(2);
  });
});

describe('a server stream’s deadlines', () => {
  it('attemptTimeoutMs bounds the wait for the first message; each attempt’s gRPC deadline stays the caller’s', async () => {
    const { read } = await watch(['stall'], { attemptTimeoutMs: 1000 }, { deadline: Date.now() + 10_000 });
    await server?.seen(1);
    await clock.tickAsync(1000);
    await settled(read, clock);
    await expect(read).resolves.toMatchObject({ messages: [{ n: 1 }, { n: 2 }, { n: 3 }], error: undefined });
    expect(waits).toEqual([1]);
    await until(() => server?.calls[0]?.cancelled === true, 'the server’s cancel');
    // The second attempt began 1001 ms into the call: the caller's deadline, not a 1 s one.
    expect(server?.calls.map((c) => [c.answer, c.deadlineInMs, c.cancelled])).toEqual([
      ['stall', 10_000, true],
      ['OK', 8999, false],
    ]);
  });

  it('without a call deadline, the attempts have none either', async () => {
    const { read } = await watch([], {});
    await settled(read, clock);
    await read;
    expect(server?.calls.map((c) => c.deadlineInMs)).toEqual([Number.POSITIVE_INFINITY]);
  });
});

describe('call.cancel() of a server stream', () => {
  it('before its first message: CANCELLED, the attempt cancelled', async () => {
    const { stream, read } = await watch(['stall'], {});
    await server?.seen(1);
    stream.cancel();
    await expect(read).resolves.toMatchObject({ messages: [], error: { code: status.CANCELLED, details: 'Cancelled on client' } });
    await until(() => server?.calls[0]?.cancelled === true, 'the server’s cancel');
  });

  it('after its first message: the stream itself is cancelled, with the caller’s status', async () => {
    const { stream, read } = await watch(['first-then-stall'], {});
    await new Promise((resolve) => stream.once('data', resolve));
    stream.cancel();
    stream.cancel();
    await expect(read).resolves.toMatchObject({ messages: [{ n: 1 }], error: { code: status.CANCELLED, details: 'Cancelled on client' } });
    await until(() => server?.calls[0]?.cancelled === true, 'the server’s cancel');
  });
});
