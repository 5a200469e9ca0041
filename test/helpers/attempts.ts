// Scripted attempts and backoff shapes for the engine's tests (test/core): the setup every
// retry() test needs, written once.
import { vi } from 'vitest';
import type { AttemptContext } from '../../src/index.js';
import { httpError } from './clock.js';

/** Exponential backoff with no jitter: waits of 1 s, 2 s, 4 s, … (capped at 32 s). */
export const noJitter = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: 'none' } as const;

/** The same wait of `ms` before every retry. */
export const constant = (ms: number) => ({ initialDelayMs: ms, multiplier: 1, maxDelayMs: ms, jitter: 'none' }) as const;

/**
 * An fn that fails with `failures` in order, then returns 'ok'; `calls` holds the time
 * (Date.now(), the virtual clock) of each call. `fn` is a vi.fn spy, which itself listens to the
 * promises it returns: a test about unhandled rejections uses a plain function instead.
 */
export function script(...failures: unknown[]) {
  const calls: number[] = [];
  const fn = vi.fn(async (_ctx: AttemptContext) => {
    calls.push(Date.now());
    const next = failures.shift();
    if (next !== undefined) throw next;
    return 'ok';
  });
  return { fn, calls };
}

/** An fn that fails with `error` on every call; `calls` holds the time of each call, as {@link script}'s. */
export function failing(error: unknown) {
  const calls: number[] = [];
  const fn = async (): Promise<never> => {
    calls.push(Date.now());
    throw error;
  };
  return { fn, calls };
}

/** An attempt that never settles. */
export const hang = (): Promise<never> => new Promise<never>(() => {});

/** An HTTP error whose response carries a `Retry-After` header of `value` (seconds or an HTTP-date). */
export function withRetryAfter(status: number, value: string): Error {
  return httpError(status, { response: { status, headers: { 'retry-after': value } } });
}
