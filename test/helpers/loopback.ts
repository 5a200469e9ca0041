// One loopback HTTP server for every suite that talks over real sockets: node:http on
// 127.0.0.1 at a free port (or the one asked for), its URL, the connections it holds, and a
// close that ends them all — plus a port where nothing listens, and closing after each test.
// Suites build their own servers on it: test/clients/loopback.ts (a handler per test) and
// test/faults/server.ts (injected faults).
import { type RequestListener, type Server, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach } from 'vitest';

/** A running loopback HTTP server. */
export interface Loopback {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  /** The node:http server, for listeners of its own (its 'connection' events, say). */
  readonly server: Server;
  /** Connections open now. */
  openSockets(): number;
  /** Connections accepted since it started. */
  connections(): number;
  /**
   * Destroys every open connection (hung clients included) and stops listening; resolves once
   * the server and every one of those connections have closed. Safe to call more than once.
   */
  close(): Promise<void>;
}

/**
 * Starts `handler` on 127.0.0.1, at `port` (default 0: any free port). Rejects when the port
 * cannot be had (EADDRINUSE).
 */
export async function startLoopback(handler: RequestListener, options: { readonly port?: number } = {}): Promise<Loopback> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer(handler);
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    openSockets: () => sockets.size,
    connections: () => connections,
    close: () => {
      closing ??= (async () => {
        // The server's close callback can run before the sockets' 'close' events: wait for
        // both, so openSockets() is 0 once close() resolves.
        const socketsClosed = [...sockets].map((socket) => new Promise((resolve) => socket.once('close', resolve)));
        const serverClosed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
        // server.close() alone waits for keep-alive and hung connections: end them.
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
        await Promise.all([serverClosed, ...socketsClosed]);
      })();
      return closing;
    },
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released): connections to it are refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Registers, in the calling file or `describe`, an afterEach that closes every server handed to
 * the returned function during the test (a loopback, a fault server: anything with close()).
 */
export function closeAfterEach(): <S extends { close(): Promise<void> }>(server: S) => S {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((server) => server.close()));
  });
  return (server) => {
    open.push(server);
    return server;
  };
}
