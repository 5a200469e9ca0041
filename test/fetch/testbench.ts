// A loopback server that behaves like Google's storage testbench for the parts resume needs:
// media downloads (`GET /storage/v1/b/<bucket>/o/<name>?alt=media`, honouring Range, If-Match
// and the `generation` parameter, with ETag / x-goog-generation headers) and resumable uploads
// (`POST /upload/storage/v1/b/<bucket>/o?uploadType=resumable&name=…` returns a session URI in
// Location; `PUT` chunks with Content-Range; 308 with a Range header for what is persisted).
// Faults are queued per kind and taken one per request, like the testbench's instructions:
//   download: { breakAfter: n }   headers, n bytes of the body, then the socket is destroyed
//             'ignore-range'      a 200 with the whole object, whatever Range said
//             'reset'             the socket is destroyed before any byte of the response
//   upload:   'ok'                served as usual
//             { fail503After: n } the first n bytes of this request's chunk are persisted, then 503
//             'reset'             the request's bytes are dropped and the socket destroyed
//             'gone'              410: the session expired
// Every request is recorded with the bytes it carried and the bytes sent back.
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type DownloadFault = { breakAfter: number } | 'ignore-range' | 'reset';
export type UploadFault = { fail503After: number } | 'reset' | 'gone' | 'ok';

export interface Seen {
  readonly method: string;
  readonly url: URL;
  readonly headers: IncomingMessage['headers'];
  /** Bytes of the request body. */
  readonly bodyBytes: number;
  /** Bytes of the response body written to the socket. */
  sentBytes: number;
}

export interface StoredObject {
  data: Buffer;
  generation: string;
  /** Serve without ETag and generation, with Last-Modified only (a plain web server). */
  lastModifiedOnly?: boolean;
}

export interface Testbench {
  readonly base: string;
  readonly objects: Map<string, StoredObject>;
  readonly downloadFaults: DownloadFault[];
  readonly uploadFaults: UploadFault[];
  readonly seen: Seen[];
  /** The URL of an object's media. */
  mediaUrl(name: string): string;
  close(): Promise<void>;
}

interface Session {
  readonly name: string;
  persisted: Buffer;
}

const LAST_MODIFIED = 'Tue, 01 Sep 2026 10:00:00 GMT';

export async function startTestbench(): Promise<Testbench> {
  const objects = new Map<string, StoredObject>();
  const sessions = new Map<string, Session>();
  const downloadFaults: DownloadFault[] = [];
  const uploadFaults: UploadFault[] = [];
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  let sessionCount = 0;

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', base);
      const entry: Seen = { method: req.method ?? '', url, headers: req.headers, bodyBytes: body.length, sentBytes: 0 };
      seen.push(entry);
      if (req.method === 'GET') download(req, res, url, entry);
      else if (req.method === 'POST') startSession(res, url);
      else if (req.method === 'PUT') upload(req, res, url, body);
      else res.writeHead(405).end();
    });
  });

  const download = (req: IncomingMessage, res: ServerResponse, url: URL, entry: Seen): void => {
    const name = decodeURIComponent(url.pathname.replace(/^\/storage\/v1\/b\/[^/]+\/o\//, ''));
    const object = objects.get(name);
    const wanted = url.searchParams.get('generation');
    if (object === undefined || (wanted !== null && wanted !== object.generation)) {
      res.writeHead(404).end('no such object');
      return;
    }
    const fault = downloadFaults.shift();
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    const etag = `"${object.generation}"`;
    const ifMatch = req.headers['if-match'];
    if (!object.lastModifiedOnly && ifMatch !== undefined && ifMatch !== etag) {
      res.writeHead(412).end('precondition failed');
      return;
    }
    const headers: Record<string, string> = object.lastModifiedOnly
      ? { 'last-modified': LAST_MODIFIED }
      : { etag, 'x-goog-generation': object.generation };
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = range !== null && fault !== 'ignore-range' ? Number(range[1]) : 0;
    const part = object.data.subarray(start);
    headers['content-type'] = 'application/octet-stream';
    headers['content-length'] = String(part.length);
    if (start > 0 || range !== null) {
      if (fault !== 'ignore-range') headers['content-range'] = `bytes ${start}-${object.data.length - 1}/${object.data.length}`;
    }
    res.writeHead(range !== null && fault !== 'ignore-range' ? 206 : 200, headers);
    if (typeof fault === 'object') {
      const cut = part.subarray(0, fault.breakAfter);
      entry.sentBytes = cut.length;
      res.write(cut, () => res.socket?.destroy());
      return;
    }
    entry.sentBytes = part.length;
    res.end(part);
  };

  const startSession = (res: ServerResponse, url: URL): void => {
    const name = url.searchParams.get('name');
    if (url.searchParams.get('uploadType') !== 'resumable' || name === null) {
      res.writeHead(400).end('uploadType=resumable and name are required');
      return;
    }
    const id = `session-${++sessionCount}`;
    sessions.set(id, { name, persisted: Buffer.alloc(0) });
    res.writeHead(200, { location: `${base}upload/storage/v1/b/bucket/o?uploadType=resumable&upload_id=${id}` }).end();
  };

  const upload = (req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer): void => {
    const session = sessions.get(url.searchParams.get('upload_id') ?? '');
    const fault = uploadFaults.shift();
    if (fault === 'gone' || session === undefined) {
      res.writeHead(410).end('session expired');
      return;
    }
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    const range = /^bytes (?:(\d+)-(\d+)|\*)\/(\d+|\*)$/.exec(req.headers['content-range'] ?? '');
    if (range === null) {
      res.writeHead(400).end(`bad Content-Range ${String(req.headers['content-range'])}`);
      return;
    }
    const total = range[3] === '*' ? undefined : Number(range[3]);
    if (range[1] !== undefined) {
      const first = Number(range[1]);
      if (first > session.persisted.length) {
        res.writeHead(400).end(`chunk starts at ${first}, past the ${session.persisted.length} bytes persisted`);
        return;
      }
      const persistable = typeof fault === 'object' ? body.subarray(0, fault.fail503After) : body;
      // Bytes already persisted are skipped, as the service does when a client resends them.
      const fresh = persistable.subarray(session.persisted.length - first);
      session.persisted = Buffer.concat([session.persisted, fresh]);
      if (typeof fault === 'object') {
        res.writeHead(503).end('backend error');
        return;
      }
    }
    if (total !== undefined && session.persisted.length === total) {
      const generation = String(Date.now());
      objects.set(session.name, { data: session.persisted, generation });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ name: session.name, size: String(total), generation }));
      return;
    }
    const persisted = session.persisted.length;
    res.writeHead(308, persisted > 0 ? { range: `bytes=0-${persisted - 1}` } : {}).end();
  };

  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    base,
    objects,
    downloadFaults,
    uploadFaults,
    seen,
    mediaUrl: (name) => `${base}storage/v1/b/bucket/o/${encodeURIComponent(name)}?alt=media`,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** `n` bytes that differ from one offset to the next (a shifted copy would not match). */
export function pattern(n: number): Buffer {
  const data = Buffer.alloc(n);
  for (let i = 0; i < n; i++) data[i] = (i * 7 + (i >> 8) * 13) & 0xff;
  return data;
}
