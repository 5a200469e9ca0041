// Proof against the real global fetch (Node's bundled undici): what it throws for a refused
// connection, a socket destroyed mid-response and a headers timeout, and how iam(), gcs() and
// the default classification treat it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type AttemptContext,
  TimeoutError,
  isTransient,
  networkError,
  retry,
  retryAfterMsOf,
  systemCodeOf,
  timedOut,
} from '../../src/index.js';
import { gcs, iam } from '../../src/google/index.js';
import { failureOf, isLoopback, type LoopbackServer, refusedUrl, resetConnection, startHttpServer, watchConnections } from './loopback.js';

/** How the two presets and the default classification judge an error. */
function classify(error: unknown) {
  return {
    iam: iam().retryable?.(error),
    gcs: gcs({ operation: 'objects.get' }).retryable?.(error),
    default: isTransient(error),
  };
}
const RETRIED_BY_ALL = { iam: true, gcs: true, default: true };

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

/**
 * The Agent class of the undici that Node bundles for fetch, reached through the global
 * dispatcher that fetch itself uses (`Symbol.for('undici.globalDispatcher.1')`, the slot
 * undici's own `setGlobalDispatcher` writes). Node does not export undici, and the project does
 * not depend on the npm package; this gives the real `headersTimeout`. A `data:` fetch loads
 * undici first without any network.
 */
async function bundledUndiciAgent(options: { headersTimeout?: number; bodyTimeout?: number }): Promise<{
  close(): Promise<void>;
}> {
  const slot = Symbol.for('undici.globalDispatcher.1');
  if ((globalThis as Record<symbol, unknown>)[slot] === undefined) await fetch('data:,load-undici');
  const dispatcher = (globalThis as Record<symbol, unknown>)[slot] as { constructor: new (o: object) => { close(): Promise<void> } };
  return new dispatcher.constructor(options);
}

