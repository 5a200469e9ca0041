// Self-test of the fault server: the real global fetch against a real loopback socket, so each
// fault is checked exactly as a client will meet it. Timeouts are real and therefore small.
import { afterEach, describe, expect, it } from 'vitest';
import {
  APPLIES_SIDE_EFFECT,
  FAULTS,
  mulberry32,
  startFaultServer,
  type Fault,
  type FaultServer,
  type FaultServerOptions,
} from './server.js';

const started: FaultServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.close()));
});

async function start(options?: FaultServerOptions): Promise<FaultServer> {
  const server = await startFaultServer(options);
  started.push(server);
  return server;
}

function call(server: FaultServer, id: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${server.url}/things`, { ...init, headers: { 'x-request-id': id } });
}

const post = (server: FaultServer, id: string, init: RequestInit = {}): Promise<Response> =>
  call(server, id, { method: 'POST', body: '{"name":"x"}', ...init });

// What a rejected fetch carried: its own name and message, and the code of its cause.
async function failure(promise: Promise<unknown>): Promise<{ name: string; message: string; code: unknown }> {
  const error: unknown = await promise.then(
    () => expect.fail('expected a rejection'),
    (reason: unknown) => reason,
  );
  if (!(error instanceof Error)) throw new Error(`not an Error: ${String(error)}`);
  const cause: unknown = error.cause;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? cause.code : undefined;
  return { name: error.name, message: error.message, code };
}

// Polls a condition that depends on the other end of a socket noticing something.
async function eventually(condition: () => boolean, withinMs = 1000): Promise<void> {
  const end = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('fault server: each fault as fetch sees it', () => {
  it('listens on 127.0.0.1 and answers ok with a padded JSON body, no side effect for GET', async () => {
    const server = await start({ bodyBytes: 300 });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await call(server, 'g1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('300');
    const body: unknown = await res.json();
    expect(body).toMatchObject({ id: 'g1', method: 'GET', applied: 0 });
    expect(server.applied.has('g1')).toBe(false);
    expect(server.stats().injected.ok).toBe(1);
  });

  it('answers 500, 502, 503, 504 in script order, then ok once the script is over', async () => {
    const server = await start({ faults: ['500', '502', '503', '504'] });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(server, `s${i}`)).status);
    expect(statuses).toEqual([500, 502, 503, 504, 200]);
    expect(server.stats().history.map((entry) => entry.fault)).toEqual(['500', '502', '503', '504', 'ok']);
  });

  it('sends Retry-After as delta-seconds, 0 included, or as an HTTP-date', async () => {
    const zero = await start({ faults: ['429'] });
    const res0 = await call(zero, 'r0');
    expect(res0.status).toBe(429);
    expect(res0.headers.get('retry-after')).toBe('0');

    const seconds = await start({ faults: ['429'], retryAfter: 3 });
    expect((await call(seconds, 'r1')).headers.get('retry-after')).toBe('3');

    const at = new Date(Date.now() + 2000);
    const dated = await start({ faults: ['429'], retryAfter: () => at });
    const header = (await call(dated, 'r2')).headers.get('retry-after');
    expect(header).toBe(at.toUTCString());
    expect(header).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);

    const none = await start({ faults: ['429'], retryAfter: null });
    expect((await call(none, 'r3')).headers.has('retry-after')).toBe(false);
  });

  it('refuses a fractional or negative Retry-After at start', async () => {
    await expect(startFaultServer({ retryAfter: 1.5 })).rejects.toThrow(RangeError);
    await expect(startFaultServer({ retryAfter: -1 })).rejects.toThrow(RangeError);
  });

  it('reset-before-response: fetch rejects with "fetch failed", cause ECONNRESET', async () => {
    const server = await start({ faults: ['reset-before-response'] });
    expect(await failure(call(server, 'x'))).toEqual({ name: 'TypeError', message: 'fetch failed', code: 'ECONNRESET' });
    expect(server.stats().injected['reset-before-response']).toBe(1);
  });

  it('reset-mid-body: status and headers arrive, then reading the body fails', async () => {
    const server = await start({ faults: ['reset-mid-body'], bodyBytes: 2000 });
    const res = await call(server, 'x');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('2000');
    expect(await failure(res.text())).toEqual({ name: 'TypeError', message: 'terminated', code: 'UND_ERR_SOCKET' });
  });

  it('hang: the client can only give up; the server keeps answering others', async () => {
    const server = await start({ faults: ['hang'] });
    const seen = await failure(call(server, 'h', { signal: AbortSignal.timeout(100) }));
    expect(seen.name).toBe('TimeoutError');
    expect(server.stats().injected.hang).toBe(1);
    // Undici may keep the aborted connection for its keep-alive time, so its closing is not
    // asserted here; close() below (afterEach) destroys it either way.
    expect((await call(server, 'next')).status).toBe(200);
  });

  it('hang: close() releases a client that set no timeout', async () => {
    const server = await start({ faults: ['hang'] });
    const pending = failure(call(server, 'h'));
    await eventually(() => server.stats().requests === 1);
    expect(server.openSockets()).toBe(1);
    await server.close();
    expect((await pending).message).toBe('fetch failed');
    expect(server.openSockets()).toBe(0);
  });

  it('slow-headers: a correct answer, late; a shorter client timeout gives up', async () => {
    const server = await start({ faults: ['slow-headers', 'slow-headers'], slowHeadersMs: 150 });
    const t0 = performance.now();
    const res = await call(server, 'a');
    expect(res.status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    await res.arrayBuffer();
    expect((await failure(call(server, 'b', { signal: AbortSignal.timeout(40) }))).name).toBe('TimeoutError');
  });

  it('refuses a request without x-request-id with 400, outside the fault accounting', async () => {
    const server = await start({ faults: ['503'] });
    expect((await fetch(server.url)).status).toBe(400);
    expect(server.stats()).toMatchObject({ rejected: 1, requests: 0 });
    // The script was not consumed by the refused request.
    expect((await call(server, 'a')).status).toBe(503);
  });
});

describe('fault server: side effects', () => {
  it('documents which faults apply the side effect first', () => {
    const first = FAULTS.filter((fault) => APPLIES_SIDE_EFFECT[fault]);
    expect(first).toEqual(['ok', 'reset-mid-body', 'slow-headers']);
  });

  it('POST + reset-mid-body: applied once though the client saw an error; POST + 503: not applied', async () => {
    const server = await start({ faults: ['reset-mid-body', '503'] });
    const res = await post(server, 'op-1');
    await failure(res.text());
    expect((await post(server, 'op-2')).status).toBe(503);
    expect(server.applied.get('op-1')).toBe(1);
    expect(server.applied.get('op-2') ?? 0).toBe(0);
  });

  it('counts per logical id across retries, and reports the count in the body', async () => {
    // Fail the first attempt of every id: a per-request script.
    const server = await start({ faults: ({ attempt }) => (attempt === 1 ? '503' : 'ok') });
    expect((await post(server, 'op')).status).toBe(503);
    expect(await (await post(server, 'op')).json()).toMatchObject({ id: 'op', method: 'POST', applied: 1 });
    // A blind retry of a non-idempotent call applies it twice: what a soak test must catch.
    expect(await (await post(server, 'op')).json()).toMatchObject({ applied: 2 });
    expect(server.stats().history.map((entry) => [entry.attempt, entry.fault])).toEqual([
      [1, '503'],
      [2, 'ok'],
      [3, 'ok'],
    ]);
  });

  it('slow-headers applies on arrival: a client that timed out still had its effect applied', async () => {
    const server = await start({ faults: ['slow-headers'], slowHeadersMs: 1000 });
    const controller = new AbortController();
    const pending = failure(post(server, 'op', { signal: controller.signal }));
    // Give up only once the server has the request: a bare short timeout could fire first on a
    // loaded machine, and then nothing would have been applied.
    await eventually(() => server.stats().requests === 1);
    controller.abort();
    expect((await pending).name).toBe('AbortError');
    expect(server.applied.get('op')).toBe(1);
  });

  it('never applies a side effect for GET', async () => {
    const server = await start({ faults: ['reset-mid-body'] });
    await failure((await call(server, 'g')).text());
    expect(server.applied.size).toBe(0);
  });
});

describe('fault server: seeded mix', () => {
  const weights: Partial<Record<Fault, number>> = { '500': 1, '503': 2, '429': 1, 'reset-before-response': 1 };

  async function faultsServed(seed: number, requests: number): Promise<Fault[]> {
    const server = await start({ faults: { seed, faultRate: 0.5, weights } });
    for (let i = 0; i < requests; i++) {
      await call(server, `m${i}`).then(
        (res) => res.arrayBuffer(),
        () => undefined,
      );
    }
    return server.stats().history.map((entry) => entry.fault);
  }

  it('mulberry32 is reproducible and stays in [0, 1)', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(mulberry32(43)()).not.toBe(xs[0]);
  });

  it('the same seed serves the same fault sequence; another seed another one', async () => {
    const first = await faultsServed(7, 30);
    expect(await faultsServed(7, 30)).toEqual(first);
    expect(await faultsServed(8, 30)).not.toEqual(first);
    // Only weighted faults appear, and the rate is neither 0 nor 1.
    expect(new Set(first).size).toBeGreaterThan(2);
    expect(first.every((fault) => fault === 'ok' || (weights[fault] ?? 0) > 0)).toBe(true);
  });

  it('faultRate 0 is all ok; an invalid mix is refused at start', async () => {
    const server = await start({ faults: { seed: 1, faultRate: 0 } });
    for (let i = 0; i < 5; i++) expect((await call(server, `z${i}`)).status).toBe(200);
    await expect(startFaultServer({ faults: { seed: 1, faultRate: 1.5 } })).rejects.toThrow(RangeError);
    await expect(startFaultServer({ faults: { seed: 1, faultRate: 0.5, weights: {} } })).rejects.toThrow(RangeError);
  });
});

describe('fault server: accounting and close', () => {
  it('tracks requests, connections and open sockets; close() leaves none open', async () => {
    const server = await start({ faults: ['ok', '503', 'reset-before-response', 'ok'] });
    await (await call(server, 'a')).arrayBuffer();
    await (await call(server, 'b')).arrayBuffer();
    await failure(call(server, 'c'));
    await (await call(server, 'd')).arrayBuffer();
    const stats = server.stats();
    expect(stats.requests).toBe(4);
    expect(stats.injected).toMatchObject({ ok: 2, '503': 1, 'reset-before-response': 1 });
    // The reset killed one keep-alive connection, so the last request needed a new one.
    expect(stats.connections).toBeGreaterThanOrEqual(2);
    expect(server.openSockets()).toBeGreaterThan(0);
    await server.close();
    expect(server.openSockets()).toBe(0);
    await server.close(); // idempotent
  });

  it('close() cancels a pending slow answer and releases its client', async () => {
    const server = await start({ faults: ['slow-headers'], slowHeadersMs: 10_000 });
    const pending = failure(call(server, 's'));
    await eventually(() => server.stats().requests === 1);
    await server.close();
    expect((await pending).name).toBe('TypeError');
    expect(server.openSockets()).toBe(0);
  });

  it('a throwing selection function resets that request instead of crashing the process', async () => {
    const server = await start({
      faults: () => {
        throw new Error('boom');
      },
    });
    expect((await failure(call(server, 'x'))).message).toBe('fetch failed');
    expect(server.stats().handlerErrors).toEqual(['boom']);
  });
});
