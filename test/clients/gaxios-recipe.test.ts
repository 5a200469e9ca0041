// The gaxios recipes of docs/recipes.md (getIamPolicy under iam(), and a grant through
// iamReadModifyWrite), run as shown against real gaxios and a real node:http server on
// 127.0.0.1. gaxios retries when a `retryConfig` is set, also one set on the shared default
// instance; `retry: false` does not undo that, the recipe's `retryConfig: { retry: 0 }` does:
// with retries configured on the default instance the server still sees one request per
// attempt. Also: the value, a GaxiosError 404 / 400 passed through unchanged, the read rerun on
// 409 ABORTED, and the attempt's signal cancelling the request in flight.
import { GaxiosError, instance, request } from 'gaxios';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RetryError, retry } from '../../src/index.js';
import { type IamOptions, iam, iamReadModifyWrite } from '../../src/google/index.js';
import { failureOf, isLoopback, type LoopbackServer, sendGoogleError, sendJson, startHttpServer, watchConnections } from './loopback.js';
import { type ScriptedServer, recipeRegionsOf, scriptedServer } from './recipe-kit.js';

// recipe:begin
interface Policy {
  etag?: string;
  bindings?: Array<{ role: string; members: string[] }>;
}

// resource: e.g. https://cloudresourcemanager.googleapis.com/v3/projects/my-project
async function getIamPolicy(resource: string, token: string, options: IamOptions = {}): Promise<Policy> {
  return retry(async ({ signal }) => {
    const response = await request<Policy>({
      url: `${resource}:getIamPolicy`,
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      signal,
      retryConfig: { retry: 0 }, // tenacious is the only retry layer
    });
    return response.data;
  }, iam(options));
}
// recipe:end

// recipe:begin
/** Grants `role` to `member`; undefined when it was already granted (nothing written). */
async function grant(resource: string, token: string, role: string, member: string, options: IamOptions = {}): Promise<Policy | undefined> {
  const call = async (method: string, data: object, signal: AbortSignal): Promise<Policy> => {
    const headers = { authorization: `Bearer ${token}` };
    return (await request<Policy>({ url: `${resource}:${method}`, method: 'POST', headers, data, signal, retryConfig: { retry: 0 } })).data;
  };
  return iamReadModifyWrite<Policy, Policy>(
    {
      read: ({ signal }) => call('getIamPolicy', {}, signal),
      modify: (current) => {
        const bindings = current.bindings ?? [];
        const binding = bindings.find((b) => b.role === role);
        if (binding?.members.includes(member)) return undefined; // already granted: nothing to write
        const others = bindings.filter((b) => b !== binding);
        // Keeps the etag that was read: the write fails with 409 ABORTED if the policy changed since.
        return { ...current, bindings: [...others, { role, members: [...(binding?.members ?? []), member] }] };
      },
      write: (next, { signal }) => call('setIamPolicy', { policy: next }, signal),
    },
    options,
  );
}
// recipe:end

/** Tiny waits: these tests count requests, the waits themselves are tested with virtual time elsewhere. */
const fast: IamOptions = { backoff: { initialDelayMs: 1, maxDelayMs: 5 } };
const POLICY = { etag: 'BwX1', bindings: [{ role: 'roles/owner', members: ['user:grace@example.com'] }] };
const ROLE = 'roles/storage.objectViewer';
const ADA = 'user:ada@example.com';

let server: LoopbackServer | ScriptedServer | undefined;
let connections: ReturnType<typeof watchConnections>;
const defaultRetryConfig = instance.defaults.retryConfig;
beforeEach(() => {
  connections = watchConnections();
});
afterEach(async () => {
  instance.defaults.retryConfig = defaultRetryConfig;
  connections.restore();
  await server?.close();
  server = undefined;
  expect(connections.hosts.every(isLoopback)).toBe(true);
});

it('runs the code the README shows', () => {
  expect(recipeRegionsOf(import.meta.url)).toEqual([
    { code: expect.stringContaining(':getIamPolicy') as unknown, shown: true },
    { code: expect.stringContaining('iamReadModifyWrite<Policy, Policy>') as unknown, shown: true },
  ]);
});

