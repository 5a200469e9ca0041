import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/fail-on-unhandled.ts'],
    // An unhandled rejection anywhere fails the run, not just a warning.
    dangerouslyIgnoreUnhandledErrors: false,
    testTimeout: 20_000,
  },
});
