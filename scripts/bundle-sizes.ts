// `node --import tsx scripts/bundle-sizes.ts`: what each retry library adds to a browser bundle
// for the same job — retry an async function, 5 attempts at most, exponential backoff from 1 s
// capped at 30 s, with jitter where the library has it. Each snippet is bundled by esbuild
// (ESM, browser, minified, tree-shaken, dependencies included) and gzipped at level 9.
// Prints a markdown table. tenacious is measured from its build (run `npm run build` first).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TENACIOUS = join(ROOT, 'dist/index.js');
const TENACIOUS_GOOGLE = join(ROOT, 'dist/google.js');

interface Case {
  library: string;
  /** The package whose version is reported; undefined for tenacious itself. */
  pkg?: string;
  code: string;
}

const CASES: Case[] = [
  {
    library: 'tenacious: `retry`',
    code: `import { retry } from ${JSON.stringify(TENACIOUS)};
export const run = (fn) => retry(fn, { maxAttempts: 5, backoff: { initialDelayMs: 1000, maxDelayMs: 30000 } });`,
  },
  {
    library: 'tenacious: `retry` + `gcs()`',
    code: `import { retry } from ${JSON.stringify(TENACIOUS)};
import { gcs } from ${JSON.stringify(TENACIOUS_GOOGLE)};
export const run = (fn) => retry(fn, gcs({ operation: 'objects.get', maxAttempts: 5 }));`,
  },
  {
    library: 'tenacious: every export of the main entry',
    code: `export * from ${JSON.stringify(TENACIOUS)};`,
  },
  {
    library: 'p-retry',
    pkg: 'p-retry',
    code: `import pRetry from 'p-retry';
export const run = (fn) => pRetry(fn, { retries: 4, minTimeout: 1000, maxTimeout: 30000, randomize: true });`,
  },
  {
    library: 'cockatiel',
    pkg: 'cockatiel',
    code: `import { ExponentialBackoff, handleAll, retry } from 'cockatiel';
const policy = retry(handleAll, { maxAttempts: 4, backoff: new ExponentialBackoff({ initialDelay: 1000, maxDelay: 30000 }) });
export const run = (fn) => policy.execute(fn);`,
  },
  {
    library: 'exponential-backoff',
    pkg: 'exponential-backoff',
    code: `import { backOff } from 'exponential-backoff';
export const run = (fn) => backOff(fn, { numOfAttempts: 5, startingDelay: 1000, maxDelay: 30000, jitter: 'full' });`,
  },
  {
    library: 'async-retry',
    pkg: 'async-retry',
    code: `import retry from 'async-retry';
export const run = (fn) => retry(fn, { retries: 4, minTimeout: 1000, maxTimeout: 30000 });`,
  },
];

/** The installed version; read from disk since some packages do not export their package.json. */
function versionOf(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

async function measure(code: string): Promise<{ minified: number; gzipped: number }> {
  const result = await build({
    stdin: { contents: code, resolveDir: ROOT, sourcefile: 'usage.js', loader: 'js' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    treeShaking: true,
    legalComments: 'none',
    logLevel: 'error',
  });
  const bytes = result.outputFiles[0]?.contents ?? new Uint8Array();
  return { minified: bytes.byteLength, gzipped: gzipSync(bytes, { level: 9 }).byteLength };
}

if (!existsSync(TENACIOUS)) throw new Error(`${TENACIOUS} is missing: run \`npm run build\` first.`);
const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} kB`;
console.log(`esbuild ${(await import('esbuild')).version}, ESM, browser, minified; gzip level 9\n`);
console.log('| library | version | minified | min + gzip |');
console.log('| --- | --- | ---: | ---: |');
for (const { library, pkg, code } of CASES) {
  const { minified, gzipped } = await measure(code);
  const version = versionOf(pkg === undefined ? ROOT : join(ROOT, 'node_modules', pkg));
  console.log(`| ${library} | ${version} | ${kb(minified)} | ${kb(gzipped)} |`);
}
