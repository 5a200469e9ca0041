import { defineConfig } from 'tsup';

export default defineConfig([
  {
    // The library: ESM and CJS, each with its own declarations. Neutral platform: no Node built-ins.
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    // tsup's declaration build sets `baseUrl`, which TypeScript 6 reports as deprecated.
    dts: { compilerOptions: { ignoreDeprecations: '6.0' } },
    clean: true,
    target: 'es2022',
    platform: 'neutral',
    treeshake: true,
  },
]);
