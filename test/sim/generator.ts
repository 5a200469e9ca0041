// The simulation's generator for retry(): seeded fast-check arbitraries of whole worlds, each a
// fleet (one budget, throttle, gate and hedger, shared) and 1–20 calls started at random virtual
// times, every call over the whole option space of retry() and every fn outcome the engine must
// survive. Data only: world.ts turns a spec into real options and runs it.
import fc from 'fast-check';

/** A server's hint as the error carries it, absurd ones included. */
export type HintSpec =
  | { readonly kind: 'seconds'; readonly s: number }
  | { readonly kind: 'digits'; readonly digits: number } // delta-seconds of that many 9s: 400 overflows a double
  | { readonly kind: 'negative' }
  | { readonly kind: 'malformed'; readonly text: string }
  | { readonly kind: 'date'; readonly deltaMs: number } // an HTTP-date this far after the failure (years, for far ones)
  | { readonly kind: 'pushback'; readonly ms: number | 'huge' } // gRPC's grpc-retry-pushback-ms
  | { readonly kind: 'ratelimit'; readonly s: number | 'huge'; readonly form: 'reset' | 'field-reset' | 'field-t' }
  | { readonly kind: 'field'; readonly ms: number }; // an error's own retryAfterMs

/** What one invocation of fn does (each invocation, hedged copies included, takes the next step). */
export type OutcomeSpec =
  | { readonly kind: 'value'; readonly latencyMs: number; readonly notYet: boolean } // notYet: retryOnResult refuses it
  | { readonly kind: 'transient'; readonly latencyMs: number; readonly status: 429 | 500 | 503; readonly hint?: HintSpec }
  | { readonly kind: 'permanent'; readonly latencyMs: number; readonly wrapped: boolean } // wrapped: throw permanent(e)
  | { readonly kind: 'sync-throw' }
  | { readonly kind: 'hang' }
  | { readonly kind: 'sync-then'; readonly fails: boolean }
  | { readonly kind: 'throwing-then' }
  | { readonly kind: 'thenable'; readonly latencyMs: number; readonly fails: boolean }; // a plain object with then

/** How a hook behaves: returns, is async, throws, rejects, or takes its time. */
export type HookKind = 'sync' | 'async' | 'throws' | 'rejects' | 'slow';
/** How a predicate answers: as told, by throwing, or (refused by the engine) with a promise. */
export type PredicateKind = 'plain' | 'throws' | 'async-resolves' | 'async-rejects';

export interface CallOptionsSpec {
  readonly backoff?: {
    readonly initialDelayMs?: number;
    readonly multiplier?: number;
    readonly maxDelayMs?: number;
    readonly jitter?: 'none' | 'full' | 'equal' | 'decorrelated' | { readonly additiveMs: number; readonly afterCap?: boolean };
  };
  readonly maxAttempts?: number;
  readonly deadlineMs?: number;
  readonly attemptTimeoutMs?: number | { readonly initialMs: number; readonly multiplier: number; readonly maxMs: number };
  readonly retryable?: PredicateKind;
  readonly idempotent?: boolean | { readonly kind: PredicateKind; readonly answers: readonly boolean[] };
  readonly retryOnResult?: PredicateKind;
  readonly delay?: { readonly kind: 'factor'; readonly factor: number } | { readonly kind: 'computed' | 'bad' | 'async' | 'throws' };
  readonly countsAsAttempt?: { readonly kind: PredicateKind; readonly counts: 'never' | 'hinted' | 'always' };
  readonly signal?: { readonly abortAtMs?: number };
  readonly onRetry?: HookKind;
  readonly onSuccess?: HookKind;
  readonly onGiveUp?: HookKind;
  readonly onEvent?: HookKind;
  readonly budget?: true;
  readonly throttle?: true;
  readonly gate?: true;
  readonly rng?: true;
  readonly unref?: boolean;
  /** The world's time as a clock passed in, not the system clock following the installed fake timers. */
  readonly clock?: true;
  readonly hedge?:
    | { readonly kind: 'fixed'; readonly delayMs: number; readonly maxCopies: number; readonly withHedger: boolean }
    | { readonly kind: 'adaptive'; readonly maxCopies: number };
  /**
   * A telemetry that records the call, or one that declines it (returns undefined): a declined
   * call must run as one without the option, which world.ts checks by running its world again
   * without it.
   */
  readonly telemetry?: 'records' | 'declines';
  readonly name?: string;
  readonly service?: string;
}

export interface CallSpec {
  readonly startAtMs: number;
  readonly script: readonly OutcomeSpec[];
  readonly options: CallOptionsSpec;
  /**
   * `ctx.progress()`: fn reports it as it settles on these invocations (a few, so that a call
   * still ends), and with `late`, the call's event listener reports it again for the attempt
   * that just failed (too late: the engine must ignore it).
   */
  readonly progress?: { readonly on: readonly number[]; readonly late: boolean };
}

