// scriptedFetch: real Responses, each runtime's network errors exactly as the runtime suite
// recorded them (test/classify/runtime-errors.ts), the requests it saw, and a script checked up front.
import { describe, expect, it } from 'vitest';
import { notSent } from '../../src/classify/not-sent.js';
import { retryFetch } from '../../src/fetch/index.js';
import { isTransient, networkError as isNetworkError } from '../../src/index.js';
import { detectRuntime, networkError } from '../../src/testing/network-failures.js';
import { type FetchRuntime, type NetworkFailure, instant, scriptedFetch } from '../../src/testing/index.js';
import { type FailureCase, type Level, RECORDED_ROWS } from '../classify/runtime-errors.js';
import { closeAfterEach, closedPort, startLoopback } from '../helpers/loopback.js';

const URL_OF: Record<FailureCase, string> = {
  refused: 'http://127.0.0.1:4321/refused',
  reset: 'http://127.0.0.1:4321/reset',
  close: 'http://127.0.0.1:4321/close?key=abc&fail=99',
  cut: 'http://127.0.0.1:4321/cut',
  dns: 'http://does-not-exist.invalid/',
};
const FAILURE_OF: Record<FailureCase, NetworkFailure | 'cut'> = {
  refused: 'ECONNREFUSED',
  reset: 'ECONNRESET',
  close: 'UND_ERR_SOCKET',
  cut: 'cut',
  dns: 'ENOTFOUND',
};

/** An error's chain as the runtime suite records it: names, messages normalised, codes and syscalls. */
function shapeOf(error: unknown): Level[] {
  const levels: Level[] = [];
  for (let e = error as (Error & { code?: string; syscall?: string }) | undefined; e !== undefined; e = e.cause as typeof e) {
    const message = e.message
      .replace(/:\d+/g, ':PORT')
      .replace(/key=[^&]+/, 'key=K')
      .replace(/reference = \S+/, 'reference = REF');
    levels.push({
      name: e.name,
      message,
      ...(e.code !== undefined && { code: e.code }),
      ...(e.syscall !== undefined && { syscall: e.syscall }),
    });
  }
  return levels;
}

