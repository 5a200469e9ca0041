// The invariants: each promise the README and docs/*.md make about a call, as a check over what
// a run recorded (record.ts). Each quotes its sentence and says where it is written; the table in
// docs/reliability.md ("The simulation") lists them. A check returns one line per violation.
import { ThrottledError, TimeoutError, isRetryError } from '../../src/index.js';
import { MAX_TIMER_MS } from './harness.js';
import type { CallRecord, Sent, WorldRecord } from './record.js';

export interface Invariant {
  readonly name: string;
  /** The promise, word for word. */
  readonly promise: string;
  /** Where it is written. */
  readonly where: string;
  check(world: WorldRecord): string[];
}

const sentBy = (world: WorldRecord, call: CallRecord): Sent[] => world.sent.filter((s) => s.call === call.index);
const attemptEvents = (call: CallRecord) => call.events.filter((e) => e.event.type === 'attempt');
const perCall = (f: (call: CallRecord, world: WorldRecord) => string[]) => (world: WorldRecord) =>
  world.calls.flatMap((call) => (call.startedAt === undefined ? [] : f(call, world).map((v) => `call ${call.index}: ${v}`)));
/**
 * Where the call's last run began (README, Options: "An attempt that made progress a retry keeps
 * calls `ctx.progress()`: the limits count again from there"): the time of its last accepted
 * `progress` event and the attempts made before that attempt, or the call's start.
 */
const lastRun = (call: CallRecord): { at: number; seq: number; base: number } => {
  const progress = call.events.filter((e) => e.event.type === 'progress').at(-1);
  if (progress === undefined) return { at: call.startedAt ?? 0, seq: -1, base: 0 };
  return { at: progress.at, seq: progress.seq, base: (progress.event as { attempt: number }).attempt - 1 };
};
/** A call the driver itself ended (no deadline, still waiting at the horizon) promises nothing about its end. */
const ended = (call: CallRecord) => call.settled !== undefined && !call.endedByHorizon;
/** The pause the gate is in at `at`, from the holds told strictly before. */
const pauseEndAt = (world: WorldRecord, at: number): number =>
  world.holds.reduce((end, hold) => (hold.at < at && hold.pause !== undefined ? Math.max(end, hold.at + hold.pause) : end), 0);

