// A real browser: the built ES modules served over loopback HTTP and run by headless Chromium
// (Debian's `chromium` package, driven through playwright-core). The page (browser-page.js)
// retries real fetches, waits on real timers, aborts with a real AbortSignal, and posts its
// findings back to the server.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, assertBuilt } from './built.js';
import { IN_CI, MISSING_CHROMIUM as MISSING, hasChromium, withChromium } from './chromium.js';

/** Everything the page reports; see browser-page.js. */
interface PageReport {
  failed?: string;
  userAgent: string;
  flakyFetch: { body: { served: number }; statuses: number[]; delays: number[]; elapsedMs: number };
  subpaths: { status: number; body: { served: number }; retried: unknown[]; sharedErrorClass: boolean };
  exhausted: { calls: number; isRetryError: boolean; reason: string; attempts: number; cause: string };
  permanent: { calls: number; sameError: boolean };
  abortDuringAttempt: { rejectedWithReason: boolean; attemptAborted: boolean; attemptReason: boolean };
  deadline: { isRetryError: boolean; reason: string; elapsedMs: number };
  delays: { google: number[]; full: number[]; badAttempt: string };
}

// Browsers run a module script only when it is served with a JavaScript MIME type.
const JAVASCRIPT = 'text/javascript; charset=utf-8';

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>tenacious in a browser</title>
<script type="module" src="/page.js"></script>
`;

/**
 * Serves the page, its script, the built modules in dist/, two flaky endpoints, and a /report
 * endpoint that hands the page's findings to `onReport`.
 */
function startServer(onReport: (report: PageReport) => void): Promise<Server> {
  let flakyRequests = 0;
  let onceBusyRequests = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    } else if (path === '/page.js') {
      const script = await readFile(join(ROOT, 'test/package/browser-page.js'));
      res.writeHead(200, { 'content-type': JAVASCRIPT }).end(script);
    } else if (path.startsWith('/dist/') && path.endsWith('.js')) {
      const file = normalize(join(ROOT, path));
      if (!file.startsWith(join(ROOT, 'dist/')) || !existsSync(file)) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': JAVASCRIPT }).end(await readFile(file));
    } else if (path === '/flaky') {
      flakyRequests += 1;
      if (flakyRequests === 1) res.writeHead(503, { 'content-type': 'text/plain' }).end('busy');
      else if (flakyRequests === 2) res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' }).end('slow down');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ served: flakyRequests }));
    } else if (path === '/once-busy') {
      onceBusyRequests += 1;
      if (onceBusyRequests === 1) res.writeHead(503, { 'content-type': 'text/plain' }).end('busy');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ served: onceBusyRequests }));
    } else if (path === '/report' && req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      res.writeHead(204).end();
      onReport(JSON.parse(Buffer.concat(chunks).toString('utf8')) as PageReport);
    } else {
      res.writeHead(404).end();
    }
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

describe('in headless Chromium', () => {
  let report: PageReport | undefined;
  let setupError: unknown;

  beforeAll(async () => {
    if (!hasChromium()) return; // the test below fails (CI) or skips (elsewhere), saying why
    assertBuilt();
    let reported!: (report: PageReport) => void;
    const received = new Promise<PageReport>((resolve) => {
      reported = resolve;
    });
    const server = await startServer((r) => reported(r));
    try {
      report = await withChromium(async (context) => {
        const page = context.pages()[0] ?? (await context.newPage());
        const pageErrors: string[] = [];
        page.on('pageerror', (error) => pageErrors.push(error.message));
        page.on('console', (message) => {
          if (message.type() === 'error') pageErrors.push(message.text());
        });
        await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`the page reported nothing within 10 s; page errors: ${pageErrors.join('; ') || 'none'}`)),
            10_000,
          );
        });
        return await Promise.race([received, timedOut]).finally(() => clearTimeout(timer));
      });
    } catch (error) {
      setupError = error;
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }, 30_000);

  it('runs retry(), computeDelay and retryFetch with gcs() from the built ES modules and reports back', (ctx) => {
    if (!hasChromium()) {
      if (IN_CI) throw new Error(`${MISSING} In CI (CI=${process.env.CI}) the browser test must run.`);
      // Outside CI a machine without Chromium may still run the rest of the suite.
      console.warn(`browser test skipped: ${MISSING}`);
      ctx.skip(MISSING);
    }
    if (setupError !== undefined) throw setupError;
    if (report === undefined) throw new Error('no report from the page');
    expect(report.failed).toBeUndefined();
    expect(report.userAgent).toContain('HeadlessChrome');

    // 503, then 429 + Retry-After: 1 (which lengthens the 40 ms backoff to 1 s), then 200.
    expect(report.flakyFetch.statuses).toEqual([503, 429, 200]);
    expect(report.flakyFetch.body).toEqual({ served: 3 });
    expect(report.flakyFetch.delays).toEqual([20, 1000]);
    expect(report.flakyFetch.elapsedMs).toBeGreaterThanOrEqual(1000);

    // tenacious/fetch and tenacious/google in one page: 503, one retry, 200; one HttpStatusError class.
    expect(report.subpaths).toEqual({
      status: 200,
      body: { served: 2 },
      retried: [{ status: 503, httpStatusError: true }],
      sharedErrorClass: true,
    });

    expect(report.exhausted).toEqual({ calls: 3, isRetryError: true, reason: 'attempts', attempts: 3, cause: 'HTTP 503' });
    expect(report.permanent).toEqual({ calls: 1, sameError: true });
    expect(report.abortDuringAttempt).toEqual({ rejectedWithReason: true, attemptAborted: true, attemptReason: true });
    expect(report.deadline.isRetryError).toBe(true);
    expect(report.deadline.reason).toBe('deadline');
    expect(report.deadline.elapsedMs).toBeGreaterThanOrEqual(99);
    expect(report.deadline.elapsedMs).toBeLessThan(2000);

    expect(report.delays.google).toEqual([1250, 2250, 4250, 8250, 16_250, 32_000, 32_000, 32_000]);
    expect(report.delays.full).toEqual([500, 1000, 2000]);
    expect(report.delays.badAttempt).toMatch(/^RangeError: .*attempt.*-1/);
  });
});
