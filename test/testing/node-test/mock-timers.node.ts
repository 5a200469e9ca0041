// Run by `node --test` (fake-clocks.test.ts spawns it): a retrying call under node:test's own
// mock timers, enabled after tenacious is imported. mock.timers fakes setTimeout and Date, not
// performance; the library follows Date then.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, mock, test } from 'node:test';
import { retryFetch } from '../../../src/fetch/index.js';
import { RetryError, retry } from '../../../src/index.js';
import { instant, scriptedFetch, settle } from '../../../src/testing/index.js';

beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 }));
afterEach(() => mock.timers.reset());

test('retryFetch waits 1 s and 2 s in virtual time', async () => {
  const fetch = scriptedFetch([503, 'ECONNRESET', 200]);
  const call = retryFetch('https://api.example.com/', undefined, { fetch, backoff: { jitter: 'none' } });
  const res = await settle(call, mock.timers);
  assert.equal(res.status, 200);
  assert.equal(fetch.requests.length, 3);
  assert.equal(Date.now(), 3000);
});

test('a deadline ends the call at its virtual time', async () => {
  const call = retry(
    () => {
      throw new Error('down');
    },
    { deadlineMs: 5000, backoff: { jitter: 'none' } },
  );
  const error = await settle(call, mock.timers).catch((e: unknown) => e);
  assert.ok(error instanceof RetryError);
  assert.equal(error.reason, 'deadline');
  assert.equal(error.attempts, 3);
  assert.equal(Date.now(), 3000);
});

test('instant() needs only timer turns', async () => {
  const fetch = scriptedFetch([503, 503, 200]);
  const res = await settle(retryFetch('https://api.example.com/', undefined, instant({ fetch })), mock.timers);
  assert.equal(res.status, 200);
  assert.ok(Date.now() <= 2);
});
