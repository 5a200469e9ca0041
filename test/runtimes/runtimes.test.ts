// The smoke suite (smoke.js) under every runtime the README names: Node (ES module and
// CommonJS), Deno (network access to 127.0.0.1 only), Bun (ES module and CommonJS), workerd
// (Cloudflare's Workers runtime, without nodejs_compat) and headless Chromium, each loading the
// BUILT package from dist/ (its three entries, `tenacious`, `tenacious/fetch` and
// `tenacious/google`, and the chunks they share), on real timers and real HTTP over loopback. Every runtime's report
// must equal the same expectations, and a runtime must print nothing on stderr (workerd runs
// with --verbose, so its console warnings count too).
//
// Deno, Bun and workerd come from .cache/runtimes/ (test/runtimes/install.sh; .ci/run runs it),
// Chromium from Debian's package. In CI (CI=true) a missing runtime fails its test; elsewhere
// it is skipped with the reason printed, so a machine without them still runs the rest.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FailureCase, RUNTIME_FAILURES, type RuntimeName } from '../classify/runtime-errors.js';
import { ROOT, assertBuilt } from '../package/built.js';
import { CHROMIUM, IN_CI, MISSING_CHROMIUM, withChromium } from '../package/chromium.js';
import { refusedOrigin, serveFaults } from './fault-server.mjs';
import { serve } from './node-server.mjs';
import { handle } from './smoke-server.js';

const HERE = join(ROOT, 'test/runtimes');
const INSTALLED = join(ROOT, '.cache/runtimes/node_modules');
const VERSIONS = JSON.parse(readFileSync(join(HERE, 'versions.json'), 'utf8')) as Record<string, string>;
const INSTALL_HINT = 'Run `bash test/runtimes/install.sh` (.ci/run does) to install Deno, Bun and workerd.';

/** Bun's default build needs AVX2; the install script picks the "baseline" build without it. */
const BUN_PACKAGE = /\bavx2\b/.test(readFileSync('/proc/cpuinfo', 'utf8')) ? '@oven/bun-linux-x64' : '@oven/bun-linux-x64-baseline';

/** A runtime binary from .cache/runtimes, with why it cannot be used (absent or not the pinned version). */
function installed(pkg: string, file: string): { path: string; missing?: string } {
  const path = join(INSTALLED, pkg, file);
  const manifest = join(INSTALLED, pkg, 'package.json');
  if (!existsSync(path) || !existsSync(manifest)) return { path, missing: `${pkg} is not installed (${path}). ${INSTALL_HINT}` };
  const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  if (version !== VERSIONS[pkg]) {
    return { path, missing: `${pkg} ${version} is installed, but versions.json pins ${VERSIONS[pkg]}. ${INSTALL_HINT}` };
  }
  return { path };
}

const DENO = installed('@deno/linux-x64-glibc', 'deno');
const BUN = installed(BUN_PACKAGE, 'bin/bun');
const WORKERD = installed('@cloudflare/workerd-linux-64', 'bin/workerd');
const NODE = { path: process.execPath };
const BROWSER = existsSync(CHROMIUM) ? { path: CHROMIUM } : { path: CHROMIUM, missing: MISSING_CHROMIUM };

/** A runtime's whole output: the report it printed or posted, and what it said on stderr. */
interface Outcome {
  report: { cases?: Record<string, unknown>; failed?: string };
  stderr: string;
  /** Other `NAME <json>` lines the runtime printed, by NAME. */
  lines?: Record<string, unknown>;
}

/** The longest any one runtime may take (startup included); the suite itself needs about 1.5 s. */
const RUN_LIMIT_MS = 30_000;

/** Collects a child's output; kills it if it outlives RUN_LIMIT_MS. */
function collect(child: ChildProcess, what: string): Promise<{ stdout: string; stderr: string; code: number | null }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} still running after ${RUN_LIMIT_MS} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, RUN_LIMIT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code });
    });
  });
}

