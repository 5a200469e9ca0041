// The smoke suite's test server (see smoke.js): a web-standard fetch handler, so that Deno
// (Deno.serve), Bun (Bun.serve) and Node (node-server.mjs) serve the very same routes.

/** Requests seen so far, per `key` query parameter: each case uses its own key. */
const seen = new Map();

/** How long /hang holds a request whose client never gives up (none should). */
const HANG_MS = 5_000;

const json = (body, init = {}) =>
  new Response(JSON.stringify(body), { ...init, headers: { 'content-type': 'application/json', ...init.headers } });

/**
 * The test server:
 * - `/flaky?key=K&fail=N&status=S[&retryAfter=R]`: the first N requests of K answer status S
 *   (with `Retry-After: R`), the later ones 200 `{ served }`, the number of requests of K so far,
 *   and `received`, the request's body, if it may have one;
 * - `/hang?key=K&hang=N`: the first N requests of K get no answer until the client goes away,
 *   the later ones 200 `{ served }`;
 * - `/trickle`: one chunk of body at once, then nothing until the client goes away;
 * - `/count?key=K`: `{ served }` without counting itself.
 */
export async function handle(request) {
  const url = new URL(request.url);
  const key = url.searchParams.get('key') ?? '';
  if (url.pathname === '/count') return json({ served: seen.get(key) ?? 0 });
  const served = (seen.get(key) ?? 0) + 1;
  seen.set(key, served);
  if (url.pathname === '/flaky') {
    const received = request.method === 'GET' || request.method === 'HEAD' ? {} : { received: await request.text() };
    if (served > Number(url.searchParams.get('fail') ?? 0)) return json({ served, ...received });
    const retryAfter = url.searchParams.get('retryAfter');
    const headers = retryAfter === null ? {} : { 'retry-after': retryAfter };
    return json({ served, failed: true }, { status: Number(url.searchParams.get('status')), headers });
  }
  if (url.pathname === '/hang') {
    if (served > Number(url.searchParams.get('hang') ?? 0)) return json({ served });
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(json({ served, late: true }, { status: 504 })), HANG_MS);
      request.signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve(new Response(null, { status: 499 }));
      });
    });
  }
  if (url.pathname === '/trickle') {
    // One chunk at once, then nothing until the client goes away.
    let timer;
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('first chunk'));
        timer = setTimeout(() => controller.close(), HANG_MS);
      },
      cancel() {
        clearTimeout(timer);
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/plain' } });
  }
  return new Response('not found', { status: 404 });
}
