/**
 * The caller's side of an intercepted dispatch: the controller its handler gets at
 * `onRequestStart` (abort ends the whole call, pause holds the body), and the call's outcome
 * played to the handler as undici would play one response: `onResponseStart`, the body chunk by
 * chunk as the handler lets it, then `onResponseEnd`, or `onResponseError` once, and nothing after.
 */
import type { Dispatcher } from 'undici';

/** A body chunk as handlers take it (typed a Buffer; a Uint8Array is what they use of it). */
type Chunk = Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseData']>>[1];

/** The controller the caller's handler holds for the whole call, every attempt included. */
export interface CallController extends Dispatcher.DispatchController {
  /** The call's signal: aborted by `abort()`. */
  readonly signal: AbortSignal;
  /** Resolves when the handler lets the body flow (not paused), or the call was aborted. */
  flowing(): Promise<void>;
}

/** A controller for a call; `abort` aborts its signal. */
export function callController(): CallController {
  const abort = new AbortController();
  let paused = false;
  let wake: (() => void) | undefined;
  // Resolving the same promise twice does nothing: no need to forget it.
  const wakeUp = (): void => wake?.();
  return {
    signal: abort.signal,
    get aborted() {
      return abort.signal.aborted;
    },
    get paused() {
      return paused;
    },
    get reason() {
      return abort.signal.aborted ? (abort.signal.reason as Error) : null;
    },
    abort(reason) {
      abort.abort(reason);
      wakeUp();
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      wakeUp();
    },
    flowing: () =>
      !paused || abort.signal.aborted
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            wake = resolve;
          }),
  };
}

/** A response's headers as undici hands them to a handler: lower-case names, `set-cookie` a list. */
export function undiciHeaders(headers: Headers): Record<string, string | string[]> {
  const record: Record<string, string | string[]> = {};
  for (const [name, value] of headers) record[name] = value;
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) record['set-cookie'] = cookies;
  return record;
}

/**
 * Plays `response` to `handler`: its status and headers, then its body as the handler lets it
 * flow. The call's abort, a handler callback that throws, and a body that breaks beyond repair
 * (a `ResumeError`, a connection lost with no resume) end it with `onResponseError`.
 */
export async function deliver(response: Response, handler: Dispatcher.DispatchHandler, controller: CallController): Promise<void> {
  const reader = response.body?.getReader();
  try {
    handler.onResponseStart?.(controller, response.status, undiciHeaders(response.headers), response.statusText);
    for (;;) {
      await controller.flowing();
      const chunk = await reader?.read();
      // A body already in memory (bufferBody) reads on after an abort: the abort is checked here.
      if (controller.aborted) throw controller.reason;
      if (chunk === undefined || chunk.done) break;
      handler.onResponseData?.(controller, chunk.value as Chunk);
    }
    // A handler may throw here too: undici's retry handler throws the status it judged failed,
    // counting on the dispatcher to hand it back through onResponseError, as undici's own does.
    handler.onResponseEnd?.(controller, {});
  } catch (error) {
    // The body nobody will read is cancelled: its connection is freed.
    reader?.cancel(error).catch(ignore);
    fail(handler, controller, error);
  }
}

/** Reports the call's failure to the handler: undici's error, a RetryError, or the abort reason. */
export function fail(handler: Dispatcher.DispatchHandler, controller: CallController, error: unknown): void {
  handler.onResponseError?.(controller, error as Error);
}

function ignore(): void {}
