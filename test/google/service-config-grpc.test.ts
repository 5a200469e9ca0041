// A gRPC service config on a real @grpc/grpc-js server on loopback: a call wrapped in retry()
// with fromGrpcServiceConfig's options (the channel's own retries off) makes as many calls to
// the server as grpc-js makes when it runs the same service config itself.
import { type ChannelOptions, credentials, makeGenericClientConstructor } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GrpcStatus, RetryError, retry } from '../../src/index.js';
import { fromGrpcServiceConfig, readGrpcServiceConfig } from '../../src/google/index.js';
import { type EchoRequest, type GrpcLoopback, type LoopbackClient, TEST_SERVICE, startGrpcServer, unary } from '../clients/grpc-service.js';
import { failureOf } from '../clients/loopback.js';

const SERVICE = 'tenacious.test.Loopback';

/** Tiny backoffs: these calls cross a real socket, in real time. */
const serviceConfig = (maxAttempts: number) => ({
  methodConfig: [
    {
      name: [{ service: SERVICE, method: 'Echo' }],
      retryPolicy: {
        maxAttempts,
        initialBackoff: '0.001s',
        maxBackoff: '0.005s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
});

let server: GrpcLoopback;
const clients: LoopbackClient[] = [];

function client(options: ChannelOptions): LoopbackClient {
  const Constructor = makeGenericClientConstructor(TEST_SERVICE, 'Loopback');
  const made = new Constructor(server.address, credentials.createInsecure(), options) as unknown as LoopbackClient;
  clients.push(made);
  return made;
}

beforeEach(async () => {
  server = await startGrpcServer();
  expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
  server.close();
});

/** Calls Echo under retry() with the document's options, grpc-js's own retries off. */
async function underTenacious(config: unknown, request: EchoRequest | (() => EchoRequest), limit?: number): Promise<unknown> {
  const plain = client({ 'grpc.enable_retries': 0 });
  const options = fromGrpcServiceConfig(config, {
    service: SERVICE,
    method: 'Echo',
    ...(limit === undefined ? {} : { maxAttemptsLimit: limit }),
  });
  return retry((ctx) => unary(plain, 'Echo', typeof request === 'function' ? request() : request, ctx), options);
}

/** Calls Echo once, grpc-js running the same service config itself. */
function underGrpcJs(config: unknown, request: EchoRequest): Promise<unknown> {
  const retrying = client({ 'grpc.service_config': JSON.stringify(config), 'grpc.enable_retries': 1 });
  return unary(retrying, 'Echo', request);
}

describe('fromGrpcServiceConfig on a real grpc-js channel', () => {
  it.each([3, 5])('maxAttempts %i: a server that always answers UNAVAILABLE is called %i times, as grpc-js calls it', async (n) => {
    const error = await failureOf(underTenacious(serviceConfig(n), { code: 'UNAVAILABLE' }));
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: n, cause: { code: GrpcStatus.UNAVAILABLE } });
    expect(server.calls).toEqual(Array(n).fill('Echo UNAVAILABLE'));

    server.calls.length = 0;
    const own = await failureOf(underGrpcJs(serviceConfig(n), { code: 'UNAVAILABLE' }));
    expect(own).toMatchObject({ code: GrpcStatus.UNAVAILABLE });
    expect(server.calls).toHaveLength(n);
  });

  it('maxAttempts 8 is capped at 5, as grpc-js caps it; maxAttemptsLimit: Infinity makes all 8', async () => {
    await failureOf(underTenacious(serviceConfig(8), { code: 'UNAVAILABLE' }));
    expect(server.calls).toHaveLength(5);
    server.calls.length = 0;
    await failureOf(underGrpcJs(serviceConfig(8), { code: 'UNAVAILABLE' }));
    expect(server.calls).toHaveLength(5);
    server.calls.length = 0;
    await failureOf(underTenacious(serviceConfig(8), { code: 'UNAVAILABLE' }, Infinity));
    expect(server.calls).toHaveLength(8);
  });

  it('UNAVAILABLE twice, then the answer: three calls, and the value', async () => {
    const codes: EchoRequest['code'][] = ['UNAVAILABLE', 'UNAVAILABLE', 'ok'];
    let n = 0;
    const value = await underTenacious(serviceConfig(4), () => ({ code: codes[n++] }));
    expect(value).toEqual({ ok: true });
    expect(server.calls).toEqual(['Echo UNAVAILABLE', 'Echo UNAVAILABLE', 'Echo ok']);
  });

  it('a code the policy does not list stops at once, with grpc-js’s own error, as grpc-js stops', async () => {
    const error = await failureOf(underTenacious(serviceConfig(5), { code: 'PERMISSION_DENIED' }));
    expect(error).not.toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ code: GrpcStatus.PERMISSION_DENIED, details: 'loopback says PERMISSION_DENIED' });
    expect(server.calls).toEqual(['Echo PERMISSION_DENIED']);
    server.calls.length = 0;
    await failureOf(underGrpcJs(serviceConfig(5), { code: 'PERMISSION_DENIED' }));
    expect(server.calls).toEqual(['Echo PERMISSION_DENIED']);
  });

  it('retryThrottling: one bucket for the channel stops the retries as grpc-js stops them', async () => {
    const config = { ...serviceConfig(5), retryThrottling: { maxTokens: 4, tokenRatio: 0.1 } };
    // 4 tokens: a failure leaves 3 (> 2, retry), the next 2 (not > 2: no more retries), then 1.
    const options = readGrpcServiceConfig(config).forMethod({ service: SERVICE, method: 'Echo' });
    const plain = client({ 'grpc.enable_retries': 0 });
    const first = await failureOf(retry((ctx) => unary(plain, 'Echo', { code: 'UNAVAILABLE' }, ctx), options));
    expect(first).toMatchObject({ reason: 'budget', attempts: 2 });
    const second = await failureOf(retry((ctx) => unary(plain, 'Echo', { code: 'UNAVAILABLE' }, ctx), options));
    expect(second).toMatchObject({ reason: 'budget', attempts: 1 });
    expect(server.calls).toHaveLength(3);

    server.calls.length = 0;
    const channel = client({ 'grpc.service_config': JSON.stringify(config), 'grpc.enable_retries': 1 });
    await failureOf(unary(channel, 'Echo', { code: 'UNAVAILABLE' }));
    await failureOf(unary(channel, 'Echo', { code: 'UNAVAILABLE' }));
    expect(server.calls).toHaveLength(3);
  });
});
