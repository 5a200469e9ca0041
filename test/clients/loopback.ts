// Real servers on 127.0.0.1 for the client proofs: the real clients talk to them over real
// sockets, so the errors the tests classify are the ones the clients really throw.
import type { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import { vi } from 'vitest';
import { closedPort, startLoopback } from '../helpers/loopback.js';

/** One request as the server saw it. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A running loopback HTTP server. */
export interface LoopbackServer {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: SeenRequest[];
  /** Closes the server and every connection still open. */
  close(): Promise<void>;
}

/**
 * Starts an HTTP server on 127.0.0.1 (a free port, test/helpers/loopback.ts) that hands every
 * request, its body read, to `handle`. The handler may answer, stall, or destroy the socket.
 */
export async function startHttpServer(
  handle: (request: SeenRequest, res: ServerResponse, req: IncomingMessage) => void,
): Promise<LoopbackServer> {
  const requests: SeenRequest[] = [];
  const loopback = await startLoopback((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
      requests.push(seen);
      handle(seen, res, req);
    });
  });
  return { url: loopback.url, requests, close: loopback.close };
}

/** Answers with a Google-style JSON error body: `{ error: { code, message, status, errors } }`. */
export function sendGoogleError(
  res: ServerResponse,
  code: number,
  fields: { status?: string; reason?: string; headers?: Record<string, string> } = {},
): void {
  const message = `loopback says ${code}${fields.status ? ` ${fields.status}` : ''}`;
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8', ...fields.headers });
  res.end(
    JSON.stringify({
      error: {
        code,
        message,
        ...(fields.status === undefined ? {} : { status: fields.status }),
        errors: [{ message, domain: 'global', reason: fields.reason ?? 'loopback' }],
      },
    }),
  );
}

/** Answers 200 with a JSON body. */
export function sendJson(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify(body));
}

/** Kills the connection with a TCP RST before any byte of the response: the client sees ECONNRESET. */
export function resetConnection(req: IncomingMessage): void {
  req.socket.resetAndDestroy();
}

/** A URL on 127.0.0.1 where nothing listens (a port just bound and released): connections are refused. */
export async function refusedUrl(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}`;
}

/**
 * Records the host of every outgoing TCP connection made from now on (every client here ends
 * in `net.Socket#connect`), so a test can prove that nothing left the loopback interface — no
 * credential lookup, no metadata server, no Google endpoint.
 */
export function watchConnections(): { readonly hosts: string[]; restore(): void } {
  const hosts: string[] = [];
  const original = net.Socket.prototype.connect;
  const spy = vi.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (this: net.Socket, ...args: unknown[]) {
    // net.connect() passes its normalised [options, callback] pair as the first argument.
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    if (typeof first === 'object' && first !== null) {
      const { host, path } = first as { host?: string; path?: string };
      hosts.push(path ?? host ?? 'localhost');
    } else {
      hosts.push(typeof args[1] === 'string' ? args[1] : 'localhost');
    }
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  });
  return { hosts, restore: () => spy.mockRestore() };
}

/** Whether `host` is a loopback address or name. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** What `promise` rejects with; fails the test when it resolves instead. */
export async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}
