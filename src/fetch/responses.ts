/**
 * The responses of retryFetch's attempts: the signal each fetch is given, the ones nobody will
 * read (cancelled, so their connections are freed), and the one handed over to the caller (still
 * aborted by the caller's signal, as fetch's would be).
 */
import { unwatchAbort, watchAbort } from '../runtime/abort-watch.js';

/** The controller of the signal each response's fetch was given. */
const controllerOf = new WeakMap<Response, AbortController>();

/** The follower of an attempt's signal that its next abort reaches: the latest fetch's. */
const followerOf = new WeakMap<AbortSignal, { latest: AbortController }>();

/**
 * A signal that aborts one macrotask after `signal` (not aborted yet), with its reason, for one
 * attempt's fetch. retry() aborts every attempt that reaches its deadline in the same timer
 * callback, and aborting a fetch costs fetch's own cleanup (undici: a fraction of a millisecond
 * each, far more on a busy machine); done at once, fifty calls sharing a deadline would each
 * settle only after all fifty cleanups. Deferred, every caller hears of the deadline first, and
 * the sockets close right after. An abort of the caller's own (`callerAborted()` true when the
 * attempt's signal aborts) reaches the fetch at once: within that macrotask a request still
 * being dispatched (a POST) could go out after the caller said stop.
 *
 * An attempt that reads a buffered body in parts (`bufferBody`) sends one fetch per part, each
 * after the last part was read to its end: `signal` keeps one listener, which aborts the latest
 * follower, instead of one per part (4,096 parts made 4,096 listeners, and each added one cost
 * more than the last). Each fetch still gets a follower of its own: fetch (undici) adds a
 * listener to the signal it is given, and drops it only when its request is garbage.
 */
export function followLate(signal: AbortSignal, callerAborted: () => boolean = never): AbortController {
  const follower = new AbortController();
  const known = followerOf.get(signal);
  if (known !== undefined) {
    known.latest = follower;
    return follower;
  }
  const slot = { latest: follower };
  followerOf.set(signal, slot);
  // An attempt's signal aborts once, and lives no longer than its attempt: no need for `once`.
  // The braces matter: a listener that returns a value (setTimeout's) makes workerd warn.
  signal.addEventListener('abort', () => {
    const latest = slot.latest;
    if (callerAborted()) latest.abort(signal.reason);
    else setTimeout(() => latest.abort(signal.reason), 0);
  });
  return follower;
}

const never = (): boolean => false;

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

/**
 * The most bytes of a body the library reads for a check of its own: 64 KiB. Cloud Storage's
 * object metadata (an upload's final answer) stays far below it: custom metadata is capped at
 * 8 KiB (Cloud Storage, "Quotas & limits", https://cloud.google.com/storage/quotas).
 */
export const PEEK_LIMIT_BYTES = 64 * 1024;

/**
 * The text of `response`'s body as a check of the library reads it: from a clone (the caller
 * still reads the body), and at most `limit` bytes. Resolves to undefined when the body is
 * longer, having cancelled the clone at the first chunk past the limit: a body that never ends
 * costs `limit` bytes, not the deadline's worth of them. Rejects when the body breaks. Bodies the
 * caller asked for (`bufferBody`, the response handed over) are read whole; this is for the others.
 */
export async function peekText(response: Response, limit = PEEK_LIMIT_BYTES): Promise<string | undefined> {
  const body = response.clone().body;
  if (body === null) return '';
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) return text + decoder.decode();
    size += chunk.value.byteLength;
    if (size > limit) {
      reader.cancel().catch(ignore);
      return undefined;
    }
    text += decoder.decode(chunk.value, { stream: true });
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
