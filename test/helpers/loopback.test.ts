// The shared loopback server (test/helpers/loopback.ts) that test/clients and test/faults stand
// on: it serves on 127.0.0.1, counts its connections, and its close ends hung ones too.
import { describe, expect, it } from 'vitest';
import { type Loopback, closeAfterEach, closedPort, startLoopback } from './loopback.js';

/** What a fetch rejects with; fails the test when it resolves. */
async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('startLoopback', () => {
  it('serves on 127.0.0.1 at a free port, and counts the connections it accepted and holds', async () => {
    const loopback = await startLoopback((req, res) => res.end(`seen ${req.method} ${req.url}`));
    try {
      expect(loopback.url).toBe(`http://127.0.0.1:${loopback.port}`);
      expect(loopback.port).toBeGreaterThan(0);
      const res = await fetch(`${loopback.url}/path?q=1`);
      expect(await res.text()).toBe('seen GET /path?q=1');
      expect(loopback.connections()).toBe(1);
      expect(loopback.openSockets()).toBe(1); // kept alive by the client
    } finally {
      await loopback.close();
    }
    expect(loopback.openSockets()).toBe(0);
  });

  it('close() ends a connection whose request was never answered, once however often it is called', async () => {
    const loopback = await startLoopback(() => {}); // never answers
    const hung = refusal(fetch(loopback.url));
    while (loopback.openSockets() === 0) await new Promise((resolve) => setImmediate(resolve));
    const first = loopback.close();
    expect(loopback.close()).toBe(first);
    await first;
    expect(loopback.openSockets()).toBe(0);
    expect(await hung).toMatchObject({ message: 'fetch failed' });
    expect(await refusal(fetch(loopback.url))).toMatchObject({ cause: { code: 'ECONNREFUSED' } });
  });

  it('rejects with EADDRINUSE for a port that is taken', async () => {
    const taken = await startLoopback(() => {});
    try {
      await expect(startLoopback(() => {}, { port: taken.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await taken.close();
    }
  });
});

describe('closedPort', () => {
  it('is a port where connections are refused', async () => {
    const port = await closedPort();
    expect(await refusal(fetch(`http://127.0.0.1:${port}/`))).toMatchObject({ cause: { code: 'ECONNREFUSED' } });
  });
});

describe('closeAfterEach', () => {
  const closing = closeAfterEach();
  let left: Loopback | undefined;

  it('takes a server to close after the test', async () => {
    left = closing(await startLoopback((_req, res) => res.end('ok')));
    expect(await (await fetch(left.url)).text()).toBe('ok');
  });

  it('(the test after it finds that server closed)', async () => {
    expect(left?.openSockets()).toBe(0);
    expect(await refusal(fetch((left as Loopback).url))).toMatchObject({ cause: { code: 'ECONNREFUSED' } });
  });
});
