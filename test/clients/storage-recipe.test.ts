// The @google-cloud/storage recipe of docs/recipes.md (download under objects.get, create
// under objects.insert with ifGenerationMatch 0), run as shown against the real client pointed at
// a node:http server on 127.0.0.1 (`apiEndpoint`, an explicit project: no credentials, no
// Google host; every socket is checked). The client is built with the recipe's options, which
// turn its own retries off: one request per attempt, where the same client with its retries on
// makes three. Also: the value, 404 and 412 passed through as the client's ApiError, and a
// create without a precondition sent once.
import { createHash } from 'node:crypto';
import { CRC32C, type File, Storage, type StorageOptions } from '@google-cloud/storage';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RetryError, retry } from '../../src/index.js';
import { type GcsCommonOptions, gcs } from '../../src/google/index.js';
import { failureOf, isLoopback, watchConnections } from './loopback.js';
import { type ScriptedServer, recipeRegionsOf, recipesShow, scriptedServer } from './recipe-kit.js';

/** The options the recipe gives `new Storage(…)`, word for word (a test checks the README). */
const RECIPE_OPTIONS: StorageOptions = { retryOptions: { autoRetry: false }, timeout: 30_000 };

// recipe:begin
// A read is always safe to resend.
async function download(file: File, options: GcsCommonOptions = {}): Promise<Buffer> {
  const [contents] = await retry(() => file.download(), gcs({ operation: 'objects.get', ...options }));
  return contents;
}

// A write is safe to resend only with a precondition: ifGenerationMatch 0 means "only if the
// object does not exist yet", so a resent upload cannot overwrite anything.
async function create(file: File, contents: Buffer | string, options: GcsCommonOptions = {}): Promise<void> {
  await retry(
    () => file.save(contents, { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } }),
    gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 }, ...options }),
  );
}
// recipe:end

/** What the server sends for a 200: the object resource of an upload, or the bytes of a download. */
const OBJECT = {
  kind: 'storage#object',
  bucket: 'loopback-bucket',
  name: 'report.csv',
  generation: '1700000000000001',
  metageneration: '1',
};

/**
 * The object resource a server answers an upload of `contents` with: with the contents' CRC32C
 * and MD5, which the client checks against its own (and deletes the object on a mismatch).
 */
function uploaded(contents: string) {
  const crc = new CRC32C();
  crc.update(Buffer.from(contents));
  return { ...OBJECT, crc32c: crc.toString(), md5Hash: createHash('md5').update(contents).digest('base64') };
}

/** Tiny waits: these tests count requests, the waits themselves are tested with virtual time elsewhere. */
const fast: GcsCommonOptions = { backoff: { initialDelayMs: 1, maxDelayMs: 5 } };

let server: ScriptedServer | undefined;
let connections: ReturnType<typeof watchConnections>;
beforeEach(() => {
  vi.stubEnv('STORAGE_EMULATOR_HOST', ''); // the test names its endpoint itself
  connections = watchConnections();
});
afterEach(async () => {
  connections.restore();
  vi.unstubAllEnvs();
  await server?.close();
  expect(connections.hosts.every(isLoopback)).toBe(true);
  expect(server?.requests.every((r) => r.headers.authorization === undefined) ?? true).toBe(true);
  server = undefined;
});

/** A file on the loopback server, through a client made with `options` (the recipe's by default). */
function fileOn(running: ScriptedServer, options: StorageOptions = RECIPE_OPTIONS): File {
  return new Storage({ ...options, apiEndpoint: running.url, projectId: 'loopback-project' }).bucket('loopback-bucket').file('report.csv');
}

it('runs the code the README shows, with the client options it shows', () => {
  expect(recipeRegionsOf(import.meta.url)).toEqual([{ code: expect.stringContaining('file.download()') as unknown, shown: true }]);
  expect(recipesShow('new Storage({ retryOptions: { autoRetry: false }, timeout: 30_000 })')).toBe(true);
  expect(RECIPE_OPTIONS).toEqual({ retryOptions: { autoRetry: false }, timeout: 30_000 });
});

describe('download (objects.get)', () => {
  it('503, 503, 200: returns the bytes after exactly three requests', async () => {
    server = await scriptedServer([503, 503], 200, OBJECT);
    const contents = await download(fileOn(server), fast);
    expect(JSON.parse(contents.toString())).toEqual(OBJECT);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(
      Array(3).fill('GET /storage/v1/b/loopback-bucket/o/report.csv?alt=media'),
    );
  });

  it('always 503: gives up after maxAttempts requests, one per attempt, the last ApiError as the cause', async () => {
    server = await scriptedServer([], 503, OBJECT);
    const error = await failureOf(download(fileOn(server), { ...fast, maxAttempts: 3 }));
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3, cause: { code: 503 } });
    expect(server.requests).toHaveLength(3);
  });

  it('with the client’s own retries on, one attempt is three requests', async () => {
    server = await scriptedServer([], 503, OBJECT);
    // Storage's defaults but for the wait between its retries (1 ms) and their number (2).
    const error = await failureOf(
      download(fileOn(server, { retryOptions: { maxRetries: 2, maxRetryDelay: 0.001 } }), { ...fast, maxAttempts: 1 }),
    );
    expect(error).toMatchObject({ reason: 'attempts', attempts: 1 });
    expect(server.requests).toHaveLength(3);
  });

  it('404: rejects at once with the client’s ApiError itself, one request', async () => {
    server = await scriptedServer([404], 200, OBJECT);
    const error = await failureOf(download(fileOn(server), fast));
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).constructor.name).toBe('ApiError');
    expect(error).toMatchObject({ code: 404 });
    expect(server.requests).toHaveLength(1);
  });

  it('a reset connection is retried', async () => {
    server = await scriptedServer(['reset'], 200, OBJECT);
    await download(fileOn(server), fast);
    expect(server.requests).toHaveLength(2);
  });
});

describe('create (objects.insert with ifGenerationMatch 0)', () => {
  it('503, then created: two uploads, both with the precondition', async () => {
    server = await scriptedServer([503], 200, uploaded('a,b\n1,2\n'));
    await create(fileOn(server), 'a,b\n1,2\n', fast);
    expect(server.requests).toHaveLength(2);
    expect(server.requests.map((r) => [r.method, new URL(r.url, 'http://x').searchParams.get('ifGenerationMatch')])).toEqual([
      ['POST', '0'],
      ['POST', '0'],
    ]);
  });

  it('412 (the object exists): rejects at once with the ApiError, one upload', async () => {
    server = await scriptedServer([412], 200, OBJECT);
    const error = await failureOf(create(fileOn(server), 'a,b\n', fast));
    expect((error as Error).constructor.name).toBe('ApiError');
    expect(error).toMatchObject({ code: 412 });
    expect(server.requests).toHaveLength(1);
  });

  it('without the precondition the preset sends the upload once: the 503 comes back unchanged', async () => {
    server = await scriptedServer([503], 200, OBJECT);
    const file = fileOn(server);
    const error = await failureOf(retry(() => file.save('a,b\n', { resumable: false }), gcs({ operation: 'objects.insert', ...fast })));
    expect(error).toMatchObject({ code: 503 });
    expect(server.requests).toHaveLength(1);
  });
});
