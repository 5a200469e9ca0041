// Serves a web-standard fetch handler (smoke.js's `handle`) with node:http on loopback: for the
// Node targets, and for the harness, which serves workerd and Chromium (they cannot listen).
import { createServer } from 'node:http';

/**
 * Starts `handle` on 127.0.0.1 at a free port (or `port`); resolves with its origin and a
 * `close()` that also drops the connections still open.
 */
export function serve(handle, { port = 0, extra } = {}) {
  const server = createServer(async (req, res) => {
    const gone = new AbortController();
    // 'close' on the response before it is finished: the client went away (a request aborted).
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk); // the smoke suite's bodies are small
      const request = new Request(new URL(req.url ?? '/', 'http://127.0.0.1'), {
        method: req.method,
        headers: Object.entries(req.headers).flatMap(([name, value]) =>
          value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]],
        ),
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks),
        signal: gone.signal,
      });
      const response = (await extra?.(req, res)) ?? (await handle(request));
      if (response === true) return; // `extra` answered itself
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body === null) return void res.end();
      // Streamed as it comes (/trickle sends part of a body, then waits); cancelled when the
      // client goes away.
      const reader = response.body.getReader();
      gone.signal.addEventListener('abort', () => {
        reader.cancel().catch(() => {});
      });
      for (let part = await reader.read(); !part.done; part = await reader.read()) res.write(part.value);
      res.end();
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error?.stack ?? error));
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      resolve({
        origin: `http://127.0.0.1:${server.address().port}`,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
