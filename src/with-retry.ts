/**
 * `withRetry()`: wrap a function once, call it many times, each call retried on its own.
 */
import { describe } from './describe.js';
import { readOptions } from './options.js';
import { type RetryOptions, runWith } from './retry.js';
import { steadyNow } from './timer-queue.js';

/**
 * Wraps `fn` so that every call of the result runs `retry()` with `options`: same parameters,
 * same `this`, and a promise of `fn`'s value. The options are checked once, here: bad ones
 * throw now, not at the first call, and later changes to the object do not apply. Each call
 * has its own attempts and its own deadline, counted from that call.
 *
 * `fn` receives its own arguments, not the attempt context; call `retry()` directly when an
 * attempt needs its `signal`.
 *
 * @example
 * const getUser = withRetry(async (id: string) => {
 *   const res = await fetch(`https://api.example.com/users/${id}`);
 *   if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
 *   return res.json() as Promise<{ name: string }>;
 * }, { maxAttempts: 4, deadlineMs: 10_000 });
 *
 * const user = await getUser('42'); // retried on 5xx, 429, network errors
 */
export function withRetry<A extends unknown[], R, This = unknown>(
  fn: (this: This, ...args: A) => R,
  options?: RetryOptions<NoInfer<Awaited<R>>>,
): (this: This, ...args: A) => Promise<Awaited<R>> {
  if (typeof fn !== 'function') throw new TypeError(`withRetry: fn must be a function, got ${describe(fn)}`);
  const config = readOptions(options as RetryOptions | undefined);
  return function retried(this: This, ...args: A): Promise<Awaited<R>> {
    const startedAt = steadyNow();
    return runWith(() => fn.apply(this, args) as Awaited<R> | PromiseLike<Awaited<R>>, config, startedAt);
  };
}
