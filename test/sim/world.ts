// The driver of retry() worlds: turns a WorldSpec into real shared objects (one budget,
// throttle, gate and hedger), real options and an fn that plays each call's script, starts the
// calls at their virtual times, runs the clock until every call settled, and records all of it.
import {
  type AttemptContext,
  type CallEvent,
  type RetryEvent,
  type RetryOptions,
  type TelemetryCall,
  createAdaptiveThrottle,
  createHedger,
  createRetryAfterGate,
  createRetryBudget,
  hedging,
  isTransient,
  permanent,
  retry,
} from '../../src/index.js';
import type { CallOptionsSpec, HookKind, PredicateKind, WorldSpec } from './generator.js';
import { SyncThen, throwingThen, transientError } from './faults.js';
import { type Harness, openHarness } from './harness.js';
import { type CallLimits, type CallRecord, type Sent, type WorldRecord, newCallRecord, newWorldRecord, nextSeq } from './record.js';
import { readOptions } from '../../src/core/read-options.js';

/** Requests one call may send before the driver calls it endless and stops it with a permanent error. */
export const ENDLESS_AFTER = 2000;

/** The fleet a world's calls share, as real objects. */
export interface Shared {
  readonly budget?: ReturnType<typeof createRetryBudget>;
  readonly throttle?: ReturnType<typeof createAdaptiveThrottle>;
  readonly gate?: ReturnType<typeof createRetryAfterGate>;
  readonly hedger?: ReturnType<typeof createHedger>;
}

export function makeShared(spec: WorldSpec['fleet'], h: Harness): Shared {
  const { draw } = h;
  const clock = spec.clock ? { clock: h.injected } : {};
  const budget = spec.budget && createRetryBudget({ maxTokens: spec.budget.maxTokens, tokenRatio: spec.budget.tokenRatio });
  for (let i = 0; i < (spec.budget?.drained ?? 0); i++) budget?.record(false);
  return {
    ...(budget ? { budget } : {}),
    ...(spec.throttle ? { throttle: createAdaptiveThrottle({ ...spec.throttle, rng: draw, ...clock }) } : {}),
    ...(spec.gate ? { gate: createRetryAfterGate({ ...spec.gate, rng: draw, ...clock }) } : {}),
    ...(spec.hedger ? { hedger: createHedger(spec.hedger) } : {}),
  };
}

/** How long a slow hook runs: longer or shorter than the wait it runs beside, by the event's attempt. */
const slowHookMs = (event: unknown): number => (((event as { attempt?: number }).attempt ?? 1) % 2 === 1 ? 5000 : 3);

function hook<E>(kind: HookKind, h: Harness, own: Set<unknown>, record: (event: E) => void): (event: E) => unknown {
  return (event) => {
    record(event);
    if (kind === 'sync') return undefined;
    if (kind === 'async') return Promise.resolve();
    if (kind === 'slow') return new Promise<void>((resolve) => h.later(slowHookMs(event), resolve));
    const error = new Error(`hook ${kind}`);
    own.add(error);
    if (kind === 'throws') throw error;
    return Promise.reject(error);
  };
}

function predicate<A extends unknown[]>(
  kind: PredicateKind,
  h: Harness,
  own: Set<unknown>,
  answer: (...args: A) => boolean,
): (...args: A) => boolean {
  return (...args) => {
    if (kind === 'plain') return answer(...args);
    const error = new Error(`predicate ${kind}`);
    own.add(error);
    if (kind === 'throws') throw error;
    if (kind === 'async-resolves') return Promise.resolve(answer(...args)) as unknown as boolean;
    return new Promise<boolean>((_resolve, reject) => h.later(10, () => reject(error))) as unknown as boolean;
  };
}

const hasHint = (error: unknown): boolean => {
  const e = error as { response?: { headers?: object }; metadata?: unknown; retryAfterMs?: unknown } | undefined;
  return e?.metadata !== undefined || e?.retryAfterMs !== undefined || Object.keys(e?.response?.headers ?? {}).length > 0;
};

