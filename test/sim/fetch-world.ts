// The driver of retryFetch worlds: calls against the scripted server (server.ts) in virtual time,
// sharing one gate; each request the server sees is recorded and compared with the request the
// caller made; a resolved body is read to its end (bounded) and kept for the bytes invariant.
import { getEventListeners } from 'node:events';
import { Request as UndiciRequest } from 'undici';
import { createRetryAfterGate, hedging } from '../../src/index.js';
import { type RetryFetchOptions, retryFetch } from '../../src/fetch/index.js';
import type { FetchCallSpec, FetchWorldSpec } from './fetch-generator.js';
import { hintOf } from './faults.js';
import { openHarness } from './harness.js';
import { type CallRecord, type Sent, type WorldRecord, newWorldRecord, nextSeq } from './record.js';
import { type SeenRequest, type Version, answer, read, versionOf } from './server.js';
import { recordingGate } from './world.js';

/** Listeners one signal handed to fetch may hold at once (a few per attempt, never one per part). */
export const MAX_LISTENERS = 8;

export interface FetchCallRecord {
  readonly spec: FetchCallSpec;
  readonly expected: { method: string; headers: Record<string, string>; body: string | undefined };
  readonly seen: (SeenRequest & { readonly seq: number; readonly at: number; outcome?: string; hintMs?: number; answeredSeq?: number })[];
  /** The bytes read from the resolved response, or the error reading threw. */
  read?: { bytes?: Uint8Array; error?: unknown; status: number; firstVersion?: number };
}

export interface FetchWorldRecord extends WorldRecord {
  readonly fetchCalls: FetchCallRecord[];
  readonly versions: Version[];
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);

function bodyOf(kind: FetchCallSpec['body'], index: number): BodyInit | undefined {
  const text = `body of call ${index}`;
  if (kind === 'text') return text;
  if (kind === 'bytes') return new TextEncoder().encode(text);
  if (kind === 'stream') return new Blob([text]).stream();
  return undefined;
}

