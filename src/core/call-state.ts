/**
 * The state a call makes on first need (most calls have one run, no mode, no schedule option
 * and no async `onRetry`, and never make it): where the current run began, which the limits
 * count from, and the run's state for the schedule options (core/schedule.ts); the host of an
 * attempt a mode makes; an async `onRetry` the next attempt waits for; the call's invocation
 * id. A run begins with the call, at each `ctx.progress()`, and at each `reopen`.
 */
import { CallHost } from './host.js';
import type { RetryConfig } from './options.js';
import type { Progress } from './decide.js';
import { randomId } from '../runtime/random-id.js';

/** No async `onRetry` holds the next attempt. */
export const NO_HOOK = 0;
/** An async `onRetry` runs while the call waits its backoff. */
export const HOOK_RUNNING = 1;
/** The backoff is over; the call waits for the async `onRetry` alone (up to the deadline). */
export const HOOK_AWAITED = 2;
/** Where an async `onRetry` stands (see `CallState.hook`). */
export type HookState = typeof NO_HOOK | typeof HOOK_RUNNING | typeof HOOK_AWAITED;

/** The state one call keeps beyond its phase, attempt count and outcome (call.ts). */
export class CallState {
  /** Attempts made before the current run began. */
  base = 0;
  /** The host of the running attempt, when a mode makes it. */
  host: CallHost | undefined = undefined;
  /** The run's last wait, for a decorrelated jitter (core/schedule.ts): none yet at its start. */
  previousDelayMs: number | undefined = undefined;
  /** Failures of this run that `countsAsAttempt` said not to count against `maxAttempts`. */
  uncounted = 0;
  /** The waits of this run that `instant()` skipped: they count as time passed for the deadline. */
  skippedMs = 0;
  /**
   * An async `onRetry` the next attempt waits for: `HOOK_RUNNING` while it runs during the wait,
   * `HOOK_AWAITED` once the wait is over and the call waits for it alone; `NO_HOOK` otherwise.
   */
  hook: HookState = NO_HOOK;

  #invocationId: string | undefined = undefined;

  /** `startedAt`: when the current run began, on the call's clock. */
  constructor(public startedAt: number) {}

  /** A new run begins at `t`, after `base` attempts. */
  begin(t: number, base: number): void {
    this.startedAt = t;
    this.base = base;
    this.previousDelayMs = undefined;
    this.uncounted = 0;
    this.skippedMs = 0;
  }

  /** The call's invocation id (`ctx.invocationId`), made on first read. */
  invocationId(): string {
    this.#invocationId ??= randomId();
    return this.#invocationId;
  }

  /** A host for an attempt a mode makes under `config`, kept for the answers it remembers. */
  hostFor(config: RetryConfig): CallHost {
    this.host = new CallHost(config);
    return this.host;
  }

  /** Where the current run began, for decide(): attempts and milliseconds since the call began at `callStart`. */
  progressAt(callStart: number): Progress {
    return { attempts: this.base, elapsedMs: this.startedAt - callStart };
  }
}
