// Loopback helpers of the retryFetch tests: a scripted node:http server on 127.0.0.1 that
// answers request n with replies[n] and records each request and when its socket closed.
import { type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach } from 'vitest';
import type { RetryFetchOptions } from '../../src/fetch/index.js';

// A scripted loopback server: answer n is replies[n] (then 200 "ok"); records every request.

export interface Seen {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** When the request's connection closed (performance.now()), if it has. */
  socketClosedAt: number | undefined;
}

export type Reply = (res: ServerResponse, seen: Seen) => void;

export interface Scripted {
  readonly url: string;
  readonly seen: Seen[];
  openSockets(): number;
  close(): Promise<void>;
}

/** Servers to close after the running test; a test file calls {@link closeServersAfterEach} once. */
export const servers: Array<{ close(): Promise<void> }> = [];

export function closeServersAfterEach(): void {
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
}

export async function scriptedServer(replies: Reply[], port = 0): Promise<Scripted> {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry: Seen = {
        method: req.method ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        socketClosedAt: undefined,
      };
      seen.push(entry);
      requestsOn.get(req.socket)?.push(entry);
      (replies[seen.length - 1] ?? reply(200, 'ok'))(res, entry);
    });
  });
  // One close listener per socket (not per request: a kept-alive socket serves many).
  const requestsOn = new WeakMap<Socket, Seen[]>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    requestsOn.set(socket, []);
    socket.once('close', () => {
      sockets.delete(socket);
      const closedAt = performance.now();
      for (const entry of requestsOn.get(socket) ?? []) entry.socketClosedAt = closedAt;
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const scripted: Scripted = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    seen,
    openSockets: () => sockets.size,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
  servers.push(scripted);
  return scripted;
}

export function reply(status: number, body = `status ${status}`, headers: Record<string, string> = {}): Reply {
  return (res) => {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(body);
  };
}

/** A body too big for the socket buffers: the server can only finish it if the client reads it. */
export const BIG = 16 * 1024 * 1024;
export function bigReply(status: number): Reply {
  return (res) => {
    res.writeHead(status, { 'content-type': 'application/octet-stream', 'content-length': String(BIG) });
    res.end(Buffer.alloc(BIG, 0x61));
  };
}

/** No answer at all; the connection stays open until the client gives up. */
export const hang: Reply = () => {};

/** A port on 127.0.0.1 that nothing listens on: the suites' one helper. */
export { closedPort } from '../helpers/loopback.js';

/** Polls `condition` every 5 ms for up to `withinMs` (real time); fails with `what` otherwise. */
export async function eventually(condition: () => boolean, what: string, withinMs = 2000): Promise<void> {
  const until = performance.now() + withinMs;
  while (!condition()) {
    if (performance.now() > until) throw new Error(`not within ${withinMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/** Real-time options: 1 ms waits, so loopback tests are fast. */
export const quick: RetryFetchOptions = {
  backoff: { initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitter: 'none' },
  deadlineMs: 10_000,
};
