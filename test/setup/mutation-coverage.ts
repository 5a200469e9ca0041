// Mutation runs only (vitest.mutation.config.ts): gives each test file a coverage map of its own.
// With one module graph for all files (isolate: false), Stryker's coverage object is one for the
// whole dry run, and its vitest runner attaches that object to each file's results when the file
// ends: the hundred-odd files would each carry every test's coverage so far, a copy that grows
// with every file (over 6 GB, out of memory, once the adapters were mutated too). A fresh map of
// per-test coverage at each file's start keeps what a file carries to its own tests; the map of
// static coverage (hits while no test runs) stays one, shared, since it only grows while modules
// load. The runner merges the files' maps, so nothing is lost.
import { beforeAll, inject } from 'vitest';

interface StrykerNamespace {
  mutantCoverage?: { static: Record<string, number>; perTest: Record<string, Record<string, number>> };
}

// Provided by Stryker's vitest runner; undefined when the config runs without Stryker.
const namespace = inject('globalNamespace' as never) as string | undefined;

if (namespace !== undefined) {
  beforeAll(() => {
    const ns = (globalThis as unknown as Record<string, StrykerNamespace | undefined>)[namespace];
    const coverage = ns?.mutantCoverage;
    if (ns !== undefined && coverage !== undefined) ns.mutantCoverage = { static: coverage.static, perTest: {} };
  });
}
