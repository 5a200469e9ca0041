// Proof against gaxios, the HTTP client of Google's Node libraries: the GaxiosError it really
// throws for 503, 429, 404, 400, 409 ABORTED vs ALREADY_EXISTS, a reset connection and its own
// timeout, classified by iam(), gcs() and the default; and iamReadModifyWrite over REST.
// gaxios' own retry is off in every request (`retry: false`), and each test checks that the
// server saw exactly the requests tenacious sent.
import { type GaxiosOptions, type GaxiosResponse, request } from 'gaxios';
import { createRequire } from 'node:module';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { aborted, isTransient, retry, retryAfterMsOf, statusStringOf, timedOut } from '../../src/index.js';
import { gcs, iam, iamReadModifyWrite } from '../../src/google/index.js';
import {
  failureOf,
  isLoopback,
  type LoopbackServer,
  refusedUrl,
  resetConnection,
  sendGoogleError,
  sendJson,
  startHttpServer,
  watchConnections,
} from './loopback.js';

function classify(error: unknown) {
  return {
    iam: iam().retryable?.(error),
    iamNotFound: iam({ retryNotFound: true }).retryable?.(error),
    gcs: gcs({ operation: 'objects.get' }).retryable?.(error),
    default: isTransient(error),
  };
}

/** A gaxios request with gaxios' own retry turned off: tenacious decides. */
const send = <T>(options: GaxiosOptions): Promise<GaxiosResponse<T>> => request<T>({ retry: false, ...options });

/** Tiny waits for the tests that really retry. */
const fast = { backoff: { initialDelayMs: 1, maxDelayMs: 5 } } as const;

let server: LoopbackServer | undefined;
let connections: ReturnType<typeof watchConnections>;
beforeEach(() => {
  connections = watchConnections();
});
afterEach(async () => {
  connections.restore();
  await server?.close();
  server = undefined;
  expect(connections.hosts.every(isLoopback)).toBe(true);
});

describe('gaxios: Google JSON errors', () => {
  beforeEach(async () => {
    server = await startHttpServer((seen, res, req) => {
      const [, status, googleStatus] = seen.url.split('/');
      if (status === 'reset') return resetConnection(req);
      if (status === 'stall') return;
      sendGoogleError(res, Number(status), {
        status: googleStatus,
        headers: status === '429' ? { 'retry-after': '7' } : {},
      });
    });
  });

  it.each([
    ['503/UNAVAILABLE', { iam: true, iamNotFound: true, gcs: true, default: true }],
    ['429/RESOURCE_EXHAUSTED', { iam: false, iamNotFound: false, gcs: true, default: true }],
    ['404/NOT_FOUND', { iam: false, iamNotFound: true, gcs: false, default: false }],
    ['400/INVALID_ARGUMENT', { iam: false, iamNotFound: false, gcs: false, default: false }],
    ['409/ABORTED', { iam: false, iamNotFound: false, gcs: false, default: true }],
    ['409/ALREADY_EXISTS', { iam: false, iamNotFound: false, gcs: false, default: false }],
  ])('HTTP %s', async (path, expected) => {
    const error = await failureOf(send({ url: `${server?.url}/${path}` }));
    expect(error).toMatchObject({ name: 'Error', status: Number(path.split('/')[0]) });
    expect(statusStringOf(error)).toBe(path.split('/')[1]);
    expect(classify(error)).toEqual(expected);
    expect(server?.requests).toHaveLength(1);
  });

  it('tells 409 ABORTED (rerun the read-modify-write) from 409 ALREADY_EXISTS by the body’s status', async () => {
    const conflict = await failureOf(send({ url: `${server?.url}/409/ABORTED` }));
    const exists = await failureOf(send({ url: `${server?.url}/409/ALREADY_EXISTS` }));
    expect(aborted(conflict)).toBe(true);
    expect(aborted(exists)).toBe(false);
  });

  it('exposes a 429’s Retry-After, which retry() honours as the least wait', async () => {
    const error = await failureOf(send({ url: `${server?.url}/429/RESOURCE_EXHAUSTED` }));
    expect(retryAfterMsOf(error)).toBe(7000);
  });

  it('a reset connection: GaxiosError with code ECONNRESET, retried by all', async () => {
    const error = await failureOf(send({ url: `${server?.url}/reset` }));
    expect(error).toMatchObject({ code: 'ECONNRESET' });
    expect(classify(error)).toEqual({ iam: true, iamNotFound: true, gcs: true, default: true });
  });

  it('a refused connection: GaxiosError with code ECONNREFUSED, retried by all', async () => {
    const error = await failureOf(send({ url: await refusedUrl() }));
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(classify(error)).toEqual({ iam: true, iamNotFound: true, gcs: true, default: true });
  });

  it('gaxios’ own `timeout` (an AbortError under it) is a timeout; the caller’s abort is not', async () => {
    const timeout = await failureOf(send({ url: `${server?.url}/stall`, timeout: 30 }));
    expect(timedOut(timeout)).toBe(true);
    expect(classify(timeout)).toEqual({ iam: true, iamNotFound: true, gcs: true, default: true });

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const abort = await failureOf(send({ url: `${server?.url}/stall`, signal: controller.signal }));
    expect(timedOut(abort)).toBe(false);
    expect(classify(abort)).toEqual({ iam: false, iamNotFound: false, gcs: false, default: false });
  });
});

