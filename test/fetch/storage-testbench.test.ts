// Download resume and resumable uploads against Google's own Cloud Storage emulator,
// googleapis/storage-testbench: the server Google's client libraries run the retry conformance
// cases against (`storage/v1/retry_tests.json` of googleapis/conformance-tests). test/fetch/
// testbench.ts imitates it; this file runs the real one, so the imitation cannot drift from it
// unnoticed. Faults come from its Retry Test API: `POST /retry_test` with instructions per JSON
// API method, then requests carrying `x-retry-test-id`, then `GET /retry_test/<id>` must say
// `completed` (every instruction was used).
//
// The testbench is a Python server (flask under gunicorn) kept ready to run in
// ../shared/storage-testbench next to the repository (its README and start.sh); start.sh names
// the Debian packages it needs and .ci/run installs them. In CI (CI=true) a missing testbench
// fails this file; elsewhere the file is skipped with the reason printed, as the runtime smoke
// suite does for a missing runtime (test/runtimes/runtimes.test.ts).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResumeError } from '../../src/index.js';
import { type FetchFunction, type RetryFetchOptions, retryFetch } from '../../src/fetch/index.js';
import { gcs, gcsResumableUpload, gcsStartResumableUpload } from '../../src/google/index.js';
import { pattern } from './testbench.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TESTBENCH = resolve(ROOT, '../shared/storage-testbench');
const START = join(TESTBENCH, 'start.sh');

/** Whether this run is CI's (`CI` set to anything but '', '0' or 'false'), where nothing may be skipped (as test/package/chromium.ts). */
const IN_CI = process.env.CI !== undefined && !['', '0', 'false'].includes(process.env.CI);

const hasGunicorn = (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, 'gunicorn')));

/** Why the testbench cannot run here, or undefined when it can. */
const MISSING = !existsSync(START)
  ? `Google's storage testbench is not at ${TESTBENCH} (start.sh missing).`
  : !hasGunicorn
    ? 'gunicorn is not installed: run the apt-get line at the top of ../shared/storage-testbench/start.sh (.ci/run does).'
    : undefined;

if (MISSING !== undefined && !IN_CI) console.warn(`storage-testbench tests skipped: ${MISSING}`);

const KiB = 1024;
const SIZE = 1024 * KiB;
const BUCKET = 'tenacious-testbench';
/** ~1 MiB whose bytes do not repeat with any period a shifted or doubled range could hide behind. */
const DATA = pattern(SIZE);
const quick = { backoff: { initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitter: 'none' as const }, deadlineMs: 10_000 };
const download: RetryFetchOptions = { ...gcs({ operation: 'objects.get' }), ...quick };

let origin = '';
let pid = 0;
let run = '';