/** Runs a command whose runtime serves the suite itself and prints `REPORT <json>`. */
async function runScript(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
  const what = `${command} ${args.join(' ')}`;
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const { stdout, stderr, code } = await collect(child, what);
  const lines: Record<string, unknown> = {};
  for (const match of stdout.matchAll(/^([A-Z]+) (\{.*\})$/gm)) lines[match[1] as string] = JSON.parse(match[2] as string);
  if (code !== 0 || lines.REPORT === undefined) {
    throw new Error(`${what} exited with ${code} and no report.\nstdout: ${stdout}\nstderr: ${stderr}`);
  }
  return { report: lines.REPORT as Outcome['report'], stderr, lines };
}

/** The harness's own server (for workerd and Chromium, which cannot listen): the suite's routes and the files a page needs. */
let harness: { origin: string; close(): Promise<void> };
/** The fault server every runtime's network-failure cases use, and an origin that refuses connections. */
let faults: { origin: string; close(): Promise<void> };
let refused: string;
/** The arguments that name them to a runtime's entry script. */
const networkArgs = (): string[] => [faults.origin, refused];

/** The ES modules of the build (the entries and the chunks they share), the CLI left out: Node only. */
function distModules(): string[] {
  return readdirSync(join(ROOT, 'dist'))
    .filter((name) => name.endsWith('.js') && name !== 'cli.js')
    .sort();
}

/** The files a page may load: the smoke suite and dist/'s ES modules, read when the harness starts. */
function staticFiles(): Record<string, string> {
  return {
    ...Object.fromEntries(distModules().map((name) => [`/dist/${name}`, join(ROOT, 'dist', name)])),
    '/smoke.js': join(HERE, 'smoke.js'),
  };
}
let STATIC: Record<string, string> = {};
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>tenacious smoke suite</title>
<script type="module">
import * as main from '/dist/index.js';
import * as fetchEntry from '/dist/fetch.js';
import * as google from '/dist/google.js';
import { report } from '/smoke.js';
const lib = { ...main, ...fetchEntry, ...google };
const query = new URLSearchParams(location.search);
const network = { faults: query.get('faults'), refused: query.get('refused') };
window.smokeReport = await report(lib, location.origin, 'chromium', network);
</script>
`;

async function serveStatic(req: IncomingMessage, res: ServerResponse): Promise<true | undefined> {
  const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
  if (path === '/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    return true;
  }
  const file = STATIC[path];
  if (file === undefined) return undefined;
  // Browsers run a module script only when it is served with a JavaScript MIME type.
  res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(await readFile(file));
  return true;
}

beforeAll(async () => {
  assertBuilt();
  STATIC = staticFiles();
  harness = await serve(handle, { extra: serveStatic });
  faults = await serveFaults();
  refused = await refusedOrigin();
});

afterAll(async () => {
  await harness?.close();
  await faults?.close();
});

/** The line of workerd.capnp after which the harness adds the other modules of dist/. */
const WORKERD_ENTRY_MODULE = '    (name = "dist/index.js", esModule = embed "../../dist/index.js"),\n';

/**
 * workerd.capnp for this build, written into `dir`: a module line for every ES module of dist/
 * (the chunks' names change with their content), every embedded path made relative to `dir`.
 */
async function writeWorkerdConfig(dir: string): Promise<string> {
  const template = await readFile(join(HERE, 'workerd.capnp'), 'utf8');
  if (!template.includes(WORKERD_ENTRY_MODULE)) throw new Error(`workerd.capnp no longer holds the line\n${WORKERD_ENTRY_MODULE}`);
  const others = distModules()
    .filter((name) => name !== 'index.js')
    .map((name) => `    (name = "dist/${name}", esModule = embed "../../dist/${name}"),\n`);
  const config = template
    .replace(WORKERD_ENTRY_MODULE, `${WORKERD_ENTRY_MODULE}${others.join('')}`)
    .replace(/embed "([^"]+)"/g, (_, path: string) => `embed "${relative(dir, resolve(HERE, path))}"`);
  const file = join(dir, 'workerd.capnp');
  await writeFile(file, config);
  return file;
}

async function runWorkerd(): Promise<Outcome> {
  const dir = await mkdtemp(join(tmpdir(), 'tenacious-workerd-'));
  try {
    return await runWorkerdWith(await writeWorkerdConfig(dir));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function runWorkerdWith(config: string): Promise<Outcome> {
  // --control-fd: workerd reports the port it listens on (the config asks for any free one).
  const child = spawn(WORKERD.path, ['serve', '--verbose', '--control-fd=3', config], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  const exited = collect(child, 'workerd');
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let control = '';
      (child.stdio[3] as NodeJS.ReadableStream).setEncoding('utf8').on('data', (chunk: string) => {
        control += chunk;
        const listen = control
          .split('\n')
          .slice(0, -1) // complete lines only: a message may come in pieces
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as { event: string; port: number })
          .find((message) => message.event === 'listen');
        if (listen !== undefined) resolve(listen.port);
      });
      exited.then(({ code, stderr }) => reject(new Error(`workerd exited (${code}) before listening: ${stderr}`)), reject);
    });
    const query = new URLSearchParams({ base: harness.origin, id: 'workerd', faults: faults.origin, refused });
    const response = await fetch(`http://127.0.0.1:${port}/?${query}`, { signal: AbortSignal.timeout(RUN_LIMIT_MS) });
    const text = await response.text();
    if (!response.ok) throw new Error(`workerd answered ${response.status}: ${text}`);
    child.kill('SIGTERM');
    const { stderr } = await exited;
    const { unhandled, ...report } = JSON.parse(text) as Outcome['report'] & { unhandled: string[] };
    return { report, stderr: [withoutNetworkFailures(stderr), ...unhandled].filter((text) => text !== '').join('\n') };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited.catch(() => undefined);
  }
}