/** The real options of one call, and what the invariants need to know of them. */
export function buildOptions(
  o: CallOptionsSpec,
  shared: Shared,
  h: Harness,
  rec: CallRecord,
  world: WorldRecord,
): { options: RetryOptions; limits: CallLimits; controller: AbortController | undefined } {
  const own = rec.ownErrors;
  const options: RetryOptions = {};
  if (o.backoff) options.backoff = o.backoff;
  if (o.maxAttempts !== undefined) options.maxAttempts = o.maxAttempts;
  if (o.deadlineMs !== undefined) options.deadlineMs = o.deadlineMs;
  if (o.attemptTimeoutMs !== undefined) options.attemptTimeoutMs = o.attemptTimeoutMs;
  if (o.retryable) options.retryable = predicate(o.retryable, h, own, (error: unknown) => isTransient(error));
  let idempotentAt: CallLimits['idempotentAt'];
  if (typeof o.idempotent === 'boolean') {
    options.idempotent = o.idempotent;
    idempotentAt = o.idempotent ? undefined : false;
  } else if (o.idempotent) {
    const answers = o.idempotent.answers;
    const at = (n: number): boolean => answers[(n - 1) % answers.length] as boolean;
    idempotentAt = o.idempotent.kind === 'plain' ? at : undefined;
    options.idempotent = predicate(o.idempotent.kind, h, own, (_error: unknown, ctx: AttemptContext) => at(ctx.attempt));
  }
  if (o.retryOnResult)
    options.retryOnResult = predicate(o.retryOnResult, h, own, (value: unknown) => (value as { notYet?: boolean }).notYet === true);
  if (o.delay) {
    const d = o.delay;
    options.delay = (ctx) => {
      if (d.kind === 'factor') return ctx.computedDelayMs * d.factor;
      if (d.kind === 'computed') return undefined;
      if (d.kind === 'bad') return Number.NaN;
      if (d.kind === 'async') return Promise.resolve(5) as unknown as number;
      const error = new Error('delay threw');
      own.add(error);
      throw error;
    };
  }
  if (o.countsAsAttempt) {
    const { counts } = o.countsAsAttempt;
    options.countsAsAttempt = predicate(o.countsAsAttempt.kind, h, own, (error: unknown) => {
      const answer = counts === 'always' || (counts === 'hinted' && !hasHint(error));
      if (!answer) {
        rec.uncounted += 1;
        (rec.uncountedSeqs as number[] | undefined)?.push(nextSeq(world));
      }
      return answer;
    });
  }
  // A call without a deadline always gets a signal: the driver ends it at the horizon.
  const needsSignal = o.signal !== undefined || o.deadlineMs === Infinity;
  const controller = needsSignal ? new AbortController() : undefined;
  if (controller) options.signal = controller.signal;
  if (o.onRetry) {
    const onRetry = hook(o.onRetry, h, own, (e: RetryEvent) => rec.retries.push(e));
    const settled = new Map<number, number | undefined>();
    (rec as { retryHooksSettled?: Map<number, number | undefined> }).retryHooksSettled = settled;
    options.onRetry = ((event: RetryEvent) => {
      const returned = onRetry(event);
      if (returned instanceof Promise) {
        settled.set(event.attempt, undefined);
        const done = () => void settled.set(event.attempt, h.now());
        returned.then(done, done);
      }
      return returned;
    }) as RetryOptions['onRetry'];
  }
  if (o.onSuccess) options.onSuccess = hook(o.onSuccess, h, own, () => rec.successes.push(h.now())) as RetryOptions['onSuccess'];
  if (o.onGiveUp) options.onGiveUp = hook(o.onGiveUp, h, own, (e) => rec.giveUps.push(e)) as RetryOptions['onGiveUp'];
  // The event stream is what most invariants read: recorded whatever the hook then does.
  const recordEvent = (event: CallEvent): void => {
    rec.events.push({ at: h.now(), seq: nextSeq(world), event });
    // Progress from a listener, once the attempt failed: late, and to be ignored.
    if (event.type === 'retry' && rec.lateProgress === true) rec.lastContext?.progress();
  };
  options.onEvent = (o.onEvent ? hook(o.onEvent, h, own, recordEvent) : recordEvent) as RetryOptions['onEvent'];
  if (o.budget && shared.budget) options.budget = shared.budget;
  if (o.throttle && shared.throttle) options.throttle = shared.throttle;
  if (o.gate && shared.gate) options.gate = recordingGate(shared.gate, h, world);
  if (o.rng) options.rng = h.draw;
  if (o.unref !== undefined) options.unref = o.unref;
  if (o.clock) options.clock = h.injected;
  let maxCopies = 1;
  if (o.hedge) {
    maxCopies = o.hedge.maxCopies;
    const onHedge = (): void => {
      rec.hedgeHooks.push(h.now());
    };
    options.hedge =
      o.hedge.kind === 'fixed'
        ? hedging({
            delayMs: o.hedge.delayMs,
            maxCopies,
            onHedge,
            ...(o.hedge.withHedger && shared.hedger ? { hedger: shared.hedger } : {}),
          })
        : hedging({ hedger: shared.hedger, maxCopies, onHedge });
  }
  if (o.telemetry) {
    const starts: TelemetryCall[] = [];
    rec.telemetryStarts = starts;
    const declines = o.telemetry === 'declines';
    options.telemetry = (call) => {
      // A copy: what the engine asks with is its own record, not the caller's to keep.
      starts.push({ name: call.name, service: call.service });
      if (declines) return undefined;
      return {
        event: (e) => rec.telemetryEvents.push(e),
        attempt: (_ctx, run) => {
          rec.telemetryAttempts += 1;
          return run();
        },
      };
    };
  }
  if (o.name !== undefined) options.name = o.name;
  if (o.service !== undefined) options.service = o.service;
  const t = o.attemptTimeoutMs;
  const limits: CallLimits = {
    deadlineMs: o.deadlineMs ?? 120_000,
    maxAttempts: o.maxAttempts ?? Infinity,
    maxCopies,
    timeoutOf:
      t === undefined ? undefined : typeof t === 'number' ? () => t : (n) => Math.min(t.initialMs * t.multiplier ** (n - 1), t.maxMs),
    throughGate: options.gate !== undefined,
    idempotentAt,
    abortAfterMs: o.signal?.abortAtMs,
    hooks: { onRetry: !!o.onRetry, onSuccess: !!o.onSuccess, onGiveUp: !!o.onGiveUp, telemetry: o.telemetry ?? false },
    maxRetryAfterMs: Infinity,
  };
  return { options, limits, controller };
}

