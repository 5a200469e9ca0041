// The package tests check what users get: the build in dist/ and the tarball npm packs from it.
// `npm test` builds right before running vitest; a bare `npx vitest run` on a fresh clone has no
// dist/, and these tests then say so instead of failing on some missing-file error further down.
// (After editing src/, run `npm run build` again: these tests read the build, not the source.)
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The package's entry points (package.json "exports"): the name a user imports, its source, and
 * its base name in dist/.
 */
export const ENTRIES = [
  { specifier: 'tenacious', source: 'src/index.ts', dist: 'index' },
  { specifier: 'tenacious/fetch', source: 'src/fetch/index.ts', dist: 'fetch' },
  { specifier: 'tenacious/google', source: 'src/google/index.ts', dist: 'google' },
  { specifier: 'tenacious/otel', source: 'src/otel/index.ts', dist: 'otel' },
  { specifier: 'tenacious/undici', source: 'src/undici/index.ts', dist: 'undici' },
  { specifier: 'tenacious/grpc', source: 'src/grpc/index.ts', dist: 'grpc' },
  { specifier: 'tenacious/tanstack-query', source: 'src/tanstack-query/index.ts', dist: 'tanstack-query' },
  { specifier: 'tenacious/axios', source: 'src/axios/index.ts', dist: 'axios' },
  { specifier: 'tenacious/redis', source: 'src/redis/index.ts', dist: 'redis' },
  { specifier: 'tenacious/testing', source: 'src/testing/index.ts', dist: 'testing' },
] as const;

/**
 * What an entry may import from outside the package: its optional peer dependency (`tenacious/otel`
 * at load, `tenacious/axios` at its first request; the other adapters use their peers' types only,
 * and `tenacious/redis` none: the application passes its own client).
 */
export const PEER_IMPORTS: Record<(typeof ENTRIES)[number]['specifier'], readonly string[]> = {
  tenacious: [],
  'tenacious/fetch': [],
  'tenacious/google': [],
  'tenacious/otel': ['@opentelemetry/api'],
  'tenacious/undici': [],
  'tenacious/grpc': [],
  'tenacious/tanstack-query': [],
  'tenacious/axios': ['axios'],
  'tenacious/redis': [],
  'tenacious/testing': [],
};

/** The files the build must produce for each entry point: ESM and CJS, each with its declarations. */
export const ENTRY_FILES = ENTRIES.flatMap(({ dist }) => ['js', 'cjs', 'd.ts', 'd.cts'].map((ext) => `dist/${dist}.${ext}`));

/** Throws a clear error unless dist/ holds a build of every entry point. */
export function assertBuilt(): void {
  const missing = ENTRY_FILES.filter((file) => !existsSync(join(ROOT, file)));
  if (missing.length > 0) {
    throw new Error(`${missing.join(', ')} missing: run \`npm run build\` first (\`npm test\` does).`);
  }
}

/** Runs a command to completion; rejects with its output in the message when it exits non-zero. */
export async function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await promisify(execFile)(command, [...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${options.cwd}:\n${stdout}\n${stderr}`, { cause: error });
  }
}

/** The path of a CLI installed in the repository's node_modules/.bin. */
export function bin(name: string): string {
  return join(ROOT, 'node_modules/.bin', name);
}
