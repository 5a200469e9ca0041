// retryFetch(..., { hedge }) against a real node:http server on 127.0.0.1 with Node's own fetch:
// a GET whose first response is slow is sent again, the fast copy is returned, and the slow
// request's connection is closed; other methods are never hedged.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type AttemptContext, type HedgeEvent, createHedger, hedging } from '../../src/index.js';
import { retryFetch } from '../../src/fetch/index.js';
import { gcs } from '../../src/google/index.js';

interface Request {
  method: string;
  /** Resolves when the request's connection closes. */
  closed: Promise<void>;
}

/** A server that answers request n with `replies[n]`: 'hang' never answers, a string is a 200 body. */
async function server(replies: Array<'hang' | string | ((res: ServerResponse) => void)>) {
  const requests: Request[] = [];
  const sockets = new Set<Socket>();
  const http: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const closed = new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
    requests.push({ method: req.method ?? '', closed });
    const reply = replies[requests.length - 1] ?? 'ok';
    if (reply === 'hang') return;
    if (typeof reply === 'function') return reply(res);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(reply);
  });
  http.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const handle = {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/`,
    requests,
    close: async () => {
      const closed = new Promise((resolve) => http.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
  open.push(handle);
  return handle;
}

const open: Array<{ close(): Promise<void> }> = [];

/**
 * Resolves when the request's connection has closed, or fails after `withinMs` of real time: a
 * body nobody cancels would keep it open until garbage collection or a keep-alive timeout.
 */
async function closedSoon(request: Request | undefined, withinMs = 2000): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the connection was still open after ${withinMs} ms`)), withinMs);
  });
  try {
    await Promise.race([request?.closed ?? Promise.reject(new Error('no such request')), late]);
  } finally {
    clearTimeout(timer);
  }
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

