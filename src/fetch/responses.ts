/**
 * The responses of retryFetch's attempts: the signal each fetch is given, the ones nobody will
 * read (cancelled, so their connections are freed), and the one handed over to the caller (still
 * aborted by the caller's signal, as fetch's would be).
 */
import { unwatchAbort, watchAbort } from '../runtime/abort-watch.js';

/** The controller of the signal each response's fetch was given. */
const controllerOf = new WeakMap<Response, AbortController>();

/**
 * A signal that aborts one macrotask after `signal` (not aborted yet), with its reason, for one
 * attempt's fetch. retry() aborts every attempt that reaches its deadline in the same timer
 * callback, and aborting a fetch costs fetch's own cleanup (undici: a fraction of a millisecond
 * each, far more on a busy machine); done at once, fifty calls sharing a deadline would each
 * settle only after all fifty cleanups. Deferred, every caller hears of the deadline first, and
 * the sockets close right after.
 */
export function followLate(signal: AbortSignal): AbortController {
  const follower = new AbortController();
  // An attempt's signal aborts once, and lives no longer than its attempt: no need for `once`.
  // The braces matter: a listener that returns a value (setTimeout's) makes workerd warn.
  signal.addEventListener('abort', () => {
    setTimeout(() => follower.abort(signal.reason), 0);
  });
  return follower;
}

/** Records which controller aborts `response`'s fetch (see {@link handOver}). */
export function trackResponse(response: Response, controller: AbortController): void {
  controllerOf.set(response, controller);
}

/** Stops watching a signal for a response that is garbage. */
const unguard =
  typeof FinalizationRegistry === 'function' && typeof WeakRef === 'function'
    ? new FinalizationRegistry<{ signal: AbortSignal; watcher: { onCallerAbort(reason: unknown): void } }>(({ signal, watcher }) =>
        unwatchAbort(signal, watcher),
      )
    : undefined;

/**
 * Returns the response, wired so that the caller's signal keeps aborting it as fetch's would:
 * aborting it while the body downloads stops the download. During the call, retry() passes the
 * caller's abort on to the attempt; afterwards this does. The signal's one listener (abort-watch)
 * holds the controller weakly: a long-lived signal (a server's shutdown signal) shared by every
 * call must not keep every response it ever guarded alive, and with AbortSignal.any it would
 * in Node (nodejs/node#55351).
 */
export function handOver(response: Response, signal: AbortSignal | undefined): Response {
  const controller = controllerOf.get(response);
  if (controller === undefined || signal === undefined || response.body === null || unguard === undefined) {
    return response;
  }
  if (signal.aborted) {
    controller.abort(signal.reason);
    return response;
  }
  const ref = new WeakRef(controller);
  const watcher = {
    onCallerAbort(reason: unknown): void {
      unwatchAbort(signal, watcher);
      ref.deref()?.abort(reason);
    },
  };
  watchAbort(signal, watcher);
  // The controller lives as long as its response (controllerOf); so does the watch.
  unguard.register(response, { signal, watcher });
  return response;
}

/**
 * Reads the body to its end through a clone, so a connection that breaks mid-body fails the
 * attempt; the response keeps every byte for its reader (a clone's chunks are queued on both).
 */
export async function readWholeBody(response: Response): Promise<void> {
  try {
    await response.clone().arrayBuffer();
  } catch (error) {
    cancelBody(response);
    throw error;
  }
}

/** Cancels the body of a response nobody will read, and returns `reason` to throw. */
export function discarded(response: Response, reason: unknown): unknown {
  cancelBody(response);
  return reason;
}

/**
 * Frees a response nobody will read: cancelling the body makes fetch drop or recycle its
 * connection; an unread body would hold the socket until garbage collection.
 */
export function cancelBody(response: Response): void {
  try {
    // A locked body's cancel rejects (its reader frees it), and a null body throws here.
    (response.body as ReadableStream).cancel().catch(ignore);
  } catch {
    // No body, or a fetch double whose Response lacks a body stream: nothing to free.
  }
}

/** Does nothing; the handler of a rejection that has no one to tell. */
export function ignore(): void {}
