/**
 * tenacious: retry any async call the right way. Truncated exponential backoff with jitter,
 * a deadline kept as a promise, abort, idempotency, and presets for Google Cloud.
 *
 * @packageDocumentation
 */
export { type BackoffPolicy, type Jitter, DEFAULT_BACKOFF, computeDelay } from './backoff.js';
export {
  type AttemptContext,
  type AttemptThrottle,
  type GiveUpEvent,
  type GiveUpReason,
  type RetryBudget,
  type RetryErrorReason,
  type RetryEvent,
  type RetryOptions,
  type SuccessEvent,
  RetryError,
  TimeoutError,
  isRetryError,
  retry,
} from './retry.js';
export { withRetry } from './with-retry.js';
export { DEFAULT_DEADLINE_MS } from './options.js';
export {
  GrpcStatus,
  type GrpcStatusName,
  errorReasonsOf,
  grpcCodeOf,
  httpStatusOf,
  parseRetryAfter,
  retryAfterMsOf,
  statusStringOf,
  systemCodeOf,
} from './errors.js';
export {
  type HttpStatusClass,
  NETWORK_ERROR_CODES,
  type RetryPredicate,
  TRANSIENT_GRPC_CODES,
  TIMEOUT_ERROR_CODES,
  TRANSIENT_HTTP_STATUSES,
  aborted,
  allOf,
  anyOf,
  errorReason,
  grpcCode,
  httpStatus,
  isTransient,
  networkError,
  not,
  timedOut,
} from './predicates.js';
export type { PresetRetryOptions } from './presets/preset.js';
export { type IamCommonOptions, type IamOptions, type ReadModifyWriteSteps, iam, iamReadModifyWrite } from './presets/iam.js';
export {
  GCS_OPERATIONS,
  type GcsByIdempotent,
  type GcsByOperation,
  type GcsByStrategy,
  type GcsCommonOptions,
  type GcsIdempotency,
  type GcsOperation,
  type GcsOptions,
  type GcsPreconditions,
  type GcsRetryStrategy,
  gcs,
  gcsIdempotency,
  gcsIsIdempotent,
  gcsPreconditionMet,
} from './presets/gcs.js';
export { type RetryBudgetOptions, type RetryTokenBudget, createRetryBudget } from './budget.js';
export { type AdaptiveThrottle, type AdaptiveThrottleOptions, ThrottledError, createAdaptiveThrottle } from './throttle.js';
export { type FetchFunction, type RetryFetchOptions } from './fetch/fetch-options.js';
export { HttpStatusError } from './fetch/http-status-error.js';
export { retryFetch } from './fetch/retry-fetch.js';
export { ResumeError, type ResumeErrorReason } from './fetch/resume.js';
export {
  GcsUploadError,
  type GcsUploadBody,
  type GcsUploadOptions,
  type GcsUploadTarget,
  gcsResumableUpload,
  gcsStartResumableUpload,
} from './fetch/gcs-upload.js';
export { NOT_SENT_CODES, notSent } from './not-sent.js';
export { type HedgeEvent, type HedgeOptions, type Hedger, type HedgerOptions, createHedger, hedge } from './hedge.js';
