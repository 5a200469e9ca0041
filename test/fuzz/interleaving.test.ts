// Interleaving fuzz: random attempt outcomes (promise subclasses whose then calls back at once
// or throws among them), latencies, deadlines, attempt timeouts, caller aborts, retry budgets,
// Retry-After hints and async onRetry hooks that reject, all in virtual time, checking the
// promises retry() makes on every run. `npm test` runs 500 cases; `npm run fuzz` runs FUZZ_RUNS (10,000).
import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BackoffPolicy,
  RetryError,
  type RetryEvent,
  computeDelay,
  createRetryBudget,
  retry,
  retryAfterMsOf,
} from '../../src/index.js';
import { queueState } from '../../src/runtime/timer-queue.js';
import { installClock } from '../helpers/clock.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 500);

type Outcome =
  | { kind: 'value'; latencyMs: number }
  | { kind: 'transient'; latencyMs: number; retryAfterS?: number }
  | { kind: 'permanent'; latencyMs: number }
  | { kind: 'sync-throw' }
  | { kind: 'hang' }
  | { kind: 'late-value'; latencyMs: number }
  // fn aborts the caller's signal itself, then throws, returns or hangs.
  | { kind: 'caller-abort'; then: 'throw' | 'value' | 'hang' }
  // A Promise subclass whose then calls back at once (with a value or a 503), or throws a 503.
  | { kind: 'sync-then'; fails: boolean }
  | { kind: 'throwing-then' };

