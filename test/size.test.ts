// Bundle size, min+gz, against the budgets in bench/size.ts (the one place where they live).
import { describe, expect, it } from 'vitest';
import { SIZE_BUDGETS, measureBundle, moduleTable } from '../bench/size.js';

describe('bundle size (esbuild bundle + minify, gzip -9)', () => {
  it.each(SIZE_BUDGETS.map((budget) => [budget.name, budget] as const))('%s stays within its budget', async (_name, budget) => {
    const size = await measureBundle(budget.source);
    const report = `${budget.name}: ${size.gzipBytes} B min+gz, limit ${budget.limitBytes} B (issue target ${budget.targetBytes} B)\n${moduleTable(size)}`;
    expect(size.gzipBytes, report).toBeLessThanOrEqual(budget.limitBytes);
  });

  it('keeps what an import of retry alone does not need out of its bundle', async () => {
    const size = await measureBundle(SIZE_BUDGETS[0]?.source ?? '');
    const paths = size.modules.map((m) => m.path);
    expect(paths).toContain('src/core/retry.ts');
    // Presets, budget, throttle and the fetch adapter are opt-in: a bundler must drop them.
    expect(paths.filter((path) => /presets\/|budget|throttle|fetch/.test(path))).toEqual([]);
  });

  it('measures the same bytes twice (the check is deterministic)', async () => {
    const source = SIZE_BUDGETS[0]?.source ?? '';
    const [first, second] = await Promise.all([measureBundle(source), measureBundle(source)]);
    expect(second).toEqual(first);
  });
});
