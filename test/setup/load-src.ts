// Mutation runs only (vitest.mutation.config.ts): load every module of src/ before any test runs.
// With one module graph shared by all files (isolate: false), a module is evaluated once, by its
// first importer. Were that a test importing it on the fly (test/layout.test.ts does),
// Stryker would credit that one test with all the module's top-level code, and run only it
// against mutants there. Loaded here, outside any test, that code counts as static: every test
// runs against its mutants, as in an isolated run.
//
// A module that throws while loading must not fail this setup file: a file that fails in setup
// runs no test, and Stryker, which counts failed tests, would see none fail. The error is left
// to the importers: every later import of that module rejects with it, inside a test.
const modules = [
  '../../src/index.js',
  '../../src/fetch/index.js',
  '../../src/google/index.js',
  '../../src/otel/index.js',
  '../../src/testing/index.js',
  '../../src/undici/index.js',
  '../../src/axios/index.js',
  '../../src/grpc/index.js',
  '../../src/tanstack-query/index.js',
  '../../src/redis/index.js',
  '../../src/cli/args.js',
  '../../src/cli/duration.js',
  '../../src/cli/exit-status.js',
  '../../src/cli/presets.js',
  '../../src/cli/schedule.js',
  '../../src/cli/usage.js',
];
for (const path of modules) {
  try {
    await import(path);
  } catch {
    // See above: the tests that import it report it.
  }
}
