/**
 * One `methodConfig` entry of a gRPC service config, as `RetryOptions`: its `retryPolicy` or
 * `hedgingPolicy` (gRFC A6, "gRPC Retry Design") and its `timeout`. The names it applies to
 * are the caller's business (service-config.ts); this file reads what it says. Pure.
 *
 * @internal
 */
import { grpcCode } from '../classify/predicates.js';
import { hedging } from '../modes/hedging.js';
import type { AttemptMode, BackoffPolicy, RetryPredicate } from '../types.js';
import { docError, pathOf, readFields, readNumber, readStatusCodes } from './config-doc.js';
import { durationMs, readProtoDuration } from './proto-duration.js';

/** What one method config sets, before it is frozen into options. */
export interface MethodPolicy {
  readonly maxAttempts: number;
  readonly deadlineMs: number;
  readonly retryable: RetryPredicate;
  readonly backoff?: Readonly<BackoffPolicy>;
  readonly attemptTimeoutMs?: number;
  readonly hedge?: AttemptMode;
}

/** The fields of a method config; those tenacious has no use for are known, and ignored. */
const METHOD_KEYS = [
  'name',
  'waitForReady',
  'timeout',
  'maxRequestMessageBytes',
  'maxResponseMessageBytes',
  'retryPolicy',
  'hedgingPolicy',
] as const;
const RETRY_KEYS = ['maxAttempts', 'initialBackoff', 'maxBackoff', 'backoffMultiplier', 'retryableStatusCodes', 'perAttemptRecvTimeout'];
const HEDGING_KEYS = ['maxAttempts', 'hedgingDelay', 'nonFatalStatusCodes'];

/** An error gRPC would not retry: what a method config without a policy, or a hedge without non-fatal codes, means. */
const NEVER: RetryPredicate = () => false;

/** Reads the fields of the method config at `path` (its `name` is read by the caller). */
export function readMethodFields(where: string, path: string, raw: unknown): Record<string, unknown> {
  return readFields(where, path, raw, METHOD_KEYS, true);
}

/** A proto3 JSON duration at `path` in milliseconds; `positive` refuses `"0s"`, and anything absent. */
export function readDurationMs(where: string, path: string, value: unknown, positive: boolean): number {
  const duration = readProtoDuration(value);
  const ms = duration === undefined ? Number.NaN : durationMs(duration);
  if (!(ms > 0 || (ms === 0 && !positive))) {
    const rule = `be a proto3 JSON duration${positive ? ' > 0' : ''}: seconds with up to 9 decimals and "s", such as "0.1s"`;
    throw docError(where, path, rule, value);
  }
  return ms;
}

/**
 * The policy of the method config whose fields are `fields`, at `path`. `limit` caps both
 * policies' `maxAttempts`, as gRPC clients cap them at 5.
 */
export function methodPolicy(where: string, path: string, fields: Record<string, unknown>, limit: number): MethodPolicy {
  const { retryPolicy, hedgingPolicy, timeout } = fields;
  if (retryPolicy !== undefined && hedgingPolicy !== undefined) {
    throw new TypeError(`${where}: ${path} has both retryPolicy and hedgingPolicy; gRFC A6 allows one of them`);
  }
  // gRPC's timeout bounds the whole call, every attempt and wait included: tenacious's deadline.
  const deadlineMs = timeout === undefined ? Number.POSITIVE_INFINITY : readDurationMs(where, pathOf(path, 'timeout'), timeout, true);
  if (retryPolicy !== undefined) return { deadlineMs, ...readRetryPolicy(where, pathOf(path, 'retryPolicy'), retryPolicy, limit) };
  if (hedgingPolicy !== undefined) return { deadlineMs, ...readHedgingPolicy(where, pathOf(path, 'hedgingPolicy'), hedgingPolicy, limit) };
  return { deadlineMs, maxAttempts: 1, retryable: NEVER };
}

