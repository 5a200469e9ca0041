// tenacious/axios without axios: the entry loads (it takes nothing from axios until a request is
// made), and a request made where axios cannot be loaded fails with an error naming the optional
// peer and its install command. The built entries, imported and required from a project that
// lacks axios, are checked in test/package/tarball.test.ts ('a project without the optional peers').
import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.doUnmock('axios');
  vi.resetModules();
});

/** The least of an axios instance attachRetry uses: its request interceptors. */
type Interceptor = (config: object) => { adapter: (config: object) => Promise<unknown> };
function fakeInstance(): { instance: never; intercept: Interceptor } {
  const interceptors: Interceptor[] = [];
  const use = (fn: Interceptor): number => interceptors.push(fn) - 1;
  const instance = Object.assign(() => undefined, { interceptors: { request: { use, eject: () => undefined } } });
  return { instance: instance as never, intercept: (config) => (interceptors[0] as Interceptor)(config) };
}

describe('tenacious/axios where axios cannot be loaded', () => {
  it('loads and attaches; a request rejects naming axios and its install command, and the next request tries again', async () => {
    const notFound = Object.assign(new Error("Cannot find package 'axios'"), { code: 'ERR_MODULE_NOT_FOUND' });
    vi.resetModules();
    vi.doMock('axios', () => {
      throw notFound;
    });
    const { attachRetry } = await import('../../src/axios/index.js');
    const { instance, intercept } = fakeInstance();
    attachRetry(instance, { maxAttempts: 2 });
    // The request's own adapter: axios's lookup hands a function back as it is.
    const answer = { data: 'ok', status: 200, statusText: 'OK', headers: {}, config: {} };
    const config = intercept({ method: 'get', url: 'https://api.example/items', headers: {}, adapter: async () => answer });
    const message = 'tenacious/axios needs axios, an optional peer dependency, and could not load it: npm install axios';
    await expect(config.adapter(config)).rejects.toThrow(new Error(message));
    await expect(config.adapter(config)).rejects.toThrow(new Error(message));
    // Once axios can be loaded, the next request is sent: a failed load is not remembered.
    vi.doUnmock('axios');
    await expect(config.adapter(config)).resolves.toMatchObject({ data: 'ok', status: 200 });
  });
});
