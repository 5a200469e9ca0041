/**
 * The last outcome a call holds between attempts: a failed attempt's error as itself, or a value
 * that retryOnResult refused, boxed so that it cannot be taken for an error. One field of the
 * call holds either: a sleeping call is smaller by one.
 */
import { RetryError } from '../errors.js';

/** A value retryOnResult refused. */
export class Refused {
  constructor(readonly value: unknown) {}
}

/** The error of a last outcome: undefined for a refused value. */
export const lastError = (last: unknown): unknown => (last instanceof Refused ? undefined : last);

/** The error of a call whose sleep ended at its deadline, with the last outcome as its cause or value. */
export function deadlineError(attempts: number, elapsedMs: number, last: unknown): RetryError {
  const refused = last instanceof Refused;
  return new RetryError('deadline', attempts, elapsedMs, refused ? undefined : last, refused ? last.value : undefined);
}
