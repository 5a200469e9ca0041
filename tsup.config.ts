import { type Options, defineConfig } from 'tsup';

/** The library: ESM and CJS, each with its own declarations. Neutral platform: no Node built-ins. */
export const libraryBuild: Options = {
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
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
  dts: false,
  clean: false,
};

export default defineConfig([libraryBuild, cliBuild]);
