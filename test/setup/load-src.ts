// Mutation runs only (vitest.mutation.config.ts): load every module of src/ before any test runs.
// With one module graph shared by all files (isolate: false), a module is evaluated once, by its
// first importer. Were that a test importing it on the fly (test/mutation/load.test.ts does),
// Stryker would credit that one test with all the module's top-level code, and run only it
// against mutants there. Loaded here, outside any test, that code counts as static: every test
// runs against its mutants, as in an isolated run.
import '../../src/index.js';
import '../../src/cli/args.js';
import '../../src/cli/duration.js';
import '../../src/cli/exit-status.js';
import '../../src/cli/presets.js';
import '../../src/cli/schedule.js';
import '../../src/cli/usage.js';