export const INVARIANTS: readonly Invariant[] = [
  {
    name: 'settles-once',
    promise: 'the promise settles exactly once, and no later than the deadline',
    where: 'docs/reliability.md, "Interleaving fuzz"',
    check: perCall((call) => (call.settled === undefined ? ['never settled'] : [])),
  },
  {
    name: 'refusal',
    promise:
      'Invalid options (or an `fn` that is not a function) reject the returned promise with a `TypeError`/`RangeError` naming the option, before any attempt: never a synchronous throw',
    where: 'src/core/retry.ts, retry() (the API reference)',
    check: perCall((call, world) => {
      if (call.threw !== undefined) return [`threw ${String(call.threw)} synchronously`];
      if (call.refused === undefined || call.settled === undefined) return [];
      const { error } = call.settled as { error?: unknown };
      const out: string[] = [];
      if (call.settled.ok || String(error) !== String(call.refused))
        out.push(`settled otherwise than rejecting with ${String(call.refused)}`);
      if (sentBy(world, call).length > 0) out.push('fn was called although the options were refused');
      return out;
    }),
  },
  {
    name: 'onretry-awaited',
    promise:
      'May be async: the next attempt then waits for it as well as for the backoff (they run side by side) … the deadline ends the call, the signal aborts it; a rejection is ignored, and the attempt goes.',
    where: 'src/types.ts, RetryOptions.onRetry; README.md, "Options" (onRetry)',
    check: perCall((call) => {
      const settled = call.retryHooksSettled;
      if (settled === undefined) return [];
      const out: string[] = [];
      for (const [attempt, at] of settled) {
        const next = attemptEvents(call).find((e) => (e.event as { attempt: number }).attempt === attempt + 1);
        if (next === undefined) continue;
        if (at === undefined || next.at < at)
          out.push(`attempt ${attempt + 1} started at ${next.at} ms, before the onRetry of attempt ${attempt} settled (${at ?? 'never'})`);
      }
      return out;
    }),
  },
  {
    name: 'deadline',
    promise:
      'It settles no later than `deadlineMs` after `retry()` was called. (An attempt that made progress a retry keeps calls `ctx.progress()`: the limits count again from there.)',
    where: 'README.md, "What retry() promises", The deadline; README.md, "Options"',
    check: perCall((call) => {
      const { settled, startedAt } = call;
      if (!settled || startedAt === undefined) return [];
      const from = lastRun(call).at;
      const took = settled.at - from;
      return took > call.limits.deadlineMs
        ? [
            `settled ${took} ms after its ${from === startedAt ? 'start' : `last progress (${from} ms)`}, deadline ${call.limits.deadlineMs} ms`,
          ]
        : [];
    }),
  },
  {
    name: 'ends',
    promise: '`maxAttempts` and `deadlineMs` may not both be `Infinity`: a retry loop must end.',
    where: 'README.md, "Options"',
    check: perCall((call, world) => {
      const made = attemptEvents(call).length;
      // Without a deadline only maxAttempts can end the loop: a call still retrying at the horizon past it never would.
      const unbounded = call.endedByHorizon && made > call.limits.maxAttempts;
      return call.endless || unbounded
        ? [
            `${made} attempts (${sentBy(world, call).length} requests) and no end in sight (maxAttempts ${call.limits.maxAttempts}, deadlineMs ${call.limits.deadlineMs})`,
          ]
        : [];
    }),
  },
  {
    name: 'attempts',
    promise:
      "`maxAttempts` compares the counted attempts: failures `countsAsAttempt` did not count are subtracted. Attempt numbers everywhere else (the context, `onRetry`, events, `RetryError`'s `attempts`, …) count every attempt",
    where: 'docs/schedules.md, "Failures that do not count: countsAsAttempt"',
    check: perCall((call, world) => {
      const made = attemptEvents(call).length;
      const out: string[] = [];
      // Counted from the last progress: the attempts since, less the failures left uncounted since.
      const run = lastRun(call);
      const uncounted = call.uncountedSeqs?.filter((seq) => seq > run.seq).length ?? call.uncounted;
      if (made - run.base - uncounted > call.limits.maxAttempts)
        out.push(
          `${made} attempts (${run.base} before the last progress), ${uncounted} uncounted since, maxAttempts ${call.limits.maxAttempts}`,
        );
      const error = call.settled?.error;
      if (isRetryError(error) && error.attempts !== made) out.push(`RetryError.attempts ${error.attempts}, attempts made ${made}`);
      const numbers = attemptEvents(call).map((e) => (e.event as { attempt: number }).attempt);
      if (numbers.some((n, i) => n !== i + 1)) out.push(`attempt numbers ${numbers.join(',')}`);
      if (sentBy(world, call).some((s) => s.attempt > made)) out.push('a request of an attempt that had no attempt event');
      return out;
    }),
  },
  {
    name: 'progress-while-running',
    promise:
      'Only the running attempt can report it: once the attempt has failed (in a hook, a predicate or `delay`), or has been abandoned, the call ignores it.',
    where: 'src/types.ts, AttemptContext.progress',
    check: perCall((call) => {
      const ended = new Map<number, number>(); // attempt → seq of the event that judged it
      const out: string[] = [];
      for (const { seq, event } of call.events) {
        const attempt = ((event as { attempt?: number }).attempt ?? (event as { attempts?: number }).attempts) as number;
        if (event.type === 'retry' || event.type === 'give-up' || event.type === 'success') ended.set(attempt, seq);
        if (event.type === 'progress' && ended.has(attempt)) out.push(`progress of attempt ${attempt} taken after that attempt was judged`);
      }
      return out;
    }),
  },
  {
    name: 'gate-hold-capped',
    promise:
      'A pause only ever extends: a shorter hint during a longer pause changes nothing, a longer one than `maxHoldMs` (default 64 s) is cut to it',
    where: 'src/fleet/gate.ts, createRetryAfterGate (docs/fleet.md, "A Retry-After gate")',
    // From the hints as the server gave them (not as the gate says it applied them): what is left
    // of the longest capped pause, plus a spread of at most that pause's length.
    check: (world) =>
      world.gateWaits.flatMap(({ at, waitMs, maxHoldMs }) => {
        const bound = world.holds.reduce((most, hold) => {
          if (hold.at > at || !(hold.ms >= 0)) return most;
          const pause = Math.min(hold.ms, maxHoldMs);
          return Math.max(most, hold.at + pause - at + pause);
        }, 0);
        return waitMs <= bound
          ? []
          : [`the gate answered a wait of ${waitMs} ms at ${at} ms; the hints told it allow ${bound} ms (maxHoldMs ${maxHoldMs})`];
      }),
  },
  {
    name: 'gate-pause',
    promise:
      "when one of them is told to wait (`Retry-After`, gRPC pushback, a 429's RateLimit reset), every call through the gate waits that long before its next attempt, first attempts included",
    where: 'src/types.ts, RetryOptions.gate (README "Options" and docs/fleet.md, "A Retry-After gate")',
    check: perCall((call, world) => {
      if (!call.limits.throughGate) return [];
      return sentBy(world, call).flatMap((s) => {
        const end = pauseEndAt(world, s.at);
        return s.at < end ? [`attempt ${s.attempt} copy ${s.copy} sent at ${s.at} ms, during a pause that ends at ${end} ms`] : [];
      });
    }),
  },
  {
    name: 'gate-no-early-failure',
    promise:
      "A pause that would end at or past a call's deadline fails that call at once (`RetryError` `'deadline'`); with \"When the next wait would end past the deadline it gives up at once instead of sleeping\": a call fails early only when the pause itself ends at or past its deadline (an attempt due at the deadline would have no time)",
    where: 'docs/fleet.md, "A Retry-After gate"; README.md, "What retry() promises", The deadline',
    check: perCall((call, world) => {
      const error = call.settled?.error;
      if (!call.limits.throughGate || !isRetryError(error) || error.reason !== 'deadline' || call.startedAt === undefined) return [];
      const at = (call.settled as { at: number }).at;
      const deadlineAt = call.startedAt + call.limits.deadlineMs;
      const lastEnd = Math.max(call.startedAt - 1, ...sentBy(world, call).map((s) => Math.max(s.endedAt ?? -1, s.abortedAt ?? -1)));
      // Only a give-up at a gate check: not the decision after a failure of this very moment.
      if (at >= deadlineAt || at <= lastEnd) return [];
      const end = pauseEndAt(world, at + 1);
      return end < deadlineAt
        ? [`failed 'deadline' at ${at} ms; the gate's pause ends at ${end} ms, its deadline is at ${deadlineAt} ms`]
        : [];
    }),
  },
  {
    name: 'hint-honoured',
    promise:
      '`Retry-After` (seconds or HTTP-date), gRPC `grpc-retry-pushback-ms` and a 429\'s RateLimit reset lengthen the next wait, never shorten it; a hint past the deadline means give up now. (Hedging: "An error whose server asks to wait … sends no more copies; the call waits as long as it asks.")',
    where: 'README.md, "What retry() promises", Server hints; docs/fleet.md, "Hedged requests"',
    check: perCall((call, world) => {
      const sent = sentBy(world, call);
      const out: string[] = [];
      for (const s of sent) {
        if (s.hintMs === undefined || s.endedAt === undefined || s.endedSeq === undefined || !(s.hintMs > 0)) continue;
        // A failure that arrived after its attempt was abandoned is not the call's to judge.
        if (s.abortedAt !== undefined && s.abortedAt <= s.endedAt) continue;
        const due = s.endedAt + s.hintMs;
        const next = sent.find((t) => t.attempt > s.attempt);
        if (next && next.at < due - 1)
          out.push(
            `attempt ${s.attempt} copy ${s.copy} got a hint of ${s.hintMs} ms at ${s.endedAt} ms; attempt ${next.attempt} went out at ${next.at} ms`,
          );
        const copy = sent.find((t) => t.attempt === s.attempt && t.seq > (s.endedSeq as number));
        if (copy)
          out.push(`attempt ${s.attempt}: copy ${copy.copy} sent at ${copy.at} ms after copy ${s.copy} was asked to wait ${s.hintMs} ms`);
      }
      return out;
    }),
  },
  {
    name: 'timer-range',
    promise: "setTimeout's largest delay; longer ones overflow to 1 ms, so longer waits are taken in steps.",
    where: 'src/runtime/timer-queue.ts, MAX_TIMER_DELAY (issue 34, item 13: no wait handed to a host timer exceeds what it can hold)',
    check: (world) => world.hugeTimers.map((ms) => `a host timer of ${ms} ms (more than ${MAX_TIMER_MS})`),
  },
  {
    name: 'idempotent',
    promise:
      'Is the operation safe to send again, after this attempt\'s failure? Default `true`. When false, no error is retried. (Hedging: "Only what the call\'s `idempotent` rule allows is copied")',
    where: 'src/types.ts, RetryOptions.idempotent; docs/fleet.md, "Hedged requests"',
    check: perCall((call, world) => {
      const rule = call.limits.idempotentAt;
      if (rule === undefined) return [];
      const sent = sentBy(world, call);
      if (rule === false) return sent.length > 1 ? [`idempotent: false, yet ${sent.length} requests were sent`] : [];
      return sent.flatMap((s) =>
        (s.copy > 1 && !rule(s.attempt)) || (s.copy === 1 && s.attempt > 1 && !rule(s.attempt - 1))
          ? [
              `attempt ${s.attempt} copy ${s.copy} sent although idempotent answered false for attempt ${s.copy > 1 ? s.attempt : s.attempt - 1}`,
            ]
          : [],
      );
    }),
  },
  {
    name: 'hooks',
    promise:
      "`onSuccess` and `onGiveUp` run exactly once per call; `onEvent` receives every event of a call in order; `onRetry` before each sleep; the hedging mode's `onHedge` before each extra copy. Every listener is called through `callHook`, so what it throws or rejects never changes what the call does",
    where: 'README.md, "Wrap once, hooks and polling"; docs/architecture.md, "The event stream"',
    check: perCall(checkHooks),
  },
  {
    name: 'no-unhandled-rejection',
    promise: "the attempt's late result or rejection is swallowed (never an unhandled rejection)",
    where: 'README.md, "What retry() promises", The deadline (and every hook: "what it throws or rejects is ignored")',
    check: (world) => world.unhandled.map((reason) => `unhandled rejection: ${String(reason)}`),
  },
  {
    name: 'nothing-left',
    promise: 'the pending timer is cleared and the listener removed. A signal reused for thousands of calls keeps no listener.',
    where: 'README.md, "What retry() promises", Abort; docs/reliability.md, "Interleaving fuzz" (no timer, no listener once settled)',
    check: (world) => {
      const left = world.leftover;
      if (!left) return [];
      return left.queued || left.timerArmed || left.timers || left.listeners ? [`left behind: ${JSON.stringify(left)}`] : [];
    },
  },
  {
    name: 'fleet-bounds',
    promise:
      'Tokens in the bucket now, in [0, maxTokens]. (The throttle: `requests` counts attempts in the window, `accepts` those the server accepted.)',
    where: 'src/fleet/budget.ts, RetryTokenBudget.tokens; src/fleet/throttle.ts, AdaptiveThrottle',
    check: (world) =>
      world.fleetSamples.flatMap((s) => {
        const out: string[] = [];
        if (s.tokens !== undefined && (s.tokens < 0 || s.tokens > (s.maxTokens as number))) out.push(`budget tokens ${s.tokens}`);
        if (s.requests !== undefined && (s.requests < 0 || (s.accepts as number) < 0 || (s.accepts as number) > s.requests))
          out.push(`throttle ${s.requests}/${s.accepts}`);
        return out;
      }),
  },
  {
    name: 'hedger-accounting',
    promise:
      'Extra attempts they sent (hedges after the delay and after transient errors). … after N calls at most `1 + maxExtraLoad × N` hedges have been sent.',
    where: 'src/fleet/hedger.ts, Hedger.hedges and createHedger',
    check: (world) => {
      const h = world.hedger;
      if (!h) return [];
      const out: string[] = [];
      if (h.hedges !== h.sentByHedgerCalls) out.push(`hedger.hedges is ${h.hedges}, copies sent ${h.sentByHedgerCalls}`);
      if (h.sentByHedgerCalls > 1 + h.maxExtraLoad * h.calls + 1e-9)
        out.push(`${h.sentByHedgerCalls} hedges after ${h.calls} calls at maxExtraLoad ${h.maxExtraLoad}`);
      return out;
    },
  },
  {
    name: 'copies',
    promise: 'it sends another copy, and so on up to `maxCopies` copies in all (default 2, the first included)',
    where: 'docs/fleet.md, "Hedged requests"',
    check: perCall((call, world) => {
      const counts = new Map<number, number>();
      for (const s of sentBy(world, call)) counts.set(s.attempt, (counts.get(s.attempt) ?? 0) + 1);
      return [...counts]
        .filter(([, n]) => n > call.limits.maxCopies)
        .map(([a, n]) => `attempt ${a} sent ${n} copies, maxCopies ${call.limits.maxCopies}`);
    }),
  },
  {
    name: 'abort',
    promise: 'When `signal` aborts, during an attempt or a wait, the call rejects at once with `signal.reason`',
    where: 'README.md, "What retry() promises", Abort',
    check: perCall((call) => {
      const { abortedAt, settled } = call;
      if (abortedAt === undefined || !settled) return [];
      if (settled.at > abortedAt) return [`aborted at ${abortedAt} ms, settled at ${settled.at} ms`];
      return settled.at === abortedAt || settled.error === call.abortReason
        ? []
        : [`aborted at ${abortedAt} ms, settled at ${settled.at} ms with something else`];
    }),
  },
  {
    name: 'outcome',
    promise:
      "It resolves with `fn`'s value. … An error that is not retryable, or any error of a non-idempotent operation, is rethrown **unchanged** and at once; `throw permanent(e)` in `fn` rejects with `e` at once. … Out of attempts, time or budget, it rejects with `RetryError`",
    where: 'README.md, "What retry() promises", Values and errors, Giving up',
    check: perCall(checkOutcome),
  },
  {
    name: 'attempt-timeout',
    promise:
      'attempt n (1-based, counted from the last progress) may run `min(initialMs · multiplier^(n−1), maxMs)` milliseconds, and never past the deadline; An attempt still running at the deadline is abandoned: its `ctx.signal` aborts',
    where: 'src/schedule-types.ts, AttemptTimeoutGrowth; README.md, "What retry() promises", The deadline',
    check: perCall((call, world) => {
      const sent = sentBy(world, call);
      return sent.flatMap((s) => {
        if (!s.hangs || !call.settled) return [];
        const first = sent.find((t) => t.attempt === s.attempt) as Sent;
        // Counted from the last progress: a progress of this very attempt restarts its limit, as attempt 1 of a new run.
        const progress = call.events
          .filter((e) => e.event.type === 'progress' && (e.event as { attempt: number }).attempt <= s.attempt)
          .at(-1);
        const progressAttempt = (progress?.event as { attempt: number } | undefined)?.attempt;
        const startAt = progress !== undefined && progressAttempt === s.attempt ? Math.max(first.at, progress.at) : first.at;
        const limit = call.limits.timeoutOf?.(s.attempt - (progressAttempt === undefined ? 0 : progressAttempt - 1));
        const by = Math.min(limit === undefined ? Infinity : Math.ceil(startAt + limit), call.settled.at) + 1;
        return s.abortedAt === undefined || s.abortedAt > by
          ? [`attempt ${s.attempt} copy ${s.copy} hung; its signal aborted at ${s.abortedAt ?? 'never'}, due by ${by} ms`]
          : [];
      });
    }),
  },
  {
    name: 'telemetry-declined',
    promise:
      'Returning `undefined` instead declines the call: it runs as one without telemetry. (`Telemetry`: "called once per call, before its first attempt")',
    where: 'docs/telemetry.md, "Your own telemetry"; src/types.ts, Telemetry',
    check: perCall(checkDeclined),
  },
  {
    name: 'not-after-settle',
    promise: '`fn` is never called after the promise settled',
    where: 'docs/reliability.md, "Interleaving fuzz"',
    check: perCall((call, world) => {
      const settled = call.settled;
      return settled
        ? sentBy(world, call)
            .filter((s) => s.seq > settled.seq)
            .map((s) => `attempt ${s.attempt} copy ${s.copy} sent at ${s.at} ms after the call settled at ${settled.at} ms`)
        : [];
    }),
  },
];