/*
 * With --verbose, workerd logs each failed outbound connection, which the network-failure cases
 * provoke on purpose: an `info` line for a refused, reset or closed connection and a cut body,
 * an `error` line for the name that does not resolve, each followed by a `stack:` line. Exactly
 * those are dropped; anything else on stderr still fails the run.
 */
const WORKERD_NETWORK_FAILURE =
  /^workerd\/jsg\/util\.c\+\+:\d+: (?:info: exception = rust\/worker\/ffi\.rs:\d+: disconnected: (?:Connection refused \(os error 111\)|Connection reset by peer \(os error 104\)|client error \(SendRequest\): connection closed before message completed|HTTP body: error reading a body from connection)|error: e = rust\/worker\/ffi\.rs:\d+: failed: failed to lookup address information: .*)\nstack: .*\n?/gm;

function withoutNetworkFailures(stderr: string): string {
  return stderr.replace(WORKERD_NETWORK_FAILURE, '');
}

/** What Chromium logs for each failure the network-failure cases provoke (and only those). */
const CHROMIUM_NETWORK_FAILURES = new Set(
  ['CONNECTION_REFUSED', 'CONNECTION_RESET', 'EMPTY_RESPONSE', 'NAME_NOT_RESOLVED'].map(
    (code) => `Failed to load resource: net::ERR_${code}`,
  ),
);

async function runChromium(): Promise<Outcome> {
  return withChromium(async (context) => {
    const page = context.pages()[0] ?? (await context.newPage());
    // Page errors, unhandled rejections and console warnings: the browser's stderr.
    const said: string[] = [];
    page.on('pageerror', (error) => said.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      // Chromium logs every response of status 400 or more so; the suite asks for many of them.
      if (message.text().startsWith('Failed to load resource: the server responded with a status of')) return;
      if (CHROMIUM_NETWORK_FAILURES.has(message.text())) return;
      if (['error', 'warning'].includes(message.type())) said.push(`console ${message.type()}: ${message.text()}`);
    });
    await page.goto(`${harness.origin}/?${new URLSearchParams({ faults: faults.origin, refused })}`);
    const handle = await page.waitForFunction(() => (window as unknown as { smokeReport?: unknown }).smokeReport, undefined, {
      timeout: RUN_LIMIT_MS,
    });
    return { report: (await handle.jsonValue()) as Outcome['report'], stderr: said.join('\n') };
  });
}

