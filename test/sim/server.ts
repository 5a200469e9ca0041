// The scripted server of the retryFetch simulation, as a fetch function (`options.fetch`): it
// reads each request as a server would see it (a URL with init, a Request of this realm or a
// Request-like object of undici's package, read by its fields), answers from the calling call's
// steps in virtual time, and serves one object whose versions change, honestly: Range with
// If-Match / If-Unmodified-Since / generation, 206 parts capped to a few bytes, x-goog-hash.
import { crc32c } from '../../src/transfer/crc32c.js';
import { networkError } from '../../src/testing/network-failures.js';
import type { FetchCallSpec, ObjectSpec, StepSpec } from './fetch-generator.js';
import { hintOf } from './faults.js';
import type { Harness } from './harness.js';

/** What the server saw of one request. */
export interface SeenRequest {
  readonly call: number;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  readonly signal: AbortSignal | undefined;
}

export interface Version {
  readonly bytes: Uint8Array;
  readonly n: number;
}

export function versionOf(n: number, size: number): Version {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + n * 17) & 0xff;
  return { bytes, n };
}

async function bodyText(body: unknown): Promise<string | undefined> {
  if (body === undefined || body === null) return undefined;
  return new Response(body as BodyInit).text();
}

/** The request as it goes out: the input's own fields, `init` overriding them (as fetch does). */
export async function read(input: unknown, init: RequestInit | undefined): Promise<Omit<SeenRequest, 'call'>> {
  if (typeof input === 'string' || input instanceof URL) {
    return {
      method: (init?.method ?? 'GET').toUpperCase(),
      headers: Object.fromEntries(new Headers(init?.headers)),
      body: await bodyText(init?.body),
      signal: init?.signal ?? undefined,
    };
  }
  const r = input as Request;
  const headers =
    init?.headers === undefined ? new Headers([...(r.headers as unknown as Iterable<[string, string]>)]) : new Headers(init.headers);
  const body = init?.body !== undefined ? await bodyText(init.body) : r.body ? await r.text() : undefined;
  return {
    method: (init?.method ?? r.method).toUpperCase(),
    headers: Object.fromEntries(headers),
    body,
    signal: init?.signal ?? r.signal ?? undefined,
  };
}

function validators(object: ObjectSpec, v: Version): Record<string, string> {
  const out: Record<string, string> = {};
  if (object.validator === 'etag') out.etag = `"v${v.n}"`;
  if (object.validator === 'weak-etag') out.etag = `W/"v${v.n}"`;
  if (object.validator === 'last-modified') out['last-modified'] = new Date(Date.UTC(2020, 0, 1 + v.n)).toUTCString();
  if (object.validator === 'generation') out['x-goog-generation'] = String(1000 + v.n);
  if (object.googHash) {
    const crc = crc32c(v.bytes) >>> 0;
    out['x-goog-hash'] = `crc32c=${Buffer.from([crc >>> 24, (crc >>> 16) & 255, (crc >>> 8) & 255, crc & 255]).toString('base64')}`;
  }
  return out;
}

/** Whether a range request's validator still names version `v` (a mismatch is a 412). */
function stillValid(url: URL, headers: Record<string, string>, object: ObjectSpec, v: Version): boolean {
  const now = validators(object, v);
  if (headers['if-match'] !== undefined && headers['if-match'] !== now.etag) return false;
  if (headers['if-unmodified-since'] !== undefined && Date.parse(headers['if-unmodified-since']) < Date.parse(now['last-modified'] ?? ''))
    return false;
  const generation = url.searchParams.get('generation');
  return generation === null || generation === now['x-goog-generation'];
}

/** A body of `bytes` that breaks after `breakAt` bytes (as a dropped connection), or never ends. */
function bodyOf(bytes: Uint8Array, step: Extract<StepSpec, { kind: 'ok' }>, url: URL, h: Harness): ReadableStream<Uint8Array> {
  let offset = 0;
  let pulls = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (step.endless) {
        pulls += 1;
        // A chunk per virtual millisecond, for ever: only a timeout, the deadline or a cancel ends it.
        return new Promise<void>((resolve) =>
          h.later(1, () => {
            try {
              controller.enqueue(new Uint8Array(1024).fill(pulls & 255));
            } catch {
              // Cancelled meanwhile: the reader left.
            }
            resolve();
          }),
        );
      }
      const end = Math.min(bytes.length, step.breakAt ?? Infinity, offset + 512);
      if (end > offset) {
        controller.enqueue(bytes.slice(offset, end));
        offset = end;
        return;
      }
      if (offset < bytes.length) controller.error(networkError('node', 'cut', url));
      else controller.close();
    },
  });
}

/** The answer to one request: the call's next step, against the object's current version. */
export function answer(
  step: StepSpec,
  seen: Omit<SeenRequest, 'call'>,
  url: URL,
  object: ObjectSpec,
  current: () => Version,
  bump: () => void,
  h: Harness,
): Response | Error | 'hang' {
  if (step.kind === 'reset') return networkError('node', 'ECONNRESET', url);
  if (step.kind === 'refused') return networkError('node', 'ECONNREFUSED', url);
  if (step.kind === 'hang') return 'hang';
  if (step.kind === 'status') {
    const hint = step.hint?.kind === 'pushback' || step.hint?.kind === 'field' ? undefined : step.hint;
    return new Response(`error ${step.status}`, { status: step.status, headers: hintOf(hint, step.status, h.now()).headers });
  }
  if (step.kind === 'new-version') bump();
  const v = current();
  const ok = step.kind === 'ok' ? step : { kind: 'ok' as const, latencyMs: 0 };
  const headers: Record<string, string> = { ...validators(object, v) };
  if (ok.hugeHeader) headers['x-junk'] = 'j'.repeat(64 * 1024);
  const range = /^bytes=(\d+)-$/.exec(seen.headers.range ?? '');
  if (range) {
    if (!stillValid(url, seen.headers, object, v)) return new Response('precondition failed', { status: 412 });
    const from = Number(range[1]);
    if (from >= v.bytes.length) return new Response(null, { status: 416, headers: { 'content-range': `bytes */${v.bytes.length}` } });
    const to = Math.min(v.bytes.length, from + (ok.partCap ?? Infinity));
    const part = v.bytes.slice(from, to);
    Object.assign(headers, { 'content-range': `bytes ${from}-${to - 1}/${v.bytes.length}`, 'content-length': String(part.length) });
    return new Response(
      seen.method === 'HEAD'
        ? null
        : bodyOf(part, { ...ok, breakAt: ok.breakAt === undefined ? undefined : Math.max(0, ok.breakAt - from) }, url, h),
      { status: 206, headers },
    );
  }
  if (!ok.endless) headers['content-length'] = String(v.bytes.length);
  return new Response(seen.method === 'HEAD' ? null : bodyOf(v.bytes, ok, url, h), { status: 200, headers });
}

export type { FetchCallSpec };