/** A free port on 127.0.0.1, for start.sh's PORT. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done, fail) => server.once('error', fail).listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise((done) => server.close(done));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Whether a process (or process group, for a negative id) still exists. */
function alive(id: number): boolean {
  try {
    process.kill(id, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops the testbench: start.sh runs gunicorn under setsid, so its PID leads a group holding the master and its worker. */
async function stop(): Promise<void> {
  if (pid === 0 || !alive(-pid)) return;
  process.kill(-pid, 'SIGTERM');
  for (let i = 0; i < 50 && alive(-pid); i++) await new Promise((done) => setTimeout(done, 100));
  if (alive(-pid)) process.kill(-pid, 'SIGKILL');
}

/** A JSON API call that must succeed (setup and the Retry Test API; no retries, no faults). */
async function api(method: string, path: string, body?: BodyInit, contentType = 'application/json'): Promise<unknown> {
  const res = await fetch(`${origin}${path}`, { method, body: body ?? null, headers: { 'content-type': contentType } });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text}`);
  return JSON.parse(text);
}

/** Creates a Retry Test: instructions per JSON API method (`storage.objects.get`, `storage.objects.insert`); resolves with its id. */
async function retryTest(instructions: Record<string, string[]>): Promise<string> {
  const created = (await api('POST', '/retry_test', JSON.stringify({ instructions }))) as { id: string };
  return created.id;
}

/** The Retry Test's state: completed once every instruction was used. */
async function retryTestState(id: string): Promise<{ completed: boolean; instructions: Record<string, string[]> }> {
  return (await api('GET', `/retry_test/${id}`)) as { completed: boolean; instructions: Record<string, string[]> };
}

/** An object's media URL on the testbench. */
const mediaUrl = (name: string) => `${origin}/storage/v1/b/${BUCKET}/o/${encodeURIComponent(name)}?alt=media`;

/** What one request sent and got: its method, URL, Range / Content-Range header, and the status (or 'error' for a dropped connection). */
interface Sent {
  method: string;
  url: URL;
  range: string | null;
  contentRange: string | null;
  status: number | 'error';
}

/** A fetch that adds `x-retry-test-id` (and any other headers given) to every request and records each one. */
function recordingFetch(extra: Record<string, string>): { fetch: FetchFunction; sent: Sent[] } {
  const sent: Sent[] = [];
  const send: FetchFunction = async (input, init) => {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    const entry: Sent = {
      method: init?.method ?? (input instanceof Request ? input.method : 'GET'),
      url: new URL(input instanceof Request ? input.url : input),
      range: headers.get('range'),
      contentRange: headers.get('content-range'),
      status: 'error',
    };
    sent.push(entry);
    const res = await fetch(input, { ...init, headers });
    entry.status = res.status;
    return res;
  };
  return { fetch: send, sent };
}

/** The bytes a body stream delivers, read chunk by chunk with getReader(). */
async function readAll(body: ReadableStream<Uint8Array>): Promise<Buffer> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    chunks.push(value);
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/** How each GET asked and was answered: [Range header, status]. */
const gets = (sent: Sent[]) => sent.filter((s) => s.method === 'GET').map((s) => [s.range, s.status]);

// Skipped only outside CI, and only when the testbench cannot run here (MISSING, printed above);
// in CI beforeAll throws instead, so a runner without the packages fails rather than passes.
describe.skipIf(MISSING !== undefined && !IN_CI)("against Google's storage-testbench (the real one, on loopback)", () => {
  let generation = '';

  beforeAll(async () => {
    if (MISSING !== undefined) throw new Error(`${MISSING} In CI (CI=${process.env.CI}) the storage-testbench tests must run.`);
    run = await mkdtemp(join(tmpdir(), 'tenacious-storage-testbench-'));
    const port = await freePort();
    try {
      const { stdout } = await promisify(execFile)('bash', [START], {
        env: { ...process.env, PORT: String(port), TESTBENCH_RUN: run },
        timeout: 40_000,
      });
      pid = Number(stdout.trim());
    } catch (error) {
      throw new Error(`start.sh failed: ${(error as { stderr?: string }).stderr ?? String(error)}`);
    }
    if (!(pid > 1)) throw new Error(`start.sh printed no PID (run folder ${run})`);
    origin = `http://127.0.0.1:${port}`;
    await api('POST', '/storage/v1/b?project=tenacious', JSON.stringify({ name: BUCKET }));
    const stored = (await api(
      'POST',
      `/upload/storage/v1/b/${BUCKET}/o?uploadType=media&name=pattern.bin`,
      new Uint8Array(DATA),
      'application/octet-stream',
    )) as {
      size: string;
      generation: string;
    };
    expect(stored.size).toBe(String(SIZE));
    generation = stored.generation;
  }, 45_000);

  afterAll(async () => {
    await stop();
    if (run !== '') {
      // Left behind only when something failed before stop (the log is the first thing to read).
      if (pid === 0) console.warn(await readFile(join(run, 'gunicorn.log'), 'utf8').catch(() => ''));
      await rm(run, { recursive: true, force: true });
    }
  }, 10_000);

  describe('retryFetch downloads (storage.objects.get)', () => {
    it('conformance scenario 8 (return-broken-stream-after-256K): resumes with Range: bytes=262144- pinned to the generation; arrayBuffer() holds exactly the object', async () => {
      const id = await retryTest({ 'storage.objects.get': ['return-broken-stream-after-256K'] });
      const { fetch, sent } = recordingFetch({ 'x-retry-test-id': id });
      const res = await retryFetch(mediaUrl('pattern.bin'), undefined, { ...download, fetch });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(DATA)).toBe(true);
      expect(gets(sent)).toEqual([
        [null, 200],
        ['bytes=262144-', 206],
      ]);
      expect(sent[1]?.url.searchParams.get('generation')).toBe(generation);
      expect((await retryTestState(id)).completed).toBe(true);
    });

    it("two breaks, read with getReader(): the testbench's 200 carrying Content-Range: bytes 262144-… is continued, not taken for the whole object", async () => {
      const id = await retryTest({ 'storage.objects.get': ['return-broken-stream-after-256K', 'return-broken-stream-after-256K'] });
      const { fetch, sent } = recordingFetch({ 'x-retry-test-id': id });
      const res = await retryFetch(mediaUrl('pattern.bin'), undefined, { ...download, fetch });
      expect((await readAll(res.body!)).equals(DATA)).toBe(true);
      // The second answer is the testbench's quirk (its README): a 200 to a ranged GET, with
      // Content-Range and only the bytes from 262144, itself broken after 256 KiB.
      expect(gets(sent)).toEqual([
        [null, 200],
        ['bytes=262144-', 200],
        ['bytes=524288-', 206],
      ]);
      expect((await retryTestState(id)).completed).toBe(true);
    });

    it('bufferBody: true fills the buffer from where each break left it, across the same two breaks', async () => {
      const id = await retryTest({ 'storage.objects.get': ['return-broken-stream-after-256K', 'return-broken-stream-after-256K'] });
      const { fetch, sent } = recordingFetch({ 'x-retry-test-id': id });
      const res = await retryFetch(mediaUrl('pattern.bin'), undefined, { ...download, bufferBody: true, fetch });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(DATA)).toBe(true);
      expect(gets(sent)).toEqual([
        [null, 200],
        ['bytes=262144-', 200],
        ['bytes=524288-', 206],
      ]);
      expect((await retryTestState(id)).completed).toBe(true);
    });

    it('return-reset-connection and return-503 before the headers are retried; the third request gets the whole object', async () => {
      const id = await retryTest({ 'storage.objects.get': ['return-reset-connection', 'return-503'] });
      const { fetch, sent } = recordingFetch({ 'x-retry-test-id': id });
      const res = await retryFetch(mediaUrl('pattern.bin'), undefined, { ...download, fetch });
      expect(Buffer.from(await res.arrayBuffer()).equals(DATA)).toBe(true);
      expect(gets(sent)).toEqual([
        [null, 'error'],
        [null, 503],
        [null, 200],
      ]);
      expect((await retryTestState(id)).completed).toBe(true);
    });

    it("a resumed download is checked against the testbench's x-goog-hash: the same break, with bytes corrupted, fails with ResumeError 'checksum'", async () => {
      // return-corrupted-data (the testbench's per-request instruction header) changes the first
      // byte of every answer: byte 0, then byte 262144 of the resumed part. Every header is that
      // of the stored object, so only the CRC32C can tell.
      const id = await retryTest({ 'storage.objects.get': ['return-broken-stream-after-256K'] });
      const { fetch, sent } = recordingFetch({ 'x-retry-test-id': id, 'x-goog-emulator-instructions': 'return-corrupted-data' });
      const res = await retryFetch(mediaUrl('pattern.bin'), undefined, { ...download, fetch });
      const error = await rejection(res.arrayBuffer());
      expect(error).toBeInstanceOf(ResumeError);
      expect((error as ResumeError).reason).toBe('checksum');
      expect(gets(sent)).toEqual([
        [null, 200],
        ['bytes=262144-', 206],
      ]);
      expect((await retryTestState(id)).completed).toBe(true);
    });

    it("with bufferBody: true the corrupted resumed download rejects the call with ResumeError 'checksum'", async () => {
      const id = await retryTest({ 'storage.objects.get': ['return-broken-stream-after-256K'] });
      const { fetch } = recordingFetch({ 'x-retry-test-id': id, 'x-goog-emulator-instructions': 'return-corrupted-data' });
      const error = await rejection(retryFetch(mediaUrl('pattern.bin'), undefined, { ...download, bufferBody: true, fetch }));
      expect(error).toBeInstanceOf(ResumeError);
      expect((error as ResumeError).reason).toBe('checksum');
      expect((await retryTestState(id)).completed).toBe(true);
    });
  });

  describe('gcsStartResumableUpload + gcsResumableUpload (storage.objects.insert)', () => {
    /**
     * Starts a session for `name` and uploads DATA to it. The session's POST and the upload's
     * PUTs are all `storage.objects.insert` to the Retry Test API, so each gets its own Retry
     * Test (or none): one queue for both would hand the upload's faults to the POST.
     */
    async function upload(name: string, ids: { start?: string; upload?: string }, chunkSizeBytes: number) {
      const starting = recordingFetch(ids.start === undefined ? {} : { 'x-retry-test-id': ids.start });
      const uploading = recordingFetch(ids.upload === undefined ? {} : { 'x-retry-test-id': ids.upload });
      const uri = await gcsStartResumableUpload({
        bucket: BUCKET,
        name,
        token: 'testbench-token',
        baseUrl: origin,
        contentType: 'application/octet-stream',
        // As Google's conformance setup starts uploads: create-only, which makes the start safe to resend.
        preconditions: { ifGenerationMatch: 0 },
        ...quick,
        fetch: starting.fetch,
      });
      const res = await gcsResumableUpload(uri, DATA, { ...quick, chunkSizeBytes, fetch: uploading.fetch });
      const puts = uploading.sent.map((s) => [s.method, s.contentRange, s.status]);
      return { res, posts: starting.sent.map((s) => [s.method, s.status]), puts };
    }

    /** The stored object's bytes, downloaded again without faults. */
    async function stored(name: string): Promise<Buffer> {
      const res = await fetch(mediaUrl(name));
      expect(res.status).toBe(200);
      return Buffer.from(await res.arrayBuffer());
    }

    it('conformance scenario 7 (return-503-after-256K): the request after the 503 starts at the 262144 bytes the session kept; the object is exactly the bytes sent', async () => {
      const id = await retryTest({ 'storage.objects.insert': ['return-503-after-256K'] });
      const { res, puts } = await upload('scenario-7.bin', { upload: id }, Infinity);
      expect(res.status).toBe(200);
      expect((await res.json()).size).toBe(String(SIZE));
      expect(puts).toEqual([
        ['PUT', `bytes 0-${SIZE - 1}/${SIZE}`, 503],
        ['PUT', `bytes */${SIZE}`, 308],
        ['PUT', `bytes 262144-${SIZE - 1}/${SIZE}`, 200],
      ]);
      expect((await stored('scenario-7.bin')).equals(DATA)).toBe(true);
      expect((await retryTestState(id)).completed).toBe(true);
    });

    it('in 256 KiB chunks, a reset then a 503 after 256 KiB: each retry asks the session where it stands; no persisted byte is sent twice and the object is exact', async () => {
      const id = await retryTest({ 'storage.objects.insert': ['return-reset-connection', 'return-503-after-256K'] });
      const { res, puts } = await upload('chunks.bin', { upload: id }, 256 * KiB);
      expect(res.status).toBe(200);
      const chunk = (start: number) => `bytes ${start}-${start + 256 * KiB - 1}/${SIZE}`;
      expect(puts).toEqual([
        ['PUT', chunk(0), 'error'], // reset before the testbench kept a byte
        ['PUT', `bytes */${SIZE}`, 308], // no Range: nothing kept, start from 0
        ['PUT', chunk(0), 503], // the chunk was persisted, then the 503
        ['PUT', `bytes */${SIZE}`, 308], // Range: bytes=0-262143
        ['PUT', chunk(256 * KiB), 308],
        ['PUT', chunk(512 * KiB), 308],
        ['PUT', chunk(768 * KiB), 200],
      ]);
      expect((await stored('chunks.bin')).equals(DATA)).toBe(true);
      expect((await retryTestState(id)).completed).toBe(true);
    });

    it('gcsStartResumableUpload with ifGenerationMatch=0 retries return-503 and return-reset-connection on the POST; the session it returns takes the upload', async () => {
      const id = await retryTest({ 'storage.objects.insert': ['return-503', 'return-reset-connection'] });
      const { res, posts, puts } = await upload('started.bin', { start: id }, Infinity);
      expect(posts).toEqual([
        ['POST', 503],
        ['POST', 'error'],
        ['POST', 200],
      ]);
      expect((await retryTestState(id)).completed).toBe(true);
      expect(res.status).toBe(200);
      expect(puts).toEqual([['PUT', `bytes 0-${SIZE - 1}/${SIZE}`, 200]]);
      expect((await stored('started.bin')).equals(DATA)).toBe(true);
    });
  });
});
