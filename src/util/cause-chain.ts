/**
 * The chain of errors under an error (`cause`, or gaxios' `error`), walked the same way by every
 * reader: the error-shape readers and predicates that classify a failure, and the library's own
 * errors that quote its root cause in their message. It lives this low so that `errors.ts` can
 * use it without importing the classifiers.
 */

/** Any object whose properties a reader may look at. */
export type Bag = Record<string, unknown>;

/**
 * How far down a chain of underlying errors every reader looks: deep enough for real wrappers,
 * safe against cycles.
 */
const MAX_CAUSE_DEPTH = 8;

/**
 * Whether `value` is an object (or a function) whose properties can be read.
 *
 * @example
 * isBag(new Error('x')); // true
 * isBag('x'); // false
 */
export function isBag(value: unknown): value is Bag {
  return (typeof value === 'object' || typeof value === 'function') && value !== null;
}

/**
 * `value[key]` when `value` is an object (not a function, not null), else undefined.
 *
 * @example
 * objectField(objectField(config, 'signal'), 'aborted'); // config.signal.aborted, if both are objects
 */
export function objectField(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Bag)[key] : undefined;
}

/**
 * The error under this one: its `cause`, else its `error` when that is an error (gaxios 6's
 * `GaxiosError`, which Cloud Storage's client 7 throws, keeps node-fetch's error there, a
 * timeout or an abort among them).
 *
 * @example
 * underlying(new TypeError('fetch failed', { cause: socketError })); // socketError
 */
export function underlying(bag: Bag): unknown {
  if (bag.cause !== undefined && bag.cause !== null) return bag.cause;
  const { error } = bag;
  // Only an error: `error` is also the field of a Google JSON error body ({ error: { … } }),
  // which the readers look into where they mean to.
  return isBag(error) && (error instanceof Error || typeof error.message === 'string') ? error : undefined;
}

/**
 * Applies `read` to the error and each error under it (see `underlying`), at most
 * `MAX_CAUSE_DEPTH` of them; returns the first defined answer. A getter that throws is not
 * caught here: each caller decides what a hostile error means to it.
 *
 * @example
 * firstInChain(error, (e) => (typeof e.code === 'string' ? e.code : undefined));
 */
export function firstInChain<T>(error: unknown, read: (bag: Bag) => T | undefined): T | undefined {
  let current = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && isBag(current); depth++) {
    const found = read(current);
    if (found !== undefined) return found;
    current = underlying(current);
  }
  return undefined;
}
