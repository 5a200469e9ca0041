// Bundle size, min+gz, against the budgets in bench/size.ts (the one place where they live).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENTRIES, SIZE_BUDGETS, featureShares, measureBundle, moduleTable } from '../bench/size.js';

describe('bundle size (esbuild bundle + minify, gzip -9)', () => {
  it.each(SIZE_BUDGETS.map((budget) => [budget.name, budget] as const))('%s stays within its budget', async (_name, budget) => {
    const size = await measureBundle(budget.source);
    const target = budget.targetBytes === undefined ? 'no issue target' : `issue target ${budget.targetBytes} B`;
    const report = `${budget.name}: ${size.gzipBytes} B min+gz, limit ${budget.limitBytes} B (${target})\n${moduleTable(size)}`;
    expect(size.gzipBytes, report).toBeLessThanOrEqual(budget.limitBytes);
  });

  it('measures every entry point of package.json, each resolved to its source', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { exports: Record<string, unknown> };
    const subpaths = Object.keys(manifest.exports)
      .filter((key) => key !== './package.json')
      .map((key) => (key === '.' ? 'tenacious' : `tenacious/${key.slice(2)}`));
    expect(Object.keys(ENTRIES).sort()).toEqual(subpaths.sort());
    const measured = SIZE_BUDGETS.map((budget) => budget.source).join('\n');
    for (const entry of Object.keys(ENTRIES)) expect(measured, entry).toContain(`export * from '${entry}';`);
  });

  it('keeps what an import of retry alone does not need out of its bundle', async () => {
    const size = await measureBundle(SIZE_BUDGETS[0]?.source ?? '');
    const paths = size.modules.map((m) => m.path);
    expect(paths).toContain('src/core/retry.ts');
    // The fetch adapter, the Google presets and uploads, byte-range transfers, budget, throttle
    // and hedging are opt-in: a bundler must drop them.
    expect(paths.filter((path) => /^src\/(fetch|google|presets|transfer|fleet)\//.test(path))).toEqual([]);
  });

  it("keeps retryFetch, the Google helpers and the transfers out of the main entry: they are 'tenacious/fetch' and 'tenacious/google'", async () => {
    const size = await measureBundle("export * from 'tenacious';");
    const paths = size.modules.map((m) => m.path);
    expect(paths).toContain('src/modes/hedge.ts'); // the whole entry was measured
    expect(paths.filter((path) => /^src\/(fetch|google|presets|transfer)\//.test(path))).toEqual([]);
  });

  it('puts every module of the retry import in a feature of the breakdown (BENCHMARKS.md)', async () => {
    const shares = featureShares(await measureBundle(SIZE_BUDGETS[0]?.source ?? ''));
    expect(shares.filter((share) => share.name === 'other')).toEqual([]);
  });

  it('refuses a name that is no entry point of the package', async () => {
    await expect(measureBundle("export * from 'tenacious/tracing';")).rejects.toThrow(/tenacious\/tracing is not an entry point/);
  });

  it('measures the same bytes twice (the check is deterministic)', async () => {
    const source = SIZE_BUDGETS[0]?.source ?? '';
    const [first, second] = await Promise.all([measureBundle(source), measureBundle(source)]);
    expect(second).toEqual(first);
  });
});
