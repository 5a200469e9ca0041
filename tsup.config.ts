import { readFileSync } from 'node:fs';
import { type Options, defineConfig } from 'tsup';

/** The package's version, which `tenacious --version` prints (written into the CLI bundle). */
const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * The library's entry points (package.json "exports"): `tenacious`, `tenacious/fetch`,
 * `tenacious/google` and `tenacious/otel`, each as ESM and CJS with its own declarations.
 * Neutral platform: no Node built-ins. `@opentelemetry/api`, the optional peer dependency of
 * `tenacious/otel`, stays an import (tsup leaves peer dependencies out of the bundle). Code the entries share goes into chunks (for CJS too), so an application that
 * loads two entries loads one engine, one timer queue and one copy of each error class.
 */
export const libraryBuild: Options = {
  entry: {
    index: 'src/index.ts',
    fetch: 'src/fetch/index.ts',
    google: 'src/google/index.ts',
    otel: 'src/otel/index.ts',
    undici: 'src/undici/index.ts',
    grpc: 'src/grpc/index.ts',
    'tanstack-query': 'src/tanstack-query/index.ts',
    axios: 'src/axios/index.ts',
    testing: 'src/testing/index.ts',
  },
  format: ['esm', 'cjs'],
  splitting: true,
  // tsup's declaration build sets `baseUrl`, which TypeScript 6 reports as deprecated.
  dts: { compilerOptions: { ignoreDeprecations: '6.0' } },
  // Both builds run at once into dist/: the library's clean must spare the CLI's output.
  clean: ['!cli.js'],
  target: 'es2022',
  platform: 'neutral',
  treeshake: true,
};

/**
 * The `tenacious` command (package.json "bin"): one self-contained ESM file for Node with the
 * library bundled in, so it runs whatever else is in dist/. test/cli/main.test.ts builds it with
 * these same options when dist/ is missing or stale.
 */
export const cliBuild: Options = {
  entry: { cli: 'src/cli/main.ts' },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  banner: { js: '#!/usr/bin/env node' },
  define: { __TENACIOUS_VERSION__: JSON.stringify(version) },
  dts: false,
  clean: false,
};

export default defineConfig([libraryBuild, cliBuild]);
