// Proof against @google-cloud/storage: the client pointed at a loopback JSON API server through
// `apiEndpoint`, its own retries off (`retryOptions.autoRetry: false`), answering 503, 429,
// 412, 404 and dropping connections. The ApiError and FetchError it really throws are
// classified as gcs() should, and gcs() decides resends from the operation and preconditions.
//
// No credentials are involved: with a custom `apiEndpoint`, Storage skips authentication unless
// `useAuthWithCustomEndpoint` is set (the library's documented emulator mode), and with an
// explicit `projectId` it never asks google-auth-library for one. The tests check both: the
// server sees no Authorization header, and no socket connects anywhere but 127.0.0.1.
import { Storage } from '@google-cloud/storage';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isTransient, retry, retryAfterMsOf } from '../../src/index.js';
import { gcs } from '../../src/google/index.js';
import {
  failureOf,
  isLoopback,
  type LoopbackServer,
  resetConnection,
  type SeenRequest,
  sendGoogleError,
  sendJson,
  startHttpServer,
  watchConnections,
} from './loopback.js';

/** What the server does with the next requests, in order; `'ok'` once the script runs out. */
type Answer = 'ok' | 503 | 429 | 412 | 404 | 'reset' | 'drop';
const REASONS: Record<number, string> = { 503: 'backendError', 429: 'rateLimitExceeded', 412: 'conditionNotMet', 404: 'notFound' };

let server: LoopbackServer;
let script: Answer[];
let connections: ReturnType<typeof watchConnections>;

beforeEach(async () => {
  vi.stubEnv('STORAGE_EMULATOR_HOST', ''); // the test names its endpoint itself
  connections = watchConnections();
  script = [];
  server = await startHttpServer((seen, res, req) => {
    const answer = script.shift() ?? 'ok';
    if (answer === 'reset') return resetConnection(req);
    if (answer === 'drop') return req.socket.destroy();
    if (answer !== 'ok') return sendGoogleError(res, answer, { reason: REASONS[answer] });
    sendJson(res, objectResource(seen));
  });
});

