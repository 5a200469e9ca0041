// notSent against the errors real clients throw: Node's fetch (undici) failing to connect,
// failing to resolve, timing out on connect, and failing after the request went out.
import fc from 'fast-check';
import { createServer } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { NOT_SENT_CODES, notSent, retry, RetryError } from '../../src/index.js';
import { type FaultServer, startFaultServer } from '../faults/server.js';
import { RECORDED_ROWS, rebuild, RUNTIME_FAILURES } from './runtime-errors.js';

const servers: FaultServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('notSent: the request never left the client', () => {
  it('is true for a refused connection (fetch: TypeError "fetch failed", cause ECONNREFUSED)', async () => {
    const error = await rejection(fetch(`http://127.0.0.1:${await closedPort()}/`, { method: 'POST', body: 'x' }));
    expect((error as Error).message).toBe('fetch failed');
    expect(((error as Error).cause as { code?: string }).code).toBe('ECONNREFUSED');
    expect(notSent(error)).toBe(true);
  });

  it('is true for a name that does not resolve (ENOTFOUND, or EAI_AGAIN without a resolver)', async () => {
    // .invalid never resolves (RFC 2606); the lookup fails locally, no network needed.
    const error = await rejection(fetch('http://tenacious-test.invalid/', { method: 'POST', body: 'x' }));
    const code = ((error as Error).cause as { code?: string }).code;
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain(code);
    expect(notSent(error)).toBe(true);
  });

  it('is true for a connect timeout (undici UND_ERR_CONNECT_TIMEOUT, a real handshake that never completes)', async () => {
    // A listener whose thread is blocked never accepts; once its accept queue is full, the
    // kernel drops new SYNs, so the client's handshake stalls until undici's connect timeout.
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       const server = require('node:net').createServer();
       server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
         parentPort.postMessage(server.address().port);
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10000);
       });`,
      { eval: true },
    );
    const fillers: Socket[] = [];
    try {
      const port = await new Promise<number>((resolve) => worker.once('message', resolve));
      for (let i = 0; i < 4; i++) fillers.push(connect(port, '127.0.0.1').on('error', () => {}));
      await new Promise((resolve) => setTimeout(resolve, 50));
      // Node's fetch takes an undici dispatcher; its Agent class is the global dispatcher's.
      await fetch(`http://127.0.0.1:${await closedPort()}/`).catch(() => {});
      const Agent = (globalThis as Record<symbol, { constructor: new (options: object) => { close(): Promise<void> } }>)[
        Symbol.for('undici.globalDispatcher.1')
      ]!.constructor;
      const dispatcher = new Agent({ connect: { timeout: 100 } });
      try {
        const error = await rejection(fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x', dispatcher } as RequestInit));
        expect(((error as Error).cause as { code?: string }).code).toBe('UND_ERR_CONNECT_TIMEOUT');
        expect(notSent(error)).toBe(true);
      } finally {
        await dispatcher.close();
      }
    } finally {
      for (const socket of fillers) socket.destroy();
      await worker.terminate();
    }
  });
});

