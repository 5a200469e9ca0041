// A loopback HTTP server that injects faults on purpose, so retry code can be tested against
// real sockets: real status codes, real resets, real hangs, real timers. Nothing is mocked.
//
// Every request must carry `x-request-id`: the id of one *logical* operation, the same on each
// retry of it. The server counts, per id, how many times the operation's side effect was
// applied, so a test can check exactly-once behaviour from the server's point of view — which
// is the only point of view that knows the truth when a connection dies mid-response. A request
// without the header is refused with 400, so a client that drops it cannot skew the counts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { seededRandom } from '../../bench/sim/random.js';
import { startLoopback } from '../helpers/loopback.js';

/**
 * A fault the server can inject into one request, and what a fetch client sees:
 *
 * - `'ok'`: 200 with the JSON body `{ id, method, applied, pad }`.
 * - `'500'`, `'502'`, `'503'`, `'504'`: that status, a small JSON error body.
 * - `'429'`: status 429 with the configured `Retry-After`.
 * - `'reset-before-response'`: the connection is reset (TCP RST) before any byte of the
 *   response; fetch rejects with `TypeError('fetch failed')`, `cause.code` `'ECONNRESET'`.
 * - `'reset-mid-body'`: status 200, headers and half the body, then the connection closes;
 *   fetch resolves, reading the body rejects with `TypeError('terminated')`, `cause.code`
 *   `'UND_ERR_SOCKET'`.
 * - `'hang'`: no answer, connection kept open until the client gives up or the server closes.
 * - `'slow-headers'`: a normal 200, sent only after `slowHeadersMs`.
 */
export type Fault = 'ok' | '500' | '502' | '503' | '504' | '429' | 'reset-before-response' | 'reset-mid-body' | 'hang' | 'slow-headers';

/** Every fault, in a fixed order (the order the seeded mix walks its weights in). */
export const FAULTS: readonly Fault[] = [
  'ok',
  '500',
  '502',
  '503',
  '504',
  '429',
  'reset-before-response',
  'reset-mid-body',
  'hang',
  'slow-headers',
];

/**
 * Whether a fault lets the side effect of a mutating request (POST, PUT, PATCH, DELETE) happen
 * before it strikes. GET and other methods never apply a side effect, whatever the fault.
 *
 * - `true` — applied first: `'ok'`, `'slow-headers'` (applied on arrival, *then* the delay, so a
 *   client that times out during the delay has had its effect applied) and `'reset-mid-body'`
 *   (applied, then the connection dies after part of the body: the client cannot know).
 * - `false` — nothing applied: `'500'`, `'502'`, `'503'`, `'504'`, `'429'`,
 *   `'reset-before-response'`, `'hang'`.
 *
 * A client that retries a non-idempotent request after a `true` fault applies it twice; that is
 * what an exactly-once test is looking for.
 */
export const APPLIES_SIDE_EFFECT: Readonly<Record<Fault, boolean>> = {
  ok: true,
  '500': false,
  '502': false,
  '503': false,
  '504': false,
  '429': false,
  'reset-before-response': false,
  'reset-mid-body': true,
  hang: false,
  'slow-headers': true,
};

/** The methods whose requests have a side effect on the server. */
export const MUTATING_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What the server knows about a request when it picks its fault. */
export interface FaultRequestInfo {
  /** Arrival order across the whole server, from 0. */
  readonly seq: number;
  /** The `x-request-id` header: the logical operation. */
  readonly requestId: string;
  /** 1 for the first request seen with this id, 2 for its first retry, and so on. */
  readonly attempt: number;
  /** Upper-case HTTP method. */
  readonly method: string;
  /** Request target, e.g. `/things?x=1`. */
  readonly path: string;
}

/**
 * A reproducible random mix: each request is faulty with probability `faultRate`, and a faulty
 * request gets a fault drawn in proportion to `weights` (default: every fault but `'ok'`,
 * equally). Weights not given count as 0. The same seed gives the same sequence of faults, in
 * order of arrival (concurrent clients make the arrival order, not the sequence, vary).
 */
