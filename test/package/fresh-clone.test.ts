// What `npm pack` and `npm publish` ship from a fresh clone, where dist/ does not exist (it is
// git-ignored): the `prepack` script must build it, or the package holds no code at all. The
// clone is packed, and the tarball installed into an empty project, used by name from ES modules
// and CommonJS, and its `tenacious` command run.
//
// The "clone" is `git clone` of this repository's HEAD with the working tree's uncommitted
// changes laid over it (modified and new files that git does not ignore, deleted files removed),
// so a maintainer tests what they are about to commit; in CI, a fresh clone, the two are the
// same. Its node_modules is a symlink to this repository's: the clone's package-lock.json is
// this one's by construction, so `npm ci` would install the same tree, only 25 s slower.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTRY_FILES, ROOT, run } from './built.js';

let tmp: string;
let clone: string;
let consumer: string;
let distBeforePack: boolean;
let packed: string[];

/** NUL-separated `git ls-files` output in ROOT, as paths. */
async function gitFiles(...args: string[]): Promise<string[]> {
  const { stdout } = await run('git', ['ls-files', '-z', ...args], { cwd: ROOT });
  return stdout.split('\0').filter((path) => path !== '');
}

async function freshClone(into: string): Promise<void> {
  const { stdout: head } = await run('git', ['rev-parse', 'HEAD'], { cwd: ROOT });
  await run('git', ['clone', '--quiet', '--no-checkout', ROOT, into], { cwd: tmp });
  await run('git', ['checkout', '--quiet', '--detach', head.trim()], { cwd: into });
  for (const path of await gitFiles('--modified', '--others', '--exclude-standard')) {
    const from = join(ROOT, path);
    const to = join(into, path);
    if (existsSync(from)) {
      await mkdir(dirname(to), { recursive: true });
      await copyFile(from, to);
    } else {
      await rm(to, { force: true }); // --modified lists deleted files too
    }
  }
  await symlink(join(ROOT, 'node_modules'), join(into, 'node_modules'), 'dir');
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'tenacious-clone-'));
  clone = join(tmp, 'clone');
  await freshClone(clone);
  distBeforePack = existsSync(join(clone, 'dist'));

  // npm prints the prepack build's output on stdout too, so the tarball is found on disk rather
  // than in `npm pack --json`; its entries are read from the archive itself.
  const packs = join(tmp, 'packs');
  await mkdir(packs);
  await run('npm', ['pack', '--pack-destination', packs], { cwd: clone });
  const tarballs = (await readdir(packs)).filter((name) => name.endsWith('.tgz'));
  if (tarballs.length !== 1) throw new Error(`npm pack made ${tarballs.length} tarballs: ${tarballs.join(', ')}`);
  const tarball = join(packs, tarballs[0] as string);
  const { stdout: listing } = await run('tar', ['-tzf', tarball], { cwd: tmp });
  packed = listing
    .split('\n')
    .filter((entry) => entry !== '')
    .map((entry) => entry.replace(/^package\//, ''));

  consumer = join(tmp, 'consumer');
  await mkdir(consumer);
  await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', tarball], { cwd: consumer });
}, 120_000);

afterAll(async () => {
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
});

describe('npm pack in a fresh clone', () => {
  it('starts from a clone without dist/ (git ignores it)', () => {
    expect(distBeforePack).toBe(false);
  });

  it('builds before packing (prepack), so the tarball holds both builds of every entry, their declarations and the command', () => {
    expect(packed).toEqual(expect.arrayContaining(['package.json', ...ENTRY_FILES, 'dist/cli.js']));
  });
});

describe('the fresh clone’s tarball, installed into an empty project', () => {
  const script = (lines: string[]): string =>
    [
      ...lines,
      'retry(() => { calls += 1; if (calls < 2) throw Object.assign(new Error("busy"), { status: 503 }); return "done"; },',
      '  { backoff: { initialDelayMs: 1, maxDelayMs: 1 } })',
      '  .then((value) => console.log(JSON.stringify({ value, calls, retryError: typeof RetryError })),',
      '        (error) => { console.error(error); process.exitCode = 1; });',
    ].join('\n');

  it('imports by name as an ES module', async () => {
    await writeFile(join(consumer, 'esm.mjs'), script(["import { RetryError, retry } from 'tenacious';", 'let calls = 0;']));
    const { stdout } = await run(process.execPath, ['esm.mjs'], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual({ value: 'done', calls: 2, retryError: 'function' });
  });

  it('imports and requires the subpaths by name: tenacious/fetch and tenacious/google', async () => {
    const lines = [
      'const flaky = async () => (++calls < 2 ? new Response("busy", { status: 503 }) : new Response("ok"));',
      'retryFetch("https://storage.example/o", undefined, { ...gcs({ operation: "objects.get", backoff: { initialDelayMs: 1, maxDelayMs: 1 } }), fetch: flaky })',
      '  .then(async (response) => console.log(JSON.stringify({ status: response.status, body: await response.text(), calls })),',
      '        (error) => { console.error(error); process.exitCode = 1; });',
    ];
    await writeFile(
      join(consumer, 'subpaths.mjs'),
      ["import { retryFetch } from 'tenacious/fetch';", "import { gcs } from 'tenacious/google';", 'let calls = 0;', ...lines].join('\n'),
    );
    await writeFile(
      join(consumer, 'subpaths.cjs'),
      [
        "const { retryFetch } = require('tenacious/fetch');",
        "const { gcs } = require('tenacious/google');",
        'let calls = 0;',
        ...lines,
      ].join('\n'),
    );
    for (const file of ['subpaths.mjs', 'subpaths.cjs']) {
      const { stdout } = await run(process.execPath, [file], { cwd: consumer });
      expect(JSON.parse(stdout), file).toEqual({ status: 200, body: 'ok', calls: 2 });
    }
  });

  it('requires by name from CommonJS', async () => {
    await writeFile(join(consumer, 'cjs.cjs'), script(["const { RetryError, retry } = require('tenacious');", 'let calls = 0;']));
    const { stdout } = await run(process.execPath, ['cjs.cjs'], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual({ value: 'done', calls: 2, retryError: 'function' });
  });

  it('installs the `tenacious` command, which runs and exits 0', async () => {
    // --no: never fetch a package of that name from the registry, only the installed bin counts;
    // `--`: or npx would take --help for itself.
    const { stdout } = await run('npx', ['--no', '--', 'tenacious', '--help'], { cwd: consumer });
    expect(stdout).toMatch(/^Usage:\n {2}tenacious \[options\] -- command/);
  });

  it('runs a command through the installed bin and passes its exit status on', async () => {
    const bin = join(consumer, 'node_modules/.bin/tenacious');
    const outcome = await promisify(execFile)(bin, ['--max-attempts', '1', '--quiet', '--', process.execPath, '-e', 'process.exit(3)'], {
      cwd: consumer,
    }).catch((error: { code?: number }) => error);
    expect((outcome as { code?: number }).code).toBe(3);
  });
});