/** The shared gate, with each pause it is told recorded (as the gate applies it: capped at maxHoldMs). */
export function recordingGate(gate: ReturnType<typeof createRetryAfterGate>, h: Harness, world: WorldRecord): RetryOptions['gate'] {
  return {
    waitMs(remainingMs?: number) {
      const waitMs = gate.waitMs(remainingMs); // the engine passes the time its call has left
      world.gateWaits.push({ at: h.now(), waitMs, maxHoldMs: gate.maxHoldMs });
      return waitMs;
    },
    hold(ms: number) {
      const entry = { at: h.now(), seq: nextSeq(world), ms, pause: undefined as number | undefined };
      world.holds.push(entry);
      gate.hold(ms);
      entry.pause = Math.min(ms, gate.maxHoldMs);
    },
  };
}

/** fn for one call: each invocation plays the next step of the script. */
function scriptedFn(
  spec: WorldSpec['calls'][number],
  rec: CallRecord,
  h: Harness,
  world: WorldRecord,
  shared: Shared,
): (ctx: AttemptContext) => unknown {
  const own = rec.ownErrors;
  const sentHere: Sent[] = [];
  return (ctx) => {
    const n = sentHere.length;
    const sent: Sent = { call: rec.index, seq: nextSeq(world), at: h.now(), attempt: ctx.attempt, copy: ctx.copy ?? 1 };
    sentHere.push(sent);
    world.sent.push(sent);
    world.fleetSamples.push(sampleFleet(shared));
    ctx.signal.addEventListener('abort', () => {
      sent.abortedAt ??= h.now();
    });
    if (n >= ENDLESS_AFTER) {
      // With a deadline, thousands of zero waits are allowed (delay: () => 0); without one, the loop must end.
      rec.endless = rec.limits.deadlineMs === Infinity;
      const stop = Object.assign(new Error('the simulation stopped an endless call'), { status: 400 });
      own.add(stop);
      throw permanent(stop);
    }
    rec.lastContext = ctx;
    const step = spec.script[Math.min(n, spec.script.length - 1)] as (typeof spec.script)[number];
    // Progress a retry keeps (bytes persisted), reported as the attempt settles, before its outcome.
    const reportsProgress = spec.progress?.on.includes(n) === true;
    const value = { call: rec.index, attempt: ctx.attempt, copy: sent.copy, notYet: step.kind === 'value' && step.notYet };
    const fail = (): Error => {
      const made = transientError(503, undefined, h.now());
      own.add(made.error);
      sent.transient = true;
      return made.error;
    };
    const settle = (resolve: (v: unknown) => void, reject: (e: unknown) => void): void => {
      if (reportsProgress) ctx.progress();
      sent.endedAt = h.now();
      sent.endedSeq = nextSeq(world);
      if (step.kind === 'value' || (step.kind === 'thenable' && !step.fails)) return resolve(value);
      if (step.kind === 'transient') {
        const made = transientError(step.status, step.hint, h.now());
        own.add(made.error);
        sent.transient = true;
        if (made.hintMs !== undefined) sent.hintMs = made.hintMs;
        return reject(made.error);
      }
      if (step.kind === 'permanent') {
        const error = Object.assign(new Error('HTTP 404'), { status: 404 });
        own.add(error);
        sent.permanent = true;
        return reject(step.wrapped ? permanent(error) : error);
      }
      reject(fail());
    };
    switch (step.kind) {
      case 'sync-throw':
        sent.endedAt = h.now();
        sent.endedSeq = nextSeq(world);
        throw fail();
      case 'hang':
        sent.hangs = true;
        return new Promise<never>(() => {});
      case 'sync-then':
        sent.endedAt = h.now();
        sent.endedSeq = nextSeq(world);
        return SyncThen.of(step.fails ? { error: fail() } : { value });
      case 'throwing-then': {
        sent.endedAt = h.now();
        sent.endedSeq = nextSeq(world);
        return throwingThen(fail());
      }
      case 'thenable':
        return {
          then: (resolve: (v: unknown) => void, reject: (e: unknown) => void) => h.later(step.latencyMs, () => settle(resolve, reject)),
        };
      default:
        return new Promise((resolve, reject) => h.later(step.latencyMs, () => settle(resolve, reject)));
    }
  };
}

