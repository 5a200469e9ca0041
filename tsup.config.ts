import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type Options, defineConfig } from 'tsup';

/**
 * The CommonJS form of src/otel/api.ts. A CommonJS module has no top-level await, and needs
 * none: `require` is synchronous, so a `try` around it throws the same error naming the missing
 * optional peer (`peerMissing`) as the ES module's `await import(...)`.
 */
const OTEL_API_CJS = `import { peerMissing } from '../util/peer.js';
let loaded;
try {
  loaded = require('@opentelemetry/api');
} catch (error) {
  throw peerMissing('tenacious/otel', '@opentelemetry/api', error);
}
export const api = loaded;
`;

/** Gives the CommonJS build {@link OTEL_API_CJS} in place of src/otel/api.ts; the ES build reads the file. */
const otelApiForCjs: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'otel-api-for-cjs',
  setup(build) {
    // tsup builds CommonJS with splitting as ES modules first (Rollup converts them after), so
    // the format is told by the constant tsup defines for each build, not by esbuild's own.
    if (build.initialOptions.define?.TSUP_FORMAT !== '"cjs"') return;
    build.onLoad({ filter: /[\\/]src[\\/]otel[\\/]api\.ts$/ }, (args) => ({
      contents: OTEL_API_CJS,
      loader: 'ts',
      resolveDir: dirname(args.path),
    }));
  },
};

/** The package's version, which `tenacious --version` prints (written into the CLI bundle). */
const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * esbuild writes the CommonJS build as ES modules first, where a `require` call becomes a call of
 * its `__require` shim; put back the plain `require("@opentelemetry/api")` that Node and
 * bundlers read, so that a bundler given the CommonJS build still finds the dependency.
 */
const plainPeerRequire: NonNullable<Options['plugins']>[number] = {
  name: 'plain-peer-require',
  renderChunk(code) {
    if (this.format !== 'cjs') return;
    return { code: code.replace(/(?:[\w$]+\.)?__require\("@opentelemetry\/api"\)/g, 'require("@opentelemetry/api")') };
  },
};

/**
 * The library's entry points (package.json "exports"): `tenacious`, `tenacious/fetch`,
 * `tenacious/google` and `tenacious/otel`, each as ESM and CJS with its own declarations.
 * Neutral platform: no Node built-ins. `@opentelemetry/api`, the optional peer dependency of
 * `tenacious/otel`, stays an import (tsup leaves peer dependencies out of the bundle), made in
 * src/otel/api.ts alone, whose CommonJS form comes from {@link otelApiForCjs}; axios, the peer of
 * `tenacious/axios`, is imported at its first request. Code the entries share goes into chunks (for CJS too), so an application that
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
    redis: 'src/redis/index.ts',
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
  esbuildPlugins: [otelApiForCjs],
  plugins: [plainPeerRequire],
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
