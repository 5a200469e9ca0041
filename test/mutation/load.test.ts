// Several modules build frozen presets, tables and validated defaults while they load. A module
// that throws while loading makes every test file importing it fail before any of its tests
// run; these tests import each module inside a test, so such a failure is reported by name
// (and counted by mutation testing, which only counts failed tests).
import { describe, expect, it } from 'vitest';

const modules = {
  index: () => import('../../src/index.js'),
  'abort-watch': () => import('../../src/abort-watch.js'),
  backoff: () => import('../../src/backoff.js'),
  budget: () => import('../../src/budget.js'),
  describe: () => import('../../src/describe.js'),
  errors: () => import('../../src/errors.js'),
  'fetch/retry-fetch': () => import('../../src/fetch/retry-fetch.js'),
  'fetch/fetch-options': () => import('../../src/fetch/fetch-options.js'),
  'fetch/http-status-error': () => import('../../src/fetch/http-status-error.js'),
  'fetch/request-plan': () => import('../../src/fetch/request-plan.js'),
  'fetch/responses': () => import('../../src/fetch/responses.js'),
  'fetch/resume': () => import('../../src/fetch/resume.js'),
  'fetch/gcs-upload': () => import('../../src/fetch/gcs-upload.js'),
  'not-sent': () => import('../../src/not-sent.js'),
  options: () => import('../../src/options.js'),
  predicates: () => import('../../src/predicates.js'),
  retry: () => import('../../src/retry.js'),
  throttle: () => import('../../src/throttle.js'),
  'timer-queue': () => import('../../src/timer-queue.js'),
  'presets/preset': () => import('../../src/presets/preset.js'),
  'presets/iam': () => import('../../src/presets/iam.js'),
  'presets/gcs': () => import('../../src/presets/gcs.js'),
  'presets/gcs-table': () => import('../../src/presets/gcs-table.js'),
  'presets/gcs-idempotency': () => import('../../src/presets/gcs-idempotency.js'),
  'presets/suggest': () => import('../../src/presets/suggest.js'),
  'cli/args': () => import('../../src/cli/args.js'),
  'cli/duration': () => import('../../src/cli/duration.js'),
  'cli/exit-status': () => import('../../src/cli/exit-status.js'),
  'cli/flags': () => import('../../src/cli/flags.js'),
  'cli/presets': () => import('../../src/cli/presets.js'),
  'cli/schedule': () => import('../../src/cli/schedule.js'),
  'cli/usage': () => import('../../src/cli/usage.js'),
  'cli/usage-error': () => import('../../src/cli/usage-error.js'),
} as const;

describe('every module of src/ (but the CLI entry) loads', () => {
  it.each(Object.keys(modules))('%s', async (name) => {
    const exports = await modules[name as keyof typeof modules]();
    expect(Object.keys(exports).length).toBeGreaterThan(0);
  });
});
