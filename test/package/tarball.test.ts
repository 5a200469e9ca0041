// What a user installs: the tarball `npm pack` makes, installed into an empty project, then
// imported by name as ESM and required as CJS (`tenacious`, `tenacious/fetch` and
// `tenacious/google`), type-checked in both module modes, and linted by publint and
// arethetypeswrong. Nothing here reads the repository's own dist/ directly.
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokenLinksOf } from '../helpers/doc-links.js';
import { ENTRIES, ENTRY_FILES, PEER_IMPORTS, ROOT, assertBuilt, bin, run } from './built.js';

/**
 * The entries that cannot load without their optional peer dependency, and that peer: each one
 * fails with an error that names the peer and its install command. Every other entry loads
 * without any (tenacious/axios takes axios at its first request).
 */
const PEER_TO_LOAD: Record<string, string> = { 'tenacious/otel': '@opentelemetry/api' };

/** The message of an entry that cannot load its optional peer: src/util/peer.ts's. */
const peerMissing = (entry: string, peer: string): string =>
  `${entry} needs ${peer}, an optional peer dependency, and could not load it: npm install ${peer}`;

let tmp: string;
let tarball: string;
let packed: string[];
let consumer: string;

beforeAll(async () => {
  assertBuilt();
  tmp = await mkdtemp(join(tmpdir(), 'tenacious-pack-'));
  // --ignore-scripts: pack the build `npm test` just made. The prepack build would rewrite dist/
  // while other test files read it (fresh-clone.test.ts checks prepack, in a clone of its own).
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: ROOT });
  const [info] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  if (info === undefined) throw new Error(`npm pack printed no package: ${stdout}`);
  tarball = join(tmp, info.filename);
  packed = info.files.map((file) => file.path).sort();

  consumer = join(tmp, 'consumer');
  await mkdir(consumer);
  await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  // --offline: a package with no dependencies must install from its tarball alone.
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', tarball], {
    cwd: consumer,
  });
}, 60_000);

afterAll(async () => {
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds only the build, the pages a user reads (README, docs/ and what they link to, CHANGELOG) and LICENSE', () => {
    const pages = ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'BENCHMARKS.md', 'CONTRIBUTING.md'];
    const allowed = (path: string): boolean => path.startsWith('dist/') || pages.includes(path) || /^docs\/[^/]+\.(md|svg)$/.test(path);
    expect(packed.filter((path) => !allowed(path))).toEqual([]);
    expect(packed).toEqual(expect.arrayContaining([...ENTRY_FILES, ...pages, 'docs/fleet.md', 'docs/resume-bytes.svg']));
  });

  it('resolves every link of the installed README, and of every page it ships, within node_modules/tenacious', () => {
    const installed = join(consumer, 'node_modules/tenacious');
    const pages = packed.filter((path) => path.endsWith('.md'));
    const results = pages.map((page) => brokenLinksOf(installed, page));
    // The README alone links to docs/ pages, charts, BENCHMARKS.md and CONTRIBUTING.md more than twenty times.
    expect(brokenLinksOf(installed, 'README.md').checked).toBeGreaterThan(20);
    expect(results.flatMap(({ broken }) => broken)).toEqual([]);
  });

  it('has no runtime dependencies, and installing it installs nothing else', async () => {
    const manifest = JSON.parse(await readFile(join(consumer, 'node_modules/tenacious/package.json'), 'utf8')) as Record<string, unknown>;
    for (const field of ['dependencies', 'optionalDependencies', 'bundleDependencies', 'bundledDependencies']) {
      expect(Object.keys((manifest[field] as object | undefined) ?? {}), field).toEqual([]);
    }
    // The adapters' clients and tenacious/otel's API: optional, so npm installs them only for an
    // application that has them already.
    const peers = {
      '@grpc/grpc-js': '^1.10.0',
      '@opentelemetry/api': '^1.7.0',
      axios: '^1.5.0',
      ioredis: '>=5.0.0',
      redis: '>=4.0.0',
      undici: '>=7.0.0',
    };
    expect(manifest.peerDependencies).toEqual(peers);
    expect(manifest.peerDependenciesMeta).toEqual(Object.fromEntries(Object.keys(peers).map((name) => [name, { optional: true }])));
    const installed = (await readdir(join(consumer, 'node_modules'))).filter((name) => !name.startsWith('.'));
    expect(installed).toEqual(['tenacious']);
  });

  it('passes publint --strict, with no suggestion either', async () => {
    const bytes = await readFile(tarball);
    const { messages, pkg } = await publint({
      pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer },
      strict: true,
      level: 'suggestion',
    });
    expect(messages.map((message) => `${message.type}: ${formatMessage(message, pkg) ?? message.code}`)).toEqual([]);
  });

  it('passes arethetypeswrong in every module resolution mode', async () => {
    // attw exits non-zero on any problem; run() then fails with its table in the message.
    const { stdout } = await run(bin('attw'), [tarball, '--format', 'json'], { cwd: tmp });
    // Problems come grouped by kind, e.g. { FalseCJS: [...] }.
    const report = JSON.parse(stdout) as { problems: Record<string, unknown> };
    expect(report.problems).toEqual({});
  });
});

