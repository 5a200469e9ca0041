// The dual-package hazard: an app whose dependencies load both builds of tenacious (one
// `import`s it, another `require`s it) has two copies of every class. The library's errors
// must be recognised across them: `instanceof` and `isRetryError` from either copy accept an
// error made by the other. Loads the real build: dist/index.js by import, dist/index.cjs by
// require, as Node loads them for a user, and the subpath entries (dist/fetch.*, dist/google.*,
// dist/otel.*) beside them: within one build the entries share one copy of each class.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, assertBuilt } from './built.js';

type Tenacious = typeof import('../../src/index.js');
type FetchEntry = typeof import('../../src/fetch/index.js');
type GoogleEntry = typeof import('../../src/google/index.js');
type OtelEntry = typeof import('../../src/otel/index.js');
interface Build {
  main: Tenacious;
  fetch: FetchEntry;
  google: GoogleEntry;
  otel: OtelEntry;
}

let esm: Tenacious;
let cjs: Tenacious;
const builds: Record<'esm' | 'cjs', Build> = {} as Record<'esm' | 'cjs', Build>;

beforeAll(async () => {
  assertBuilt();
  const load = async (name: string) => import(pathToFileURL(join(ROOT, `dist/${name}.js`)).href);
  const require = createRequire(import.meta.url);
  builds.esm = { main: await load('index'), fetch: await load('fetch'), google: await load('google'), otel: await load('otel') };
  builds.cjs = {
    main: require(join(ROOT, 'dist/index.cjs')),
    fetch: require(join(ROOT, 'dist/fetch.cjs')),
    google: require(join(ROOT, 'dist/google.cjs')),
    otel: require(join(ROOT, 'dist/otel.cjs')),
  };
  esm = builds.esm.main;
  cjs = builds.cjs.main;
});

