/**
 * One signal from the two a retryFetch caller may give (`init.signal` or the Request's, and
 * `options.signal`).
 */
import { unwatchAbort, watchAbort } from '../runtime/abort-watch.js';
import { ignore } from './responses.js';

/**
 * The call's signal from the caller's two (`init.signal` or the Request's, and
 * `options.signal`): a controller told by either until `dispose()`, called when the call
 * settles. Through abort-watch, so a signal shared by many calls keeps one listener. (Not
 * AbortSignal.any: in Node, each signal it returns stays referenced from a long-lived source,
 * some 50 bytes a call, nodejs/node#55351.)
 */
export function eitherSignal(a: AbortSignal | undefined, b: AbortSignal | undefined): { signal: AbortSignal | undefined; dispose(): void } {
  if (a === undefined || b === undefined) return { signal: a ?? b, dispose: ignore };
  const controller = new AbortController();
  const watcher = { onCallerAbort: (reason: unknown): void => controller.abort(reason) };
  if (a.aborted) controller.abort(a.reason);
  else if (b.aborted) controller.abort(b.reason);
  watchAbort(a, watcher);
  watchAbort(b, watcher);
  return {
    signal: controller.signal,
    dispose: () => {
      unwatchAbort(a, watcher);
      unwatchAbort(b, watcher);
    },
  };
}