export interface FaultMix {
  readonly seed: number;
  readonly faultRate: number;
  readonly weights?: Partial<Record<Fault, number>>;
}

/**
 * How faults are chosen: a script consumed one entry per request in arrival order (then `'ok'`
 * forever), a function of the request (e.g. to fail the first attempt of each id), or a mix.
 */
export type FaultSelection = readonly Fault[] | ((info: FaultRequestInfo) => Fault) | FaultMix;

/**
 * The `Retry-After` of a `'429'`: integer delta-seconds (`0` allowed), an HTTP-date, or `null`
 * to send none.
 */
export type RetryAfter = number | Date | null;

/** Options of {@link startFaultServer}. */
export interface FaultServerOptions {
  /** Default: every request `'ok'`. */
  readonly faults?: FaultSelection;
  /** Size in bytes of a successful body (padded JSON), so `'reset-mid-body'` has something to cut. Default 512. */
  readonly bodyBytes?: number;
  /** Default 0. A function lets an HTTP-date be computed relative to the moment of the request. */
  readonly retryAfter?: RetryAfter | ((info: FaultRequestInfo) => RetryAfter);
  /** How long `'slow-headers'` waits before answering. Default 200 ms. */
  readonly slowHeadersMs?: number;
  /**
   * The port to listen on, on 127.0.0.1. Default 0: any free port. A fixed port lets a test
   * start the server where clients are already being refused.
   */
  readonly port?: number;
}

/** One line of the server's history: a request and the fault it got. */
export interface FaultLogEntry extends FaultRequestInfo {
  readonly fault: Fault;
}

/** A snapshot of the server's accounting. */
export interface FaultStats {
  /** Requests with an `x-request-id` that were given a fault (`'ok'` included). */
  readonly requests: number;
  /** How many times each fault was injected. */
  readonly injected: Readonly<Record<Fault, number>>;
  /** Requests refused with 400 because they had no `x-request-id`. */
  readonly rejected: number;
  /** Connections accepted since start. */
  readonly connections: number;
  /** Connections open now. */
  readonly openSockets: number;
  /** Every request in arrival order, with its fault. */
  readonly history: readonly FaultLogEntry[];
  /** Errors thrown by caller-supplied functions (`faults`, `retryAfter`); their request was reset. */
  readonly handlerErrors: readonly string[];
}

/** A running fault server. */
export interface FaultServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  /** Per request id, how many times its side effect was applied (mutating methods only). */
  readonly applied: ReadonlyMap<string, number>;
  /** A snapshot of the accounting. */
  stats(): FaultStats;
  /** The number of connections open now. */
  openSockets(): number;
  /**
   * The number of connections still open that carry a `'hang'` request. A client that
   * abandons a hung request must close its connection (nothing else ever will, short of
   * close()), so this drops back to 0 once every client has given up.
   */
  openHungSockets(): number;
  /** Destroys every open connection (releasing hung clients) and stops listening. Idempotent. */
  close(): Promise<void>;
}

/**
 * mulberry32, the small seeded generator the fleet simulator uses too: picks faults
 * reproducibly. Returns numbers in [0, 1).
 */
export const mulberry32: (seed: number) => () => number = seededRandom;