const fastFail = { maxAttempts: 2, backoff: { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' } } as const;

/** The RetryError a copy's retry() gives up with. */
async function gaveUp(copy: Tenacious): Promise<unknown> {
  return copy
    .retry(() => Promise.reject(Object.assign(new Error('busy'), { status: 503 })), fastFail)
    .then(
      () => undefined,
      (error: unknown) => error,
    );
}

describe('the ESM and the CommonJS build loaded side by side', () => {
  it('are two copies, with two RetryError classes (the hazard is real)', () => {
    expect(esm.RetryError).not.toBe(cjs.RetryError);
    expect(Object.getPrototypeOf(new esm.RetryError('attempts', 1, 0, undefined))).not.toBe(cjs.RetryError.prototype);
  });

  it('recognise each other’s RetryError with instanceof and isRetryError', async () => {
    for (const [maker, other] of [
      [esm, cjs],
      [cjs, esm],
    ] as const) {
      const error = await gaveUp(maker);
      expect(error).toBeInstanceOf(maker.RetryError);
      expect(error instanceof other.RetryError).toBe(true);
      expect(other.isRetryError(error)).toBe(true);
      expect(maker.isRetryError(error)).toBe(true);
      expect(error instanceof other.TimeoutError).toBe(false);
    }
  });

  it('recognise each other’s TimeoutError, ThrottledError, HttpStatusError, ResumeError and GcsUploadError, and only those', () => {
    const made = {
      TimeoutError: new esm.TimeoutError('slow'),
      ThrottledError: new cjs.ThrottledError(0.5, 10, 2),
      HttpStatusError: new esm.HttpStatusError(new Response(null, { status: 503 }), 'GET'),
      RetryError: new cjs.RetryError('deadline', 3, 1000, undefined),
      ResumeError: new esm.ResumeError('changed', 10, 'overwritten'),
      GcsUploadError: new cjs.GcsUploadError('session-expired', 410, 'gone'),
    };
    for (const copy of [esm, cjs]) {
      for (const [name, error] of Object.entries(made)) {
        for (const cls of ['TimeoutError', 'ThrottledError', 'HttpStatusError', 'RetryError', 'ResumeError', 'GcsUploadError'] as const) {
          expect(error instanceof copy[cls], `${name} instanceof ${cls}`).toBe(name === cls);
        }
      }
      expect(copy.isRetryError(made.RetryError)).toBe(true);
      expect(copy.isRetryError(made.TimeoutError)).toBe(false);
    }
  });

  it('share one class per error between the entries of one build (tenacious, tenacious/fetch, tenacious/google)', () => {
    for (const { main, fetch, google } of [builds.esm, builds.cjs]) {
      expect(fetch.HttpStatusError).toBe(main.HttpStatusError);
      expect(fetch.ResumeError).toBe(main.ResumeError);
      expect(google.GcsUploadError).toBe(main.GcsUploadError);
    }
    // Across the two builds the classes are two copies, recognised through the brand.
    expect(builds.esm.fetch.HttpStatusError).not.toBe(builds.cjs.main.HttpStatusError);
    const error = new builds.cjs.main.HttpStatusError(new Response(null, { status: 503 }), 'GET');
    expect(error instanceof builds.esm.fetch.HttpStatusError).toBe(true);
    expect(new builds.esm.google.GcsUploadError('protocol', 200, 'short') instanceof builds.cjs.main.GcsUploadError).toBe(true);
  });

  it('load tenacious/otel from both builds, each telemetry working with either copy of retry()', async () => {
    const ended: string[] = [];
    const tracerProvider = new BasicTracerProvider({
      spanProcessors: [{ onStart() {}, onEnd: (span) => ended.push(span.name), forceFlush: async () => {}, shutdown: async () => {} }],
    });
    for (const [from, to] of [
      [builds.esm, builds.cjs],
      [builds.cjs, builds.esm],
      [builds.esm, builds.esm],
    ] as const) {
      const telemetry = from.otel.otelTelemetry({ tracerProvider });
      await expect(to.main.retry(() => 'ok', { telemetry, name: 'dual' })).resolves.toBe('ok');
    }
    expect(ended).toEqual(['dual', 'dual', 'dual']);
  });

  it('keep one retry layer across entries and builds: the Google presets see a RetryError of the other copy as final', async () => {
    let inner = 0;
    const busy = () => Promise.reject(Object.assign(new Error('busy'), { status: 503 }));
    const outer = await builds.esm.main
      .retry(
        () =>
          builds.cjs.main.retry(() => {
            inner++;
            return busy();
          }, fastFail),
        { ...builds.esm.google.iam(), backoff: { initialDelayMs: 1, maxDelayMs: 1 } },
      )
      .catch((error: unknown) => error);
    expect(builds.esm.main.isRetryError(outer)).toBe(true);
    expect(inner).toBe(2);
  });

  it('do not take look-alikes for their errors: a name is not a brand', () => {
    const named = Object.assign(new Error('fake'), { name: 'RetryError', reason: 'attempts' });
    for (const copy of [esm, cjs]) {
      expect(named instanceof copy.RetryError).toBe(false);
      expect(copy.isRetryError(named)).toBe(false);
      expect(copy.isRetryError(undefined)).toBe(false);
      expect(copy.isRetryError('RetryError')).toBe(false);
      expect(new DOMException('slow', 'TimeoutError') instanceof copy.TimeoutError).toBe(false);
    }
  });

  it('keep a user’s subclass an ordinary class: its instances count as the base’s, not the reverse', () => {
    class QuotaGiveUp extends esm.RetryError {}
    const mine = new QuotaGiveUp('budget', 2, 10, undefined);
    expect(mine instanceof cjs.RetryError).toBe(true);
    expect(cjs.isRetryError(mine)).toBe(true);
    expect(new esm.RetryError('budget', 2, 10, undefined) instanceof QuotaGiveUp).toBe(false);
    expect(new cjs.RetryError('budget', 2, 10, undefined) instanceof QuotaGiveUp).toBe(false);
  });

  it('keep one retry layer across copies: an outer retry() does not retry the other copy’s RetryError', async () => {
    let inner = 0;
    const outer = await cjs
      .retry(
        () =>
          esm.retry(() => {
            inner++;
            return Promise.reject(Object.assign(new Error('busy'), { status: 503 }));
          }, fastFail),
        fastFail,
      )
      .catch((error: unknown) => error);
    expect(esm.isRetryError(outer)).toBe(true);
    expect(inner).toBe(2);
  });
});
