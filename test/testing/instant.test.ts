// instant(): the same decisions as the real options (attempts, order, reported waits, the
// deadline's give-up), with no time spent waiting. Each case runs the real options in virtual
// time, then instant() of them, and compares.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INSTANT } from '../../src/util/check.js';
import { retryFetch } from '../../src/fetch/index.js';
import { gcs, iam, iamReadModifyWrite } from '../../src/google/index.js';
import {
  type AttemptContext,
  type RetryEvent,
  type RetryOptions,
  RetryError,
  TimeoutError,
  createRetryAfterGate,
  retry,
  withRetry,
} from '../../src/index.js';
import { instant, scriptedFetch } from '../../src/testing/index.js';
import { type InstalledClock, installClock, httpError } from '../helpers/clock.js';
import { queueState } from '../../src/runtime/timer-queue.js';

let clock: InstalledClock;
beforeEach(() => {
  clock = installClock();
});
afterEach(() => {
  try {
    expect(queueState()).toEqual({ queued: 0, timerArmed: false });
  } finally {
    clock.uninstall();
  }
});

/** What a call did: its attempts (with the virtual time each began), its reported waits, its outcome and the virtual time it took. */
async function record(
  failures: ReadonlyArray<Error | 'progress-then-fail'>,
  options: RetryOptions,
): Promise<{ attempts: number[]; waits: Array<Pick<RetryEvent, 'attempt' | 'delayMs'>>; outcome: unknown; tookMs: number }> {
  const attempts: number[] = [];
  const waits: Array<Pick<RetryEvent, 'attempt' | 'delayMs'>> = [];
  const start = Date.now();
  const call = retry(
    (ctx: AttemptContext) => {
      attempts.push(Date.now() - start);
      const failure = failures[ctx.attempt - 1];
      if (failure === 'progress-then-fail') {
        ctx.progress();
        throw httpError(503);
      }
      if (failure !== undefined) throw failure;
      return `done after ${ctx.attempt}`;
    },
    { ...options, onRetry: ({ attempt, delayMs }) => waits.push({ attempt, delayMs }) },
  );
  const outcome = call.then(
    (value) => value,
    (error: unknown) => (error instanceof RetryError ? `${error.reason} after ${error.attempts}` : error),
  );
  await clock.runAllAsync();
  return { attempts, waits, outcome: await outcome, tookMs: Date.now() - start };
}

const BACKOFF = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 8000, jitter: 'full' } as const;