export interface FleetSpec {
  readonly budget?: { readonly maxTokens: number; readonly tokenRatio: number; readonly drained: number };
  readonly throttle?: { readonly k: number; readonly windowMs: number; readonly minRequests: number };
  readonly gate?: { readonly maxHoldMs?: number; readonly spread: boolean };
  /** The gate and the throttle run on the world's time as a clock passed in. */
  readonly clock?: true;
  readonly hedger?: {
    readonly percentile: number;
    readonly maxExtraLoad: number;
    readonly minDelayMs: number;
    readonly maxDelayMs: number;
  };
}

export interface WorldSpec {
  readonly fleet: FleetSpec;
  readonly calls: readonly CallSpec[];
  /** Draws for every rng of the world (the `rng` option, the gate's, the throttle's, Math.random). */
  readonly randoms: readonly number[];
}

const latency = fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3000 }));

export const hintArb: fc.Arbitrary<HintSpec> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('seconds' as const),
      s: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 120 })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('digits' as const), digits: fc.constantFrom(10, 16, 309, 400) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('negative' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('malformed' as const),
      text: fc.constantFrom('soon', '1.5', '', '  ', '0x10', '1e3', 'Wed, 99 Foo'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('date' as const),
      deltaMs: fc.oneof(fc.integer({ min: -5000, max: 10_000 }), fc.constantFrom(30 * 86_400_000, 10 * 365 * 86_400_000)),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('pushback' as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.constant('huge' as const)),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('ratelimit' as const),
      s: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.constant('huge' as const)),
      form: fc.constantFrom('reset' as const, 'field-reset' as const, 'field-t' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('field' as const), ms: fc.integer({ min: 0, max: 3000 }) }) },
);

export const outcomeArb: fc.Arbitrary<OutcomeSpec> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('value' as const), latencyMs: latency, notYet: fc.boolean() }) },
  {
    weight: 7,
    arbitrary: fc.record(
      {
        kind: fc.constant('transient' as const),
        latencyMs: latency,
        status: fc.constantFrom(429 as const, 500 as const, 503 as const),
        hint: hintArb,
      },
      { requiredKeys: ['kind', 'latencyMs', 'status'] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('permanent' as const), latencyMs: latency, wrapped: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sync-throw' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hang' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sync-then' as const), fails: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('throwing-then' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('thenable' as const), latencyMs: latency, fails: fc.boolean() }) },
);

const hookArb: fc.Arbitrary<HookKind> = fc.constantFrom('sync', 'async', 'throws', 'rejects', 'slow');
// Mostly plain: a predicate that is refused ends the call at once, which explores little else.
const predicateArb: fc.Arbitrary<PredicateKind> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('plain' as const) },
  { weight: 1, arbitrary: fc.constantFrom('throws' as const, 'async-resolves' as const, 'async-rejects' as const) },
);

const jitterArb = fc.oneof(
  fc.constantFrom('none' as const, 'full' as const, 'equal' as const, 'decorrelated' as const),
  fc.record({ additiveMs: fc.integer({ min: 0, max: 500 }), afterCap: fc.boolean() }, { requiredKeys: ['additiveMs'] }),
);

const backoffArb = fc
  .record(
    {
      initialDelayMs: fc.integer({ min: 1, max: 1000 }),
      multiplier: fc.constantFrom(1, 1.5, 2, 3),
      extra: fc.integer({ min: 0, max: 8000 }),
      jitter: jitterArb,
    },
    { requiredKeys: ['extra'] },
  )
  .map(({ extra, ...b }) => {
    const initial = b.initialDelayMs ?? 1000;
    const maxDelayMs = Math.max(initial, 1000) + extra;
    // Google's afterCap formula needs additiveMs <= maxDelayMs; a multiplier of 1 with a tiny
    // delay would only make thousands of identical retries.
    const multiplier = b.multiplier === 1 && initial < 50 ? 2 : b.multiplier;
    return { ...b, ...(multiplier === undefined ? {} : { multiplier }), maxDelayMs };
  });

const timeoutArb = fc.oneof(
  fc.integer({ min: 1, max: 5000 }),
  fc
    .record({
      initialMs: fc.integer({ min: 1, max: 3000 }),
      multiplier: fc.constantFrom(1, 1.3, 2, 10),
      extra: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.constant(Infinity)),
    })
    .map(({ extra, ...g }) => ({ ...g, maxMs: g.initialMs + extra })),
);

const hedgeArb = fc.oneof(
  fc.record({
    kind: fc.constant('fixed' as const),
    delayMs: fc.integer({ min: 0, max: 500 }),
    maxCopies: fc.integer({ min: 1, max: 4 }),
    withHedger: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('adaptive' as const), maxCopies: fc.integer({ min: 2, max: 4 }) }),
);

