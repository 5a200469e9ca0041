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

/** The public API of the package. */
export type Library = typeof import('../src/index.js');

/** Bundles src/index.ts into a temporary ES module and imports it. */
export async function loadLibrary(): Promise<Library> {
  const result = await build({
    entryPoints: [new URL('../src/index.ts', import.meta.url).pathname],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
  });
  const file = join(mkdtempSync(join(tmpdir(), 'tenacious-bench-')), 'index.mjs');
  writeFileSync(file, result.outputFiles[0]?.contents ?? '');
  return (await import(pathToFileURL(file).href)) as Library;
}
