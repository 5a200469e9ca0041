// Mutation runs only (vitest.mutation.config.ts): each test file reports the coverage of its own
// tests. With one module graph for all files (isolate: false), Stryker's coverage object is one
// for the whole dry run, and its vitest runner attaches that object to each file's results when
// the file ends: the hundred-odd files would each carry every test's coverage so far, a copy that
// grows with every file (over 6 GB, out of memory, once the adapters were mutated too). So the
// runner's one read of it per file, made by its own afterAll hook right after this file's, gets a
// copy holding this file's tests and the static coverage; every other reader (the instrumented
// code, which keeps what it reads first) gets the whole object. The runner merges the copies.
import { afterAll, inject } from 'vitest';

interface Coverage {
  static: Record<string, number>;
  perTest: Record<string, Record<string, number>>;
}
interface Namespace {
  mutantCoverage?: Coverage;
  /** Set once the accessor below is in place (setup files run again for every test file). */
  coveragePerFile?: true;
  /** Makes the next read of `mutantCoverage` a copy of `file`'s tests only. */
  fileEnds?: (file: string) => void;
}

// Provided by Stryker's vitest runner; undefined when the config runs without Stryker.
const namespace = inject('globalNamespace' as never) as string | undefined;

if (namespace !== undefined) {
  const scope = globalThis as unknown as Record<string, Namespace | undefined>;
  scope[namespace] ??= {};
  const ns = scope[namespace] as Namespace;
  if (ns.coveragePerFile === undefined) {
    ns.coveragePerFile = true;
    let whole = ns.mutantCoverage;
    let next: Coverage | undefined;
    Object.defineProperty(ns, 'mutantCoverage', {
      configurable: true,
      get: () => {
        const answer = next ?? whole;
        next = undefined;
        return answer;
      },
      set: (value: Coverage) => {
        whole = value;
      },
    });
    // Registered after the runner's hook (its setup file comes first) and so run just before it:
    // afterAll hooks run in the reverse order of registration (sequence.hooks 'stack'). Nothing
    // runs between the two hooks, so the runner's read is the next one.
    ns.fileEnds = (file: string): void => {
      if (whole === undefined) return;
      const prefix = `${file}#`;
      const perTest: Coverage['perTest'] = {};
      for (const id of Object.keys(whole.perTest)) if (id.startsWith(prefix)) perTest[id] = whole.perTest[id] as Record<string, number>;
      next = { static: whole.static, perTest };
    };
  }
  // The empty pattern is required: vitest reads a hook's first parameter as the fixtures it asks
  // for, and a hook whose first parameter is a plain name never runs (nor do the hooks after it,
  // Stryker's among them: the whole run then had no coverage at all).
  // biome-ignore lint/correctness/noEmptyPattern: see above
  afterAll(({}, suite) => {
    const file = (suite as { file?: { filepath?: string } }).file?.filepath ?? (suite as { filepath?: string }).filepath;
    if (file !== undefined) ns.fileEnds?.(file);
  });
}
