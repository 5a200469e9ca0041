// Downloads that break mid-body, through the interceptor and the REAL undici: the rest is asked
// for with Range and the first response's validator, and the caller gets the bytes of one
// version exactly (request() and fetch() alike), or a ResumeError — never a spliced body.
import type { ServerResponse } from 'node:http';
import { Agent, fetch, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ResumeError } from '../../src/index.js';
import { tenaciousInterceptor } from '../../src/undici/index.js';
import { fast, useLoopback } from './kit.js';

const { serve, keep } = useLoopback();
const WHOLE = 'Hello World';

/** "Hello" then a broken connection; each later request gets what `rest` answers. */
function breaksAfterHello(first: Record<string, string>, rest: (res: ServerResponse, range: string | undefined) => void) {
  return (n: number, res: ServerResponse, req: import('node:http').IncomingMessage): void => {
    if (n > 0) return rest(res, req.headers.range);
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(WHOLE.length), ...first });
    res.write('Hello', () => setTimeout(() => res.socket?.destroy(), 20));
  };
}

/** A server that honours `Range: bytes=5-` with a 206 of " World". */
const honoursRange = (headers: Record<string, string>) => (res: ServerResponse) => {
  res.writeHead(206, { 'content-range': `bytes 5-10/${WHOLE.length}`, 'content-length': '6', ...headers });
  res.end(' World');
};

describe('a body cut mid-way is resumed exactly', () => {
  it('request(): "Hello" + the 206 " World" = exactly "Hello World"; the rest asked for with Range and If-Match', async () => {
    const server = await serve(breaksAfterHello({ etag: '"v1"' }, honoursRange({ etag: '"v1"' })));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor(fast)));
    const { statusCode, body } = await request(`${server.url}/file`, { dispatcher });
    expect(statusCode).toBe(200);
    expect(await body.text()).toBe(WHOLE);
    expect(server.requests.map((r) => [r.url, r.headers.range, r.headers['if-match']])).toEqual([
      ['/file', undefined, undefined],
      ['/file', 'bytes=5-', '"v1"'],
    ]);
  });

  it('fetch() through the dispatcher: the same exact bytes', async () => {
    const server = await serve(breaksAfterHello({ 'last-modified': 'Tue, 01 Sep 2026 00:00:00 GMT' }, honoursRange({})));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor(fast)));
    const res = await fetch(server.url, { dispatcher });
    expect(await res.text()).toBe(WHOLE);
    expect(server.requests[1]?.headers['if-unmodified-since']).toBe('Tue, 01 Sep 2026 00:00:00 GMT');
  });

  it('the object changed (412 to the resume): "Hello", then a ResumeError (changed)', async () => {
    const server = await serve(
      breaksAfterHello({ etag: '"v1"' }, (res) => {
        res.writeHead(412);
        res.end();
      }),
    );
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor(fast)));
    const { body } = await request(server.url, { dispatcher });
    const error = await body.text().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResumeError);
    expect(error).toMatchObject({ reason: 'changed', receivedBytes: 5 });
  });

  it('resume: false: the break reaches the caller as undici’s own error, one request', async () => {
    const server = await serve(breaksAfterHello({ etag: '"v1"' }, honoursRange({ etag: '"v1"' })));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, resume: false })));
    const { body } = await request(server.url, { dispatcher });
    const error = await body.text().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(server.requests).toHaveLength(1);
  });

  it('Cloud Storage (service "storage"): the rest is pinned by ?generation= in the path, and the attempts are stamped', async () => {
    const server = await serve(breaksAfterHello({ 'x-goog-generation': '1700' }, honoursRange({ 'x-goog-generation': '1700' })));
    const dispatcher = keep(new Agent().compose(tenaciousInterceptor({ ...fast, service: 'storage' })));
    const { body } = await request(`${server.url}/b/o?alt=media`, { dispatcher });
    expect(await body.text()).toBe(WHOLE);
    expect(server.requests.map((r) => r.url)).toEqual(['/b/o?alt=media', '/b/o?alt=media&generation=1700']);
    expect(server.requests.map((r) => /gccl-attempt-count\/\d/.exec(String(r.headers['x-goog-api-client']))?.[0])).toEqual([
      'gccl-attempt-count/1',
      'gccl-attempt-count/2',
    ]);
  });
});
