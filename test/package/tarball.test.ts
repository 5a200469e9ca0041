// What a user installs: the tarball `npm pack` makes, installed into an empty project, then
// imported by name as ESM and required as CJS, type-checked in both module modes, and linted by
// publint and arethetypeswrong. Nothing here reads the repository's own dist/ directly.
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTRY_FILES, ROOT, assertBuilt, bin, run } from './built.js';

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
  it('holds only the build, README, LICENSE, CHANGELOG and package.json', () => {
    const allowed = (path: string): boolean =>
      path.startsWith('dist/') || ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(path);
    expect(packed.filter((path) => !allowed(path))).toEqual([]);
    expect(packed).toEqual(expect.arrayContaining([...ENTRY_FILES, 'package.json', 'README.md', 'LICENSE', 'CHANGELOG.md']));
  });

  it('has no runtime dependencies, and installing it installs nothing else', async () => {
    const manifest = JSON.parse(await readFile(join(consumer, 'node_modules/tenacious/package.json'), 'utf8')) as Record<string, unknown>;
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies', 'bundledDependencies']) {
      expect(Object.keys((manifest[field] as object | undefined) ?? {}), field).toEqual([]);
    }
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

  async function sourceExports(): Promise<string[]> {
    return Object.keys(await import('../../src/index.js')).sort();
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
        'const options: RetryOptions = { maxAttempts: 2, deadlineMs: 1000 };',
        'export const n: Promise<number> = retry(async ({ attempt }) => attempt, options);',
        "export const d: number = computeDelay(0, { initialDelayMs: 1, multiplier: 2, maxDelayMs: 4, jitter: 'full' });",
        "export const reason: 'deadline' | 'attempts' | 'budget' = new RetryError('attempts', 1, 0, null).reason;",
        '// @ts-expect-error maxAttempts is a number',
        "retry(() => 1, { maxAttempts: 'three' });",
      ].join('\n'),
    );
    await writeFile(
      join(consumer, 'types-cjs.cts'),
      [
        "import tenacious = require('tenacious');",
        'export const s: Promise<string> = tenacious.retry(async ({ signal }) => String(signal.aborted));',
        '// @ts-expect-error the predicate takes an error and returns a boolean',
        "tenacious.retry(() => 1, { retryable: () => 'yes' });",
      ].join('\n'),
    );
    await run(bin('tsc'), ['-p', 'tsconfig.json'], { cwd: consumer });
  });
});