describe('gaxios under retry()', () => {
  it('retries 503 then succeeds under iam(), one request per attempt', async () => {
    server = await startHttpServer((_seen, res) => {
      if ((server?.requests.length ?? 0) <= 2) return sendGoogleError(res, 503, { status: 'UNAVAILABLE' });
      sendJson(res, { name: 'projects/p/serviceAccounts/sa' });
    });
    const url = `${server.url}/v1/projects/p/serviceAccounts/sa`;
    const response = await retry(({ signal }) => send<{ name: string }>({ url, signal }), iam(fast));
    expect(response.data.name).toBe('projects/p/serviceAccounts/sa');
    expect(server.requests).toHaveLength(3);
  });

  it('retries a 404 right after a create only with retryNotFound', async () => {
    server = await startHttpServer((_seen, res) => {
      if ((server?.requests.length ?? 0) === 1) return sendGoogleError(res, 404, { status: 'NOT_FOUND' });
      sendJson(res, { name: 'roles/custom' });
    });
    const url = `${server.url}/v1/projects/p/roles/custom`;
    const notFound = await failureOf(retry(({ signal }) => send({ url, signal }), iam(fast)));
    expect(notFound).toMatchObject({ status: 404 });
    const found = await retry(({ signal }) => send<{ name: string }>({ url, signal }), iam({ ...fast, retryNotFound: true }));
    expect(found.data.name).toBe('roles/custom');
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry 409 ALREADY_EXISTS from a create', async () => {
    server = await startHttpServer((_seen, res) => sendGoogleError(res, 409, { status: 'ALREADY_EXISTS' }));
    const url = `${server.url}/v1/projects/p/serviceAccounts`;
    const error = await failureOf(
      iamReadModifyWrite(
        {
          read: async () => ({ accountId: 'sa' }),
          modify: (body) => body,
          write: (data, { signal }) => send({ url, method: 'POST', data, signal }),
        },
        fast,
      ),
    );
    expect(error).toMatchObject({ status: 409 });
    expect(statusStringOf(error)).toBe('ALREADY_EXISTS');
    expect(server.requests).toHaveLength(1);
  });
});

interface Policy {
  version: number;
  etag: string;
  bindings: Array<{ role: string; members: string[] }>;
}

