/**
 * Bundle size: what a bundler keeps of the package for a given import, minified and gzipped.
 * esbuild bundles and minifies an entry that imports from src/index.ts (neutral platform,
 * ES2022, as tsup builds dist/); node:zlib gzips it at level 9. Deterministic, so
 * test/size.test.ts checks the limits below in `npm test`, and `npm run bench` prints them.
 */
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/** One import whose bundle is measured. */
export interface SizeBudget {
  readonly name: string;
  /** The module a user would write: it imports from the package entry, `ENTRY`. */
  readonly source: string;
  /** The target, min+gz bytes. */
  readonly targetBytes: number;
  /** What `npm test` enforces, min+gz bytes; see the note on `SIZE_BUDGETS`. */
  readonly limitBytes: number;
}

/** Stands for the package entry (src/index.ts) in a budget's source. */
export const ENTRY = 'tenacious';

/**
 * The limits, in one place. Issue 15's targets (3 kB and 10 kB) are not met yet: `retry` alone
 * carries the default error classification (classify/), Retry-After and gRPC pushback parsing,
 * option validation whose messages name the field and the value, and backoff validation. So
 * the enforced limits are
 * budgets a little above today's measurement: they catch a regression, and raising one is a
 * decision made here, with the per-module report of the failing test in hand.
 */
export const SIZE_BUDGETS: readonly SizeBudget[] = [
  {
    name: 'retry + computeDelay',
    source: `export { retry, computeDelay } from '${ENTRY}';`,
    // Issue 15's target; the re-layout of the core measured 6,308 B.
    targetBytes: 3000,
    // Raised from 5,600 for issue 12 (5,991 B then); 6,370 after issue 15's re-layout (a pure
    // decide(), typed phases, table-driven option checks): the core is not yet at its target.
    // 7,050 for issue 13 (6,303 → 7,012 B): errors branded across copies, onSuccess/onGiveUp
    // with their reasons, retryOnResult, unref, four more checked options. 7,150 for the second
    // session of issue 12 (7,012 → 7,100 B): async predicates refused by name, the backoff's
    // fields held in the config itself (a per-call options literal holds 575 B, not 619).
    // 7,200 for issue 21 (7,100 → 7,154 B): Deno 2's and workerd's real network failures
    // classified, and the async-predicate check shared with hedge() as one helper. 7,400 for
    // issue 22 (7,154 → 7,362 B): give-up messages quote the root cause (the socket error
    // under `fetch failed`, ~155 B), the errors' one branded base class with an own, writable
    // `name` (~30 B), and `throw permanent(e)` recognised by the engine and isTransient
    // (~35 B), less the cause-chain walk shared with the classifiers.
    limitBytes: 7400,
  },
  {
    name: 'whole package',
    source: `export * from '${ENTRY}';`,
    targetBytes: 10_000,
    // 15,046 B before issue 15's re-layout of the core, 14,796 B after (one Retry-After parser,
    // one Google error-body reader, one cause-chain walk, one option checker). 18,700 when
    // probing found that resumable uploads called onSuccess once per chunk (18,241 → 18,587 B
    // with that fix, hedge()'s hook isolation and the async-predicate check). 21,000 for issue
    // 21 (18,587 → 20,840 B): the download integrity rule (transfer/download.ts and a CRC32C,
    // ~1.6 kB), the upload's no-progress rule, session preconditions and size check, hedging
    // under the call's idempotency. The subpath entries of the one-engine issue take fetch and
    // the Google helpers out of this entry. 21,200 for issue 22 (20,851 → 21,079 B): root
    // causes in give-up messages, permanent() and PermanentError.
    limitBytes: 21_200,
  },
];

/** One source file's part of a bundle. */
export interface ModuleShare {
  /** Path relative to the repository, e.g. `src/core/run.ts`. */
  readonly path: string;
  /** Minified bytes it contributes (esbuild's metafile). */
  readonly minifiedBytes: number;
  /** Its share of the gzipped bundle, in proportion to its minified bytes. */
  readonly gzipBytes: number;
}

/** The measurement of one bundle. */
export interface BundleSize {
  readonly minifiedBytes: number;
  readonly gzipBytes: number;
  /** Largest first. */
  readonly modules: readonly ModuleShare[];
}

const root = new URL('..', import.meta.url).pathname;

/** Bundles, minifies and gzips `source`, in which `ENTRY` names src/index.ts. */
export async function measureBundle(source: string): Promise<BundleSize> {
  const result = await build({
    stdin: { contents: source, resolveDir: root, loader: 'ts', sourcefile: 'entry.ts' },
    alias: { [ENTRY]: './src/index.ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents ?? new Uint8Array();
  const gzipBytes = gzipSync(code, { level: 9 }).length;
  const inputs = Object.values(result.metafile.outputs)[0]?.inputs ?? {};
  const modules = Object.entries(inputs)
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([path, input]) => ({
      path,
      minifiedBytes: input.bytesInOutput,
      gzipBytes: Math.round((gzipBytes * input.bytesInOutput) / code.length),
    }))
    .sort((a, b) => b.minifiedBytes - a.minifiedBytes);
  return { minifiedBytes: code.length, gzipBytes, modules };
}

/** A plain-text table of a bundle's modules, for a failing test or the bench report. */
export function moduleTable(size: BundleSize): string {
  const rows = size.modules.map(
    (m) => `  ${m.path.padEnd(34)} ${String(m.minifiedBytes).padStart(7)} B min  ≈${String(m.gzipBytes).padStart(6)} B gz`,
  );
  return [
    ...rows,
    `  ${'total'.padEnd(34)} ${String(size.minifiedBytes).padStart(7)} B min   ${String(size.gzipBytes).padStart(6)} B gz`,
  ].join('\n');
}