/** An error as text (its class and message), so that two runs' errors compare by what they say. */
const errorsAsText = (_key: string, value: unknown): unknown =>
  value instanceof Error ? `${value.constructor.name}: ${value.message}` : value;

/** What the simulation sees of one call, part by part, as text: two runs of one world compare by it. */
export function seenOf(call: CallRecord, world: WorldRecord): Record<string, string> {
  const text = (value: unknown): string => JSON.stringify(value, errorsAsText);
  return {
    outcome: text({ settled: call.settled, settleCount: call.settleCount, threw: call.threw, refused: call.refused }),
    events: text(call.events),
    requests: text(sentBy(world, call)),
    hooks: text({
      retries: call.retries,
      successes: call.successes,
      giveUps: call.giveUps,
      hedges: call.hedgeHooks,
      uncounted: call.uncountedSeqs ?? call.uncounted,
    }),
  };
}

/** A call whose telemetry declined it, against the same call in the world run without that telemetry. */
function checkDeclined(call: CallRecord, world: WorldRecord): string[] {
  if (call.limits.hooks.telemetry !== 'declines') return [];
  const out: string[] = [];
  // The one question a declining telemetry is asked: whether it records the call (none for a
  // call refused before it starts).
  const asked = call.telemetryStarts?.length ?? 0;
  const expected = call.refused === undefined ? 1 : 0;
  if (asked !== expected) out.push(`the declining telemetry was asked ${asked} times to start the call, not ${expected}`);
  if (call.telemetryEvents.length > 0 || call.telemetryAttempts > 0)
    out.push(`the declining telemetry was told ${call.telemetryEvents.length} events and ${call.telemetryAttempts} sends`);
  const twinWorld = world.twin;
  const twin = twinWorld?.calls[call.index];
  if (twinWorld === undefined || twin === undefined) return [...out, 'the world was not run again without the declining telemetry'];
  const here = seenOf(call, world);
  const there = seenOf(twin, twinWorld);
  for (const part of Object.keys(here))
    if (here[part] !== there[part]) out.push(`${part} not as in the run without telemetry: ${here[part]} vs ${there[part]}`);
  return out;
}