/** The options of one call; `fleet` says which shared objects exist to be chosen. */
export function optionsArb(fleet: FleetSpec): fc.Arbitrary<CallOptionsSpec> {
  return fc
    .record(
      {
        backoff: backoffArb,
        maxAttempts: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.constant(Infinity)),
        deadlineMs: fc.oneof(
          { weight: 6, arbitrary: fc.integer({ min: 1, max: 30_000 }) },
          { weight: 1, arbitrary: fc.constant(Infinity) },
        ),
        attemptTimeoutMs: timeoutArb,
        retryable: predicateArb,
        idempotent: fc.oneof(
          fc.boolean(),
          fc.record({ kind: predicateArb, answers: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }) }),
        ),
        retryOnResult: predicateArb,
        delay: fc.oneof(
          { weight: 4, arbitrary: fc.record({ kind: fc.constant('factor' as const), factor: fc.constantFrom(0, 0.5, 1, 3) }) },
          { weight: 2, arbitrary: fc.record({ kind: fc.constant('computed' as const) }) },
          { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('bad' as const, 'async' as const, 'throws' as const) }) },
        ),
        countsAsAttempt: fc.record({ kind: predicateArb, counts: fc.constantFrom('never' as const, 'hinted' as const, 'always' as const) }),
        signal: fc.record({ abortAtMs: fc.integer({ min: 0, max: 30_000 }) }, { requiredKeys: [] }),
        onRetry: hookArb,
        onSuccess: hookArb,
        onGiveUp: hookArb,
        onEvent: hookArb,
        budget: fc.constant(true as const),
        throttle: fc.constant(true as const),
        gate: fc.constant(true as const),
        rng: fc.constant(true as const),
        unref: fc.boolean(),
        clock: fc.constant(true as const),
        hedge: hedgeArb,
        // Declining is rare: a world with a declining call is run twice (world.ts), and at this
        // weight about one world in eight has one, which keeps the run's time about what it was.
        telemetry: fc.oneof(
          { weight: 29, arbitrary: fc.constant('records' as const) },
          { weight: 1, arbitrary: fc.constant('declines' as const) },
        ),
        name: fc.constantFrom('objects.get', 'sim'),
        service: fc.constantFrom('storage', 'sim'),
      },
      { requiredKeys: [] },
    )
    .map((o) => {
      const { budget, throttle, gate, hedge, ...rest } = o;
      const out: Record<string, unknown> = { ...rest };
      if (budget && fleet.budget) out.budget = true;
      if (throttle && fleet.throttle) out.throttle = true;
      if (gate && fleet.gate) out.gate = true;
      if (hedge && (hedge.kind === 'fixed' || fleet.hedger))
        out.hedge = hedge.kind === 'fixed' && !fleet.hedger ? { ...hedge, withHedger: false } : hedge;
      // Both Infinity is refused with a clear error: worth a few cases, not half of them.
      if (o.maxAttempts === Infinity && o.deadlineMs === Infinity && o.countsAsAttempt === undefined) out.maxAttempts = 6;
      return out as CallOptionsSpec;
    });
}

export const fleetArb: fc.Arbitrary<FleetSpec> = fc.record(
  {
    budget: fc.record({
      maxTokens: fc.integer({ min: 1, max: 20 }),
      tokenRatio: fc.constantFrom(0.001, 0.1, 1),
      drained: fc.integer({ min: 0, max: 20 }),
    }),
    throttle: fc.record({
      k: fc.constantFrom(1, 1.5, 2),
      windowMs: fc.constantFrom(1000, 10_000, 120_000),
      minRequests: fc.integer({ min: 0, max: 10 }),
    }),
    gate: fc.record(
      { maxHoldMs: fc.oneof(fc.integer({ min: 0, max: 20_000 }), fc.constant(Infinity)), spread: fc.boolean() },
      { requiredKeys: ['spread'] },
    ),
    clock: fc.constant(true as const),
    hedger: fc
      .record({
        percentile: fc.constantFrom(0.5, 0.95, 1),
        maxExtraLoad: fc.constantFrom(0, 0.05, 0.5, 1),
        minDelayMs: fc.integer({ min: 0, max: 50 }),
        extra: fc.integer({ min: 0, max: 1000 }),
      })
      .map(({ extra, ...h }) => ({ ...h, maxDelayMs: h.minDelayMs + extra })),
  },
  { requiredKeys: [] },
);

/** A whole world: its fleet, then 1–`maxCalls` calls that may share it. */
export function worldArb(maxCalls = 20): fc.Arbitrary<WorldSpec> {
  return fleetArb.chain((fleet) =>
    fc.record({
      fleet: fc.constant(fleet),
      calls: fc.array(
        fc.record({
          startAtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 10_000 })),
          script: fc.array(outcomeArb, { minLength: 1, maxLength: 10 }),
          options: optionsArb(fleet),
          progress: fc.option(fc.record({ on: fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { maxLength: 3 }), late: fc.boolean() }), {
            nil: undefined,
            freq: 3,
          }),
        }),
        { minLength: 1, maxLength: maxCalls },
      ),
      randoms: fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 16 }),
    }),
  );
}