/** A promise whose then calls back synchronously, as some hand-rolled subclasses do. */
class SyncThen<T> extends Promise<T> {
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

/** A promise whose then throws. */
class ThrowingThen<T> extends Promise<T> {
  override then(): never {
    throw Object.assign(new Error('then threw 503'), { status: 503 });
  }
}

const latency = fc.integer({ min: 0, max: 3000 });
const outcomeArb: fc.Arbitrary<Outcome> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('value' as const), latencyMs: latency }) },
  {
    weight: 6,
    arbitrary: fc.record(
      { kind: fc.constant('transient' as const), latencyMs: latency, retryAfterS: fc.integer({ min: 0, max: 20 }) },
      { requiredKeys: ['kind', 'latencyMs'] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('permanent' as const), latencyMs: latency }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sync-throw' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hang' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('late-value' as const), latencyMs: fc.integer({ min: 0, max: 20_000 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('caller-abort' as const),
      then: fc.constantFrom('throw' as const, 'value' as const, 'hang' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sync-then' as const), fails: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('throwing-then' as const) }) },
);

const policyArb: fc.Arbitrary<BackoffPolicy> = fc
  .record({
    initialDelayMs: fc.integer({ min: 0, max: 2000 }),
    multiplier: fc.constantFrom(1, 1.5, 2, 3),
    extra: fc.integer({ min: 0, max: 10_000 }),
    jitter: fc.constantFrom<BackoffPolicy['jitter']>('none', 'full', 'equal', { additiveMs: 1000 }),
  })
  .map(({ extra, ...p }) => ({ ...p, maxDelayMs: p.initialDelayMs + extra }));

const scenarioArb = fc.record(
  {
    outcomes: fc.array(outcomeArb, { minLength: 1, maxLength: 12 }),
    policy: policyArb,
    deadlineMs: fc.integer({ min: 1, max: 60_000 }),
    attemptTimeoutMs: fc.integer({ min: 1, max: 5000 }),
    maxAttempts: fc.integer({ min: 1, max: 15 }),
    abortAtMs: fc.integer({ min: 0, max: 60_000 }),
    randoms: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 16 }),
    // A shared budget, already partly drained by other calls.
    budget: fc.record({ maxTokens: fc.integer({ min: 1, max: 10 }), drained: fc.integer({ min: 0, max: 10 }) }),
    rejectingHook: fc.boolean(),
  },
  { requiredKeys: ['outcomes', 'policy', 'deadlineMs', 'maxAttempts', 'randoms'] },
);

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never;

async function runScenario(s: Scenario): Promise<void> {
  const clock = installClock();
  try {
    const controller = new AbortController();
    const abortReason = new Error('caller aborted');
    let abortedAt: number | undefined;
    let abortedByFn = false;
    const abort = () => {
      abortedAt ??= Date.now();
      controller.abort(abortReason);
    };
    let settledAt: number | undefined;
    let settleCount = 0;
    let outcome: { value?: unknown; error?: unknown } = {};
    let calls = 0;
    let running = 0;
    let maxRunning = 0;
    let calledAfterSettle = false;
    const events: RetryEvent[] = [];
    let nextRandom = 0;
    const rng = () => s.randoms[nextRandom++ % s.randoms.length] as number;
    const usedRandoms: number[] = [];
    const recordingRng = () => {
      const r = rng();
      usedRandoms.push(r);
      return r;
    };
    const budget = s.budget === undefined ? undefined : createRetryBudget({ maxTokens: s.budget.maxTokens, tokenRatio: 0.1 });
    for (let i = 0; i < (s.budget?.drained ?? 0); i++) budget?.record(false);
    // Some hooks are async and reject: that must change nothing (and never go unhandled).
    const onRetry = (event: RetryEvent): Promise<void> | undefined => {
      events.push(event);
      return s.rejectingHook === true ? Promise.reject(new Error('hook failed')) : undefined;
    };

    const promise = retry(
      (ctx) => {
        if (settleCount > 0) calledAfterSettle = true;
        calls++;
        const script = s.outcomes[Math.min(calls, s.outcomes.length) - 1] as Outcome;
        // An attempt stops "running" when it settles or when retry() abandons it (its signal aborts).
        running++;
        maxRunning = Math.max(maxRunning, running);
        let ended = false;
        const end = () => {
          if (!ended) {
            ended = true;
            running--;
          }
        };
        ctx.signal.addEventListener('abort', end, { once: true });
        if (script.kind === 'sync-throw') {
          end();
          throw Object.assign(new Error('sync 503'), { status: 503 });
        }
        if (script.kind === 'caller-abort') {
          abortedByFn = true;
          abort();
          if (script.then === 'throw') throw Object.assign(new Error('503 after abort'), { status: 503 });
          if (script.then === 'value') return `value of ${ctx.attempt}`;
        }
        if (script.kind === 'sync-then') {
          end();
          return SyncThen.of<string>(
            script.fails ? { error: Object.assign(new Error('sync 503'), { status: 503 }) } : { value: `value of ${ctx.attempt}` },
          );
        }
        if (script.kind === 'throwing-then') {
          end();
          return new ThrowingThen<string>(() => {});
        }
        if (script.kind === 'hang' || script.kind === 'caller-abort') return new Promise<never>(() => {});
        return new Promise<string>((resolve, reject) => {
          setTimeout(() => {
            end();
            if (script.kind === 'value' || script.kind === 'late-value') resolve(`value of ${ctx.attempt}`);
            else if (script.kind === 'permanent') reject(Object.assign(new Error('404'), { status: 404 }));
            else {
              const headers = script.retryAfterS === undefined ? {} : { 'retry-after': String(script.retryAfterS) };
              reject(Object.assign(new Error('503'), { status: 503, response: { status: 503, headers } }));
            }
          }, script.latencyMs);
        });
      },
      {
        backoff: s.policy,
        deadlineMs: s.deadlineMs,
        ...(s.attemptTimeoutMs === undefined ? {} : { attemptTimeoutMs: s.attemptTimeoutMs }),
        maxAttempts: s.maxAttempts,
        signal: controller.signal,
        rng: recordingRng,
        onRetry,
        ...(budget === undefined ? {} : { budget }),
      },
    );
    promise.then(
      (value) => {
        settleCount++;
        settledAt ??= Date.now();
        outcome = { value };
      },
      (error: unknown) => {
        settleCount++;
        settledAt ??= Date.now();
        outcome = { error };
      },
    );
    const abortTimer = s.abortAtMs === undefined ? undefined : setTimeout(abort, s.abortAtMs);

    // Run virtual time well past every limit, then let late outcomes arrive.
    await clock.tickAsync(s.deadlineMs + 1);
    const settledBy = settledAt;
    await clock.tickAsync(30_000);
    clearTimeout(abortTimer); // the test's own timer, if the abort came after everything

    // Settles exactly once, no later than the deadline.
    expect(settleCount).toBe(1);
    expect(settledBy).toBeDefined();
    expect(settledAt as number).toBeLessThanOrEqual(s.deadlineMs);
    // An abort before settling wins, at the moment it happens, even one raised by fn itself.
    if (abortedAt !== undefined && abortedAt < (settledAt as number)) expect.fail('settled after the abort');
    if (abortedByFn) expect(outcome.error).toBe(abortReason);
    if (outcome.error === abortReason) expect(settledAt).toBe(abortedAt);
    // fn is never called after settling, nor concurrently with itself.
    expect(calledAfterSettle).toBe(false);
    expect(maxRunning).toBeLessThanOrEqual(1);
    // onRetry fired before each sleep: attempts − 1 times, or attempts when aborted while asleep.
    const abortedAsleep = outcome.error === abortReason && events.length === calls;
    expect(events.length).toBe(abortedAsleep ? calls : calls - 1);
    // Each delay is what computeDelay gives for the rng draw, lengthened (never shortened) by a hint.
    events.forEach((event, i) => {
      const drawn = computeDelay(i, s.policy, () => usedRandoms[i] ?? 0);
      // A hint counts only on the error the loop saw (a timed-out attempt's own 503 never arrives).
      const hint = retryAfterMsOf(event.error, Date.now());
      expect(event.attempt).toBe(i + 1);
      expect(event.delayMs).toBe(hint !== undefined && hint > drawn ? hint : drawn);
    });
    // A RetryError is consistent with what happened.
    if (outcome.error instanceof RetryError) {
      expect(outcome.error.attempts).toBe(calls);
      if (outcome.error.reason === 'attempts') expect(calls).toBe(s.maxAttempts);
      if (outcome.error.reason === 'budget') expect(budget?.canRetry()).toBe(false);
      expect(outcome.error.elapsedMs).toBeLessThanOrEqual(s.deadlineMs);
    }
    // The budget never leaves its bounds.
    if (budget !== undefined) {
      expect(budget.tokens).toBeGreaterThanOrEqual(0);
      expect(budget.tokens).toBeLessThanOrEqual(budget.maxTokens);
    }
    // Nothing of the library is left behind.
    expect(queueState()).toEqual({ queued: 0, timerArmed: false });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(clock.countTimers()).toBe(0);
  } finally {
    clock.uninstall();
  }
}

describe('interleaving fuzz', () => {
  it(`keeps every promise of retry() over ${RUNS} random interleavings`, async () => {
    await fc.assert(fc.asyncProperty(scenarioArb, runScenario), { numRuns: RUNS });
  }, 600_000);
});
