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

/** The watchers of one signal and the one listener that tells them. */
interface Watch {
  readonly watchers: Set<AbortWatcher>;
  readonly listener: () => void;
}

const watchOf = new WeakMap<AbortSignal, Watch>();

/** Tells `watcher` when `signal` aborts, until `unwatchAbort` is called. */
export function watchAbort(signal: AbortSignal, watcher: AbortWatcher): void {
  let watch = watchOf.get(signal);
  if (watch === undefined) {
    const watchers = new Set<AbortWatcher>();
    // One closure per signal (not per call): it knows its signal, so it needs nothing from the
    // event, which a signal-like object may dispatch without a currentTarget.
    const listener = (): void => {
      // A watcher that is told stops watching, deleting itself from the set: Set iteration allows it.
      for (const each of watchers) each.onCallerAbort(signal.reason);
    };
    // Added before it is recorded: a signal whose addEventListener throws keeps no record that
    // would make the next call believe it is listened to.
    signal.addEventListener('abort', listener);
    watch = { watchers, listener };
    watchOf.set(signal, watch);
  }
  watch.watchers.add(watcher);
}

/**
 * Stops telling `watcher` (nothing to do without a signal); the signal's listener goes when its
 * last watcher does. Never throws: a signal-like object whose removeEventListener throws is
 * left to it, and its watcher is free all the same.
 */
export function unwatchAbort(signal: AbortSignal | undefined, watcher: AbortWatcher): void {
  // A WeakMap holds nothing under undefined: without a signal there is no watch.
  const watch = watchOf.get(signal as AbortSignal);
  if (watch === undefined || !watch.watchers.delete(watcher) || watch.watchers.size > 0) return;
  watchOf.delete(signal as AbortSignal);
  try {
    (signal as AbortSignal).removeEventListener('abort', watch.listener);
  } catch {
    // Only that signal's own listener list is in doubt; nothing here depends on it.
  }
}