interface Target {
  name: string;
  /** Whose recorded network failures (test/classify/runtime-errors.ts) it must report. */
  runtime: RuntimeName;
  binary: { path: string; missing?: string };
  run(): Promise<Outcome>;
  /** Checks of its own, beyond the shared report. */
  check?(outcome: Outcome): void;
}

const TARGETS: Target[] = [
  {
    name: 'Node, ES module',
    runtime: 'node',
    binary: NODE,
    run: () => runScript(NODE.path, ['test/runtimes/node-esm.mjs', ...networkArgs()]),
  },
  {
    name: 'Node, CommonJS',
    runtime: 'node',
    binary: NODE,
    run: () => runScript(NODE.path, ['test/runtimes/node-cjs.cjs', ...networkArgs()]),
  },
  {
    name: 'Deno, network limited to 127.0.0.1 (and a name that never resolves)',
    runtime: 'deno',
    binary: DENO,
    run: () =>
      runScript(
        DENO.path,
        // No --allow-read: static imports of local modules need none. --unstable-no-legacy-abort:
        // the test server's request.signal then aborts only when the client goes away.
        // does-not-exist.invalid: without it, fetch would refuse the DNS case for want of
        // permission (NotCapable) instead of trying to resolve it.
        [
          'run',
          '--no-prompt',
          '--no-config',
          '--no-lock',
          '--unstable-no-legacy-abort',
          '--allow-net=127.0.0.1,does-not-exist.invalid',
          'test/runtimes/deno.js',
          ...networkArgs(),
        ],
        { DENO_DIR: join(ROOT, '.cache/runtimes/deno-dir'), DENO_NO_UPDATE_CHECK: '1' },
      ),
    // The sandbox: loopback only, nothing else (under --no-prompt, 'prompt' is a refusal).
    check: ({ lines }) =>
      expect(lines?.PERMISSIONS).toEqual({
        loopback: 'granted',
        otherHosts: 'prompt',
        read: 'prompt',
        write: 'prompt',
        env: 'prompt',
        run: 'prompt',
      }),
  },
  {
    name: 'Bun, ES module',
    runtime: 'bun',
    binary: BUN,
    run: () => runScript(BUN.path, ['--no-install', 'test/runtimes/bun-esm.mjs', ...networkArgs()]),
  },
  {
    name: 'Bun, CommonJS',
    runtime: 'bun',
    binary: BUN,
    run: () => runScript(BUN.path, ['--no-install', 'test/runtimes/bun-cjs.cjs', ...networkArgs()]),
  },
  { name: 'workerd, without nodejs_compat', runtime: 'workerd', binary: WORKERD, run: runWorkerd },
  { name: 'headless Chromium', runtime: 'chromium', binary: BROWSER, run: runChromium },
];

/** What every runtime must report; times are checked apart, against bounds. */
const EXPECTED = {
  transient: { body: { served: 3 }, delays: [2, 4] },
  retryFetch: { status: 200, body: { served: 2 }, notFound: { status: 404, body: { served: 1, failed: true }, served: 1 } },
  permanent: { sameError: true, served: 1 },
  exhausted: { isRetryError: true, reason: 'attempts', attempts: 3, cause: 'HTTP 503', served: 3 },
  deadline: {
    isRetryError: true,
    reason: 'deadline',
    attempts: 1,
    attemptAborted: true,
    elapsedMs: expect.any(Number),
    fetch: { isRetryError: true, reason: 'deadline', elapsedMs: expect.any(Number) },
  },
  lateRejection: { afterDeadline: 'deadline', afterTimeout: ['attempts', true] },
  abort: {
    duringFetch: { rejectedWithReason: true, served: 1, afterAbortMs: expect.any(Number) },
    duringSleep: { rejectedWithReason: true, calls: 1, elapsedMs: expect.any(Number) },
  },
  attemptTimeout: { status: 200, body: { served: 2 }, reason: 'attempts', attempts: 2, causeIsTimeoutError: true },
  budget: { reason: 'budget', attempts: 2, served: 2, afterRefusal: 2, afterSuccess: 2.5 },
  presets: {
    iam: { retried: [200, 3], conflict: [409, 1], notFound: [200, 2] },
    gcs: { read: [200, 3], write: [503, 1], guardedWrite: [200, 2] },
  },
  bodyReplay: { status: 200, body: { served: 2, received: 'payload' } },
  abortBody: { status: 200, first: 'first chunk', restRejected: true },
  retryAfter: { status: 200, body: { served: 2 }, delays: [1000], elapsedMs: expect.any(Number) },
};

