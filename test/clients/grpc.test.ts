// Proof against @grpc/grpc-js: a loopback server with a generic service (no .proto) answering
// UNAVAILABLE, ABORTED, PERMISSION_DENIED, NOT_FOUND and too slowly for a client deadline; the
// ServiceError grpc-js really throws, classified by iam(), gcs() and the default; and
// iamReadModifyWrite rerunning read → modify → write over real calls when the write is ABORTED.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GrpcStatus, RetryError, aborted, grpcCodeOf, isTransient, retry, retryAfterMsOf } from '../../src/index.js';
import { gcs, iam, iamReadModifyWrite } from '../../src/google/index.js';
import { type GrpcLoopback, type LoopbackClient, type Policy, connect, startGrpcServer, unary } from './grpc-service.js';
import { failureOf, isLoopback, watchConnections } from './loopback.js';

let server: GrpcLoopback;
let client: LoopbackClient;
let connections: ReturnType<typeof watchConnections>;

beforeEach(async () => {
  connections = watchConnections();
  server = await startGrpcServer();
  client = connect(server.address);
});
afterEach(() => {
  client.close();
  server.close();
  connections.restore();
  expect(connections.hosts.length).toBeGreaterThan(0);
  expect(connections.hosts.every(isLoopback)).toBe(true);
});

function classify(error: unknown) {
  return {
    iam: iam().retryable?.(error),
    iamNotFound: iam({ retryNotFound: true }).retryable?.(error),
    gcs: gcs({ operation: 'objects.get' }).retryable?.(error),
    default: isTransient(error),
    aborted: aborted(error),
  };
}

/** Tiny waits for the tests that really retry. */
const fast = { backoff: { initialDelayMs: 1, maxDelayMs: 5 } } as const;

describe('grpc-js ServiceError, classified', () => {
  it.each([
    ['UNAVAILABLE', { iam: true, iamNotFound: true, gcs: true, default: true, aborted: false }],
    ['ABORTED', { iam: false, iamNotFound: false, gcs: false, default: true, aborted: true }],
    ['PERMISSION_DENIED', { iam: false, iamNotFound: false, gcs: false, default: false, aborted: false }],
    ['NOT_FOUND', { iam: false, iamNotFound: true, gcs: false, default: false, aborted: false }],
  ] as const)('%s', async (code, expected) => {
    const error = await failureOf(unary(client, 'Echo', { code }));
    expect(error).toMatchObject({ code: GrpcStatus[code], details: `loopback says ${code}` });
    expect(grpcCodeOf(error)).toBe(GrpcStatus[code]);
    expect(classify(error)).toEqual(expected);
  });

  it('a client deadline → DEADLINE_EXCEEDED, retried by all', async () => {
    const error = await failureOf(unary(client, 'Echo', { code: 'ok', delayMs: 2000 }, undefined, 50));
    expect(error).toMatchObject({ code: GrpcStatus.DEADLINE_EXCEEDED });
    expect(classify(error)).toEqual({ iam: true, iamNotFound: true, gcs: true, default: true, aborted: false });
  });

  it('exposes grpc-retry-pushback-ms from the trailers', async () => {
    const error = await failureOf(unary(client, 'Echo', { code: 'UNAVAILABLE', pushbackMs: 25 }));
    expect(retryAfterMsOf(error)).toBe(25);
  });
});

describe('grpc-js under retry()', () => {
  it('retries UNAVAILABLE under iam() and succeeds; stops at once on PERMISSION_DENIED', async () => {
    let n = 0;
    const codes = ['UNAVAILABLE', 'UNAVAILABLE', 'ok'] as const;
    const value = await retry((ctx) => unary(client, 'Echo', { code: codes[n++] }, ctx), iam(fast));
    expect(value).toEqual({ ok: true });
    expect(server.calls).toEqual(['Echo UNAVAILABLE', 'Echo UNAVAILABLE', 'Echo ok']);

    const denied = await failureOf(retry((ctx) => unary(client, 'Echo', { code: 'PERMISSION_DENIED' }, ctx), iam(fast)));
    expect(denied).toMatchObject({ code: GrpcStatus.PERMISSION_DENIED });
    expect(server.calls).toHaveLength(4);
  });

  it('the gRPC deadline follows the retry deadline: a slow server ends the call by deadlineMs', async () => {
    const started = Date.now();
    const error = await failureOf(
      retry((ctx) => unary(client, 'Echo', { code: 'ok', delayMs: 5000 }, ctx), iam({ ...fast, deadlineMs: 150 })),
    );
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).reason).toBe('deadline');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('iamReadModifyWrite over real gRPC calls', () => {
  const addViewer = (policy: Policy): Policy | undefined =>
    policy.bindings.some((b) => b.role === 'roles/viewer')
      ? undefined
      : { ...policy, bindings: [...policy.bindings, { role: 'roles/viewer', members: ['user:ada@example.com'] }] };

  it('reruns the read, not just the write, when SetIamPolicy answers ABORTED', async () => {
    server.afterRead = (reads) => {
      // Another client writes between our first read and our write.
      if (reads === 1) server.policy = { etag: 'v-other', bindings: [{ role: 'roles/owner', members: ['user:grace@example.com'] }] };
    };
    const written = await iamReadModifyWrite(
      {
        read: (ctx) => unary<Policy>(client, 'GetIamPolicy', { resource: 'projects/p' }, ctx),
        modify: addViewer,
        write: (policy, ctx) => unary<Policy>(client, 'SetIamPolicy', { resource: 'projects/p', policy }, ctx),
      },
      fast,
    );
    expect(server.calls).toEqual(['GetIamPolicy v0', 'SetIamPolicy v0', 'GetIamPolicy v-other', 'SetIamPolicy v-other']);
    expect(written?.bindings.map((b) => b.role)).toEqual(['roles/owner', 'roles/viewer']);
    expect(server.policy).toEqual(written);
  });

  it('writes nothing when the binding is already there', async () => {
    server.policy = { etag: 'v9', bindings: [{ role: 'roles/viewer', members: ['user:ada@example.com'] }] };
    const result = await iamReadModifyWrite({
      read: (ctx) => unary<Policy>(client, 'GetIamPolicy', {}, ctx),
      modify: addViewer,
      write: (policy, ctx) => unary<Policy>(client, 'SetIamPolicy', { policy }, ctx),
    });
    expect(result).toBeUndefined();
    expect(server.calls).toEqual(['GetIamPolicy v9']);
  });

  it('gives up with RetryError when every write loses the race', async () => {
    let other = 0;
    server.afterRead = () => {
      server.policy = { ...server.policy, etag: `v-other-${++other}` };
    };
    const error = await failureOf(
      iamReadModifyWrite(
        {
          read: (ctx) => unary<Policy>(client, 'GetIamPolicy', {}, ctx),
          modify: addViewer,
          write: (policy, ctx) => unary<Policy>(client, 'SetIamPolicy', { policy }, ctx),
        },
        { ...fast, maxAttempts: 3 },
      ),
    );
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).reason).toBe('attempts');
    expect((error as RetryError).cause).toMatchObject({ code: GrpcStatus.ABORTED });
    expect(server.calls.filter((c) => c.startsWith('GetIamPolicy'))).toHaveLength(3);
  });
});