function checkHooks(call: CallRecord, world: WorldRecord): string[] {
  const out: string[] = [];
  const { settled, limits } = call;
  if (!ended(call) || call.refused !== undefined) return out;
  const ok = (settled as { ok: boolean }).ok;
  if (limits.hooks.onSuccess && call.successes.length !== (ok ? 1 : 0)) out.push(`onSuccess called ${call.successes.length} times`);
  if (limits.hooks.onGiveUp && call.giveUps.length !== (ok ? 0 : 1)) out.push(`onGiveUp called ${call.giveUps.length} times`);
  const events = call.events.map((e) => e.event);
  const terminal = events.filter((e) => e.type === 'success' || e.type === 'give-up');
  if (terminal.length !== 1 || events.at(-1) !== terminal[0])
    out.push(`events ${events.map((e) => e.type).join(',')}: not one success or give-up, last`);
  const made = attemptEvents(call).length;
  const end = terminal[0] as { attempts?: number; reason?: string } | undefined;
  if (end && end.attempts !== made) out.push(`the ${terminal[0]?.type} event says ${end.attempts} attempts, ${made} were made`);
  const error = settled?.error;
  if (end?.reason !== undefined && isRetryError(error) && error.reason !== end.reason)
    out.push(`give-up event '${end.reason}', RetryError '${error.reason}'`);
  if (limits.hooks.onGiveUp && end?.reason !== undefined && call.giveUps[0] && call.giveUps[0].reason !== end.reason)
    out.push(`onGiveUp '${call.giveUps[0].reason}', event '${end.reason}'`);
  let current = 0;
  for (const e of events) {
    if (e.type === 'attempt') current = e.attempt;
    else if ((e.type === 'retry' || e.type === 'hedge') && e.attempt !== current)
      out.push(`a ${e.type} event of attempt ${e.attempt} during attempt ${current}`);
  }
  const retries = events.filter((e) => e.type === 'retry') as { attempt: number; delayMs: number }[];
  if (
    limits.hooks.onRetry &&
    JSON.stringify(call.retries.map((r) => [r.attempt, r.delayMs])) !== JSON.stringify(retries.map((r) => [r.attempt, r.delayMs]))
  )
    out.push(
      `onRetry ${JSON.stringify(call.retries.map((r) => [r.attempt, r.delayMs]))}, retry events ${JSON.stringify(retries.map((r) => [r.attempt, r.delayMs]))}`,
    );
  const hedges = events.filter((e) => e.type === 'hedge').length;
  const copies = sentBy(world, call).filter((s) => s.copy > 1).length;
  if (hedges !== copies) out.push(`${hedges} hedge events, ${copies} extra copies sent`);
  if (call.hedgeHooks.length !== hedges) out.push(`onHedge called ${call.hedgeHooks.length} times, ${hedges} hedge events`);
  if (limits.hooks.telemetry === 'records') {
    const asked = call.telemetryStarts?.length ?? 0;
    if (asked !== 1) out.push(`the telemetry was asked ${asked} times to start the call`);
    if (call.telemetryEvents.map((e) => e.type).join() !== events.map((e) => e.type).join())
      out.push('the telemetry saw other events than onEvent');
    if (call.telemetryAttempts !== sentBy(world, call).length)
      out.push(`telemetry.attempt ran ${call.telemetryAttempts} times for ${sentBy(world, call).length} sends`);
  }
  return out;
}