afterEach(async () => {
  connections.restore();
  vi.unstubAllEnvs();
  await server.close();
  expect(connections.hosts.length).toBeGreaterThan(0);
  expect(connections.hosts.every(isLoopback)).toBe(true);
  expect(server.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
});

function objectResource(seen: SeenRequest) {
  const name = decodeURIComponent(new URL(seen.url, 'http://x').pathname.split('/o/')[1] ?? 'uploaded');
  return { kind: 'storage#object', bucket: 'loopback-bucket', name, generation: '1700000000000001', metageneration: '1' };
}

/** A Storage client on the loopback server, with its own retries off: tenacious decides. */
function storage(): Storage {
  return new Storage({ apiEndpoint: server.url, projectId: 'loopback-project', retryOptions: { autoRetry: false, maxRetries: 0 } });
}

const read = gcs({ operation: 'objects.get' });
/** Tiny waits for the tests that really retry. */
const fast = { backoff: { initialDelayMs: 1, maxDelayMs: 5 } } as const;

describe('@google-cloud/storage errors, classified', () => {
  it.each([
    [503, true],
    [429, true],
    [412, false],
    [404, false],
  ] as const)('HTTP %i → an ApiError with that numeric code; gcs() retries: %s', async (status, expected) => {
    script = [status];
    const error = await failureOf(storage().bucket('loopback-bucket').file('a.txt').getMetadata());
    expect(error).toMatchObject({ name: 'Error', code: status, errors: [{ reason: REASONS[status] }] });
    expect((error as Error).constructor.name).toBe('ApiError');
    expect(read.retryable?.(error)).toBe(expected);
    expect(isTransient(error)).toBe(expected);
    expect(server.requests).toHaveLength(1); // Storage did not retry by itself
  });

  it.each(['reset', 'drop'] as const)('a %s connection → FetchError code ECONNRESET; retried', async (answer) => {
    script = [answer];
    const error = await failureOf(storage().bucket('loopback-bucket').file('a.txt').getMetadata());
    expect(error).toMatchObject({ name: 'FetchError', code: 'ECONNRESET' });
    expect((error as Error).message).toMatch(answer === 'reset' ? /ECONNRESET/ : /socket hang up/);
    expect(read.retryable?.(error)).toBe(true);
    expect(isTransient(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('a Storage timeout → FetchError of type request-timeout; retried as a socket timeout', async () => {
    await server.close();
    server = await startHttpServer(() => {}); // never answers
    const client = new Storage({ apiEndpoint: server.url, projectId: 'p', retryOptions: { autoRetry: false }, timeout: 50 });
    const error = await failureOf(client.bucket('b').file('f').getMetadata());
    expect(error).toMatchObject({ name: 'FetchError', type: 'request-timeout' });
    expect(read.retryable?.(error)).toBe(true);
  });

  it('a Retry-After on the ApiError’s response is found', async () => {
    await server.close();
    server = await startHttpServer((_seen, res) =>
      sendGoogleError(res, 429, { reason: 'rateLimitExceeded', headers: { 'retry-after': '2' } }),
    );
    const error = await failureOf(storage().bucket('loopback-bucket').getMetadata());
    expect(retryAfterMsOf(error)).toBe(2000);
  });
});

describe('@google-cloud/storage under retry(…, gcs(…))', () => {
  it('objects.get: 503, 429, a dropped connection, then the object', async () => {
    script = [503, 429, 'drop'];
    const file = storage().bucket('loopback-bucket').file('report.csv');
    const [metadata] = await retry(() => file.getMetadata(), gcs({ operation: 'objects.get', ...fast }));
    expect(metadata.name).toBe('report.csv');
    expect(server.requests).toHaveLength(4);
  });

  it('objects.insert with ifGenerationMatch: 0 is resent after a 503', async () => {
    script = [503];
    const file = storage().bucket('loopback-bucket').file('new.txt');
    await retry(
      () => file.save('hello', { resumable: false, validation: false, preconditionOpts: { ifGenerationMatch: 0 } }),
      gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 }, ...fast }),
    );
    expect(server.requests).toHaveLength(2);
    expect(server.requests.map((r) => new URL(r.url, 'http://x').searchParams.get('ifGenerationMatch'))).toEqual(['0', '0']);
  });

  it('objects.insert without a precondition is sent once: the 503 comes back unchanged', async () => {
    script = [503];
    const file = storage().bucket('loopback-bucket').file('new.txt');
    const error = await failureOf(
      retry(() => file.save('hello', { resumable: false, validation: false }), gcs({ operation: 'objects.insert', ...fast })),
    );
    expect(error).toMatchObject({ code: 503 });
    expect(server.requests).toHaveLength(1);
  });

  it('412 Precondition Failed and 404 are not retried', async () => {
    script = [412, 404];
    const file = storage().bucket('loopback-bucket').file('exists.txt');
    const conflict = await failureOf(
      retry(
        () => file.save('hello', { resumable: false, validation: false, preconditionOpts: { ifGenerationMatch: 0 } }),
        gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 }, ...fast }),
      ),
    );
    expect(conflict).toMatchObject({ code: 412 });
    const missing = await failureOf(retry(() => file.getMetadata(), gcs({ operation: 'objects.get', ...fast })));
    expect(missing).toMatchObject({ code: 404 });
    expect(server.requests).toHaveLength(2);
  });

  it('objects.delete of a named generation is resent after a reset', async () => {
    script = ['reset'];
    const generation = 1_700_000_000_000_001;
    const file = storage().bucket('loopback-bucket').file('old.txt', { generation });
    await retry(() => file.delete(), gcs({ operation: 'objects.delete', preconditions: { generation }, ...fast }));
    expect(server.requests.map((r) => r.method)).toEqual(['DELETE', 'DELETE']);
    expect(server.requests[1]?.url).toContain(`generation=${generation}`);
  });
});