describe('notSent: the request may have arrived', () => {
  it('is false for a connection reset after the request was sent (ECONNRESET)', async () => {
    const server = await startFaultServer({ faults: ['reset-before-response'] });
    servers.push(server);
    const error = await rejection(fetch(server.url, { method: 'POST', body: 'x', headers: { 'x-request-id': 'a' } }));
    expect(((error as Error).cause as { code?: string }).code).toBe('ECONNRESET');
    expect(notSent(error)).toBe(false);
  });

  it('is false for a body cut mid-way (UND_ERR_SOCKET) and for a client timeout on a hung request', async () => {
    const server = await startFaultServer({ faults: ['reset-mid-body', 'hang'] });
    servers.push(server);
    const res = await fetch(server.url, { method: 'POST', body: 'x', headers: { 'x-request-id': 'a' } });
    const cut = await rejection(res.text());
    expect(((cut as Error).cause as { code?: string }).code).toBe('UND_ERR_SOCKET');
    expect(notSent(cut)).toBe(false);
    const hung = await rejection(
      fetch(server.url, { method: 'POST', body: 'x', headers: { 'x-request-id': 'b' }, signal: AbortSignal.timeout(50) }),
    );
    expect((hung as Error).name).toBe('TimeoutError');
    expect(notSent(hung)).toBe(false);
  });

  it("is false when a timeout carries an earlier refusal as its cause (retry()'s deadline TimeoutError)", async () => {
    const port = await closedPort();
    const server = await startFaultServer({ faults: ['hang'] });
    servers.push(server);
    // Attempt 1 is refused; attempt 2 reaches a server that never answers and is still running
    // at the deadline. Its TimeoutError's cause is attempt 1's refusal: history, not proof.
    const error = await rejection(
      retry(
        ({ attempt, signal }) =>
          fetch(attempt === 1 ? `http://127.0.0.1:${port}/` : server.url, {
            method: 'POST',
            body: 'x',
            headers: { 'x-request-id': 'a' },
            signal,
          }),
        { backoff: { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' }, deadlineMs: 300 },
      ),
    );
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).reason).toBe('deadline');
    expect(notSent((error as RetryError).cause)).toBe(false);
    expect(notSent(error)).toBe(false);
    expect(server.stats().requests).toBe(1);
  });

  it('is true for a RetryError of one attempt that was refused, false after several', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const wrapped = new TypeError('fetch failed', { cause: refused });
    expect(notSent(new RetryError('deadline', 1, 10, wrapped))).toBe(true);
    // Attempt 1 may have timed out after the server got it; only the last one was refused.
    expect(notSent(new RetryError('attempts', 3, 10, wrapped))).toBe(false);
  });
});

describe('notSent: shapes', () => {
  it("reads the code through cause chains, up to the readers' depth", () => {
    let error: unknown = Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    for (let i = 0; i < 7; i++) error = new Error(`wrapper ${i}`, { cause: error });
    expect(notSent(error)).toBe(true);
    expect(notSent(new Error('one more', { cause: error }))).toBe(false);
  });

  it('is false for other codes, for no code and for non-errors', () => {
    for (const code of ['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT']) {
      expect(notSent(Object.assign(new Error(code), { code }))).toBe(false);
    }
    expect(notSent(new Error('plain'))).toBe(false);
    expect(notSent(undefined)).toBe(false);
    expect(notSent('ECONNREFUSED')).toBe(false);
    expect(notSent({ status: 503 })).toBe(false);
  });

  it('an outer code decides over an inner one (the first code found is the failure)', () => {
    const inner = Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    expect(notSent(Object.assign(new Error('socket'), { code: 'UND_ERR_SOCKET', cause: inner }))).toBe(false);
  });

  it('property: true exactly when the first code on the chain is a not-sent code and no give-up lies above it', () => {
    const codes = [...NOT_SENT_CODES, 'ECONNRESET', 'ETIMEDOUT', 'UND_ERR_SOCKET'];
    const level = fc.record({
      code: fc.option(fc.constantFrom(...codes), { nil: undefined }),
      name: fc.constantFrom('Error', 'TypeError', 'TimeoutError', 'AbortError'),
    });
    fc.assert(
      fc.property(fc.array(level, { minLength: 1, maxLength: 8 }), (levels) => {
        let error: unknown;
        for (const { code, name } of [...levels].reverse()) {
          const next: Error = new Error('level', error === undefined ? undefined : { cause: error });
          next.name = name;
          if (code !== undefined) Object.assign(next, { code });
          error = next;
        }
        const first = levels.findIndex((l) => l.code !== undefined);
        const expected =
          first >= 0 &&
          NOT_SENT_CODES.has(levels[first]!.code!) &&
          !levels.slice(0, first + 1).some((l, i) => i < first && (l.name === 'TimeoutError' || l.name === 'AbortError'));
        expect(notSent(error)).toBe(expected);
      }),
    );
  });
});

