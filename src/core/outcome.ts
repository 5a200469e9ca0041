/**
 * How one attempt ended, as one tagged union (Polly's `Outcome<T>`): a value, or an error. The
 * call holds the last failed one between attempts, the policies are asked about it (ask.ts),
 * decide() reads it, and the RetryError a limit ends the call with carries it: its error as the
 * cause, or the value `retryOnResult` refused as `value`.
 */
import { RetryError, type RetryErrorReason } from '../errors.js';

/** An attempt's value (`ok`), or what it failed with. */
export type Outcome<T = unknown> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/** The outcome of an attempt that failed with `error`. */
export const failure = (error: unknown): Outcome<never> => ({ ok: false, error });

/**
 * An attempt's value, as the outcome retryOnResult judges. A class of its own, so that a call
 * can keep its last outcome in one field, a failure's error as itself, and still tell the two
 * apart (`keptOutcome`): a sleeping call holds no outcome object for an error (40 bytes each).
 */
export class Returned<T> {
  readonly ok = true;
  constructor(readonly value: T) {}
}

/** The outcome a call kept as `kept`: a Returned as it is, anything else as the error it failed with. */
export const keptOutcome = (kept: unknown): Outcome => (kept instanceof Returned ? kept : failure(kept));

/** The error an outcome failed with: undefined for a value. */
export const errorOf = (outcome: Outcome): unknown => (outcome.ok ? undefined : outcome.error);

/** The value of an outcome (a value retryOnResult refused, once judged): undefined for an error. */
export const refusedValue = (outcome: Outcome): unknown => (outcome.ok ? outcome.value : undefined);

/** The RetryError of a limit reached after `attempts` in `elapsedMs`, with the last outcome as its cause or value. */
export function limitError(reason: RetryErrorReason, attempts: number, elapsedMs: number, last: Outcome): RetryError {
  return new RetryError(reason, attempts, elapsedMs, errorOf(last), refusedValue(last));
}
