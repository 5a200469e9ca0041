// The simulation's generator for retryFetch: calls (a URL, a Request of this realm or of undici's
// package; every method; headers; string, bytes or streamed bodies) against a scripted server
// whose answers are statuses with hints (absurd ones included), resets, hangs, bodies that break
// at a random byte, validators that change between versions, x-goog-hash, 206 parts capped to a
// few bytes (thousands of parts), huge headers and endless bodies, at a bounded scale.
import fc from 'fast-check';
import { type HintSpec, hintArb } from './generator.js';

export type StepSpec =
  | {
      readonly kind: 'ok';
      readonly latencyMs: number;
      readonly breakAt?: number;
      readonly partCap?: number;
      readonly hugeHeader?: boolean;
      readonly endless?: boolean;
    }
  | { readonly kind: 'status'; readonly latencyMs: number; readonly status: 429 | 500 | 503 | 404; readonly hint?: HintSpec }
  | { readonly kind: 'reset' | 'refused' | 'hang' }
  | { readonly kind: 'new-version'; readonly latencyMs: number }; // the object changes, then answers as 'ok'

export interface FetchCallSpec {
  readonly startAtMs: number;
  readonly input: 'url' | 'request' | 'undici-request';
  readonly method: 'GET' | 'HEAD' | 'PUT' | 'DELETE' | 'POST' | 'PATCH';
  readonly idempotencyKey: boolean;
  readonly body: 'none' | 'text' | 'bytes' | 'stream';
  readonly steps: readonly StepSpec[];
  readonly options: {
    readonly maxAttempts: number;
    readonly deadlineMs: number;
    readonly attemptTimeoutMs?: number;
    readonly maxRetryAfterMs?: number;
    readonly bufferBody?: boolean;
    readonly resume?: boolean;
    readonly hedge?: { readonly delayMs: number; readonly maxCopies: number };
    readonly abortAtMs?: number;
    readonly gate?: boolean;
    /** The world's time as a clock passed in, not the system clock following the installed fake timers. */
    readonly clock?: true;
  };
}

export interface ObjectSpec {
  readonly size: number;
  readonly validator: 'etag' | 'last-modified' | 'generation' | 'none' | 'weak-etag';
  readonly googHash: boolean;
}

export interface FetchWorldSpec {
  readonly object: ObjectSpec;
  readonly calls: readonly FetchCallSpec[];
  readonly randoms: readonly number[];
  readonly gateSpread: boolean;
}

const latency = fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 2000 }));

export const stepArb: fc.Arbitrary<StepSpec> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        kind: fc.constant('ok' as const),
        latencyMs: latency,
        breakAt: fc.integer({ min: 0, max: 6000 }),
        partCap: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 2000 })),
        hugeHeader: fc.constant(true),
        endless: fc.constant(true),
      },
      { requiredKeys: ['kind', 'latencyMs'] },
    ),
  },
  {
    weight: 4,
    arbitrary: fc.record(
      {
        kind: fc.constant('status' as const),
        latencyMs: latency,
        status: fc.constantFrom(429 as const, 500 as const, 503 as const, 404 as const),
        hint: hintArb,
      },
      { requiredKeys: ['kind', 'latencyMs', 'status'] },
    ),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('reset' as const, 'refused' as const, 'hang' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('new-version' as const), latencyMs: latency }) },
);

export const fetchCallArb: fc.Arbitrary<FetchCallSpec> = fc
  .record({
    startAtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5000 })),
    input: fc.constantFrom('url' as const, 'request' as const, 'undici-request' as const),
    method: fc.constantFrom('GET' as const, 'HEAD' as const, 'PUT' as const, 'DELETE' as const, 'POST' as const, 'PATCH' as const),
    idempotencyKey: fc.boolean(),
    body: fc.constantFrom('none' as const, 'text' as const, 'bytes' as const, 'stream' as const),
    steps: fc.array(stepArb, { minLength: 1, maxLength: 8 }),
    options: fc.record(
      {
        maxAttempts: fc.integer({ min: 1, max: 6 }),
        deadlineMs: fc.integer({ min: 1, max: 30_000 }),
        attemptTimeoutMs: fc.integer({ min: 1, max: 5000 }),
        maxRetryAfterMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5000 }), fc.constant(Infinity)),
        bufferBody: fc.boolean(),
        resume: fc.boolean(),
        hedge: fc.record({ delayMs: fc.integer({ min: 0, max: 300 }), maxCopies: fc.integer({ min: 1, max: 3 }) }),
        abortAtMs: fc.integer({ min: 0, max: 30_000 }),
        gate: fc.boolean(),
        clock: fc.constant(true as const),
      },
      { requiredKeys: ['maxAttempts', 'deadlineMs'] },
    ),
  })
  .map((c) => ({ ...c, body: c.method === 'GET' || c.method === 'HEAD' ? ('none' as const) : c.body }));

export const fetchWorldArb: fc.Arbitrary<FetchWorldSpec> = fc.record({
  object: fc.record({
    size: fc.oneof(fc.integer({ min: 0, max: 64 }), fc.integer({ min: 0, max: 4096 })),
    validator: fc.constantFrom('etag' as const, 'last-modified' as const, 'generation' as const, 'none' as const, 'weak-etag' as const),
    googHash: fc.boolean(),
  }),
  calls: fc.array(fetchCallArb, { minLength: 1, maxLength: 8 }),
  randoms: fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 8 }),
  gateSpread: fc.boolean(),
});