function checkOutcome(call: CallRecord, world: WorldRecord): string[] {
  const { settled } = call;
  if (!settled || call.endedByHorizon) return [];
  const out: string[] = [];
  if (settled.ok) {
    const value = settled.value as { call?: number } | undefined;
    if (value?.call !== call.index) out.push(`resolved with ${JSON.stringify(settled.value)}, not a value of its fn`);
  } else {
    const error = settled.error;
    const named = (error instanceof TypeError || error instanceof RangeError) && /options\.\w+/.test(error.message);
    const known =
      call.ownErrors.has(error) ||
      error === call.abortReason ||
      isRetryError(error) ||
      error instanceof ThrottledError ||
      error instanceof TimeoutError ||
      named;
    if (!known)
      out.push(
        `rejected with ${String(error)}: neither fn's error, the abort's reason, a RetryError, a ThrottledError nor a refused option`,
      );
  }
  const sent = sentBy(world, call);
  const stop = sent.find((s) => s.permanent && (s.abortedAt === undefined || s.abortedAt > (s.endedAt as number)));
  if (stop) {
    const after = sent.find((s) => s.seq > (stop.endedSeq as number) && s.attempt > stop.attempt);
    if (after) out.push(`attempt ${after.attempt} sent after a permanent error at ${stop.endedAt} ms`);
  }
  return out;
}

/** Every violation of `world`, as `invariant: detail` lines. */
export function violations(world: WorldRecord, invariants: readonly Invariant[] = INVARIANTS): { invariant: string; detail: string }[] {
  return [
    ...world.direct,
    ...invariants.flatMap((inv) => {
      try {
        return inv.check(world).map((detail) => ({ invariant: inv.name, detail }));
      } catch (error) {
        return [{ invariant: inv.name, detail: `the check itself threw: ${String(error)}` }];
      }
    }),
  ];
}