// Regression (issue 12): notSent knew only Node's and Bun's ECONNREFUSED. The Node cases are
// real (loopback); the other runtimes' shapes are the ones test/runtimes/ records from each
// runtime (runtime-errors.ts), rebuilt here.
describe('notSent on each runtime', () => {
  it('Node: any system error of the connect call (a real refused net.connect, and the others by shape), and a happy-eyeballs AggregateError of them', async () => {
    const port = await closedPort();
    const error = await new Promise<Error>((resolve) => {
      const socket: Socket = connect({ port, host: '127.0.0.1' });
      socket.on('error', resolve);
    });
    expect(error).toMatchObject({ code: 'ECONNREFUSED', syscall: 'connect' });
    expect(notSent(error)).toBe(true);
    // The same call failing otherwise: proved by the syscall, whatever the code.
    const connectTimeout = Object.assign(new Error('connect ETIMEDOUT 10.0.0.1:443'), { code: 'ETIMEDOUT', syscall: 'connect' });
    const unreachable = Object.assign(new Error('connect EHOSTUNREACH'), { code: 'EHOSTUNREACH', syscall: 'connect' });
    expect(notSent(new TypeError('fetch failed', { cause: connectTimeout }))).toBe(true);
    expect(notSent(unreachable)).toBe(true);
    // A read that timed out after connecting proves nothing.
    expect(notSent(Object.assign(new Error('read ETIMEDOUT'), { code: 'ETIMEDOUT', syscall: 'read' }))).toBe(false);
    // autoSelectFamily: every address tried, each refused.
    const both = Object.assign(new AggregateError([error, unreachable], 'connect'), { code: 'ECONNREFUSED' });
    expect(notSent(both)).toBe(true);
    const mixed = Object.assign(new AggregateError([error, Object.assign(new Error('reset'), { code: 'ECONNRESET' })]), {
      code: 'ETIMEDOUT',
    });
    expect(notSent(mixed)).toBe(false);
    const cyclic = new AggregateError([]);
    (cyclic as { errors: unknown[] }).errors = [cyclic];
    expect(notSent(cyclic)).toBe(false);
  });

  // Regression (issue 21, item 11): Deno 2.9.6 rejects with TypeError('fetch failed') and puts
  // hyper's reason on the plain Error under it; notSent read the reason only on a TypeError, so a
  // refused POST was never resent.
  it('Deno 2: the Error under "fetch failed" that says the connector failed (refused, DNS); not a connection closed later', () => {
    const deno = RUNTIME_FAILURES.deno;
    expect(notSent(rebuild(deno.refused.shape))).toBe(true);
    expect(notSent(rebuild(deno.dns.shape))).toBe(true);
    expect(notSent(rebuild(deno.close.shape))).toBe(false);
    expect(notSent(rebuild(deno.reset.shape))).toBe(false);
  });

  it('Deno 1: the same reason on the TypeError itself', () => {
    // Deno 1's shape (not re-recorded: the suite runs Deno 2).
    expect(
      notSent(
        new TypeError(
          'error sending request for url (http://127.0.0.1:1/): error trying to connect: tcp connect error: Connection refused (os error 111)',
        ),
      ),
    ).toBe(true);
  });

  it.each(RECORDED_ROWS)('%s, %s: notSent of what the runtime really throws', (_runtime, _failure, recorded) => {
    expect(notSent(rebuild(recorded.shape))).toBe(recorded.notSent);
  });

  it("Bun 1.4: Node's codes on the TypeError itself", () => {
    expect(notSent(rebuild(RUNTIME_FAILURES.bun.refused.shape))).toBe(true);
    expect(notSent(rebuild(RUNTIME_FAILURES.bun.dns.shape))).toBe(true);
    expect(notSent(rebuild(RUNTIME_FAILURES.bun.reset.shape))).toBe(false);
  });

  it('older Bun: ConnectionRefused, FailedToOpenSocket, DNSLookupFailed; not ConnectionClosed', () => {
    // The codes Bun's fetch had before it took Node's (not re-recorded: the suite runs Bun 1.4).
    for (const code of ['ConnectionRefused', 'FailedToOpenSocket', 'DNSLookupFailed']) {
      expect(notSent(Object.assign(new Error('Unable to connect. Is the computer able to access the url?'), { code }))).toBe(true);
    }
    expect(notSent(Object.assign(new Error('The socket connection was closed unexpectedly.'), { code: 'ConnectionClosed' }))).toBe(false);
  });

  it('browsers and workerd cannot tell, so it is false', () => {
    expect(notSent(rebuild(RUNTIME_FAILURES.chromium.refused.shape))).toBe(false);
    expect(notSent(rebuild(RUNTIME_FAILURES.workerd.refused.shape))).toBe(false);
  });
});

