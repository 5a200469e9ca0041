// gRPC status codes through tenacious's classification, on a real grpc-js channel: the default
// (isTransient), the IAM and Cloud Storage presets' own rules, idempotency (nothing is resent
// for a call that may not run twice, UNAVAILABLE included, as Google's C++ retry policies
// say), and the errors and values the options' functions are given (grpc-js's ServiceError, the
// response message).
import { type ServiceError, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { gcs, iam } from '../../src/google/index.js';
import { NO_CHANNEL_RETRIES, grpcRetryInterceptor } from '../../src/grpc/index.js';
import type { GrpcInterceptorOptions } from '../../src/grpc/index.js';
import { GrpcStatus, type RetryEvent, grpcCodeOf } from '../../src/index.js';
import { useVirtualClock } from '../helpers/clock.js';
import { type Answer, type LoopbackClient, type Outcome, type ScriptedServer, connect, echo, scriptedServer, settled } from './server.js';

const clock = useVirtualClock();
let server: ScriptedServer | undefined;
let client: LoopbackClient | undefined;
afterEach(() => {
  client?.close();
  server?.close();
  client = undefined;
  server = undefined;
});

/** 1 ms waits, so that a handful of virtual ticks lets every retry happen. */
const fast = { backoff: { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' } } as const;

/** One Echo call retried under `options` against a server answering `script`, then OK. */
async function run(script: readonly Answer[], options: GrpcInterceptorOptions): Promise<Outcome> {
  server = await scriptedServer(script);
  client = connect(server.address, { ...NO_CHANNEL_RETRIES, interceptors: [grpcRetryInterceptor(options)] });
  return settled(echo(client), clock);
}

/** The codes the server answered, in order. */
const answers = () => server?.calls.map((c) => c.answer);

describe('the default classification (isTransient)', () => {
  it.each(['UNAVAILABLE', 'RESOURCE_EXHAUSTED', 'ABORTED', 'INTERNAL', 'UNKNOWN', 'DEADLINE_EXCEEDED'] as const)(
    '%s: retried',
    async (code) => {
      await expect(run([code], fast)).resolves.toMatchObject({ value: { ok: true } });
      expect(answers()).toEqual([code, 'OK']);
    },
  );

  it.each([
    'CANCELLED',
    'INVALID_ARGUMENT',
    'NOT_FOUND',
    'ALREADY_EXISTS',
    'PERMISSION_DENIED',
    'FAILED_PRECONDITION',
    'UNIMPLEMENTED',
    'UNAUTHENTICATED',
  ] as const)('%s: not retried', async (code) => {
    const { error } = await run([code], fast);
    expect(error?.code).toBe(status[code]);
    expect(answers()).toEqual([code]);
  });
});

describe('the presets', () => {
  it.each(['UNAVAILABLE', 'INTERNAL', 'UNKNOWN', 'DEADLINE_EXCEEDED'] as const)('iam(): %s retried', async (code) => {
    await run([code], iam(fast));
    expect(answers()).toEqual([code, 'OK']);
  });

  it.each(['RESOURCE_EXHAUSTED', 'ABORTED', 'NOT_FOUND'] as const)(
    'iam(): %s not retried (quota, a lone ABORTED, a name not found)',
    async (code) => {
      await run([code], iam(fast));
      expect(answers()).toEqual([code]);
    },
  );

  it('iam({ retryNotFound: true }): NOT_FOUND retried (IAM is eventually consistent)', async () => {
    await run(['NOT_FOUND'], iam({ ...fast, retryNotFound: true }));
    expect(answers()).toEqual(['NOT_FOUND', 'OK']);
  });

  it('gcs(): RESOURCE_EXHAUSTED retried for objects.get (Cloud Storage retries 429)', async () => {
    await run(['RESOURCE_EXHAUSTED'], gcs({ ...fast, operation: 'objects.get' }));
    expect(answers()).toEqual(['RESOURCE_EXHAUSTED', 'OK']);
  });

  it('gcs(): objects.insert without a precondition is not resent, even on UNAVAILABLE; with ifGenerationMatch it is', async () => {
    const { error } = await run(['UNAVAILABLE'], gcs({ ...fast, operation: 'objects.insert' }));
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(answers()).toEqual(['UNAVAILABLE']);
    client?.close();
    server?.close();
    await run(['UNAVAILABLE'], gcs({ ...fast, operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 } }));
    expect(answers()).toEqual(['UNAVAILABLE', 'OK']);
  });
});

describe('idempotency', () => {
  it.each(['DEADLINE_EXCEEDED', 'UNAVAILABLE'] as const)('idempotent: false: %s is the answer, one call', async (code) => {
    const { error } = await run([code], { ...fast, idempotent: false });
    expect(error?.code).toBe(status[code]);
    expect(answers()).toEqual([code]);
  });

  it('a function of the error decides per failure: resend after UNAVAILABLE, not after DEADLINE_EXCEEDED', async () => {
    const asked: unknown[] = [];
    const idempotent = (error: unknown) => {
      asked.push(grpcCodeOf(error));
      return grpcCodeOf(error) === GrpcStatus.UNAVAILABLE;
    };
    const { error } = await run(['UNAVAILABLE', 'DEADLINE_EXCEEDED'], { ...fast, idempotent });
    expect(error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(answers()).toEqual(['UNAVAILABLE', 'DEADLINE_EXCEEDED']);
    expect(asked).toEqual([GrpcStatus.UNAVAILABLE, GrpcStatus.DEADLINE_EXCEEDED]);
  });
});

describe('what the options’ functions are given', () => {
  it('retryable and onRetry get grpc-js’s ServiceError of the attempt: code, details, trailers, message', async () => {
    const judged: ServiceError[] = [];
    const events: RetryEvent[] = [];
    const retryable = (error: unknown) => judged.push(error as ServiceError) > 0;
    await run([{ status: 'UNAVAILABLE', headers: true }], { ...fast, retryable, onRetry: (event) => events.push(event) });
    const [error] = judged;
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      code: status.UNAVAILABLE,
      details: 'loopback says UNAVAILABLE',
      message: '14 UNAVAILABLE: loopback says UNAVAILABLE',
    });
    expect(error?.metadata.get('x-trailer')).toEqual(['said UNAVAILABLE']);
    expect(events.map((e) => e.error)).toEqual([error]);
  });

  it('retryOnResult and onSuccess get the response message', async () => {
    const judged: unknown[] = [];
    const succeeded: unknown[] = [];
    const retryOnResult = (message: unknown) => judged.push(message) < 2;
    const { value } = await run([], { ...fast, retryOnResult, onSuccess: (event) => void succeeded.push(event.value) });
    expect(value).toEqual({ ok: true });
    expect(judged).toEqual([{ ok: true }, { ok: true }]);
    expect(succeeded).toEqual([{ ok: true }]);
    expect(server?.calls).toHaveLength(2);
  });

  it('a message retryOnResult still refuses when attempts run out: the last one is the answer', async () => {
    const { error, value } = await run([], { ...fast, maxAttempts: 2, retryOnResult: () => true });
    expect({ error, value }).toEqual({ error: null, value: { ok: true } });
    expect(server?.calls).toHaveLength(2);
  });
});
