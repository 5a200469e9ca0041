/**
 * `settle()`: runs a fake clock's timers, one at a time, until a promise settles, so a test can
 * await a retrying call under `@sinonjs/fake-timers`, `vi.useFakeTimers()` or `node:test`'s
 * `mock.timers` without knowing how long its waits are.
 */

/**
 * A fake clock `settle` can drive: an `@sinonjs/fake-timers` clock (what `install()` returns),
 * vitest's `vi` (after `vi.useFakeTimers()`), `node:test`'s `mock.timers` (after `enable()`), or
 * your own function that runs the next timer and says whether there was one.
 *
 * @example
 * const clocks: FakeClock[] = [FakeTimers.install(), vi, mock.timers, () => clock.runToLastAsync().then(() => true)];
 */
export type FakeClock =
  | {
      /** Runs the next timer (`@sinonjs/fake-timers`). */
      nextAsync(): Promise<unknown>;
      /** How many timers are left. */
      countTimers(): number;
    }
  | {
      /** Runs the next timer (vitest's `vi`). */
      advanceTimersToNextTimerAsync(): Promise<unknown>;
      /** How many timers are left. */
      getTimerCount(): number;
    }
  | {
      /** Runs every timer due (`node:test`'s `mock.timers`). */
      runAll(): void;
    }
  | (() => boolean | Promise<boolean>);

/**
 * Options of {@link settle}.
 *
 * @example
 * await settle(call, vi, { maxTimers: 100 });
 */
export interface SettleOptions {
  /** How many timers to run at most before giving up with an error. Default 10 000. */
  readonly maxTimers?: number;
}

// The host's own way to let a turn of the event loop pass, found before any fake clock exists
// (a fake setImmediate or setTimeout would wait for the clock this is driving).
const host = globalThis as { setImmediate?: (fn: () => void) => unknown; setTimeout: (fn: () => void, ms: number) => unknown };
const hostSetImmediate = host.setImmediate;
const hostSetTimeout = host.setTimeout;

function turn(): Promise<void> {
  // Stryker disable next-line ConditionalExpression: equivalent where setImmediate exists (Node, Bun): both let one turn pass
  return new Promise((resolve) => (hostSetImmediate === undefined ? hostSetTimeout(resolve, 0) : hostSetImmediate(resolve)));
}

/**
 * Waits for `promise`, running `clock`'s timers one by one, each after the code it woke has
 * done all it can without a timer (a turn of the real event loop), until the promise settles;
 * then resolves or rejects as the promise did. Time moves only as far as the timers due, so the
 * waits, deadlines and attempt timeouts of a retrying call happen at their exact virtual times.
 *
 * The code under test must not wait for real I/O meanwhile (a real server, a real timer): the
 * next fake timer would fire first, as if that I/O took for ever. Answer its requests with
 * `scriptedFetch`. Throws when no timer is left while the promise is pending (it waits for
 * something else), and after `maxTimers` timers (a loop that never ends). `node:test`'s
 * `mock.timers` cannot tell how many timers wait: each step runs all of them (`runAll()`),
 * which is the next one when a retrying call is all that runs.
 *
 * @example
 * const clock = FakeTimers.install();
 * const call = retryFetch(url, undefined, { fetch: scriptedFetch([503, 503, 200]) });
 * const res = await settle(call, clock); // two backoff waits, in virtual time
 * clock.uninstall();
 */
export async function settle<T>(promise: PromiseLike<T>, clock: FakeClock, options: SettleOptions = {}): Promise<T> {
  const step = stepOf(clock);
  const maxTimers = options.maxTimers ?? 10_000;
  if (!(Number.isSafeInteger(maxTimers) && maxTimers >= 0)) {
    throw new RangeError(`settle: options.maxTimers must be a whole number >= 0, got ${String(maxTimers)}`);
  }
  let outcome: { value: T } | { error: unknown } | undefined;
  Promise.resolve(promise).then(
    (value) => {
      outcome = { value };
    },
    (error: unknown) => {
      outcome = { error };
    },
  );
  for (let timers = 0; ; timers++) {
    await turn();
    if (outcome !== undefined) break;
    // Stryker disable next-line EqualityOperator: equivalent: `timers` counts up from 0 by one, so >= meets it where === does
    if (timers === maxTimers) throw new Error(`settle: the promise is still pending after ${maxTimers} timers`);
    if (!(await step())) {
      throw new Error('settle: the promise is pending and no timer is left to run: it waits for something the fake clock does not drive');
    }
  }
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

/** Runs the next timer of `clock`: false when there was none. */
function stepOf(clock: FakeClock): () => boolean | Promise<boolean> {
  if (typeof clock === 'function') return clock;
  if (typeof clock !== 'object' || clock === null) throw new TypeError(`settle: clock must be a fake clock, got ${String(clock)}`);
  if ('nextAsync' in clock) return () => next(clock.countTimers(), () => clock.nextAsync());
  if ('advanceTimersToNextTimerAsync' in clock) return () => next(clock.getTimerCount(), () => clock.advanceTimersToNextTimerAsync());
  if ('runAll' in clock) {
    return () => {
      clock.runAll();
      return true;
    };
  }
  throw new TypeError(
    "settle: clock must be a fake clock: @sinonjs/fake-timers' clock (nextAsync), vitest's vi (advanceTimersToNextTimerAsync), node:test's mock.timers (runAll) or a function",
  );
}

/** Runs the next timer when `pending` say one waits. */
async function next(pending: number, run: () => Promise<unknown>): Promise<boolean> {
  if (pending === 0) return false;
  await run();
  return true;
}
