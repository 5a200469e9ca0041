// npm run demo: tenacious against a Cloud Storage endpoint having a bad day.
//
// A loopback server plays a busy Cloud Storage JSON API: it answers 503, then 429 with a
// Retry-After, then drops the connection, before it finally serves the object. The client is
// retryFetch with the gcs() preset: Cloud Storage's own rules for what to retry and when to
// stop, its backoff formula min(2^n + random, 64) s scaled down 10× so the demo takes about
// two seconds. Every attempt, wait and outcome is printed as it happens.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RetryError, type RetryEvent, retryAfterMsOf, systemCodeOf } from '../src/index.js';
import { type FetchFunction, retryFetch } from '../src/fetch/index.js';
import { gcs } from '../src/google/index.js';

// --- the server -----------------------------------------------------------------------------

type Behaviour = 'busy' | 'rate-limited' | 'drop' | 'ok';

/** What each route does on its 1st, 2nd, 3rd… request; after the list, 'ok'. */
const SCRIPT: Record<string, Behaviour[]> = {
  'GET /storage/v1/b/demo-bucket/o/report.csv': ['busy', 'rate-limited', 'drop', 'ok'],
  'POST /upload/storage/v1/b/demo-bucket/o': ['busy', 'busy', 'ok'],
};
const served = new Map<string, number>();

const CSV = 'date,region,revenue\n2026-11-01,eu,1200\n2026-11-01,us,1800\n2026-11-02,eu,1350\n';

function googleError(res: ServerResponse, code: number, reason: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ error: { code, message, errors: [{ reason, message }] } });
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8', ...headers });
  res.end(body);
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const route = `${req.method} ${new URL(req.url ?? '/', 'http://x').pathname}`;
  const n = served.get(route) ?? 0;
  served.set(route, n + 1);
  const behaviour = SCRIPT[route]?.[n] ?? 'ok';
  switch (behaviour) {
    case 'busy':
      return googleError(res, 503, 'backendError', 'Backend Error');
    case 'rate-limited':
      return googleError(res, 429, 'rateLimitExceeded', 'The rate of change requests to the object is too high.', {
        'retry-after': '1',
      });
    case 'drop':
      // A load balancer dropping the connection before any answer: the client sees a reset.
      req.socket.resetAndDestroy();
      return;
    case 'ok':
      if (req.method === 'POST') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'storage#object', bucket: 'demo-bucket', name: 'upload.csv', generation: '1' }));
      } else {
        res.writeHead(200, { 'content-type': 'text/csv' });
        res.end(CSV);
      }
  }
}

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => handle(req, res));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// --- the timeline ---------------------------------------------------------------------------

let started = performance.now();
const stamp = (): string => `${String(Math.round(performance.now() - started)).padStart(6)} ms`;
const say = (line: string): void => console.log(`${stamp()}  ${line}`);

/** fetch, printing each attempt and what came back. */
let attempts = 0;
const loggingFetch: FetchFunction = async (input, init) => {
  attempts++;
  const url = new URL(input instanceof Request ? input.url : String(input));
  say(`→ ${init?.method ?? 'GET'} ${url.pathname}${url.search}   (attempt ${attempts})`);
  try {
    const res = await fetch(input, init);
    const hint = res.headers.get('retry-after');
    say(`← ${res.status} ${res.statusText}${hint === null ? '' : `, Retry-After: ${hint}`}`);
    return res;
  } catch (error) {
    say(`✗ ${(error as Error).message} (${systemCodeOf(error) ?? 'no code'})`);
    throw error;
  }
};

/** Prints each wait and where its length came from. */
const logWait = ({ error, delayMs }: RetryEvent): void => {
  const hint = retryAfterMsOf(error);
  const why = hint !== undefined && hint >= delayMs ? "the server's Retry-After, longer than the backoff" : 'backoff with jitter';
  say(`  … waiting ${Math.round(delayMs)} ms (${why})`);
};

// Cloud Storage's backoff, 10× faster: min(2^n · 100 + random · 100, 6400) ms; 10 s deadline.
const demoTiming = {
  backoff: { initialDelayMs: 100, multiplier: 2, maxDelayMs: 6400, jitter: { additiveMs: 100 } },
  deadlineMs: 10_000,
};

async function scene(title: string, run: () => Promise<Response>): Promise<void> {
  console.log(`\n${title}`);
  started = performance.now();
  attempts = 0;
  try {
    const res = await run();
    const body = await res.text();
    const [first = '', ...more] = body.trimEnd().split('\n');
    const summary = res.ok
      ? `${first}${more.length > 0 ? ` (+${more.length} lines)` : ''}`
      : (JSON.parse(body) as { error: { message: string } }).error.message;
    say(`${res.ok ? '✓' : '■'} resolved with ${res.status} after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${summary}`);
  } catch (error) {
    const why = error instanceof RetryError ? `RetryError (${error.reason})` : (error as Error).name;
    say(`■ rejected: ${why}: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}

console.log(`tenacious demo: a busy Cloud Storage endpoint on ${base}`);

await scene('1. Download an object (objects.get: always safe to resend)', () =>
  retryFetch(`${base}/storage/v1/b/demo-bucket/o/report.csv?alt=media`, undefined, {
    ...gcs({ operation: 'objects.get', ...demoTiming }),
    fetch: loggingFetch,
    onRetry: logWait,
  }),
);

await scene('2. Upload without a precondition (objects.insert: a resend could write twice, so it is sent once)', () =>
  retryFetch(
    `${base}/upload/storage/v1/b/demo-bucket/o?uploadType=media&name=upload.csv`,
    { method: 'POST', body: CSV },
    {
      ...gcs({ operation: 'objects.insert', ...demoTiming }),
      fetch: loggingFetch,
      onRetry: logWait,
    },
  ),
);

await scene('3. The same upload with ifGenerationMatch=0 (create only if absent: now safe to resend)', () =>
  retryFetch(
    `${base}/upload/storage/v1/b/demo-bucket/o?uploadType=media&name=upload.csv&ifGenerationMatch=0`,
    { method: 'POST', body: CSV },
    {
      ...gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 }, ...demoTiming }),
      fetch: loggingFetch,
      onRetry: logWait,
    },
  ),
);

server.closeAllConnections();
await new Promise((resolve) => server.close(resolve));
