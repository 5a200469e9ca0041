// What fn's failures look like: errors carrying a server's hint in every shape the engine reads
// (Retry-After, an HTTP-date, gRPC pushback, RateLimit reset, retryAfterMs), absurd ones
// included, and the hint in milliseconds that the docs say each one means. Also the odd
// promise-likes an attempt may return.
import type { HintSpec } from './generator.js';

/** An HTTP-date `deltaMs` after `nowMs`, on the whole second (HTTP-dates have no finer unit). */
function dateAfter(nowMs: number, deltaMs: number): { text: string; atMs: number } {
  const atMs = Math.floor((nowMs + deltaMs) / 1000) * 1000;
  return { text: new Date(atMs).toUTCString(), atMs };
}

/**
 * The headers (or gRPC metadata, or field) a hint is carried in, and what it means in ms
 * according to README "Server hints" and docs/retry-fetch.md "Retry-After": delta-seconds,
 * an HTTP-date measured from now, pushback in ms, a 429's or 503's RateLimit reset in seconds;
 * anything malformed or negative is no hint. Delta-seconds too long for a double mean Infinity.
 */
export function hintOf(
  hint: HintSpec | undefined,
  status: number,
  nowMs: number,
): { headers: Record<string, string>; metadata?: string; field?: number; ms: number | undefined } {
  if (hint === undefined) return { headers: {}, ms: undefined };
  switch (hint.kind) {
    case 'seconds':
      return { headers: { 'retry-after': String(hint.s) }, ms: hint.s * 1000 };
    case 'digits': {
      const text = '9'.repeat(hint.digits);
      return { headers: { 'retry-after': text }, ms: Number(text) * 1000 };
    }
    case 'negative':
      return { headers: { 'retry-after': '-5' }, ms: undefined };
    case 'malformed':
      return { headers: { 'retry-after': hint.text }, ms: undefined };
    case 'date': {
      const { text, atMs } = dateAfter(nowMs, hint.deltaMs);
      return { headers: { 'retry-after': text }, ms: Math.max(0, atMs - nowMs) };
    }
    case 'pushback': {
      const text = hint.ms === 'huge' ? '9'.repeat(400) : String(hint.ms);
      return { headers: {}, metadata: text, ms: Number(text) };
    }
    case 'ratelimit': {
      const text = hint.s === 'huge' ? '9'.repeat(400) : String(hint.s);
      const headers: Record<string, string> =
        hint.form === 'reset'
          ? { 'ratelimit-reset': text }
          : { ratelimit: hint.form === 'field-reset' ? `limit=10, remaining=0, reset=${text}` : `"default";r=0;t=${text}` };
      return { headers, ms: status === 429 || status === 503 ? Number(text) * 1000 : undefined };
    }
    case 'field':
      return { headers: {}, field: hint.ms, ms: hint.ms };
  }
}

/** A transient error of fn, shaped as HTTP clients and grpc-js shape theirs, with its hint. */
export function transientError(status: number, hint: HintSpec | undefined, nowMs: number): { error: Error; hintMs: number | undefined } {
  const carried = hintOf(hint, status, nowMs);
  if (carried.metadata !== undefined) {
    const value = carried.metadata;
    const metadata = { get: (key: string) => (key === 'grpc-retry-pushback-ms' ? [value] : []) };
    // UNAVAILABLE (14): transient by default.
    return { error: Object.assign(new Error(`UNAVAILABLE (pushback ${value.slice(0, 12)})`), { code: 14, metadata }), hintMs: carried.ms };
  }
  const error = Object.assign(new Error(`HTTP ${status}`), { status, response: { status, headers: carried.headers } });
  if (carried.field !== undefined) Object.assign(error, { retryAfterMs: carried.field });
  return { error, hintMs: carried.ms };
}

/** A promise whose then calls back synchronously, as some hand-rolled subclasses do. */
export class SyncThen<T> extends Promise<T> {
  #outcome: { value: T } | { error: unknown } = { error: undefined };
  static of<T>(outcome: { value: T } | { error: unknown }): SyncThen<T> {
    const promise = new SyncThen<T>(() => {});
    promise.#outcome = outcome;
    return promise;
  }
  override then<A = T, B = never>(
    onValue?: ((value: T) => A | PromiseLike<A>) | null,
    onError?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    const outcome = this.#outcome;
    if ('value' in outcome) onValue?.(outcome.value);
    else onError?.(outcome.error);
    return Promise.resolve() as Promise<A | B>;
  }
}

/** A promise whose then throws `error`. */
export function throwingThen(error: Error): Promise<never> {
  const promise = new Promise<never>(() => {});
  Object.defineProperty(promise, 'then', {
    value: () => {
      throw error;
    },
  });
  return promise;
}