// One script for both module systems: it retries a flaky operation, exhausts a second one, and
// reports what it saw, so the two builds can be compared with each other and with the source.
const CONSUMER_BODY = `
(async () => {
  const busy = () => Object.assign(new Error('busy'), { status: 503 });
  let calls = 0;
  const delays = [];
  const value = await retry(
    () => { calls += 1; if (calls < 3) throw busy(); return 'done'; },
    { backoff: { initialDelayMs: 1, maxDelayMs: 4 }, onRetry: (event) => delays.push(event.delayMs), rng: () => 1 },
  );
  const gaveUp = await retry(() => { throw busy(); }, { maxAttempts: 2, backoff: { initialDelayMs: 1, maxDelayMs: 1 } })
    .then(() => 'resolved', (error) => ({ isRetryError: error instanceof RetryError, reason: error.reason, attempts: error.attempts }));
  const google = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32000, jitter: { additiveMs: 1000 } };
  console.log(JSON.stringify({
    resolved: RESOLVED,
    value, calls, delays, gaveUp,
    delay: [computeDelay(0, google, () => 0.25), computeDelay(9, google, () => 0.25)],
    exports: Object.keys(tenacious).sort(),
  }));
})().catch((error) => { console.error(error); process.exitCode = 1; });
`;

describe('importing the installed package by name', () => {
  const expected = {
    value: 'done',
    calls: 3,
    delays: [1, 2],
    gaveUp: { isRetryError: true, reason: 'attempts', attempts: 2 },
    delay: [1250, 32_000],
  };

  async function sourceExports(source = 'src/index.ts'): Promise<string[]> {
    return Object.keys(await import(join(ROOT, source))).sort();
  }

  it('as ESM: import from "tenacious" loads dist/index.js', async () => {
    const script = [
      "import * as tenacious from 'tenacious';",
      "import { RetryError, computeDelay, retry } from 'tenacious';",
      "const RESOLVED = import.meta.resolve('tenacious');",
      CONSUMER_BODY,
    ].join('\n');
    await writeFile(join(consumer, 'esm.mjs'), script);
    const { stdout } = await run(process.execPath, ['esm.mjs'], { cwd: consumer });
    const report = JSON.parse(stdout) as typeof expected & { resolved: string; exports: string[] };
    expect(report).toMatchObject(expected);
    expect(report.resolved).toMatch(/\/consumer\/node_modules\/tenacious\/dist\/index\.js$/);
    expect(report.exports).toEqual(await sourceExports());
  });

  it('as CJS: require("tenacious") loads dist/index.cjs', async () => {
    const script = [
      "const tenacious = require('tenacious');",
      'const { RetryError, computeDelay, retry } = tenacious;',
      "const RESOLVED = require.resolve('tenacious');",
      CONSUMER_BODY,
    ].join('\n');
    await writeFile(join(consumer, 'cjs.cjs'), script);
    const { stdout } = await run(process.execPath, ['cjs.cjs'], { cwd: consumer });
    const report = JSON.parse(stdout) as typeof expected & { resolved: string; exports: string[] };
    expect(report).toMatchObject(expected);
    expect(report.resolved).toMatch(/\/consumer\/node_modules\/tenacious\/dist\/index\.cjs$/);
    expect(report.exports).toEqual(await sourceExports());
  });

  // Each entry as its own module system finds it, and what it exports: exactly its source's names.
  // LOAD(specifier) imports or requires one entry; an entry that cannot load without the optional
  // peer dependency the consumer lacks fails, and its message is recorded instead.
  const SUBPATH_BODY = `
(async () => {
  const loaded = {}, missing = {}, ENTRIES = {};
  for (const specifier of SPECIFIERS) {
    try {
      ENTRIES[specifier] = await LOAD(specifier);
      loaded[specifier] = { resolved: RESOLVE(specifier), exports: Object.keys(ENTRIES[specifier]).sort() };
    } catch (error) {
      missing[specifier] = error.message;
    }
  }
  const main = ENTRIES.tenacious, fetchEntry = ENTRIES['tenacious/fetch'], google = ENTRIES['tenacious/google'];
  let calls = 0;
  const flaky = async () => (++calls < 2 ? new Response('busy', { status: 503 }) : new Response('ok'));
  const response = await fetchEntry.retryFetch('https://storage.example/o', undefined, {
    ...google.gcs({ operation: 'objects.get', backoff: { initialDelayMs: 1, maxDelayMs: 1 } }),
    fetch: flaky,
  });
  console.log(JSON.stringify({
    loaded, missing,
    fetched: { status: response.status, body: await response.text(), calls },
    // One copy of each error class whichever entry it is imported from: the entries share their code.
    shared: [fetchEntry.HttpStatusError === main.HttpStatusError, fetchEntry.ResumeError === main.ResumeError, google.GcsUploadError === main.GcsUploadError],
    mainHasNoSubpathNames: ['retryFetch', 'gcs', 'iam', 'gcsResumableUpload', 'otelTelemetry'].filter((name) => name in main),
  }));
})().catch((error) => { console.error(error); process.exitCode = 1; });
`;
  const SPECIFIERS = `const SPECIFIERS = ${JSON.stringify(ENTRIES.map((entry) => entry.specifier))};`;

  /**
   * The consumer has none of the optional peer dependencies (installing tenacious installs
   * nothing else): every entry loads and works but tenacious/otel, which fails to load with the
   * error naming its peer and the install command (see 'a project without the optional peers').
   */
  async function expectSubpaths(stdout: string, extension: string): Promise<void> {
    const report = JSON.parse(stdout) as {
      loaded: Record<string, { resolved: string; exports: string[] }>;
      missing: Record<string, string>;
      fetched: unknown;
      shared: boolean[];
      mainHasNoSubpathNames: string[];
    };
    const needsPeer = Object.keys(PEER_TO_LOAD);
    expect(report.missing).toEqual(
      Object.fromEntries(Object.entries(PEER_TO_LOAD).map(([specifier, peer]) => [specifier, peerMissing(specifier, peer)])),
    );
    for (const { specifier, source, dist } of ENTRIES.filter((entry) => !needsPeer.includes(entry.specifier))) {
      expect(report.loaded[specifier]?.resolved, specifier).toMatch(
        new RegExp(`/consumer/node_modules/tenacious/dist/${dist}\\.${extension}$`),
      );
      expect(report.loaded[specifier]?.exports, specifier).toEqual(await sourceExports(source));
    }
    expect(report.fetched).toEqual({ status: 200, body: 'ok', calls: 2 });
    expect(report.shared).toEqual([true, true, true]);
    expect(report.mainHasNoSubpathNames).toEqual([]);
  }

  it('as ESM: each subpath loads its own file of dist/, and they share one copy of the engine and the errors', async () => {
    const script = [
      SPECIFIERS,
      'const LOAD = (specifier) => import(specifier);',
      'const RESOLVE = (specifier) => import.meta.resolve(specifier);',
      SUBPATH_BODY,
    ].join('\n');
    await writeFile(join(consumer, 'subpaths.mjs'), script);
    const { stdout } = await run(process.execPath, ['subpaths.mjs'], { cwd: consumer });
    await expectSubpaths(stdout, 'js');
  });

  it('as CJS: each subpath requires its own file of dist/, and they share one copy of the engine and the errors', async () => {
    const script = [
      SPECIFIERS,
      'const LOAD = async (specifier) => require(specifier);',
      'const RESOLVE = (specifier) => require.resolve(specifier);',
      SUBPATH_BODY,
    ].join('\n');
    await writeFile(join(consumer, 'subpaths.cjs'), script);
    const { stdout } = await run(process.execPath, ['subpaths.cjs'], { cwd: consumer });
    await expectSubpaths(stdout, 'cjs');
  });

  it('type-checks from an ES module and from a CommonJS module, declarations included', async () => {
    await writeFile(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          lib: ['es2022', 'dom'],
          types: [],
          strict: true,
          noEmit: true,
          // The point is to check the published declarations themselves (not TypeScript's own lib).
          skipLibCheck: false,
          skipDefaultLibCheck: true,
        },
        files: ['types-esm.mts', 'types-cjs.cts'],
      }),
    );
    // Each file also makes one deliberate type error: were the declarations `any`, or missing,
    // the @ts-expect-error would be unused and tsc would fail.
    await writeFile(
      join(consumer, 'types-esm.mts'),
      [
        "import { type RetryOptions, RetryError, computeDelay, retry } from 'tenacious';",
        "import * as tenacious from 'tenacious';",
        'const options: RetryOptions = { maxAttempts: 2, deadlineMs: 1000 };',
        'export const n: Promise<number> = retry(async ({ attempt }) => attempt, options);',
        "export const d: number = computeDelay(0, { initialDelayMs: 1, multiplier: 2, maxDelayMs: 4, jitter: 'full' });",
        "export const reason: 'deadline' | 'attempts' | 'budget' = new RetryError('attempts', 1, 0, null).reason;",
        '// @ts-expect-error maxAttempts is a number',
        "retry(() => 1, { maxAttempts: 'three' });",
        "import { type RetryFetchOptions, HttpStatusError, retryFetch } from 'tenacious/fetch';",
        "import { type GcsOperation, gcs, gcsResumableUpload } from 'tenacious/google';",
        "const op: GcsOperation = 'objects.get';",
        'const fetchOptions: RetryFetchOptions = { ...gcs({ operation: op }), attemptTimeoutMs: 1000 };',
        "export const r: Promise<Response> = retryFetch('https://storage.example/o', undefined, fetchOptions);",
        "export const u: Promise<Response> = gcsResumableUpload('https://storage.example/s', new Uint8Array(1));",
        'export const same: typeof HttpStatusError = tenacious.HttpStatusError;',
        '// @ts-expect-error retryFetch is exported by tenacious/fetch, no longer by tenacious',
        "export { retryFetch as fromMain } from 'tenacious';",
        '// @ts-expect-error gcs is exported by tenacious/google, no longer by tenacious',
        "export { gcs as gcsFromMain } from 'tenacious';",
      ].join('\n'),
    );
    await writeFile(
      join(consumer, 'types-cjs.cts'),
      [
        "import tenacious = require('tenacious');",
        "import fetchEntry = require('tenacious/fetch');",
        "import google = require('tenacious/google');",
        'export const s: Promise<string> = tenacious.retry(async ({ signal }) => String(signal.aborted));',
        '// @ts-expect-error the predicate takes an error and returns a boolean',
        "tenacious.retry(() => 1, { retryable: () => 'yes' });",
        "export const r: Promise<Response> = fetchEntry.retryFetch('https://iam.example/', undefined, google.iam());",
        '// @ts-expect-error an operation the Cloud Storage table does not know',
        "google.gcs({ operation: 'objects.frobnicate' });",
      ].join('\n'),
    );
    await run(bin('tsc'), ['-p', 'tsconfig.json'], { cwd: consumer });
  });
});

