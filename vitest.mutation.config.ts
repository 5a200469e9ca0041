import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The tests Stryker runs against each mutant of src/ (`npm run test:mutation`): every test that
// imports src/ in-process. Left out: tests of the built package (dist/, the tarball, the
// browser), the CLI tests (they spawn the bundled CLI, which per-test coverage cannot follow),
// the bundle-size budgets (they bundle src/ with esbuild), and the fault-server soak and the
// fleet simulator (seconds each; the code they exercise is covered by faster tests), and the
// runs against Google's storage testbench (test/fetch/storage-testbench.test.ts starts a Python
// server per run; resume.test.ts and gcs-upload.test.ts cover the same code on loopback, and
// test/otel's other files the telemetry of transfers; the demo test spawns a process; the
// http instrumentation's test needs node:http required after the instrumentation is made, which
// one module graph shared by every file cannot promise: fetch.test.ts covers the same hook; and
// the kit's runs under each framework's fake clock (test/testing/fake-clocks.test.ts): sinon's
// and vitest's fake timers installed one after the other in one process left later real-client
// tests (grpc-js) hanging; test/runtime/clock.test.ts covers which clock the library follows); and
// the Redis gate's fleet test (test/redis/fleet.test.ts): its four processes run the gate outside
// the runner, where per-test coverage cannot follow; redis-gate.test.ts covers the same code.
export default defineConfig({
  test: {
    ...base.test,
    include: [
      'test/*.test.ts',
      'test/{core,runtime,classify,fleet,modes,transfer,util}/**/*.test.ts',
      'test/presets/**/*.test.ts',
      'test/clients/**/*.test.ts',
      'test/fetch/**/*.test.ts',
      'test/fuzz/**/*.test.ts',
      'test/cli/**/*.test.ts',
      'test/otel/**/*.test.ts',
      'test/google/**/*.test.ts',
      'test/grpc/**/*.test.ts',
      'test/undici/**/*.test.ts',
      'test/tanstack-query/**/*.test.ts',
      'test/axios/**/*.test.ts',
      'test/testing/**/*.test.ts',
      'test/redis/**/*.test.ts',
    ],
    exclude: [
      'test/cli/main.test.ts',
      'test/sim.test.ts',
      'test/size.test.ts',
      'test/fetch/storage-testbench.test.ts',
      'test/otel/transfers.test.ts',
      'test/otel/demo.test.ts',
      'test/otel/http.test.ts',
      'test/testing/fake-clocks.test.ts',
      'test/redis/fleet.test.ts',
      // They load an adapter entry with its peer mocked away (vi.doMock, vi.resetModules): in the
      // one module graph below, the modules they reload are then credited to them, and the static
      // mutants of every module reloaded (tables of error codes, option rules) are run against a
      // graph that no longer reloads them, surviving by the hundred. What they check, the built
      // entries check too, from a project without the peers (test/package/tarball.test.ts).
      'test/otel/api.test.ts',
      'test/axios/peer.test.ts',
    ],
    // One module graph for all files: Stryker reruns these files for every mutant, and
    // re-importing src/ per file doubled each run. The tests clean up after themselves (the
    // virtual clock's helper checks it), so no file sees another's state. src/ is loaded
    // before any test (see test/setup/load-src.ts), so its top-level code is credited to no
    // single test.
    isolate: false,
    setupFiles: [...((base.test?.setupFiles ?? []) as string[]), 'test/setup/load-src.ts', 'test/setup/mutation-coverage.ts'],
  },
});
