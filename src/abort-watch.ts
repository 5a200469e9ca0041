/**
 * One 'abort' listener per caller signal, however many `retry()` calls watch it.
 *
 * A long-lived signal (a server's shutdown signal, a request's signal shared by its fan-out)
 * is often given to many concurrent calls. A listener per call makes Node warn about a
 * possible leak past ten of them (MaxListenersExceededWarning); one shared listener keeps the
 * signal's listener count at one while calls are pending, and at zero once they have ended.
 */

/** Something to tell when the signal aborts; `retry()`'s per-call state. */
export interface AbortWatcher {
  onCallerAbort(reason: unknown): void;
}

const watchersOf = new WeakMap<AbortSignal, Set<AbortWatcher>>();

function notifyWatchers(event: Event): void {
  const signal = event.currentTarget as AbortSignal;
  // Registered only while the signal has watchers (a listener removed during dispatch is skipped).
  const watchers = watchersOf.get(signal) as Set<AbortWatcher>;
  // A watcher that is told stops watching, deleting itself from the set: Set iteration allows it.
  for (const watcher of watchers) watcher.onCallerAbort(signal.reason);
}

/** Tells `watcher` when `signal` aborts, until `unwatchAbort` is called. */
export function watchAbort(signal: AbortSignal, watcher: AbortWatcher): void {
  let watchers = watchersOf.get(signal);
  if (watchers === undefined) {
    watchers = new Set();
    watchersOf.set(signal, watchers);
    signal.addEventListener('abort', notifyWatchers);
  }
  watchers.add(watcher);
}

/** Stops telling `watcher`; the signal's listener goes when its last watcher does. */
export function unwatchAbort(signal: AbortSignal, watcher: AbortWatcher): void {
  const watchers = watchersOf.get(signal);
  if (watchers === undefined || !watchers.delete(watcher) || watchers.size > 0) return;
  watchersOf.delete(signal);
  signal.removeEventListener('abort', notifyWatchers);
}