/**
 * The network-failure case of a runtime: the errors it really throws and their classification
 * (recorded in test/classify/runtime-errors.ts, which the classify tests rebuild), and what
 * retryFetch does with three attempts at most. A GET is retried on every failure; a POST is
 * resent after a refused connection only where the error proves it never left (notSent), and
 * never after a reset.
 */
function expectedNetworkFailures(runtime: RuntimeName) {
  const recorded = RUNTIME_FAILURES[runtime];
  const refusedError = recorded.refused.shape[0]?.name;
  return {
    ...(recorded as Record<FailureCase, unknown>),
    retryFetch: {
      refusedGet: { attempts: 3, gaveUp: 'attempts' },
      refusedPost: recorded.refused.notSent ? { attempts: 3, gaveUp: 'attempts' } : { attempts: 1, gaveUp: refusedError },
      dnsGet: { attempts: 3, gaveUp: 'attempts' },
      resetGet: { status: 200, body: { served: 2 } },
      resetPost: { attempts: 1, gaveUp: recorded.reset.shape[0]?.name, served: 1 },
    },
  };
}

/**
 * How long each timed case may take: at least its timer (a few ms of slack below, for a
 * browser's coarse clock), and well under what a missed deadline or abort would cost (the /hang
 * route holds a request 5 s, the sleep the abort cuts short is 10 s). The upper bounds leave
 * room for a busy 2-core CI machine.
 */
const TIMED: Array<[string, (cases: typeof EXPECTED) => number, number, number]> = [
  ['deadline: a hung call, 60 ms deadline', (c) => c.deadline.elapsedMs as number, 55, 1500],
  ['deadline: a hung fetch, 80 ms deadline', (c) => c.deadline.fetch.elapsedMs as number, 75, 1500],
  ['settling after an abort during a fetch', (c) => c.abort.duringFetch.afterAbortMs as number, 0, 1500],
  ['abort at 20 ms during a 10 s sleep', (c) => c.abort.duringSleep.elapsedMs as number, 15, 1500],
  ['Retry-After: 1 s', (c) => c.retryAfter.elapsedMs as number, 990, 3000],
];

// One target at a time: all seven at once would load a 2-core machine in bursts and make the
// timing-sensitive tests that vitest runs alongside (the fault-server soak) miss their bounds.
describe('the smoke suite, on the built package', () => {
  for (const target of TARGETS) {
    it(
      `under ${target.name}`,
      async (ctx) => {
        if (target.binary.missing !== undefined) {
          if (IN_CI) throw new Error(`${target.binary.missing} In CI (CI=${process.env.CI}) every runtime must run.`);
          // Outside CI a machine without this runtime still runs the rest of the suite.
          console.warn(`runtime smoke test skipped (${target.name}): ${target.binary.missing}`);
          ctx.skip(target.binary.missing);
        }
        const outcome = await target.run();
        const { report, stderr } = outcome;
        expect(report.failed).toBeUndefined();
        expect(report.cases).toEqual({ ...EXPECTED, networkFailures: expectedNetworkFailures(target.runtime) });
        const cases = report.cases as typeof EXPECTED;
        for (const [what, read, atLeast, below] of TIMED) {
          expect(read(cases), `${what} (ms)`).toBeGreaterThanOrEqual(atLeast);
          expect(read(cases), `${what} (ms)`).toBeLessThan(below);
        }
        expect(stderr, 'what the runtime printed on stderr').toBe('');
        target.check?.(outcome);
      },
      RUN_LIMIT_MS + 10_000,
    );
  }
});
