// otel/api.ts: tenacious/otel without its optional peer dependency fails with an error that names
// the package and how to install it, not the module system's bare "Cannot find module". The built
// entries (import and require, from a project that lacks the peer) are checked in
// test/package/tarball.test.ts ('a project without the optional peers').
import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.doUnmock('@opentelemetry/api');
  vi.resetModules();
});

describe('tenacious/otel without @opentelemetry/api', () => {
  it('fails to load with an error naming the peer and its install command, the loader’s error as its cause', async () => {
    const notFound = Object.assign(new Error("Cannot find package '@opentelemetry/api'"), { code: 'ERR_MODULE_NOT_FOUND' });
    vi.resetModules();
    vi.doMock('@opentelemetry/api', () => {
      throw notFound;
    });
    const loading = import('../../src/otel/index.js');
    await expect(loading).rejects.toThrow(
      new Error(
        'tenacious/otel needs @opentelemetry/api, an optional peer dependency, and could not load it: npm install @opentelemetry/api',
      ),
    );
    // The loader's own error is kept down the cause chain (vitest wraps a mock factory's error once).
    const causes: unknown[] = [];
    for (let e: unknown = await loading.catch((error: unknown) => error); e instanceof Error; e = e.cause) causes.push(e);
    expect(causes).toContain(notFound);
  });

  it('loads the API once it is there', async () => {
    const { api } = await import('../../src/otel/api.js');
    const real = await import('@opentelemetry/api');
    expect(api.context).toBe(real.context);
    expect(api.trace).toBe(real.trace);
  });
});
