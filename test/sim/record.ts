// What a run of the simulation records: every request sent, every hook and event, every pause
// a gate was told, every host timer armed, every unhandled rejection. The invariants read only
// this, so a world (retry() or retryFetch) records into the same shape and shares their checks.
import type { AttemptContext, CallEvent, GiveUpEvent, RetryEvent, TelemetryCall } from '../../src/index.js';

/** One request: one invocation of fn (a plain attempt or a hedged copy), or one fetch. */
export interface Sent {
  readonly call: number;
  readonly seq: number;
  readonly at: number;
  readonly attempt: number;
  readonly copy: number;
  /** When its ctx.signal (or the fetch's signal) aborted, if it did. */
  abortedAt?: number;
  /** When it settled (a value, an error, a response), if it did, and the world's sequence number then. */
  endedAt?: number;
  endedSeq?: number;
  /** The hint its failure carried, as the docs say the engine reads it (ms; Infinity for an overflow); undefined for none. */
  hintMs?: number;
  /** True when it failed with an error the default rules call transient. */
  transient?: boolean;
  /** It never answers until its signal aborts. */
  hangs?: boolean;
  /** It failed with a permanent error (possibly wrapped in permanent()). */
  permanent?: boolean;
}

export interface Settled {
  readonly at: number;
  readonly seq: number;
  readonly ok: boolean;
  readonly value?: unknown;
  readonly error?: unknown;
}

/** What the options of a call asked for, as the invariants need it. */
export interface CallLimits {
  readonly deadlineMs: number;
  readonly maxAttempts: number;
  readonly maxCopies: number;
  /** The limit of attempt n (1-based), or undefined for none. */
  readonly timeoutOf: ((n: number) => number) | undefined;
  readonly throughGate: boolean;
  /** `false`: never resent; a function of the attempt number: its answer; undefined: always. */
  readonly idempotentAt: false | ((attempt: number) => boolean) | undefined;
  /** When the caller's signal aborts, after the call's start; undefined for never. */
  readonly abortAfterMs: number | undefined;
  readonly hooks: {
    readonly onRetry: boolean;
    readonly onSuccess: boolean;
    readonly onGiveUp: boolean;
    /** The call's telemetry: none, one that records it, or one that declines it. */
    readonly telemetry: false | 'records' | 'declines';
  };
  /** The cap retryFetch holds every hint to; Infinity without one. */
  readonly maxRetryAfterMs: number;
}

export interface CallRecord {
  readonly index: number;
  limits: CallLimits;
  optionKeys: readonly string[];
  startedAt?: number;
  /** What the options reader refuses these options with, if it does: the call must reject with it. */
  refused?: unknown;
  /** What retry() threw synchronously, if it did: it never should. */
  threw?: unknown;
  settled?: Settled;
  settleCount: number;
  readonly events: { readonly at: number; readonly seq: number; readonly event: CallEvent }[];
  readonly telemetryEvents: CallEvent[];
  telemetryAttempts: number;
  /** What the call's telemetry was asked when the call started, once per question (with a telemetry). */
  telemetryStarts?: TelemetryCall[];
  readonly retries: RetryEvent[];
  /** When each promise an async onRetry returned settled (undefined while it runs), by the attempt it followed. */
  readonly retryHooksSettled?: Map<number, number | undefined>;
  readonly successes: number[];
  readonly giveUps: GiveUpEvent[];
  readonly hedgeHooks: number[];
  /** countsAsAttempt answers of false. */
  uncounted: number;
  /** When each countsAsAttempt answer of false came (a sequence number), to count them by run. */
  readonly uncountedSeqs?: number[];
  /** The context of the latest invocation of fn, for a late `progress()`. */
  lastContext?: AttemptContext;
  /** Whether the call's listener reports progress after each failure (late: to be ignored). */
  readonly lateProgress?: boolean;
  /** Errors the call may legitimately reject with: fn's own, and what its user code threw. */
  readonly ownErrors: Set<unknown>;
  abortedAt?: number;
  abortReason?: unknown;
  /** The driver ended the call at the horizon (a call with no deadline left waiting). */
  endedByHorizon?: boolean;
  /** fn was called after the guard's cap: the call would not end on its own. */
  endless?: boolean;
  signal: AbortSignal | undefined;
}

export interface Hold {
  readonly at: number;
  readonly seq: number;
  readonly ms: number;
  /** The pause as the gate applies it (capped at maxHoldMs); undefined when hold threw. */
  readonly pause: number | undefined;
}

/** What the gate answered a call that asked how long to wait, and the cap it was made with. */
export interface GateWait {
  readonly at: number;
  readonly waitMs: number;
  readonly maxHoldMs: number;
}

export interface WorldRecord {
  readonly calls: CallRecord[];
  readonly sent: Sent[];
  readonly holds: Hold[];
  readonly gateWaits: GateWait[];
  /** Delays handed to the host's setTimeout above 2^31−1 ms. */
  readonly hugeTimers: number[];
  readonly unhandled: unknown[];
  /** Budget tokens and throttle counts, sampled at every request and at the end. */
  readonly fleetSamples: { readonly tokens?: number; readonly maxTokens?: number; readonly requests?: number; readonly accepts?: number }[];
  hedger?: { readonly hedges: number; readonly calls: number; readonly maxExtraLoad: number; readonly sentByHedgerCalls: number };
  /** The library's leftovers once every call settled; undefined when the run could not tell (a call left running). */
  leftover?: { readonly queued: number; readonly timerArmed: boolean; readonly timers: number; readonly listeners: number };
  /**
   * The same world run again with every telemetry that declines its call taken out, when one
   * did: a declined call must be seen to run exactly as there (invariants.ts, telemetry-declined).
   */
  twin?: WorldRecord;
  /** Violations the driver itself saw (a request with the wrong method...), with their invariant's name. */
  readonly direct: { readonly invariant: string; readonly detail: string }[];
  seq: number;
}

export function newWorldRecord(): WorldRecord {
  return { calls: [], sent: [], holds: [], gateWaits: [], hugeTimers: [], unhandled: [], fleetSamples: [], direct: [], seq: 0 };
}

/** An empty record for call `index`, its limits to fill once its options are built. */
export function newCallRecord(index: number, lateProgress = false): CallRecord {
  return {
    index,
    limits: undefined as unknown as CallLimits,
    optionKeys: [],
    ownErrors: new Set<unknown>(),
    retries: [],
    successes: [],
    giveUps: [],
    events: [],
    telemetryEvents: [],
    hedgeHooks: [],
    uncounted: 0,
    uncountedSeqs: [],
    lateProgress,
    telemetryAttempts: 0,
    settleCount: 0,
    signal: undefined,
  };
}

/** Bumps and returns the world's sequence number: the order of things done within one millisecond. */
export function nextSeq(record: WorldRecord): number {
  record.seq += 1;
  return record.seq;
}
