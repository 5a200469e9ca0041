/**
 * tenacious: retry any async call the right way. Truncated exponential backoff with jitter,
 * a deadline kept as a promise, abort, idempotency, retry budgets and hedging. `retryFetch` is
 * in `tenacious/fetch`; the Google Cloud presets and uploads are in `tenacious/google`.
 *
 * @module tenacious
 */
export type { BackoffPolicy, Jitter } from './types.js';
export { DEFAULT_BACKOFF, computeDelay } from './core/backoff.js';
export type {
  AttemptContext,
  AttemptHost,
  AttemptTimeoutGrowth,
  DelayContext,
  AttemptMode,
  AttemptThrottle,
  CallEvent,
  CallTelemetry,
  GiveUpEvent,
  GiveUpReason,
  RetryBudget,
  RetryClock,
  RetryEvent,
  RetryGate,
  RetryOptions,
  SuccessEvent,
  Telemetry,
  TelemetryCall,
} from './types.js';
export {
  PermanentError,
  type RetryErrorReason,
  RetryError,
  TimeoutError,
  isPermanent,
  isRetryError,
  permanent,
} from './errors.js';
export { retry, withRetry } from './core/retry.js';
export { systemClock } from './runtime/clock.js';
export { DEFAULT_DEADLINE_MS } from './core/options.js';
export {
  GrpcStatus,
  type GrpcStatusName,
  errorReasonsOf,
  grpcCodeOf,
  httpStatusOf,
  retryAfterMsOf,
  statusStringOf,
  systemCodeOf,
} from './classify/error-shape.js';
export { parseRetryAfter } from './util/http-headers.js';
export { NETWORK_ERROR_CODES, TIMEOUT_ERROR_CODES, networkError, timedOut } from './classify/network.js';
export {
  type HttpStatusClass,
  TRANSIENT_GRPC_CODES,
  TRANSIENT_HTTP_STATUSES,
  aborted,
  allOf,
  anyOf,
  errorReason,
  grpcCode,
  httpStatus,
  isTransient,
  not,
} from './classify/predicates.js';
export type { RetryPredicate } from './types.js';
export { type RetryBudgetOptions, type RetryTokenBudget, createRetryBudget } from './fleet/budget.js';
export { type AdaptiveThrottle, type AdaptiveThrottleOptions, createAdaptiveThrottle } from './fleet/throttle.js';
export { type RetryAfterGate, type RetryAfterGateOptions, createRetryAfterGate } from './fleet/gate.js';
// Every error class of the library, those of tenacious/fetch and tenacious/google included: one
// `catch` can tell them apart without importing the entry that threw them.
export { HttpStatusError, ThrottledError } from './errors.js';
export { GcsUploadError, type GcsUploadErrorReason, ResumeError, type ResumeErrorReason } from './errors.js';
export { NOT_SENT_CODES, notSent } from './classify/not-sent.js';
export {
  type HedgeEvent,
  type HedgeOptions,
  type Hedger,
  type HedgerOptions,
  type HedgingOptions,
  createHedger,
  hedge,
  hedging,
} from './modes/hedge.js';