describe('global fetch (undici)', () => {
  it('connection refused: TypeError "fetch failed" with ECONNREFUSED under it, retried by all', async () => {
    const error = await failureOf(fetch(await refusedUrl()));
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('fetch failed');
    expect(systemCodeOf(error)).toBe('ECONNREFUSED');
    expect(networkError(error)).toBe(true);
    expect(classify(error)).toEqual(RETRIED_BY_ALL);
    // The connection watcher sees fetch's sockets (so its all-loopback check means something).
    expect(connections.hosts).toEqual(['127.0.0.1']);
  });

  it('socket destroyed mid-response: reading the body rejects with "terminated" (UND_ERR_SOCKET), retried by all', async () => {
    server = await startHttpServer((_seen, res, req) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
      res.write('only part of the body');
      setTimeout(() => req.socket.destroy(), 10);
    });
    const response = await fetch(server.url);
    expect(response.status).toBe(200);
    const error = await failureOf(response.text());
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('terminated');
    expect(systemCodeOf(error)).toBe('UND_ERR_SOCKET');
    expect(classify(error)).toEqual(RETRIED_BY_ALL);
  });

  it('socket destroyed or reset before the headers: "fetch failed" with UND_ERR_SOCKET / ECONNRESET, retried by all', async () => {
    server = await startHttpServer((seen, _res, req) => {
      if (seen.url === '/destroy') req.socket.destroy();
      else resetConnection(req);
    });
    const closed = await failureOf(fetch(`${server.url}/destroy`));
    expect(systemCodeOf(closed)).toBe('UND_ERR_SOCKET');
    expect(classify(closed)).toEqual(RETRIED_BY_ALL);
    const reset = await failureOf(fetch(`${server.url}/reset`));
    expect(systemCodeOf(reset)).toBe('ECONNRESET');
    expect(classify(reset)).toEqual(RETRIED_BY_ALL);
  });

  it('headers timeout (undici headersTimeout): UND_ERR_HEADERS_TIMEOUT, a timeout retried by all', async () => {
    server = await startHttpServer(() => {
      // Never answers; closed by the test.
    });
    const agent = await bundledUndiciAgent({ headersTimeout: 50 });
    try {
      // `dispatcher` is undici's RequestInit extension, honoured by Node's fetch.
      const error = await failureOf(fetch(server.url, { dispatcher: agent } as RequestInit));
      expect((error as Error).message).toBe('fetch failed');
      expect(systemCodeOf(error)).toBe('UND_ERR_HEADERS_TIMEOUT');
      expect(timedOut(error)).toBe(true);
      expect(classify(error)).toEqual(RETRIED_BY_ALL);
    } finally {
      await agent.close();
    }
  });

  it('body timeout (undici bodyTimeout, a server that stalls after the headers): UND_ERR_BODY_TIMEOUT, retried by all', async () => {
    server = await startHttpServer((_seen, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('headers and a first chunk, then silence');
    });
    const agent = await bundledUndiciAgent({ bodyTimeout: 50 });
    try {
      const response = await fetch(server.url, { dispatcher: agent } as RequestInit);
      const error = await failureOf(response.text());
      expect((error as Error).message).toBe('terminated');
      expect(systemCodeOf(error)).toBe('UND_ERR_BODY_TIMEOUT');
      expect(classify(error)).toEqual(RETRIED_BY_ALL);
    } finally {
      await agent.close();
    }
  });

  // Regression (issue 12, defect 6): every one of these was retried until the deadline. They
  // are the same TypeError('fetch failed') as a dropped connection; only the cause differs.
  it('"fetch failed" that will fail the same way again (redirect loop, ftp: redirect, bad port, redirect: "error") is retried by none', async () => {
    server = await startHttpServer((seen, res) => {
      const location = { '/ftp': 'ftp://127.0.0.1/file', '/bad-port': 'http://127.0.0.1:10080/' }[seen.url] ?? '/loop';
      res.writeHead(302, { location });
      res.end();
    });
    const failures = {
      loop: await failureOf(fetch(`${server.url}/loop`)),
      ftp: await failureOf(fetch(`${server.url}/ftp`)),
      redirectToBadPort: await failureOf(fetch(`${server.url}/bad-port`)),
      // Node's fetch refuses ports 1 and 10080 itself: nothing is sent.
      badPort: await failureOf(fetch('http://127.0.0.1:1/')),
      manualRedirect: await failureOf(fetch(`${server.url}/loop`, { redirect: 'error' })),
    };
    const causes = Object.fromEntries(Object.entries(failures).map(([k, e]) => [k, ((e as Error).cause as Error).message]));
    expect(causes).toEqual({
      loop: 'redirect count exceeded',
      ftp: 'URL scheme must be a HTTP(S) scheme',
      redirectToBadPort: 'bad port',
      badPort: 'bad port',
      manualRedirect: 'unexpected redirect',
    });
    for (const error of Object.values(failures)) {
      expect((error as Error).message).toBe('fetch failed');
      // No socket error under it (which is why systemCodeOf's example no longer uses port 1).
      expect(systemCodeOf(error)).toBeUndefined();
      expect(networkError(error)).toBe(false);
      expect(classify(error)).toEqual({ iam: false, gcs: false, default: false });
    }
    // The loop really ran: 21 requests (20 redirects followed) before fetch gave up, and one
    // more for `redirect: 'error'`.
    expect(server.requests.filter((r) => r.url === '/loop')).toHaveLength(21 + 1);
  });

  it('a "fetch failed" with no cause (what browsers give: "Failed to fetch") cannot be told apart, so it is retried', () => {
    expect(classify(new TypeError('Failed to fetch'))).toEqual(RETRIED_BY_ALL);
    expect(classify(new TypeError('fetch failed'))).toEqual(RETRIED_BY_ALL);
  });

  it('a timeout by AbortSignal.timeout(): DOMException TimeoutError, retried by all; the caller’s abort is not', async () => {
    server = await startHttpServer(() => {});
    const timeout = await failureOf(fetch(server.url, { signal: AbortSignal.timeout(30) }));
    expect((timeout as Error).name).toBe('TimeoutError');
    expect(classify(timeout)).toEqual(RETRIED_BY_ALL);

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const abort = await failureOf(fetch(server.url, { signal: controller.signal }));
    expect((abort as Error).name).toBe('AbortError');
    expect(classify(abort)).toEqual({ iam: false, gcs: false, default: false });
  });

  it('retry() with attemptTimeoutMs and ctx.signal: a stalled attempt is abandoned, its socket freed, and the next one succeeds', async () => {
    const closedEarly: string[] = [];
    server = await startHttpServer((seen, res, _req) => {
      if (server?.requests.length === 1) {
        res.on('close', () => closedEarly.push(seen.url)); // the client gave up on this one
        return;
      }
      res.end('fresh');
    });
    const url = server.url;
    const errors: unknown[] = [];
    const body = await retry(
      async ({ signal }: AttemptContext) => {
        const response = await fetch(url, { signal });
        return response.text();
      },
      gcs({
        operation: 'objects.get',
        attemptTimeoutMs: 250,
        backoff: { initialDelayMs: 1, maxDelayMs: 5 },
        onRetry: ({ error }) => errors.push(error),
      }),
    );
    expect(body).toBe('fresh');
    expect(server.requests).toHaveLength(2);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TimeoutError);
    await expect.poll(() => closedEarly).toEqual(['/']);
  });

  it('recipe: a 503 Response thrown with its status and headers is retried after the server’s Retry-After', async () => {
    server = await startHttpServer((_seen, res) => {
      if ((server?.requests.length ?? 0) < 3) {
        res.writeHead(503, { 'retry-after': '0' });
        res.end('busy');
        return;
      }
      res.end('{"ok":true}');
    });
    const url = server.url;
    const seenHints: Array<number | undefined> = [];
    const result = await retry(
      async ({ signal }) => {
        const response = await fetch(url, { signal });
        if (!response.ok) {
          await response.body?.cancel();
          throw Object.assign(new Error(`GET ${url}: ${response.status}`), { status: response.status, response });
        }
        return response.json();
      },
      gcs({
        operation: 'objects.get',
        backoff: { initialDelayMs: 1, maxDelayMs: 5 },
        onRetry: ({ error }) => seenHints.push(retryAfterMsOf(error)),
      }),
    );
    expect(result).toEqual({ ok: true });
    expect(server.requests).toHaveLength(3);
    expect(seenHints).toEqual([0, 0]);
  });
});