/** Starts a fault server on 127.0.0.1 and an ephemeral port. */
export async function startFaultServer(options: FaultServerOptions = {}): Promise<FaultServer> {
  const bodyBytes = options.bodyBytes ?? 512;
  const slowHeadersMs = options.slowHeadersMs ?? 200;
  // Not `??`: null is a value here (send no header), only absence means the default.
  const retryAfterOption = options.retryAfter === undefined ? 0 : options.retryAfter;
  if (!Number.isInteger(bodyBytes) || bodyBytes < 0) throw new RangeError(`bodyBytes must be a non-negative integer, got ${bodyBytes}`);
  if (!Number.isFinite(slowHeadersMs) || slowHeadersMs < 0) throw new RangeError(`slowHeadersMs must be ≥ 0, got ${slowHeadersMs}`);
  // A static value is checked now, so a bad option fails the test at start, not on some 429.
  if (typeof retryAfterOption !== 'function') formatRetryAfter(retryAfterOption);
  const select = selector(options.faults ?? []);

  const applied = new Map<string, number>();
  const attemptsById = new Map<string, number>();
  const injected = Object.fromEntries(FAULTS.map((fault) => [fault, 0])) as Record<Fault, number>;
  const history: FaultLogEntry[] = [];
  const handlerErrors: string[] = [];
  const hungSockets = new Set<Socket>();
  // Pending 'slow-headers' answers: cleared on close so no timer outlives the server.
  const timers = new Set<NodeJS.Timeout>();
  let rejected = 0;

  const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    const bytes = Buffer.from(JSON.stringify(body));
    res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': String(bytes.length) });
    res.end(bytes);
  };

  // The success body, padded to `bodyBytes` (or longer if the JSON alone is longer).
  const successBody = (info: FaultRequestInfo): Buffer => {
    const fields = { id: info.requestId, method: info.method, applied: applied.get(info.requestId) ?? 0 };
    const bare = Buffer.byteLength(JSON.stringify({ ...fields, pad: '' }));
    return Buffer.from(JSON.stringify({ ...fields, pad: '.'.repeat(Math.max(0, bodyBytes - bare)) }));
  };

  const sendSuccess = (res: ServerResponse, info: FaultRequestInfo): void => {
    const body = successBody(info);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
    res.end(body);
  };

  const inject = (req: IncomingMessage, res: ServerResponse, info: FaultRequestInfo, fault: Fault): void => {
    switch (fault) {
      case 'ok':
        sendSuccess(res, info);
        return;
      case '500':
      case '502':
      case '503':
      case '504':
        sendJson(res, Number(fault), { error: `injected ${fault}`, id: info.requestId });
        return;
      case '429': {
        const value = formatRetryAfter(typeof retryAfterOption === 'function' ? retryAfterOption(info) : retryAfterOption);
        sendJson(res, 429, { error: 'injected 429', id: info.requestId }, value === undefined ? {} : { 'retry-after': value });
        return;
      }
      case 'reset-before-response':
        // Not a byte of the response leaves the server, and the close is a TCP RST (the client
        // sees ECONNRESET), as when a server process dies or a proxy drops the connection.
        req.socket.resetAndDestroy();
        return;
      case 'reset-mid-body': {
        const body = successBody(info);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
        // Destroy only once the partial body is flushed to the kernel, so the client really
        // receives the status and headers and dies while reading the body. A plain close (FIN),
        // not an RST: an RST may make the client's kernel drop the bytes it has not read yet.
        res.write(body.subarray(0, Math.max(1, Math.floor(body.length / 2))), () => req.socket.destroy());
        return;
      }
      case 'hang': {
        // Nothing at all: the socket stays open until the client gives up or close() runs.
        const socket = req.socket;
        hungSockets.add(socket);
        socket.once('close', () => hungSockets.delete(socket));
        return;
      }
      case 'slow-headers': {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!res.destroyed) sendSuccess(res, info);
        }, slowHeadersMs);
        timers.add(timer);
        // A client that gave up needs no answer; don't keep the timer around for it.
        res.once('close', () => {
          clearTimeout(timer);
          timers.delete(timer);
        });
        return;
      }
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const header = req.headers['x-request-id'];
    if (typeof header !== 'string' || header === '') {
      // Loud on purpose: a client that drops the id on a retry would make the counts lie.
      rejected++;
      sendJson(res, 400, { error: 'missing x-request-id' });
      return;
    }
    const attempt = (attemptsById.get(header) ?? 0) + 1;
    attemptsById.set(header, attempt);
    const method = (req.method ?? 'GET').toUpperCase();
    const info: FaultRequestInfo = { seq: history.length, requestId: header, attempt, method, path: req.url ?? '/' };
    const fault = select(info);
    injected[fault]++;
    history.push({ ...info, fault });
    if (MUTATING_METHODS.has(method) && APPLIES_SIDE_EFFECT[fault]) {
      applied.set(header, (applied.get(header) ?? 0) + 1);
    }
    inject(req, res, info, fault);
  };

  // The server (test/helpers/loopback.ts) counts the connections and ends them all on close.
  const loopback = await startLoopback(
    (req, res) => {
      // Act once the whole request body has arrived: the side effect is applied after a complete
      // upload, and a reset never races the client's own write.
      req.resume();
      req.once('end', () => {
        try {
          handle(req, res);
        } catch (error) {
          // A throwing caller-supplied function must not crash the test process.
          handlerErrors.push(error instanceof Error ? error.message : String(error));
          req.socket.destroy();
        }
      });
    },
    { port: options.port ?? 0 },
  );

  let closing: Promise<void> | undefined;
  return {
    url: loopback.url,
    applied,
    stats: () => ({
      requests: history.length,
      injected: { ...injected },
      rejected,
      connections: loopback.connections(),
      openSockets: loopback.openSockets(),
      history: [...history],
      handlerErrors: [...handlerErrors],
    }),
    openSockets: loopback.openSockets,
    openHungSockets: () => hungSockets.size,
    close: () => {
      closing ??= (async () => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        await loopback.close();
      })();
      return closing;
    },
  };
}

