// The library must run wherever modern JavaScript runs: browsers, Deno, Bun, edge workers. So
// each ESM entry (`tenacious`, `tenacious/fetch`, `tenacious/google`, `tenacious/otel`), bundled
// for esbuild's `neutral` platform, may import nothing at all (no Node built-in, no package: zero
// runtime dependencies; `tenacious/otel` its optional peer `@opentelemetry/api` alone) and may
// not reach for Node's globals.
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { type BuildOptions, type Plugin, build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { ENTRIES, PEER_IMPORTS, ROOT, assertBuilt } from './built.js';

/** Globals that exist in Node but not in a browser or a worker. */
const NODE_GLOBALS = ['process', 'Buffer', 'global', 'require', 'module', '__dirname', '__filename', 'setImmediate'];
const MARK = '__node_global_';

/** Each import the bundle could not satisfy from its own files, and who made it. */
interface ForeignImport {
  path: string;
  importer: string;
  builtin: boolean;
}

/**
 * Bundles `options` for the neutral platform and reports every import that leaves the package
 * (kept external instead of failing the build, so all of them are listed at once) and every free
 * reference to a Node-only global.
 */
async function bundleNeutral(options: BuildOptions): Promise<{ imports: ForeignImport[]; nodeGlobals: string[]; code: string }> {
  const imports: ForeignImport[] = [];
  const recordForeign: Plugin = {
    name: 'record-foreign-imports',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point' || args.path.startsWith('.') || args.path.startsWith('/')) return undefined;
        const bare = args.path.replace(/^node:/, '');
        const builtin = args.path.startsWith('node:') || builtinModules.includes(bare.split('/')[0] ?? bare);
        imports.push({ path: args.path, importer: args.importer.replace(`${ROOT}/`, ''), builtin });
        return { path: args.path, external: true };
      });
    },
  };
  // `define` replaces only free references (not locals, not properties, not strings), so a
  // marker left in the output is a real use of the Node global.
  const define = Object.fromEntries(NODE_GLOBALS.map((name) => [name, `${MARK}${name}`]));
  const result = await build({
    ...options,
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    logLevel: 'silent',
    define,
    plugins: [recordForeign],
  });
  const code = result.outputFiles?.[0]?.text ?? '';
  const nodeGlobals = [...new Set([...code.matchAll(new RegExp(`${MARK}(\\w+)`, 'g'))].map((m) => m[1] ?? ''))];
  return { imports, nodeGlobals, code };
}

/** A name each entry's bundle must hold, so that it is the library, not an empty file. */
const LANDMARK: Record<(typeof ENTRIES)[number]['specifier'], string> = {
  tenacious: 'computeDelay',
  'tenacious/fetch': 'retryFetch',
  'tenacious/google': 'gcsResumableUpload',
  'tenacious/otel': 'tenacious.call.duration',
  'tenacious/undici': 'tenaciousInterceptor',
  'tenacious/grpc': 'grpcRetryInterceptor',
  'tenacious/tanstack-query': 'queryRetry',
  'tenacious/axios': 'attachRetry',
  'tenacious/redis': 'createRedisGate',
  'tenacious/testing': 'has no answer: the script has',
};

describe.each(ENTRIES)('the ESM entry $specifier, bundled for a neutral platform', ({ specifier, source, dist }) => {
  it(`built (dist/${dist}.js, with the chunks it shares) imports nothing and uses no Node global`, async () => {
    assertBuilt();
    const { imports, nodeGlobals, code } = await bundleNeutral({ entryPoints: [join(ROOT, `dist/${dist}.js`)] });
    expect([...new Set(imports.map((i) => i.path))]).toEqual(PEER_IMPORTS[specifier]);
    expect(nodeGlobals).toEqual([]);
    expect(code).toContain(LANDMARK[specifier]);
  });

  it(`source (${source}) imports nothing and uses no Node global`, async () => {
    const { imports, nodeGlobals } = await bundleNeutral({ entryPoints: [join(ROOT, source)] });
    expect([...new Set(imports.map((i) => i.path))]).toEqual(PEER_IMPORTS[specifier]);
    expect(nodeGlobals).toEqual([]);
  });
});

describe('the neutral-platform check', () => {
  it('the check itself catches node: imports, bare built-ins, packages and Node globals', async () => {
    const { imports, nodeGlobals } = await bundleNeutral({
      stdin: {
        contents: [
          "import { setTimeout as sleep } from 'node:timers/promises';",
          "import { EventEmitter } from 'events';",
          "import pRetry from 'p-retry';",
          'const process = { env: {} };', // a local named like a Node global is fine
          "export const run = () => [sleep, EventEmitter, pRetry, process.env, Buffer.from('x'), globalThis.fetch];",
        ].join('\n'),
        resolveDir: ROOT,
        sourcefile: 'fixture.ts',
        loader: 'ts',
      },
    });
    expect(imports.map(({ path, builtin }) => ({ path, builtin }))).toEqual([
      { path: 'node:timers/promises', builtin: true },
      { path: 'events', builtin: true },
      { path: 'p-retry', builtin: false },
    ]);
    expect(nodeGlobals).toEqual(['Buffer']);
  });
});