export function sampleFleet(shared: Shared): WorldRecord['fleetSamples'][number] {
  return {
    ...(shared.budget ? { tokens: shared.budget.tokens, maxTokens: shared.budget.maxTokens } : {}),
    ...(shared.throttle ? { requests: shared.throttle.requests, accepts: shared.throttle.accepts } : {}),
  };
}

/**
 * Runs one world of retry() calls in virtual time and returns what happened. A world where a
 * telemetry declines its call is run a second time without those telemetries (`twin`): a world
 * replays exactly, so a declined call must be seen to do there exactly what it did here.
 */
export async function runWorld(spec: WorldSpec): Promise<WorldRecord> {
  const world = await playWorld(spec);
  if (spec.calls.some((call) => call.options.telemetry === 'declines')) world.twin = await playWorld(withoutDeclined(spec));
  return world;
}

/** `spec` with the option taken out of every call whose telemetry declines (`name` and `service` stay: read only with it). */
export function withoutDeclined(spec: WorldSpec): WorldSpec {
  return {
    ...spec,
    calls: spec.calls.map((call) => {
      const { telemetry, ...options } = call.options;
      return telemetry === 'declines' ? { ...call, options } : call;
    }),
  };
}

/** One run of a world, recorded. */
async function playWorld(spec: WorldSpec): Promise<WorldRecord> {
  const world = newWorldRecord();
  const h = openHarness(world, spec.randoms);
  const shared = makeShared(spec.fleet, h);
  const controllers: (AbortController | undefined)[] = [];
  try {
    spec.calls.forEach((call, index) => {
      const live = newCallRecord(index, call.progress?.late === true);
      const built = buildOptions(call.options, shared, h, live, world);
      live.limits = built.limits;
      live.optionKeys = Object.keys(built.options);
      live.signal = built.controller?.signal;
      world.calls.push(live);
      controllers.push(built.controller);
      const fn = scriptedFn(call, live, h, world, shared);
      h.later(call.startAtMs, () => {
        live.startedAt = h.now();
        const settle = (ok: boolean, outcome: unknown): void => {
          live.settleCount += 1;
          live.settled ??= { at: h.now(), seq: nextSeq(world), ok, ...(ok ? { value: outcome } : { error: outcome }) };
        };
        try {
          readOptions(built.options as RetryOptions); // what the call must reject with, if anything
        } catch (error) {
          live.refused = error;
        }
        try {
          retry(fn, built.options).then(
            (value) => settle(true, value),
            (error: unknown) => settle(false, error),
          );
        } catch (error) {
          live.threw = error;
          settle(false, error);
        }
        const abortAfter = call.options.signal?.abortAtMs;
        if (abortAfter !== undefined && built.controller) {
          h.later(abortAfter, () => {
            if (live.settled) return;
            live.abortedAt = h.now();
            live.abortReason = new Error(`caller aborted call ${index}`);
            built.controller?.abort(live.abortReason);
          });
        }
      });
    });
    const lastStart = Math.max(...spec.calls.map((c) => c.startAtMs));
    // Each progress restarts a call's deadline: it may run one more deadline per progress it reports.
    const finite = spec.calls
      .map((c) => c.startAtMs + (c.options.deadlineMs ?? 120_000) * (1 + (c.progress?.on.length ?? 0)))
      .filter(Number.isFinite);
    const horizon = spec.calls.some((c) => c.options.deadlineMs === Infinity)
      ? lastStart + 3_600_000
      : Math.max(lastStart, ...finite) + 1000;
    await h.runUntil(
      () => world.calls.every((c) => c.settled !== undefined),
      horizon,
      () => {
        world.calls.forEach((c, i) => {
          if (c.settled || c.limits.deadlineMs !== Infinity) return;
          c.endedByHorizon = true;
          controllers[i]?.abort(new Error('the simulation ended this call at its horizon'));
        });
      },
    );
    world.fleetSamples.push(sampleFleet(shared));
    if (shared.hedger) {
      const hedged = world.calls.filter((c) => c.optionKeys.includes('hedge'));
      world.hedger = {
        hedges: shared.hedger.hedges,
        calls: shared.hedger.calls,
        maxExtraLoad: spec.fleet.hedger?.maxExtraLoad ?? 0,
        sentByHedgerCalls: world.sent.filter((s) => s.copy > 1 && usesHedger(spec, hedged, s.call)).length,
      };
    }
  } finally {
    const clean = world.calls.every((c) => c.settled !== undefined);
    await h.close(
      clean,
      controllers.flatMap((c) => (c ? [c.signal] : [])),
    );
  }
  return world;
}

function usesHedger(spec: WorldSpec, hedged: CallRecord[], call: number): boolean {
  const hedge = spec.calls[call]?.options.hedge;
  return hedged.some((c) => c.index === call) && (hedge?.kind === 'adaptive' || (hedge?.kind === 'fixed' && hedge.withHedger));
}
