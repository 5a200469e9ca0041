/**
 * How a retryFetch call resumes its download: whether it may (a GET that asks for the whole
 * resource), where (in a buffer inside the attempts, or in the body the caller reads), and the
 * driver that resume.ts's reader runs its resumes through, as further runs of the same call of
 * the engine: its policies, attempt numbers and hooks, with a signal of their own.
 */
import type { Call } from '../core/call.js';
import type { AttemptMode } from '../types.js';
import type { Send } from './attempt.js';
import { eitherSignal } from './either-signal.js';
import type { RequestPlan } from './request-plan.js';
import { handOver } from './responses.js';
import type { ResumeDriver } from './resume.js';

/**
 * Where a call's download resumes after a break: `'buffer'`, inside the attempts (the body is
 * read whole there, `bufferBody`); `'stream'`, in the body the caller reads; `'none'`, nowhere.
 */
export type ResumeMode = 'buffer' | 'stream' | 'none';

/** The options that choose the {@link ResumeMode}: retryFetch's of the same names. */
export interface ResumeModeOptions {
  readonly resume?: boolean | undefined;
  readonly bufferBody?: boolean | undefined;
  readonly hedge?: AttemptMode | undefined;
}

/**
 * Only a GET that asks for the whole resource is resumed (a request with its own `Range` asked
 * for bytes the caller counts itself), and only when `resume` is not false. Hedged copies race
 * to the end of their bodies: they do not share one partial buffer, so a hedged call that wants
 * its body whole reads each copy's body afresh.
 */
export function resumeMode(plan: Pick<RequestPlan, 'method' | 'headers'>, { resume, bufferBody, hedge }: ResumeModeOptions): ResumeMode {
  if (resume === false || plan.method !== 'GET' || plan.headers?.has('range') === true) return 'none';
  if (bufferBody !== true) return 'stream';
  return hedge === undefined ? 'buffer' : 'none';
}

/** Where the call came from: the caller's two signals (`init.signal` or the Request's, and `options.signal`). */
export interface CallerSignals {
  readonly caller: AbortSignal | undefined;
  readonly user: AbortSignal | undefined;
}

/**
 * The driver of the resumes of the call `call`, whose requests go out through `send`. Each resume
 * is a further run that stops when either of the caller's signals aborts or the reader cancels
 * the body; the response it ends with is handed over like the first, so the caller's signal
 * keeps aborting its body.
 */
export function resumeDriver(call: Pick<Call<Response>, 'reopen'>, send: Send, signals: CallerSignals): ResumeDriver {
  const stop = new AbortController();
  return {
    run: async (broken, resumed, progressed) => {
      const caller = eitherSignal(signals.caller, signals.user);
      const either = eitherSignal(caller.signal, stop.signal);
      try {
        // A continuation (nothing broke) sends at once; a break is judged as the run's failure.
        return handOver(await call.reopen(resumed, broken, either.signal, progressed), signals.caller);
      } finally {
        either.dispose();
        caller.dispose();
      }
    },
    send: (headers, generation, ctx) => send(ctx, { headers, generation }),
    stopped: () => stop.signal.aborted || signals.caller?.aborted === true || signals.user?.aborted === true,
    stop: (reason) => stop.abort(reason),
  };
}
