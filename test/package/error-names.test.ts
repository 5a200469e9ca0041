// The errors of the build print their own names. esbuild (tsup) renames a class that refers to
// itself in its body to `_RetryError`, and `console.error` / `util.inspect` print the
// constructor's name: a log would read `_RetryError: gave up …`. Loads the real build, both
// formats, as a user's Node loads them.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, assertBuilt } from './built.js';

type Tenacious = typeof import('../../src/index.js');

let builds: ReadonlyArray<readonly [format: string, library: Tenacious]>;

beforeAll(async () => {
  assertBuilt();
  builds = [
    ['ESM', (await import(pathToFileURL(join(ROOT, 'dist/index.js')).href)) as Tenacious],
    ['CommonJS', createRequire(import.meta.url)(join(ROOT, 'dist/index.cjs')) as Tenacious],
  ];
});

/** One error of each class of the build. */
function everyError(t: Tenacious): Error[] {
  return [
    new t.RetryError('attempts', 3, 2104, new TypeError('fetch failed')),
    new t.TimeoutError('slow'),
    new t.ThrottledError(0.5, 10, 2),
    new t.HttpStatusError(new Response(null, { status: 503 }), 'GET'),
    new t.ResumeError('changed', 10, 'overwritten'),
    new t.GcsUploadError('session-expired', 410, 'gone'),
    t.permanent(new Error('forbidden')),
  ];
}

describe('the built errors', () => {
  it('util.inspect (what console.error prints) starts with RetryError, not _RetryError', () => {
    for (const [format, t] of builds) {
      const printed = inspect(new t.RetryError('attempts', 3, 2104, new TypeError('fetch failed')));
      expect(printed, format).toMatch(/^RetryError: gave up after 3 attempts in 2104 ms \(out of attempts\): fetch failed\n/);
    }
  });

  it('every class: its name, its constructor’s name and what util.inspect prints agree', () => {
    for (const [format, t] of builds) {
      for (const error of everyError(t)) {
        const { name } = error;
        expect(name, format).toMatch(/^[A-Z]\w+Error$/);
        expect(error.constructor.name, `${format} ${name}`).toBe(name);
        expect(inspect(error).startsWith(`${name}: ${error.message}`), `${format} ${name}: ${inspect(error)}`).toBe(true);
      }
    }
  });
});
