// A raw TCP server on loopback that breaks connections on purpose, for the smoke suite's
// network-failure cases: no web-standard server (Deno.serve, Bun.serve, a fetch handler) can
// reset a socket, so the harness runs this one for every runtime and names it in the run.
import { createServer } from 'node:net';

const OK = (body) =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
  `access-control-allow-origin: *\r\nconnection: close\r\n\r\n${body}`;

/**
 * Starts the fault server on 127.0.0.1 at a free port. Routes, by request line:
 * - `/reset?key=K&fail=N`: the first N requests of K are answered with a TCP reset (RST) as soon
 *   as their headers have arrived, before any byte of a response; the later ones 200 `{ served }`;
 * - `/close?key=K&fail=N`: the same, but the connection is closed cleanly (FIN), no response;
 * - `/cut?key=K&fail=N`: headers announcing 100 bytes and 7 of them, then a reset (a response
 *   broken in the middle of its body);
 * - `/count?key=K`: `{ served }`, the requests of K so far, without counting itself;
 * - any `OPTIONS` request (a browser's CORS preflight): allowed, not counted.
 * Every response closes its connection, so each request arrives on a connection of its own.
 */
export function serveFaults() {
  const seen = new Map();
  const sockets = new Set();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let head = '';
    socket.on('data', (chunk) => {
      if (head.includes('\r\n\r\n')) return; // a body (a POST's) is not read: the answer does not depend on it
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const target = new URL(head.slice(head.indexOf(' ') + 1, head.indexOf(' HTTP/')), 'http://127.0.0.1');
      const key = target.searchParams.get('key') ?? '';
      // Chromium's CORS preflight, should a request need one: allowed, and not counted.
      if (head.startsWith('OPTIONS ')) {
        return void socket.end(
          'HTTP/1.1 204 No Content\r\naccess-control-allow-origin: *\r\naccess-control-allow-methods: *\r\n' +
            'access-control-allow-headers: *\r\nconnection: close\r\n\r\n',
        );
      }
      if (target.pathname === '/count') return void socket.end(OK(JSON.stringify({ served: seen.get(key) ?? 0 })));
      const served = (seen.get(key) ?? 0) + 1;
      seen.set(key, served);
      if (served > Number(target.searchParams.get('fail') ?? 0)) return void socket.end(OK(JSON.stringify({ served })));
      if (target.pathname === '/close') return void socket.end();
      if (target.pathname === '/cut') {
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 100\r\naccess-control-allow-origin: *\r\n\r\npartial');
        // Long enough for the client to have the headers; then the reset cuts the body.
        return void setTimeout(() => socket.resetAndDestroy(), 20);
      }
      socket.resetAndDestroy();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      resolve({
        origin: `http://127.0.0.1:${server.address().port}`,
        close: () =>
          new Promise((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** A loopback origin on which nothing listens: a port that was free a moment ago, closed again. */
export function refusedOrigin() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(`http://127.0.0.1:${port}`));
    });
  });
}