// Turns a script, function or mix into one function called once per request, in arrival order.
function selector(selection: FaultSelection): (info: FaultRequestInfo) => Fault {
  if (typeof selection === 'function') return selection;
  if (isScript(selection)) {
    const script = [...selection];
    return (info) => script[info.seq] ?? 'ok';
  }
  return mixSelector(selection);
}

function isScript(selection: readonly Fault[] | FaultMix): selection is readonly Fault[] {
  return Array.isArray(selection);
}

function mixSelector(mix: FaultMix): () => Fault {
  if (!(mix.faultRate >= 0 && mix.faultRate <= 1)) throw new RangeError(`faultRate must be in [0, 1], got ${mix.faultRate}`);
  const weights = mix.weights ?? Object.fromEntries(FAULTS.filter((fault) => fault !== 'ok').map((fault) => [fault, 1]));
  const table = FAULTS.map((fault) => [fault, weights[fault] ?? 0] as const).filter(([, weight]) => weight > 0);
  for (const [fault, weight] of table) {
    if (!Number.isFinite(weight)) throw new RangeError(`weight of ${fault} must be finite, got ${weight}`);
  }
  const total = table.reduce((sum, [, weight]) => sum + weight, 0);
  if (mix.faultRate > 0 && total === 0) throw new RangeError('faultRate > 0 needs at least one positive weight');
  const rng = mulberry32(mix.seed);
  return () => {
    // Always two draws per request, faulty or not, so request n always sees the same numbers.
    const roll = rng();
    let pick = rng() * total;
    if (roll >= mix.faultRate) return 'ok';
    for (const [fault, weight] of table) {
      pick -= weight;
      if (pick < 0) return fault;
    }
    // Floating-point leftovers land on the last entry.
    return table[table.length - 1]?.[0] ?? 'ok';
  };
}

function formatRetryAfter(value: RetryAfter): string | undefined {
  if (value === null) return undefined;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new RangeError('retryAfter date is invalid');
    return value.toUTCString();
  }
  // The header's delta-seconds is 1*DIGIT: no fraction, no sign.
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`retryAfter seconds must be a non-negative integer, got ${value}`);
  return String(value);
}