describe('iamReadModifyWrite over IAM’s REST getIamPolicy / setIamPolicy', () => {
  it('reruns the read, not just the write, when setIamPolicy answers 409 ABORTED (stale etag)', async () => {
    let policy: Policy = { version: 1, etag: 'BwX1', bindings: [] };
    let version = 1;
    const log: string[] = [];
    server = await startHttpServer((seen, res) => {
      if (seen.url.endsWith(':getIamPolicy')) {
        log.push(`get ${policy.etag}`);
        sendJson(res, policy);
        if (log.length === 1) {
          // Another client changes the policy between our read and our write.
          policy = { ...policy, etag: `BwX${++version}`, bindings: [{ role: 'roles/owner', members: ['user:grace@example.com'] }] };
        }
        return;
      }
      const sent = (JSON.parse(seen.body) as { policy: Policy }).policy;
      log.push(`set ${sent.etag}`);
      if (sent.etag !== policy.etag) return sendGoogleError(res, 409, { status: 'ABORTED' });
      policy = { ...sent, etag: `BwX${++version}` };
      sendJson(res, policy);
    });
    const base = `${server.url}/v1/projects/p`;

    const written = await iamReadModifyWrite(
      {
        read: async ({ signal }) => (await send<Policy>({ url: `${base}:getIamPolicy`, method: 'POST', data: {}, signal })).data,
        modify: (current) => {
          const viewers = current.bindings.find((b) => b.role === 'roles/viewer');
          if (viewers?.members.includes('user:ada@example.com')) return undefined;
          return { ...current, bindings: [...current.bindings, { role: 'roles/viewer', members: ['user:ada@example.com'] }] };
        },
        write: async (next, { signal }) =>
          (await send<Policy>({ url: `${base}:setIamPolicy`, method: 'POST', data: { policy: next }, signal })).data,
      },
      fast,
    );

    expect(log).toEqual(['get BwX1', 'set BwX1', 'get BwX2', 'set BwX2']);
    expect(written?.bindings.map((b) => b.role)).toEqual(['roles/owner', 'roles/viewer']);
    expect(policy).toEqual(written);
  });
});

// Regression (issue 12): gaxios 6 keeps the underlying error in `.error`, not `.cause`, so its
// timeout was not retried by gcs() or iam(), and a caller's abort was retried by the default.
// gaxios 6 is the one @google-cloud/storage 7 bundles and throws: it is loaded here the way
// the Storage client loads it, from the Storage package's own dependencies.
describe('gaxios 6 (as bundled by @google-cloud/storage 7): the error under `.error`', () => {
  const fromStorage = createRequire(createRequire(import.meta.url).resolve('@google-cloud/storage'));
  const gaxios6 = fromStorage('gaxios') as typeof import('gaxios');
  const version = (fromStorage('gaxios/package.json') as { version: string }).version;
  const send6 = (options: GaxiosOptions) => gaxios6.request({ retry: false, ...options });

  beforeEach(async () => {
    server = await startHttpServer(() => {
      // Never answers: every request here times out or is aborted.
    });
  });

  it('is gaxios 6, whose GaxiosError has `error` and no `cause`', async () => {
    expect(version).toMatch(/^6\./);
    const error = await failureOf(send6({ url: `${server?.url}/stall`, timeout: 30 }));
    expect(error).toMatchObject({ name: 'Error', error: { name: 'FetchError', type: 'request-timeout' } });
    expect((error as Error).cause).toBeUndefined();
  });

  it('its own `timeout` is a timeout, retried by all; the caller’s abort is retried by none', async () => {
    const timeout = await failureOf(send6({ url: `${server?.url}/stall`, timeout: 30 }));
    expect(timedOut(timeout)).toBe(true);
    expect(classify(timeout)).toEqual({ iam: true, iamNotFound: true, gcs: true, default: true });

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const abort = await failureOf(send6({ url: `${server?.url}/stall`, signal: controller.signal }));
    expect((abort as { error?: Error }).error?.name).toBe('AbortError');
    expect(classify(abort)).toEqual({ iam: false, iamNotFound: false, gcs: false, default: false });
  });

  it('retry(…, gcs()) resends a timed-out objects.get until out of attempts', async () => {
    const error = await failureOf(
      retry(() => send6({ url: `${server?.url}/o/object`, timeout: 20 }), {
        ...gcs({ operation: 'objects.get' }),
        ...fast,
        maxAttempts: 3,
      }),
    );
    expect(error).toMatchObject({ name: 'RetryError', reason: 'attempts', attempts: 3 });
    expect(server?.requests.map((r) => r.url)).toEqual(['/o/object', '/o/object', '/o/object']);
  });
});