describe('a project without the optional peers (no axios, undici, grpc-js, OpenTelemetry API, TanStack Query or Redis client)', () => {
  const ADAPTERS = ENTRIES.filter(({ specifier }) => PEER_IMPORTS[specifier].length > 0 || /undici|grpc|tanstack|redis/.test(specifier));

  // Each adapter entry on its own, in a fresh process, so one entry's failure cannot hide another's.
  // tenacious/axios loads; a request where axios cannot be loaded then fails naming it: tried with
  // the least of an axios instance (its request interceptors) and the request's own adapter.
  const BODY = `
(async () => {
  const report = {};
  for (const specifier of SPECIFIERS) {
    try {
      const entry = await LOAD(specifier);
      report[specifier] = { loaded: Object.keys(entry).sort() };
    } catch (error) {
      report[specifier] = { failed: error.message, cause: String(error.cause && (error.cause.code || error.cause.message)) };
    }
  }
  const { attachRetry } = await LOAD('tenacious/axios');
  let interceptor;
  const instance = Object.assign(() => undefined, { interceptors: { request: { use: (fn) => { interceptor = fn; return 0; }, eject() {} } } });
  attachRetry(instance, { maxAttempts: 1 });
  const config = interceptor({ method: 'get', url: 'https://api.example/', headers: {}, adapter: async () => ({ status: 200 }) });
  report.axiosRequest = await config.adapter(config).then(() => 'sent', (error) => error.message);
  console.log(JSON.stringify(report));
})().catch((error) => { console.error(error); process.exitCode = 1; });
`;

  async function expectAdapters(stdout: string): Promise<void> {
    const report = JSON.parse(stdout) as Record<string, { loaded?: string[]; failed?: string; cause?: string }> & { axiosRequest: string };
    for (const { specifier, source } of ADAPTERS) {
      const peer = PEER_TO_LOAD[specifier];
      if (peer === undefined) {
        expect(report[specifier], specifier).toEqual({ loaded: Object.keys(await import(join(ROOT, source))).sort() });
      } else {
        // Named: the entry, the peer, the command; the module system's not-found error is its cause.
        expect(report[specifier]?.failed, specifier).toBe(peerMissing(specifier, peer));
        expect(report[specifier]?.cause, specifier).toMatch(/MODULE_NOT_FOUND/);
      }
    }
    expect(report.axiosRequest).toBe(peerMissing('tenacious/axios', 'axios'));
  }

  const specifiers = `const SPECIFIERS = ${JSON.stringify(ADAPTERS.map(({ specifier }) => specifier))};`;

  it('covers every adapter entry', () => {
    expect(ADAPTERS.map(({ specifier }) => specifier).sort()).toEqual([
      'tenacious/axios',
      'tenacious/grpc',
      'tenacious/otel',
      'tenacious/redis',
      'tenacious/tanstack-query',
      'tenacious/undici',
    ]);
  });

  it('as ESM: each adapter entry loads, or fails naming its optional peer and the install command', async () => {
    await writeFile(join(consumer, 'adapters.mjs'), [specifiers, 'const LOAD = (specifier) => import(specifier);', BODY].join('\n'));
    const { stdout } = await run(process.execPath, ['adapters.mjs'], { cwd: consumer });
    await expectAdapters(stdout);
  });

  it('as CJS: each adapter entry is required, or fails naming its optional peer and the install command', async () => {
    await writeFile(join(consumer, 'adapters.cjs'), [specifiers, 'const LOAD = async (specifier) => require(specifier);', BODY].join('\n'));
    const { stdout } = await run(process.execPath, ['adapters.cjs'], { cwd: consumer });
    await expectAdapters(stdout);
  });
});
