/**
 * Loads the library the way users get it: bundled by esbuild from src/ (as tsup does for
 * dist/), not through tsx. tsx keeps function names by wrapping every closure it creates in a
 * `__name()` call, which would make any code that allocates closures look several times slower
 * than it is.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** The public API of the package: its entry points, `tenacious`, `tenacious/fetch`, `tenacious/google` and `tenacious/otel`. */
export type Library = typeof import('../src/index.js') &
  typeof import('../src/fetch/index.js') &
  typeof import('../src/google/index.js') &
  typeof import('../src/otel/index.js');

/**
 * Bundles the entry points (src/index.ts, src/fetch/index.ts, src/google/index.ts,
 * src/otel/index.ts) into one temporary ES module and imports it. `@opentelemetry/api` is
 * bundled with it: with no SDK registered, its tracer and meter are the API's no-op ones.
 */
export function loadLibrary(): Promise<Library> {
  return bundleAndImport<Library>(['src/index.ts', 'src/fetch/index.ts', 'src/google/index.ts', 'src/otel/index.ts'], 'index');
}

/**
 * Bundles `entries` (paths from the repository's root) as users get them, into one temporary ES
 * module named `name`, and imports it.
 */
export async function bundleAndImport<T>(entries: readonly string[], name: string): Promise<T> {
  const result = await build({
    stdin: {
      contents: entries.map((entry) => `export * from './${entry}';`).join('\n'),
      resolveDir: new URL('..', import.meta.url).pathname,
      loader: 'ts',
    },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
  });
  const file = join(mkdtempSync(join(tmpdir(), 'tenacious-bench-')), `${name}.mjs`);
  writeFileSync(file, result.outputFiles[0]?.contents ?? '');
  return (await import(pathToFileURL(file).href)) as T;
}
