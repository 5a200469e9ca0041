// The testing recipe of docs/recipes.md (and the README): retryFetch over tenacious/testing's
// scriptedFetch with instant() options, run as shown in virtual time. Without instant() the
// same script waits out the backoff and the 429's Retry-After; with it no time passes.
import { describe, expect, it } from 'vitest';
import { retryFetch } from '../../src/fetch/index.js';
import { instant, scriptedFetch, settle } from '../../src/testing/index.js';
import { useVirtualClock } from '../helpers/clock.js';
import { recipeRegionsOf } from './recipe-kit.js';

const clock = useVirtualClock();

async function recipe(): Promise<{ status: number; requests: number }> {
  // recipe:begin
  const fetch = scriptedFetch([503, 'ECONNRESET', { status: 429, retryAfter: 2 }, 200]);
  const res = await retryFetch('https://api.example.com/items', {}, instant({ fetch }));
  // recipe:end
  return { status: res.status, requests: fetch.requests.length };
}

describe('the testing recipe', () => {
  it('is the code docs/recipes.md shows', () => {
    expect(recipeRegionsOf(import.meta.url)).toEqual([{ code: expect.stringContaining('instant({ fetch })') as unknown, shown: true }]);
  });

  it('runs as shown: the 200 after four requests, and no time waited', async () => {
    await expect(settle(recipe(), clock)).resolves.toEqual({ status: 200, requests: 4 });
    expect(clock.now).toBeLessThan(10);
  });

  it('without instant(), the same script waits out the backoff and the 2 s Retry-After', async () => {
    const fetch = scriptedFetch([503, 'ECONNRESET', { status: 429, retryAfter: 2 }, 200]);
    const res = await settle(retryFetch('https://api.example.com/items', {}, { fetch }), clock);
    expect([res.status, fetch.requests.length]).toEqual([200, 4]);
    expect(clock.now).toBeGreaterThanOrEqual(2000);
  });
});
