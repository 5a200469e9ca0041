// A misspelled option name, wherever an option is read: every entry point reads its options with
// util/check.ts (checkOptions / readChecked), so each one answers a typo with the closest known
// name, as the service-config readers and the CLI do, instead of a list of two dozen names.
import axios from 'axios';
import { describe, expect, it } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import { gcs, gcsResumableUpload, iam, iamReadModifyWrite } from '../../src/google/index.js';
import { grpcRetryInterceptor } from '../../src/grpc/index.js';
import {
  createAdaptiveThrottle,
  createHedger,
  createRetryAfterGate,
  createRetryBudget,
  hedge,
  hedging,
  retry,
  withRetry,
} from '../../src/index.js';
import { attachRetry } from '../../src/axios/index.js';
import { observeFleet, otelTelemetry } from '../../src/otel/index.js';
import { queryRetry } from '../../src/tanstack-query/index.js';
import { createRedisGate } from '../../src/redis/index.js';
import { scriptedFetch } from '../../src/testing/index.js';
import { tenaciousInterceptor } from '../../src/undici/index.js';

/** What calling `make` threw or rejected with: an entry point may report a bad option either way. */
async function failureOf(make: () => unknown): Promise<unknown> {
  try {
    await make();
  } catch (error) {
    return error;
  }
  throw new Error('no error');
}

const never = async (): Promise<number> => 1;
const bad = <T>(options: Record<string, unknown>): T => options as T;

// [entry point, the call with one misspelled option, the name it must suggest, where it reads it]
const TYPOS: ReadonlyArray<readonly [string, () => unknown, string, string]> = [
  ['retry', () => retry(never, bad({ maxAtempts: 3 })), 'maxAttempts', 'retry: unknown option "maxAtempts"'],
  ['withRetry', () => withRetry(never, bad({ deadlineMS: 10 })), 'deadlineMs', 'withRetry: unknown option "deadlineMS"'],
  [
    'retry, nested',
    () => retry(never, { backoff: bad({ initialDelay: 10 }) }),
    'initialDelayMs',
    'retry: unknown option "initialDelay" in options.backoff',
  ],
  ['iam', () => iam(bad({ maxAtempts: 3 })), 'maxAttempts', 'iam: unknown option "maxAtempts"'],
  ['gcs', () => gcs(bad({ operaton: 'objects.get' })), 'operation', 'gcs: unknown option "operaton"'],
  [
    'iamReadModifyWrite',
    () => iamReadModifyWrite({ read: never, modify: never, write: never }, bad({ retryNotFund: true })),
    'retryNotFound',
    'iamReadModifyWrite: unknown option "retryNotFund"',
  ],
  [
    'gcsResumableUpload',
    () => gcsResumableUpload('https://storage.example/s', new Uint8Array(1), bad({ chunkSizeByte: 256 })),
    'chunkSizeBytes',
    'gcsResumableUpload: unknown option "chunkSizeByte"',
  ],
  ['createRetryAfterGate', () => createRetryAfterGate(bad({ maxHold: 5 })), 'maxHoldMs', 'createRetryAfterGate: unknown option "maxHold"'],
  ['createRetryBudget', () => createRetryBudget(bad({ maxToken: 10 })), 'maxTokens', 'createRetryBudget: unknown option "maxToken"'],
  [
    'createAdaptiveThrottle',
    () => createAdaptiveThrottle(bad({ minRequest: 2 })),
    'minRequests',
    'createAdaptiveThrottle: unknown option "minRequest"',
  ],
  ['createHedger', () => createHedger(bad({ maxExtraLod: 0.1 })), 'maxExtraLoad', 'createHedger: unknown option "maxExtraLod"'],
  ['hedging', () => hedging(bad({ delayM: 10 })), 'delayMs', 'hedging: unknown option "delayM"'],
  ['hedge', () => hedge(never, bad({ delayMs: 10, maxCopie: 2 })), 'maxCopies', 'hedge: unknown option "maxCopie"'],
  [
    'retryFetch',
    () => retryFetch('https://example.test/', undefined, bad({ maxAtempts: 3 })),
    'maxAttempts',
    'retryFetch: unknown option "maxAtempts"',
  ],
  ['otelTelemetry', () => otelTelemetry(bad({ traceProvider: {} })), 'tracerProvider', 'otelTelemetry: unknown option "traceProvider"'],
  ['observeFleet', () => observeFleet(bad({ budget: {} })), 'budgets', 'observeFleet: unknown option "budget" in fleet'],
  ['attachRetry', () => attachRetry(axios.create(), bad({ maxAtempts: 3 })), 'maxAttempts', 'attachRetry: unknown option "maxAtempts"'],
  [
    'tenaciousInterceptor',
    () => tenaciousInterceptor(bad({ bufferBodi: true })),
    'bufferBody',
    'tenaciousInterceptor: unknown option "bufferBodi"',
  ],
  [
    'grpcRetryInterceptor',
    () => grpcRetryInterceptor(bad({ maxAttempt: 3 })),
    'maxAttempts',
    'grpcRetryInterceptor: unknown option "maxAttempt"',
  ],
  ['queryRetry', () => queryRetry(bad({ maxAtempts: 3 })), 'maxAttempts', 'queryRetry: unknown option "maxAtempts"'],
  ['createRedisGate', () => createRedisGate(bad({ key: 'k', onErorr: () => {} })), 'onError', 'createRedisGate: unknown option "onErorr"'],
  ['scriptedFetch', () => scriptedFetch([], bad({ runtme: 'node' })), 'runtime', 'scriptedFetch: unknown option "runtme"'],
];

describe('a misspelled option, at every entry point', () => {
  it.each(TYPOS)('%s suggests the name it meant', async (_entry, make, meant, start) => {
    const error = await failureOf(make);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(`${start} (did you mean ${JSON.stringify(meant)}?)`);
  });
});