describe('getIamPolicy with gaxios under iam()', () => {
  it('503, 503, 200: returns the policy after exactly three requests', async () => {
    server = await scriptedServer([503, 503], 200, POLICY);
    await expect(getIamPolicy(`${server.url}/v3/projects/p`, 'token', fast)).resolves.toEqual(POLICY);
    expect(server.requests).toHaveLength(3);
    expect(server.requests.map((r) => [r.method, r.url, r.headers.authorization])).toEqual(
      Array(3).fill(['POST', '/v3/projects/p:getIamPolicy', 'Bearer token']),
    );
  });

  it('with gaxios retries configured on the default instance, still one request per attempt', async () => {
    instance.defaults.retryConfig = { retry: 2, retryDelay: 1, httpMethodsToRetry: ['POST'] };
    server = await scriptedServer([], 503);
    const error = await failureOf(getIamPolicy(`${server.url}/v3/projects/p`, 'token', { ...fast, maxAttempts: 3 }));
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect((error as RetryError).cause).toBeInstanceOf(GaxiosError);
    expect(server.requests).toHaveLength(3);
  });

  it('where `retry: false` would not have helped: that instance retries under it, three requests for one call', async () => {
    instance.defaults.retryConfig = { retry: 2, retryDelay: 1, httpMethodsToRetry: ['POST'] };
    server = await scriptedServer([], 503);
    await failureOf(request({ url: `${server.url}/v3/projects/p:getIamPolicy`, method: 'POST', retry: false }));
    expect(server.requests).toHaveLength(3);
  });

  it.each([404, 400])('%i: rejects at once with the GaxiosError itself, one request', async (status) => {
    server = await scriptedServer([status]);
    const error = await failureOf(getIamPolicy(`${server.url}/v3/projects/p`, 'token', fast));
    expect(error).toBeInstanceOf(GaxiosError);
    expect(error).toMatchObject({ status, response: { status } });
    expect(server.requests).toHaveLength(1);
  });

  it('the caller’s abort cancels the request in flight: the server sees its socket close', async () => {
    const stalling = await scriptedServer(['stall']);
    server = stalling;
    const controller = new AbortController();
    void stalling.stalled.then(() => controller.abort(new Error('the user left')));
    const error = await failureOf(getIamPolicy(`${stalling.url}/v3/projects/p`, 'token', { ...fast, signal: controller.signal }));
    expect(error).toEqual(new Error('the user left'));
    await stalling.stalledSocketClosed;
    expect(stalling.requests).toHaveLength(1);
  });
});

/** An IAM-style policy endpoint: getIamPolicy / setIamPolicy guarded by the etag, with hooks for the tests. */
async function iamServer(options: { beforeRead?: (reads: number) => number | undefined; afterRead?: (reads: number) => void } = {}) {
  const state = { policy: structuredClone(POLICY) as Required<Policy>, log: [] as string[], version: 1 };
  let reads = 0;
  const started = await startHttpServer((seen, res) => {
    if (seen.url.endsWith(':getIamPolicy')) {
      reads++;
      const failWith = options.beforeRead?.(reads);
      state.log.push(failWith === undefined ? `get ${state.policy.etag}` : `get ${failWith}`);
      if (failWith !== undefined) return sendGoogleError(res, failWith);
      sendJson(res, state.policy);
      return options.afterRead?.(reads);
    }
    const sent = (JSON.parse(seen.body) as { policy: Required<Policy> }).policy;
    state.log.push(`set ${sent.etag}`);
    if (sent.etag !== state.policy.etag) return sendGoogleError(res, 409, { status: 'ABORTED' });
    state.policy = { ...sent, etag: `BwX${++state.version}` };
    sendJson(res, state.policy);
  });
  return { server: started, state };
}

describe('grant with gaxios through iamReadModifyWrite', () => {
  it('reruns the read when setIamPolicy answers 409 ABORTED, and keeps the other writer’s change', async () => {
    const endpoint = await iamServer({
      afterRead: (reads) => {
        // Another client grants the same role to someone else between our first read and our write.
        if (reads === 1)
          endpoint.state.policy = {
            etag: 'BwX9',
            bindings: [...endpoint.state.policy.bindings, { role: ROLE, members: ['user:alan@example.com'] }],
          };
      },
    });
    server = endpoint.server;
    const written = await grant(`${server.url}/v3/projects/p`, 'token', ROLE, ADA, fast);
    expect(endpoint.state.log).toEqual(['get BwX1', 'set BwX1', 'get BwX9', 'set BwX9']);
    expect(written?.bindings).toEqual([
      { role: 'roles/owner', members: ['user:grace@example.com'] },
      { role: ROLE, members: ['user:alan@example.com', ADA] },
    ]);
    expect(endpoint.state.policy).toEqual(written);
  });

  it('a 503 on the read is retried; the write follows once', async () => {
    const endpoint = await iamServer({ beforeRead: (reads) => (reads === 1 ? 503 : undefined) });
    server = endpoint.server;
    await grant(`${server.url}/v3/projects/p`, 'token', ROLE, ADA, fast);
    expect(endpoint.state.log).toEqual(['get 503', 'get BwX1', 'set BwX1']);
  });

  it('already granted: one read, no write, undefined', async () => {
    const endpoint = await iamServer();
    server = endpoint.server;
    endpoint.state.policy.bindings.push({ role: ROLE, members: [ADA] });
    await expect(grant(`${server.url}/v3/projects/p`, 'token', ROLE, ADA, fast)).resolves.toBeUndefined();
    expect(endpoint.state.log).toEqual(['get BwX1']);
  });

  it('a 403 on the read rejects at once with the GaxiosError itself', async () => {
    const endpoint = await iamServer({ beforeRead: () => 403 });
    server = endpoint.server;
    const error = await failureOf(grant(`${server.url}/v3/projects/p`, 'token', ROLE, ADA, fast));
    expect(error).toBeInstanceOf(GaxiosError);
    expect(error).toMatchObject({ status: 403 });
    expect(endpoint.state.log).toEqual(['get 403']);
  });
});