/**
 * A6 requires at least 2 (a policy of one attempt would be no policy) and has clients read any
 * count above their limit as the limit, however large: a double past 2^53 is always whole, and
 * a JSON number too large for one parses as Infinity, above every limit too. Only without a cap
 * (`limit` Infinity) must the count itself be exact, a safe integer.
 */
function readAttempts(where: string, path: string, value: unknown, limit: number): number {
  // Number.isInteger() is false of anything but a number.
  const whole = (Number.isInteger(value) || value === Number.POSITIVE_INFINITY) && (value as number) >= 2;
  if (!whole) throw docError(where, path, 'be a whole number >= 2 (gRFC A6)', value, typeof value === 'number');
  const n = Math.min(value as number, limit);
  if (!Number.isSafeInteger(n)) {
    const rule = `be a whole number from 2 to ${Number.MAX_SAFE_INTEGER} without a cap (maxAttemptsLimit: Infinity)`;
    throw docError(where, path, rule, value, true);
  }
  return n;
}

function readRetryPolicy(where: string, path: string, raw: unknown, limit: number): Omit<MethodPolicy, 'deadlineMs'> {
  const f = readFields(where, path, raw, RETRY_KEYS, true);
  const maxAttempts = readAttempts(where, pathOf(path, 'maxAttempts'), f.maxAttempts, limit);
  const initialMs = readDurationMs(where, pathOf(path, 'initialBackoff'), f.initialBackoff, true);
  const maxMs = readDurationMs(where, pathOf(path, 'maxBackoff'), f.maxBackoff, true);
  const multiplier = readNumber(
    where,
    pathOf(path, 'backoffMultiplier'),
    f.backoffMultiplier,
    (v) => v >= 1,
    'be a number >= 1 (gRFC A6 allows any number > 0; tenacious refuses waits that shrink)',
  );
  const codesPath = pathOf(path, 'retryableStatusCodes');
  const codes = readStatusCodes(where, codesPath, f.retryableStatusCodes);
  if (codes.length === 0) throw docError(where, codesPath, 'list at least one status code (gRFC A6)', f.retryableStatusCodes);
  const attemptTimeoutMs =
    f.perAttemptRecvTimeout === undefined
      ? undefined
      : readDurationMs(where, pathOf(path, 'perAttemptRecvTimeout'), f.perAttemptRecvTimeout, true);
  return {
    maxAttempts,
    // A6's wait before retry n is random in [0, min(initialBackoff · multiplier^(n-1), maxBackoff)]:
    // full jitter. A first backoff above the cap is the cap from the first retry on, as the min says.
    backoff: Object.freeze({ initialDelayMs: Math.min(initialMs, maxMs), multiplier, maxDelayMs: maxMs, jitter: 'full' as const }),
    retryable: grpcCode(...codes),
    ...(attemptTimeoutMs === undefined ? {} : { attemptTimeoutMs }),
  };
}

function readHedgingPolicy(where: string, path: string, raw: unknown, limit: number): Omit<MethodPolicy, 'deadlineMs'> {
  const f = readFields(where, path, raw, HEDGING_KEYS, true);
  const maxCopies = readAttempts(where, pathOf(path, 'maxAttempts'), f.maxAttempts, limit);
  const delayMs = f.hedgingDelay === undefined ? 0 : readDurationMs(where, pathOf(path, 'hedgingDelay'), f.hedgingDelay, false);
  const codes =
    f.nonFatalStatusCodes === undefined ? [] : readStatusCodes(where, pathOf(path, 'nonFatalStatusCodes'), f.nonFatalStatusCodes);
  // A6 sends the copies of ONE call and never retries it once they all failed: one attempt of
  // tenacious, whose copies race; a non-fatal code sends the next copy at once, a fatal one ends it.
  return {
    maxAttempts: 1,
    hedge: hedging({ delayMs, maxCopies }),
    retryable: grpcCode(...codes), // of no codes: true for no error, as NEVER
  };
}
