/**
 * The one seam of telemetry (the `telemetry` option): a call that has one runs under a copy of
 * its configuration whose event stream also tells the telemetry, and whose attempts are made by
 * a mode that runs each send inside `CallTelemetry.attempt`, so that the trace context the
 * telemetry sets there is the one `fn` and an instrumented client see. Everything else (plain
 * and hedged attempts, further runs, every adapter) then reaches the telemetry through what the
 * engine already does; the engine itself holds nothing for it. A call without the option is
 * handed its configuration unchanged, and pays one comparison; so is one whose telemetry
 * declines it (returns undefined).
 */
import type { AttemptContext, AttemptHost, CallEvent } from '../types.js';
import { emit } from './hooks.js';
import type { RetryConfig } from './options.js';

/** `config`, or, when it has telemetry, a copy for one call that reports to it. */
export function observed(config: RetryConfig): RetryConfig {
  const setup = config.telemetry;
  if (setup === undefined) return config;
  const call = setup.telemetry(setup);
  // Nothing records this call (no SDK behind the telemetry): it runs as one without.
  if (call === undefined) return config;
  const { mode } = config;
  return {
    ...config,
    onEvent: (event: CallEvent) => {
      emit(config, event); // the caller's own onEvent, if any, isolated from the telemetry
      call.event(event); // isolated all the same: the engine calls this function through callHook
    },
    // Each send (a plain attempt, or each copy of a hedged one) runs inside the telemetry's
    // `attempt`. One that throws before running it fails that send, as a throwing fn would.
    mode: {
      run: <T>(fn: (ctx: AttemptContext) => T | PromiseLike<T>, ctx: AttemptContext, host: AttemptHost) => {
        const send = (copy: AttemptContext) => call.attempt(copy, () => fn(copy));
        return (mode ? mode.run(send, ctx, host) : send(ctx)) as Promise<T>;
      },
    },
  };
}