describe('instant()', () => {
  it('makes the same attempts in the same order, reports the same waits, and waits for none', async () => {
    const failures = [httpError(503), httpError(500), httpError(429)];
    const draws = () => {
      let i = 0;
      return () => [0.25, 0.5, 0.75][i++ % 3] as number;
    };
    const real = await record(failures, { backoff: BACKOFF, rng: draws() });
    const fast = await record(failures, instant({ backoff: BACKOFF, rng: draws() }));
    expect(real.waits).toEqual([
      { attempt: 1, delayMs: 250 },
      { attempt: 2, delayMs: 1000 },
      { attempt: 3, delayMs: 3000 },
    ]);
    expect(fast.waits).toEqual(real.waits);
    expect(real.outcome).toBe('done after 4');
    expect(fast.outcome).toBe('done after 4');
    expect(real.attempts).toEqual([0, 250, 1250, 4250]);
    expect(real.tookMs).toBe(4250);
    // No wait slept: each retry takes one turn of the fake clock's timers (a 0 ms timeout is run 1 ms on, as Node runs it).
    expect(fast.attempts).toEqual([0, 0, 1, 2]);
    expect(fast.tookMs).toBe(2);
  });

  it('gives up at the deadline after the same attempts: each skipped wait counts as time passed', async () => {
    const failures = Array.from({ length: 20 }, () => httpError(503));
    const options: RetryOptions = { backoff: { ...BACKOFF, jitter: 'none' }, deadlineMs: 10_000 };
    const real = await record(failures, options);
    const fast = await record(failures, instant(options));
    // 1 + 2 + 4 s waited; the next 8 s would end past 10 s.
    expect(real.outcome).toBe('deadline after 4');
    expect(fast.outcome).toBe('deadline after 4');
    expect(fast.waits).toEqual(real.waits);
    expect(real.tookMs).toBe(7000);
    expect(fast.tookMs).toBeLessThanOrEqual(3);
  });

  it('reports the elapsed time the real call would have, skipped waits included', async () => {
    const failure = retry(
      () => {
        throw httpError(503);
      },
      instant({ backoff: { ...BACKOFF, jitter: 'none' }, maxAttempts: 3 }),
    ).catch((e: unknown) => e);
    await clock.runAllAsync();
    const error = (await failure) as RetryError;
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3 });
    // 1 s + 2 s skipped, and the two timer turns the retries took.
    expect(error.elapsedMs).toBe(3000 + Date.now());
    expect(Date.now()).toBeLessThanOrEqual(2);
  });

  it('honours a server hint in its decisions, not in its waits: reported, and past the deadline it gives up now', async () => {
    const hinted = [httpError(503, { retryAfterMs: 5000 }), httpError(503, { retryAfterMs: 60_000 })];
    const options: RetryOptions = { backoff: { ...BACKOFF, jitter: 'none' }, deadlineMs: 30_000 };
    const real = await record(hinted, options);
    const fast = await record(hinted, instant(options));
    expect(real.waits).toEqual([{ attempt: 1, delayMs: 5000 }]);
    expect(fast.waits).toEqual(real.waits);
    expect(real.outcome).toBe('deadline after 2');
    expect(fast.outcome).toBe('deadline after 2');
    expect(real.tookMs).toBe(5000);
    expect(fast.tookMs).toBeLessThanOrEqual(1);
  });

  it('counts the deadline from the run: progress starts the skipped waits afresh, as it does the real ones', async () => {
    const failures = [httpError(503), httpError(503), 'progress-then-fail' as const, ...Array.from({ length: 10 }, () => httpError(503))];
    const options: RetryOptions = { backoff: { initialDelayMs: 1000, multiplier: 1, maxDelayMs: 1000, jitter: 'none' }, deadlineMs: 3500 };
    const real = await record(failures, options);
    const fast = await record(failures, instant(options));
    expect(real.outcome).toBe('deadline after 6');
    expect(fast.outcome).toBe('deadline after 6');
  });

  it('counts no skipped wait for a call with schedule options but without instant()', async () => {
    const failures = Array.from({ length: 10 }, () => httpError(503));
    // The `delay` option gives the call its runs' state, as instant() does; its waits are real.
    const real = await record(failures, { delay: () => 1000, deadlineMs: 3500 });
    expect(real.outcome).toBe('deadline after 4');
    expect(real.tookMs).toBe(3000);
  });

  it('keeps the attempt timeout in real time: a hung attempt still ends', async () => {
    const fetch = scriptedFetch(['hang', 200]);
    const call = retryFetch('https://api.example.com/', undefined, instant({ fetch, attemptTimeoutMs: 100 }));
    await clock.tickAsync(99);
    expect(fetch.requests).toHaveLength(1);
    await clock.tickAsync(1);
    await clock.runAllAsync();
    expect((await call).status).toBe(200);
    expect(fetch.requests).toHaveLength(2);
    expect(Date.now()).toBeGreaterThanOrEqual(100);
    expect(Date.now()).toBeLessThanOrEqual(101);
  });

  it('tells a shared gate of the server pause, for the other calls, without being held by it', async () => {
    const gate = createRetryAfterGate({ spread: false });
    const fetch = scriptedFetch([{ status: 503, retryAfter: 30 }, 200]);
    const call = retryFetch('https://api.example.com/', undefined, instant({ fetch, gate }));
    await clock.runAllAsync();
    expect((await call).status).toBe(200);
    expect(Date.now()).toBeLessThanOrEqual(1);
    expect(gate.waitMs()).toBe(30_000 - Date.now());
    clock.tick(30_000);
    expect(gate.waitMs()).toBeLessThanOrEqual(0);
  });

  it('leaves a gate that is no gate to the options reader, which names it', async () => {
    await expect(retry(() => 1, instant({ gate: 'shared' as never }))).rejects.toThrow(
      /retry: options.gate must come from createRetryAfterGate\(\)/,
    );
  });

  it('leaves an object without both gate methods to the options reader too', async () => {
    for (const gate of [{}, { waitMs: () => 0 }, { hold: () => {} }]) {
      await expect(retry(() => 1, instant({ gate: gate as never }))).rejects.toThrow(
        /retry: options.gate must come from createRetryAfterGate\(\)/,
      );
    }
  });

  it('hands the call a gate that reports no pause, as a number, and passes every pause on to the shared one', () => {
    const shared = createRetryAfterGate({ spread: false });
    const { gate } = instant({ gate: shared });
    expect(gate).not.toBe(shared);
    gate?.hold(5000);
    expect(shared.waitMs()).toBe(5000);
    expect(gate?.waitMs()).toBe(0);
    expect(gate?.waitMs(1000)).toBe(0);
  });

  it("works with retryFetch and a preset: instant(gcs(...)) makes gcs()'s attempts, at once", async () => {
    const fetch = scriptedFetch([503, 'ECONNRESET', { status: 429, retryAfter: 2 }, 200]);
    const waits: number[] = [];
    const options = instant(gcs({ operation: 'objects.get', rng: () => 0 }));
    const call = retryFetch('https://storage.example.com/o/a', undefined, { ...options, fetch, onRetry: (e) => waits.push(e.delayMs) });
    await clock.runAllAsync();
    expect((await call).status).toBe(200);
    expect(fetch.requests).toHaveLength(4);
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(Date.now()).toBeLessThanOrEqual(3);
  });

  it('goes through the functions that read options: gcs(instant(...)), iam(instant()), iamReadModifyWrite', async () => {
    const conflict = httpError(409, { response: { data: { error: { status: 'ABORTED' } } } });
    for (const options of [gcs(instant({ operation: 'objects.get' })), iam(instant()), iam(instant({ maxAttempts: 5 }))]) {
      const start = Date.now();
      let calls = 0;
      const call = retry(() => {
        if (++calls < 3) throw httpError(503);
        return calls;
      }, options);
      await clock.runAllAsync();
      expect(await call).toBe(3);
      expect(Date.now() - start).toBeLessThanOrEqual(2);
    }
    let reads = 0;
    const start = Date.now();
    const unit = iamReadModifyWrite(
      {
        read: async () => ++reads,
        modify: (n) => n + 1,
        write: async (n) => {
          if (reads < 3) throw conflict;
          return n;
        },
      },
      instant({ maxAttempts: 5 }),
    );
    await clock.runAllAsync();
    expect(await unit).toBe(4);
    expect(Date.now() - start).toBeLessThanOrEqual(2);
  });

  it("leaves the presets' shared objects alone: gcs() after gcs(instant(...)) waits again", async () => {
    expect(gcs(instant({ operation: 'objects.list' }))).not.toBe(gcs({ operation: 'objects.list' }));
    expect(gcs({ operation: 'objects.list' })).toBe(gcs({ operation: 'objects.list' }));
    let calls = 0;
    const call = retry(
      () => {
        if (++calls < 2) throw httpError(503);
        return calls;
      },
      gcs({ operation: 'objects.list', rng: () => 0 }),
    );
    await clock.runAllAsync();
    expect(await call).toBe(2);
    expect(Date.now()).toBe(1000);
  });

  it('works with withRetry', async () => {
    let calls = 0;
    const flaky = withRetry(
      (n: number) => {
        calls++;
        if (calls < 3) throw httpError(503);
        return n * 2;
      },
      instant({ maxAttempts: 5 }),
    );
    const result = flaky(21);
    await clock.runAllAsync();
    expect(await result).toBe(42);
    expect(Date.now()).toBeLessThanOrEqual(2);
  });

  it("without options gives retry()'s defaults, waits skipped", async () => {
    let calls = 0;
    const call = retry(() => {
      if (++calls < 5) throw httpError(503);
      return calls;
    }, instant());
    await clock.runAllAsync();
    expect(await call).toBe(5);
    expect(Date.now()).toBeLessThanOrEqual(4);
    expect(Object.keys(instant())).toEqual([]);
    expect((instant() as Record<symbol, unknown>)[INSTANT]).toBe(true);
  });

  it('returns a copy, the key registered so that another copy of the library reads it too', () => {
    const given = Object.freeze({ maxAttempts: 3 });
    const fast = instant(given);
    expect(fast).not.toBe(given);
    expect(fast).toEqual({ maxAttempts: 3, [INSTANT]: true });
    expect(Object.isFrozen(fast)).toBe(false);
    expect(INSTANT).toBe(Symbol.for('tenacious.instant'));
    expect(({ ...fast, maxAttempts: 4 } as Record<symbol, unknown>)[INSTANT]).toBe(true);
  });

  it('is turned on by true only', async () => {
    let calls = 0;
    const call = retry(
      () => {
        if (++calls < 2) throw httpError(503);
        return calls;
      },
      { backoff: { ...BACKOFF, jitter: 'none' }, [INSTANT]: 'yes' } as RetryOptions,
    );
    await clock.runAllAsync();
    expect(await call).toBe(2);
    expect(Date.now()).toBe(1000);
  });

  it('refuses what is not an options object, naming it', () => {
    expect(() => instant(3 as never)).toThrow(new TypeError('instant: options must be an object, got 3'));
    expect(() => instant([] as never)).toThrow(new TypeError('instant: options must be a plain object, got []'));
  });

  it('times out a hung attempt in real time, and gives up when the next wait would pass the deadline', async () => {
    const options: RetryOptions = { attemptTimeoutMs: 50, deadlineMs: 120, backoff: { initialDelayMs: 10, multiplier: 2, jitter: 'none' } };
    const hung = (): Promise<never> => new Promise(() => {});
    const real = retry(hung, options).catch((e: unknown) => e);
    await clock.runAllAsync();
    // 50 ms, a 10 ms wait, 50 ms: the next 20 ms would end at 130.
    expect(await real).toMatchObject({ reason: 'deadline', attempts: 2, elapsedMs: 110 });
    const start = Date.now();
    const fast = retry(hung, instant(options)).catch((e: unknown) => e);
    await clock.runAllAsync();
    const error = (await fast) as RetryError;
    expect(error).toMatchObject({ reason: 'deadline', attempts: 2 });
    expect(error.cause).toBeInstanceOf(TimeoutError);
    expect(Date.now() - start).toBe(101);
  });
});

describe('instant(): types', () => {
  it('types the hooks and predicates written inside it, for retry(), retryFetch() and the presets', async () => {
    const seen: number[] = [];
    let polls = 0;
    // Made apart from the call, as a shared test fixture would be: nothing around it gives the types.
    const polling = instant({ retryOnResult: (value) => value !== 2, onRetry: (event) => seen.push(event.attempt) });
    const polled = retry(() => ++polls, polling);
    await clock.runAllAsync();
    expect(await polled).toBe(2);
    const fetch = scriptedFetch([503, 200]);
    const fetching = instant({ fetch, onRetry: (event) => seen.push(event.attempt + 10) });
    const fetched = retryFetch('https://api.example.com/', undefined, fetching);
    await clock.runAllAsync();
    expect((await fetched).status).toBe(200);
    const preset = gcs(instant({ operation: 'objects.get', onGiveUp: (event) => void seen.push(event.attempts) }));
    expect(preset.onGiveUp).toBeTypeOf('function');
    expect(seen).toEqual([1, 11]);
  });
});