describe('retryFetch with { hedge } on loopback', () => {
  it('sends a GET again when the first response is slow, returns the fast copy and closes the slow request', async () => {
    const { url, requests } = await server(['hang', 'fast']);
    const events: HedgeEvent[] = [];
    const res = await retryFetch(url, undefined, { deadlineMs: 10_000, hedge: hedging({ delayMs: 50, onHedge: (e) => events.push(e) }) });
    expect(await res.text()).toBe('fast');
    expect(requests.map((r) => r.method)).toEqual(['GET', 'GET']);
    expect(events.map((e) => e.reason)).toEqual(['delay']);
    // The loser's request is aborted: its connection closes (it would otherwise stay open).
    await closedSoon(requests[0]);
  });

  it('with bufferBody, cancels a losing response whose body was still downloading', async () => {
    // The first response's headers come at once, its body never ends: with bufferBody the
    // attempt is still running at the delay, so a copy goes out, wins, and the loser's body
    // download is cancelled, closing its connection.
    const { url, requests } = await server([
      (res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('a body that never ends');
      },
      'fast',
    ]);
    const res = await retryFetch(url, undefined, { deadlineMs: 10_000, bufferBody: true, hedge: hedging({ delayMs: 50 }) });
    expect(await res.text()).toBe('fast');
    expect(requests).toHaveLength(2);
    await closedSoon(requests[0]);
  });

  it('cancels the body of a copy that failed with a 503 while another copy went on to win', async () => {
    // 16 MB: the server can finish sending it only if the client reads it, so its connection
    // closes only when the client cancels the body.
    const big = 16 * 1024 * 1024;
    const { url, requests } = await server([
      (res) => {
        setTimeout(() => {
          res.writeHead(503, { 'content-length': String(big) });
          res.end(Buffer.alloc(big, 0x61));
        }, 100);
      },
      (res) => setTimeout(() => res.end('fast'), 300),
    ]);
    const res = await retryFetch(url, undefined, { deadlineMs: 10_000, hedge: hedging({ delayMs: 20 }) });
    expect(await res.text()).toBe('fast');
    expect(requests).toHaveLength(2);
    await closedSoon(requests[0]);
  });

  it('cancels the body of the first 503 when the second copy answers 503 too', async () => {
    // Both copies fail with a 503 whose body never ends: the attempt's answer is the second,
    // and the first's body, read by nobody, must be cancelled to close its connection. The
    // call's next attempt succeeds (and cancels the second 503's body as it starts).
    const endless503 =
      (afterMs: number) =>
      (res: ServerResponse): void => {
        setTimeout(() => {
          res.writeHead(503, { 'content-type': 'text/plain' });
          res.write('unavailable, and still writing');
        }, afterMs);
      };
    const { url, requests } = await server([endless503(40), endless503(80), 'fine']);
    const backoff = { initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitter: 'none' } as const;
    const res = await retryFetch(url, undefined, { backoff, deadlineMs: 10_000, hedge: hedging({ delayMs: 20 }) });
    expect(await res.text()).toBe('fine');
    expect(requests).toHaveLength(3);
    await closedSoon(requests[1]);
    await closedSoon(requests[0]);
  });

  it('sends no copy at once after a 503 whose Retry-After asks to wait', async () => {
    // A hedged copy goes out at once after a transient failure, but not when the server said
    // when to come back: here past the deadline, so the 503 is the answer, as without hedging.
    const { url, requests } = await server([
      (res) => {
        res.writeHead(503, { 'retry-after': '30' });
        res.end('busy');
      },
      'ok',
    ]);
    const res = await retryFetch(url, undefined, { deadlineMs: 10_000, hedge: hedging({ delayMs: 5_000 }) });
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('busy');
    expect(requests).toHaveLength(1);
  });

  it('never hedges a POST', async () => {
    const { url, requests } = await server([
      (res) => {
        setTimeout(() => res.end('posted'), 150);
      },
    ]);
    const res = await retryFetch(url, { method: 'POST', body: 'x' }, { deadlineMs: 10_000, hedge: hedging({ delayMs: 10 }) });
    expect(await res.text()).toBe('posted');
    expect(requests.map((r) => r.method)).toEqual(['POST']);
  });

  it.each([
    ['idempotent: false', { idempotent: false }],
    ['idempotent: () => false', { idempotent: () => false }],
    ["gcs({ strategy: 'never' })", gcs({ strategy: 'never', deadlineMs: 10_000 })],
    ['maxAttempts: 1', { maxAttempts: 1 }],
  ])('sends a GET once, never a hedge, with %s', async (_name, options) => {
    // The only answer comes after the hedging delay: a hedge would have gone out by then.
    const { url, requests } = await server([(res) => setTimeout(() => res.end('only'), 150)]);
    const res = await retryFetch(url, undefined, { deadlineMs: 10_000, ...options, hedge: hedging({ delayMs: 10 }) });
    expect(await res.text()).toBe('only');
    expect(requests).toHaveLength(1);
  });

  it("asks a function idempotent before any copy goes out, with the call's attempt and no error", async () => {
    const asked: Array<[AttemptContext, unknown]> = [];
    const idempotent = (error: unknown, ctx: AttemptContext): boolean => {
      asked.push([ctx, error]);
      return false;
    };
    const { url, requests } = await server([(res) => setTimeout(() => res.end('only'), 150)]);
    const res = await retryFetch(url, undefined, { deadlineMs: 10_000, idempotent, hedge: hedging({ delayMs: 10 }) });
    expect(await res.text()).toBe('only');
    expect(requests).toHaveLength(1);
    expect(asked).toHaveLength(1);
    const [ctx, error] = asked[0]!;
    expect(error).toBeUndefined();
    // retry()'s context, which knows the call's deadline; a copy's context (hedge() runs
    // without one inside the attempt) would say Infinity.
    expect(ctx.attempt).toBe(1);
    expect(ctx.remainingMs).toBeLessThanOrEqual(10_000);
  });

  it('refuses an async idempotent with a TypeError naming it, before any copy goes out', async () => {
    // Its promise would read as a yes, whatever it resolved to: a second copy would go out.
    const { url, requests } = await server([(res) => setTimeout(() => res.end('only'), 150)]);
    const call = retryFetch(url, undefined, {
      deadlineMs: 10_000,
      idempotent: (async () => false) as never,
      hedge: hedging({ delayMs: 10 }),
    });
    await expect(call).rejects.toEqual(new TypeError('retryFetch: options.idempotent must return a boolean, got a promise'));
    expect(requests).toHaveLength(0);
  });

  it('shares a hedger across calls: the allowance runs out', async () => {
    const hedger = createHedger({ maxExtraLoad: 0 });
    const first = await server(['hang', 'fast']);
    expect(await (await retryFetch(first.url, undefined, { hedge: hedging({ delayMs: 20, hedger }) })).text()).toBe('fast');
    const second = await server([(res) => setTimeout(() => res.end('only'), 150)]);
    expect(await (await retryFetch(second.url, undefined, { hedge: hedging({ delayMs: 20, hedger }) })).text()).toBe('only');
    expect(second.requests).toHaveLength(1);
    expect(hedger.hedges).toBe(1);
  });

  it('counts a hedged attempt as one attempt of the call when its body breaks and is resumed', async () => {
    // The first copy hangs, the hedge wins, and its body breaks half-way: the resume is the
    // call's second attempt (maxAttempts 2), however many copies the first attempt sent.
    const body = Buffer.alloc(64 * 1024, 0x61);
    const half = body.subarray(0, body.length / 2);
    const headers = { etag: '"v1"', 'content-length': String(body.length) };
    const breaking = (res: ServerResponse): void => {
      res.writeHead(200, headers);
      res.write(half, () => res.socket?.destroy());
    };
    const rest = (res: ServerResponse): void => {
      res.writeHead(206, {
        ...headers,
        'content-range': `bytes ${half.length}-${body.length - 1}/${body.length}`,
        'content-length': String(half.length),
      });
      res.end(body.subarray(half.length));
    };
    const resumed = await server(['hang', breaking, rest]);
    const res = await retryFetch(resumed.url, undefined, { maxAttempts: 2, deadlineMs: 10_000, hedge: hedging({ delayMs: 20 }) });
    expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true);
    expect(resumed.requests).toHaveLength(3);
    // With one attempt in all, the break is final: the body fails with RetryError 'attempts' (a
    // RangeError of retry()'s, maxAttempts 0, before the fix). maxAttempts 1 also means one
    // request, so the first copy is the one whose body breaks, and no hedge goes out.
    const once = await server([breaking]);
    const last = await retryFetch(once.url, undefined, { maxAttempts: 1, deadlineMs: 10_000, hedge: hedging({ delayMs: 0 }) });
    await expect(last.arrayBuffer()).rejects.toMatchObject({ name: 'RetryError', reason: 'attempts', attempts: 1 });
    expect(once.requests).toHaveLength(1);
  });

  it('rejects a bad hedge option up front, naming it', async () => {
    expect(() => hedging({ delayMs: -5 })).toThrow('hedging: options.delayMs must be a finite number >= 0, got -5');
    expect(() => hedging({ signal: 1 } as never)).toThrow('hedging: unknown option "signal"');
    // A plain object is not a mode: the settings go through hedging(), which checks them.
    await expect(retryFetch('http://127.0.0.1:1/', undefined, { hedge: { delayMs: 5 } as never })).rejects.toThrow(
      'retryFetch: options.hedge must come from hedging() (e.g. hedge: hedging({ delayMs: 50 })), got {"delayMs":5}',
    );
    await expect(retryFetch('http://127.0.0.1:1/', undefined, { hedge: 5 as never })).rejects.toThrow(
      'retryFetch: options.hedge must come from hedging() (e.g. hedge: hedging({ delayMs: 50 })), got 5',
    );
  });
});