export async function runFetchWorld(spec: FetchWorldSpec): Promise<FetchWorldRecord> {
  const world: FetchWorldRecord = { ...newWorldRecord(), fetchCalls: [], versions: [versionOf(0, spec.object.size)] };
  const h = openHarness(world, spec.randoms);
  const gate = createRetryAfterGate({ spread: spec.gateSpread, rng: h.draw });
  const controllers: AbortController[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const at = h.now();
    const seen = await read(input, init);
    const index = Number(seen.headers['x-sim-call']);
    const call = world.fetchCalls[index] as FetchCallRecord;
    const entry: FetchCallRecord['seen'][number] = { ...seen, call: index, seq: nextSeq(world), at };
    call.seen.push(entry);
    const sent: Sent = { call: index, seq: entry.seq, at, attempt: call.seen.length, copy: 1 };
    world.sent.push(sent);
    const listeners = seen.signal ? getEventListeners(seen.signal, 'abort').length : 0;
    if (listeners > MAX_LISTENERS)
      world.direct.push({
        invariant: 'listeners-bounded',
        detail: `call ${index}: request ${call.seen.length} went out with ${listeners} abort listeners on its signal`,
      });
    const step = call.spec.steps[Math.min(call.seen.length - 1, call.spec.steps.length - 1)] as FetchCallSpec['steps'][number];
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const current = () => world.versions.at(-1) as Version;
    const bump = () => world.versions.push(versionOf(world.versions.length, spec.object.size));
    return new Promise<Response>((resolve, reject) => {
      const signal = seen.signal;
      const onAbort = () => {
        sent.abortedAt ??= h.now();
        reject(signal?.reason);
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const respond = () => {
        // The request was abandoned (its attempt timed out, the deadline, an abort): no answer reaches anyone.
        if (signal?.aborted) {
          entry.outcome = 'abandoned';
          return;
        }
        const out = answer(step, seen, url, spec.object, current, bump, h);
        entry.outcome = out instanceof Response ? String(out.status) : out === 'hang' ? 'hang' : step.kind;
        if (out === 'hang') return;
        signal?.removeEventListener('abort', onAbort);
        sent.endedAt = h.now();
        sent.endedSeq = entry.answeredSeq = nextSeq(world);
        if (out instanceof Response) {
          const hint =
            step.kind === 'status' && step.hint?.kind !== 'pushback' && step.hint?.kind !== 'field'
              ? hintOf(step.hint, step.status, h.now()).ms
              : undefined;
          if (hint !== undefined && step.kind === 'status' && step.status !== 404) entry.hintMs = hint;
          resolve(out);
        } else reject(out);
      };
      h.later('latencyMs' in step ? step.latencyMs : 0, respond);
    });
  };
  spec.calls.forEach((c, index) => {
    const headers = {
      authorization: 'Bearer sim-token',
      'x-sim-call': String(index),
      ...(c.idempotencyKey ? { 'idempotency-key': `key-${index}` } : {}),
    };
    const body = bodyOf(c.body, index);
    const expected = { method: c.method, headers, body: body === undefined ? undefined : `body of call ${index}` };
    const record: FetchCallRecord = { spec: c, expected, seen: [] };
    world.fetchCalls.push(record);
    const controller = new AbortController();
    controllers.push(controller);
    const o = c.options;
    const options: RetryFetchOptions = {
      fetch,
      maxAttempts: o.maxAttempts,
      deadlineMs: o.deadlineMs,
      backoff: { initialDelayMs: 10, maxDelayMs: 500 },
      rng: h.draw,
      signal: controller.signal,
      // What the engine decided and when: an answer that reaches the server's side after its
      // attempt was judged (a fetch's signal aborts one macrotask after its attempt's) is one
      // the engine never read.
      onEvent: (event) => void world.calls[index]?.events.push({ at: h.now(), seq: nextSeq(world), event }),
      ...(o.attemptTimeoutMs === undefined ? {} : { attemptTimeoutMs: o.attemptTimeoutMs }),
      ...(o.maxRetryAfterMs === undefined ? {} : { maxRetryAfterMs: o.maxRetryAfterMs }),
      ...(o.bufferBody === undefined ? {} : { bufferBody: o.bufferBody }),
      ...(o.resume === undefined ? {} : { resume: o.resume }),
      ...(o.hedge ? { hedge: hedging(o.hedge) } : {}),
      ...(o.gate ? { gate: recordingGate(gate, h, world) } : {}),
      ...(o.clock ? { clock: h.injected } : {}),
    };
    const rec: CallRecord = {
      index,
      limits: {
        deadlineMs: o.deadlineMs,
        maxAttempts: o.maxAttempts,
        maxCopies: o.hedge?.maxCopies ?? 1,
        timeoutOf: undefined,
        throughGate: !!o.gate,
        idempotentAt: undefined,
        abortAfterMs: o.abortAtMs,
        hooks: { onRetry: false, onSuccess: false, onGiveUp: false, telemetry: false },
        maxRetryAfterMs: o.maxRetryAfterMs ?? Infinity,
      },
      optionKeys: Object.keys(options),
      settleCount: 0,
      events: [],
      telemetryEvents: [],
      telemetryAttempts: 0,
      retries: [],
      successes: [],
      giveUps: [],
      hedgeHooks: [],
      uncounted: 0,
      ownErrors: new Set(),
      signal: controller.signal,
    };
    world.calls.push(rec);
    h.later(c.startAtMs, () => {
      rec.startedAt = h.now();
      const url = `https://sim.test/o/object?call=${index}`;
      const init: RequestInit & { duplex?: string } = {
        method: c.method,
        headers,
        ...(body === undefined ? {} : { body, duplex: 'half' }),
      };
      const input =
        c.input === 'url'
          ? url
          : c.input === 'request'
            ? new Request(url, init)
            : (new UndiciRequest(url, init as never) as unknown as Request);
      const settle = (ok: boolean, outcome: unknown) => {
        rec.settleCount += 1;
        rec.settled ??= { at: h.now(), seq: nextSeq(world), ok, ...(ok ? { value: outcome } : { error: outcome }) };
      };
      retryFetch(input, c.input === 'url' ? init : undefined, options).then(
        async (response) => {
          settle(true, response);
          const firstVersion = world.versions.length - 1;
          try {
            const bytes = await readBounded(response, spec.object.size + 64 * 1024);
            record.read = { bytes, status: response.status, firstVersion };
          } catch (error) {
            record.read = { error, status: response.status, firstVersion };
          }
        },
        (error: unknown) => settle(false, error),
      );
      if (o.abortAtMs !== undefined) {
        h.later(o.abortAtMs, () => {
          if (rec.settled) return;
          rec.abortedAt = h.now();
          rec.abortReason = new Error(`caller aborted fetch ${index}`);
          controller.abort(rec.abortReason);
        });
      }
    });
  });
  try {
    const horizon = Math.max(...spec.calls.map((c) => c.startAtMs + c.options.deadlineMs)) + 1000;
    await h.runUntil(
      () =>
        world.calls.every((c) => c.settled !== undefined) &&
        world.fetchCalls.every((c, i) => c.read !== undefined || !(world.calls[i]?.settled?.ok ?? false)),
      horizon,
      () => {},
    );
  } finally {
    await h.close(
      world.calls.every((c) => c.settled !== undefined),
      controllers.map((c) => c.signal),
    );
  }
  return world;
}

/** Reads a body to its end, or cancels it past `limit` bytes (an endless body). */
async function readBounded(response: Response, limit: number): Promise<Uint8Array | undefined> {
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.length;
    if (total > limit) {
      await reader.cancel();
      return undefined;
    }
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

export { IDEMPOTENT };