describe('notSent', () => {
  it('finds the code on a function-shaped error, and under one', () => {
    const refused = Object.assign(() => undefined, { code: 'ECONNREFUSED' });
    expect(notSent(refused)).toBe(true);
    expect(notSent(new TypeError('fetch failed', { cause: refused }))).toBe(true);
    expect(notSent(Object.assign(() => undefined, { code: 'ECONNRESET' }))).toBe(false);
  });

  it('is false for an abort above the refusal: aborting says nothing about what the server got', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    // gaxios and node-fetch wrap what they were doing when aborted in an AbortError.
    const abort = Object.assign(new Error('The operation was aborted'), { name: 'AbortError', cause: refused });
    expect(notSent(abort)).toBe(false);
    expect(notSent(new DOMException('aborted', 'AbortError'))).toBe(false);
    expect(notSent(refused)).toBe(true);
  });

  it('an AggregateError with no errors proves nothing; one whose errors were all refused does', () => {
    expect(notSent(new AggregateError([], 'nothing tried'))).toBe(false);
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(notSent(new AggregateError([refused, refused]))).toBe(true);
    // Errors of errors are not read: only one connect's attempts.
    expect(notSent(new AggregateError([new AggregateError([refused])]))).toBe(false);
  });

  it('an AggregateError holding null or undefined beside a real refusal proves nothing, and reading it does not throw', async () => {
    const port = await closedPort();
    const refused = await new Promise<Error>((resolve) => {
      connect({ port, host: '127.0.0.1' }).on('error', resolve);
    });
    expect(notSent(new AggregateError([refused, refused]))).toBe(true);
    expect(notSent(new AggregateError([refused, null]))).toBe(false);
    expect(notSent(new AggregateError([refused, undefined]))).toBe(false);
    expect(notSent(new TypeError('fetch failed', { cause: new AggregateError([null, refused]) }))).toBe(false);
  });

  it('a system code with a syscall other than connect or getaddrinfo proves nothing; a non-system code with connect neither', () => {
    expect(notSent(Object.assign(new Error('x'), { code: 'EHOSTUNREACH', syscall: 'write' }))).toBe(false);
    expect(notSent(Object.assign(new Error('x'), { code: 'EAI_FAIL', syscall: 'getaddrinfo' }))).toBe(true);
    expect(notSent(Object.assign(new Error('x'), { code: 'ERR_SOMETHING', syscall: 'connect' }))).toBe(false);
  });

  it('reads the Deno message only on an Error or a TypeError, and only as Deno words it', () => {
    const message =
      'error sending request for url (http://127.0.0.1:1/): client error (Connect): tcp connect error: Connection refused (os error 111)';
    expect(notSent(new Error(message))).toBe(true);
    expect(notSent(new TypeError(message))).toBe(true);
    expect(notSent(Object.assign(new Error(message), { name: 'HttpError' }))).toBe(false);
    expect(notSent(new RangeError(message))).toBe(false);
    // The stage alone, without Deno's "error sending request …" before it, proves nothing.
    expect(notSent(new Error('client error (Connect): tcp connect error'))).toBe(false);
    expect(notSent(new TypeError('proxy said: error sending request for url (x): client error (Connect): '))).toBe(false);
    // A connection that broke after connecting.
    expect(notSent(new Error(message.replace('(Connect)', '(SendRequest)')))).toBe(false);
  });

  it('reads the Deno message only when it is a string: an object that prints as Deno words is not converted', () => {
    const words = { toString: () => 'error sending request for url (http://127.0.0.1:1/): client error (Connect): tcp connect error' };
    const odd = Object.defineProperty(new Error('x'), 'message', { value: words });
    expect(notSent(odd)).toBe(false);
    expect(notSent(new TypeError('fetch failed', { cause: odd }))).toBe(false);
  });

  it("walks gaxios 6's `error` when there is no cause, and stops at a reset above a refusal", () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(notSent(Object.assign(new Error('request failed'), { error: refused }))).toBe(true);
    expect(notSent(Object.assign(new Error('reset'), { code: 'ECONNRESET', error: refused }))).toBe(false);
  });
});