describe('scriptedFetch: network errors', () => {
  it.each(RECORDED_ROWS)('%s, %s: shaped and classified as the runtime really throws it', (runtime, failure, recorded) => {
    const error = networkError(runtime, FAILURE_OF[failure], new URL(URL_OF[failure]));
    expect(shapeOf(error)).toEqual(recorded.shape);
    expect(isTransient(error)).toBe(recorded.isTransient);
    expect(isNetworkError(error)).toBe(recorded.networkError);
    expect(notSent(error)).toBe(recorded.notSent);
  });

  it("carries Node's errno, address and port, on Linux's numbers", () => {
    const refused = networkError('node', 'ECONNREFUSED', new URL('https://api.example.com/x')).cause;
    expect(refused).toMatchObject({ code: 'ECONNREFUSED', errno: -111, syscall: 'connect', address: 'api.example.com', port: 443 });
    expect(networkError('node', 'ECONNREFUSED', new URL('http://api.example.com/')).cause).toMatchObject({ port: 80 });
    expect(networkError('node', 'ECONNRESET', new URL('http://a/')).cause).toMatchObject({ errno: -104 });
    expect(networkError('node', 'ENOTFOUND', new URL('http://a.test/')).cause).toMatchObject({ errno: -3008, hostname: 'a.test' });
  });

  it.each([
    ['firefox', 'NetworkError when attempting to fetch resource.'],
    ['safari', 'Load failed'],
  ] as const)('%s: one TypeError for every failure, which the default classification retries', (runtime, message) => {
    for (const failure of ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'ENOTFOUND', 'cut'] as const) {
      const error = networkError(runtime, failure, new URL('http://a/'));
      expect(shapeOf(error)).toEqual([{ name: 'TypeError', message }]);
      expect(isTransient(error)).toBe(true);
    }
  });

  it('detects the runtime from its globals, with no Node built-in', () => {
    expect(detectRuntime()).toBe('node');
    expect(detectRuntime({ Deno: {}, process: { versions: { node: '20' } } })).toBe('deno');
    expect(detectRuntime({ Bun: {}, process: { versions: { node: '20' } } })).toBe('bun');
    expect(detectRuntime({ process: { versions: {} }, navigator: { userAgent: 'Cloudflare-Workers' } })).toBe('workerd');
    expect(detectRuntime({ navigator: { userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0' } })).toBe(
      'firefox',
    );
    expect(detectRuntime({ navigator: { userAgent: 'Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 Version/18.1 Safari/605.1.15' } })).toBe(
      'safari',
    );
    expect(detectRuntime({ navigator: { userAgent: 'Mozilla/5.0 AppleWebKit/537.36 Chrome/131.0.0.0 Safari/537.36' } })).toBe('chromium');
    expect(detectRuntime({})).toBe('chromium');
    // A browser bundle's stand-in for `process` (no `versions`) is no Node.
    expect(detectRuntime({ process: { env: {} } })).toBe('chromium');
    expect(
      detectRuntime({ process: { env: {} }, navigator: { userAgent: 'Mozilla/5.0 (X11; rv:133.0) Gecko/20100101 Firefox/133.0' } }),
    ).toBe('firefox');
  });

  it('rejects a scripted failure with the error of the runtime it runs on, or of the one asked for', async () => {
    await expect(scriptedFetch(['ECONNRESET'])('http://a/')).rejects.toThrow(new TypeError('fetch failed'));
    const deno = await scriptedFetch(['ECONNRESET'], { runtime: 'deno' })('http://a/').catch((e: unknown) => e);
    expect(shapeOf(deno)).toEqual([
      { name: 'TypeError', message: 'fetch failed' },
      { name: 'Error', message: 'Connection reset by peer (os error 104)' },
    ]);
    const bun = await scriptedFetch(['ENOTFOUND'], { runtime: 'bun' })('http://nowhere.test/').catch((e: unknown) => e);
    expect(bun).toMatchObject({ name: 'TypeError', code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND nowhere.test' });
  });
});

/** Every level of an error's chain, as far as code can tell it from the real one: its class, name, message and own properties. */
function anatomyOf(error: unknown): unknown[] {
  const levels: unknown[] = [];
  for (let e = error as Error | undefined; e !== undefined; e = e.cause as Error | undefined) {
    // undici's SocketError holds the socket itself, which no script has.
    const own = Object.getOwnPropertyNames(e).filter((key) => key !== 'socket' && key !== 'stack' && key !== 'cause');
    levels.push({
      isTypeError: e instanceof TypeError,
      name: e.name,
      message: e.message,
      own: Object.fromEntries(own.sort().map((key) => [key, (e as unknown as Record<string, unknown>)[key]])),
    });
  }
  return levels;
}

describe("scriptedFetch's Node errors against Node's own fetch, failing for real on loopback", () => {
  const closing = closeAfterEach();

  it('refused, reset, closed, cut and unresolvable: the same classes, names, messages, codes, errno and fields', async () => {
    let cutBody: (() => void) | undefined;
    const server = closing(
      await startLoopback((req, res) => {
        if (req.url === '/reset') return req.socket.resetAndDestroy();
        if (req.url === '/close') return void req.socket.end();
        // /cut: headers promising 100 bytes, 7 of them; the reset comes once the client has the headers.
        res.writeHead(200, { 'content-length': '100' });
        res.write('1234567');
        cutBody = () => req.socket.resetAndDestroy();
      }),
    );
    const refused = `http://127.0.0.1:${await closedPort()}/refused`;
    const thrown = (request: Promise<unknown>) =>
      request.then(
        () => {
          throw new Error('expected a rejection');
        },
        (error: unknown) => error,
      );
    const cases: Array<[NetworkFailure | 'cut', string, () => Promise<unknown>]> = [
      ['ECONNREFUSED', refused, () => fetch(refused)],
      ['ECONNRESET', `${server.url}/reset`, () => fetch(`${server.url}/reset`)],
      ['UND_ERR_SOCKET', `${server.url}/close`, () => fetch(`${server.url}/close`)],
      [
        'cut',
        `${server.url}/cut`,
        async () => {
          const res = await fetch(`${server.url}/cut`);
          cutBody?.();
          return res.text();
        },
      ],
      // .invalid never resolves (RFC 6761); the lookup fails on this machine, no network needed.
      ['ENOTFOUND', 'http://does-not-exist.invalid/', () => fetch('http://does-not-exist.invalid/')],
    ];
    for (const [failure, url, request] of cases) {
      const real = await thrown(request());
      expect([failure, anatomyOf(networkError('node', failure, new URL(url)))]).toEqual([failure, anatomyOf(real)]);
    }
  });
});

describe('scriptedFetch: responses', () => {
  it('answers with real Responses: status, body, URL, Retry-After in seconds or as a date, headers, JSON', async () => {
    const date = new Date(Date.UTC(2030, 0, 2, 3, 4, 5));
    const fetch = scriptedFetch([
      503,
      { status: 429, retryAfter: 2, headers: { 'x-a': '1' } },
      { status: 503, retryAfter: date },
      { status: 200, json: { ok: true } },
      { status: 200, json: [1], headers: { 'content-type': 'application/x' } },
      { status: 201, body: new Uint8Array([104, 105]) },
    ]);
    const first = await fetch('https://api.example.com/a?b=1');
    expect(first).toBeInstanceOf(Response);
    expect(first.status).toBe(503);
    expect(first.url).toBe('https://api.example.com/a?b=1');
    expect(await first.text()).toBe('503');
    const second = await fetch('https://api.example.com/');
    expect(second.headers.get('retry-after')).toBe('2');
    expect(second.headers.get('x-a')).toBe('1');
    expect((await fetch('https://api.example.com/')).headers.get('retry-after')).toBe('Wed, 02 Jan 2030 03:04:05 GMT');
    const json = await fetch('https://api.example.com/');
    expect(json.headers.get('content-type')).toBe('application/json');
    expect(await json.json()).toEqual({ ok: true });
    expect((await fetch('https://api.example.com/')).headers.get('content-type')).toBe('application/x');
    expect(await (await fetch('https://api.example.com/')).text()).toBe('hi');
  });

  it('gives 204, 205 and 304 no body, as the Response constructor requires', async () => {
    const fetch = scriptedFetch([204, 205, { status: 304, body: 'x' }]);
    for (const status of [204, 205, 304]) {
      const res = await fetch('http://a/');
      expect(res.status).toBe(status);
      expect(res.body).toBeNull();
    }
  });

  it("breaks a body after `breakAfter` bytes with the runtime's own error for a cut body", async () => {
    const res = await scriptedFetch([{ status: 200, body: 'hello world', breakAfter: 5 }])('http://a/');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('hello');
    const error = await reader.read().catch((e: unknown) => e);
    expect(shapeOf(error)).toEqual([
      { name: 'TypeError', message: 'terminated' },
      { name: 'Error', message: 'read ECONNRESET', code: 'ECONNRESET', syscall: 'read' },
    ]);
    const none = await scriptedFetch([{ status: 200, body: 'abc', breakAfter: 0 }], { runtime: 'deno' })('http://a/');
    // No empty chunk first: the first read fails.
    await expect((none.body as ReadableStream<Uint8Array>).getReader().read()).rejects.toThrow(
      new TypeError('error reading a body from connection'),
    );
  });

  it('rejects with a scripted Error as it is, and lets a function answer', async () => {
    const mine = new Error('mine');
    const fetch = scriptedFetch([mine, (request) => new Response(`you asked ${request.method} ${request.url}`)]);
    await expect(fetch('http://a/')).rejects.toBe(mine);
    expect(await (await fetch('http://a/b', { method: 'DELETE' })).text()).toBe('you asked DELETE http://a/b');
  });

  it("'hang' answers nothing until the request is aborted, then rejects with the signal's reason", async () => {
    const controller = new AbortController();
    const pending = scriptedFetch(['hang'])('http://a/', { signal: controller.signal });
    const reason = new Error('enough');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('rejects an aborted request before it is sent, and does not count it', async () => {
    const fetch = scriptedFetch([200]);
    const reason = new Error('cancelled');
    await expect(fetch('http://a/', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(fetch.requests).toEqual([]);
    expect(fetch.remaining).toBe(1);
  });
});

describe('scriptedFetch: the requests it saw', () => {
  it('records method, URL, headers by lower-case name and the body as text, in order', async () => {
    const fetch = scriptedFetch([200, 200, 200]);
    await fetch('https://api.example.com/items', { method: 'POST', headers: { 'Idempotency-Key': 'k1' }, body: '{"a":1}' });
    await fetch(new Request('https://api.example.com/items/1', { method: 'PUT', body: new Uint8Array([120]) }));
    await fetch(new URL('https://api.example.com/'));
    expect(fetch.requests).toEqual([
      {
        number: 1,
        method: 'POST',
        url: 'https://api.example.com/items',
        headers: { 'content-type': 'text/plain;charset=UTF-8', 'idempotency-key': 'k1' },
        body: '{"a":1}',
      },
      { number: 2, method: 'PUT', url: 'https://api.example.com/items/1', headers: {}, body: 'x' },
      { number: 3, method: 'GET', url: 'https://api.example.com/', headers: {}, body: undefined },
    ]);
    expect(Object.isFrozen(fetch.requests[0])).toBe(true);
    expect(Object.isFrozen(fetch.requests[0]?.headers)).toBe(true);
    expect(fetch.remaining).toBe(0);
  });

  it('refuses a request past the end of the script, naming its number; retryFetch does not retry that', async () => {
    const fetch = scriptedFetch([503]);
    const error = await retryFetch('https://api.example.com/x', undefined, instant({ fetch, maxAttempts: 5 })).catch((e: unknown) => e);
    expect(error).toEqual(
      new TypeError('scriptedFetch: request 2 (GET https://api.example.com/x) has no answer: the script has 1 entries'),
    );
    expect(fetch.requests).toHaveLength(2);
    expect(fetch.remaining).toBe(0);
  });

  it('lets retryFetch tell a refused connection from a reset: a POST is resent after the first only', async () => {
    const post = { method: 'POST', body: '{"order":1}' };
    const refused = scriptedFetch(['ECONNREFUSED', 201]);
    const res = await retryFetch('https://api.example.com/orders', post, instant({ fetch: refused }));
    expect(res.status).toBe(201);
    expect(refused.requests.map((r) => r.body)).toEqual(['{"order":1}', '{"order":1}']);
    const reset = scriptedFetch(['ECONNRESET', 201]);
    const error = await retryFetch('https://api.example.com/orders', post, instant({ fetch: reset })).catch((e: unknown) => e);
    expect(error).toEqual(new TypeError('fetch failed'));
    expect((error as Error).cause).toMatchObject({ code: 'ECONNRESET' });
    expect(reset.requests).toHaveLength(1);
    expect(reset.remaining).toBe(1);
  });

  it('shows the resent POST with its Idempotency-Key and body, each time', async () => {
    const fetch = scriptedFetch([503, 'ECONNRESET', 201]);
    const init = { method: 'POST', headers: { 'Idempotency-Key': 'order-1' }, body: '{"order":1}' };
    expect((await retryFetch('https://api.example.com/orders', init, instant({ fetch }))).status).toBe(201);
    expect(fetch.requests.map((r) => [r.method, r.headers['idempotency-key'], r.body])).toEqual([
      ['POST', 'order-1', '{"order":1}'],
      ['POST', 'order-1', '{"order":1}'],
      ['POST', 'order-1', '{"order":1}'],
    ]);
  });

  it("drives retryFetch through the issue's script: 503, a reset, 429 with Retry-After, then 200", async () => {
    const fetch = scriptedFetch([503, 'ECONNRESET', { status: 429, retryAfter: 2 }, 200]);
    const waits: Array<[number, number]> = [];
    const res = await retryFetch('https://api.example.com/items', undefined, {
      ...instant({ backoff: { jitter: 'none' } }),
      fetch,
      onRetry: (event) => waits.push([event.attempt, event.delayMs]),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('200');
    expect(fetch.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET', 'GET']);
    expect(waits).toEqual([
      [1, 1000],
      [2, 2000],
      [3, 4000],
    ]);
  });
});

describe('scriptedFetch: the script is checked at once', () => {
  it.each([
    [
      ['ECONRESET'],
      'scriptedFetch: script[0] must be a status, or one of "ECONNREFUSED", "ECONNRESET", "UND_ERR_SOCKET", "ENOTFOUND", "hang", got "ECONRESET" (did you mean "ECONNRESET"?)',
    ],
    [
      [200, 'hangs'],
      'scriptedFetch: script[1] must be a status, or one of "ECONNREFUSED", "ECONNRESET", "UND_ERR_SOCKET", "ENOTFOUND", "hang", got "hangs" (did you mean "hang"?)',
    ],
    [
      ['timeout'],
      'scriptedFetch: script[0] must be a status, or one of "ECONNREFUSED", "ECONNRESET", "UND_ERR_SOCKET", "ENOTFOUND", "hang", got "timeout"',
    ],
    [[{ status: 200, retryAfter: -1 }], 'scriptedFetch: script[0]: entry.retryAfter must be a number of seconds >= 0 or a Date, got -1'],
    [
      [{ status: 200, retryAfter: Infinity }],
      'scriptedFetch: script[0]: entry.retryAfter must be a number of seconds >= 0 or a Date, got Infinity',
    ],
    [[{ status: 200, retryAfter: '2' }], 'scriptedFetch: script[0]: entry.retryAfter must be a number of seconds >= 0 or a Date, got "2"'],
    [
      [{ status: 200, headers: 'x' }],
      'scriptedFetch: script[0]: entry.headers must be headers (a Headers, an object or [name, value] pairs), got "x"',
    ],
    [
      [{ status: 200, headers: null }],
      'scriptedFetch: script[0]: entry.headers must be headers (a Headers, an object or [name, value] pairs), got null',
    ],
    [[{ retryAfter: 1 }], 'scriptedFetch: script[0]: entry.status must be given, got undefined'],
    [[{ status: 200, stauts: 1 }], /^scriptedFetch: script\[0\]: unknown option "stauts"/],
    [[{ status: 200, body: 'a', json: {} }], 'scriptedFetch: script[0]: give entry.body or entry.json, not both'],
    [
      [null],
      'scriptedFetch: script[0] must be a status, a network failure, "hang", an { status } object, an Error or a function, got null',
    ],
    [
      [true],
      'scriptedFetch: script[0] must be a status, a network failure, "hang", an { status } object, an Error or a function, got true',
    ],
    [[[]], 'scriptedFetch: script[0] must be a status, a network failure, "hang", an { status } object, an Error or a function, got []'],
    ['200', 'scriptedFetch: script must be an array of answers, got "200"'],
  ])('%j: %s', (script, message) => {
    expect(() => scriptedFetch(script as never)).toThrow(message instanceof RegExp ? message : new TypeError(message));
  });

  it.each([
    [[199], 'scriptedFetch: script[0] must be a status from 200 to 599, got 199'],
    [[600], 'scriptedFetch: script[0] must be a status from 200 to 599, got 600'],
    [[200.5], 'scriptedFetch: script[0] must be a status from 200 to 599, got 200.5'],
    [[{ status: 100 }], 'scriptedFetch: script[0]: entry.status must be a whole number from 200 to 599, got 100'],
    [[{ status: 600 }], 'scriptedFetch: script[0]: entry.status must be a whole number from 200 to 599, got 600'],
    [[{ status: 200, breakAfter: -1 }], 'scriptedFetch: script[0]: entry.breakAfter must be a whole number of bytes >= 0, got -1'],
    [[{ status: 200, breakAfter: 1.5 }], 'scriptedFetch: script[0]: entry.breakAfter must be a whole number of bytes >= 0, got 1.5'],
  ])('%j: a RangeError', (script, message) => {
    expect(() => scriptedFetch(script as never)).toThrow(new RangeError(message));
  });

  it('accepts the edges: 200 and 599, retryAfter 0, breakAfter 0, a Headers, pairs', () => {
    expect(() =>
      scriptedFetch([
        200,
        599,
        { status: 599, retryAfter: 0, breakAfter: 0, headers: new Headers() },
        { status: 200, headers: [['a', 'b']] },
      ]),
    ).not.toThrow();
  });

  it('copies the script: a later change to the array changes nothing', async () => {
    const script: Array<number | string> = [200];
    const fetch = scriptedFetch(script as never);
    script[0] = 'ECONNRESET';
    script.push(503);
    expect((await fetch('http://a/')).status).toBe(200);
    expect(fetch.remaining).toBe(0);
  });

  it('checks the runtime option, with the name it probably meant', () => {
    expect(() => scriptedFetch([], { runtime: 'nod' as FetchRuntime })).toThrow(
      new TypeError(
        'scriptedFetch: options.runtime must be one of "node", "deno", "bun", "workerd", "chromium", "firefox", "safari", got "nod" (did you mean "node"?)',
      ),
    );
    expect(() => scriptedFetch([], { runtime: 3 as never })).toThrow(/options.runtime must be one of .*, got 3$/);
    expect(() => scriptedFetch([], { runtme: 'node' } as never)).toThrow(/^scriptedFetch: unknown option "runtme"/);
    expect(() => scriptedFetch([], 'node' as never)).toThrow(new TypeError('scriptedFetch: options must be an object, got "node"'));
  });
});
