/**
 * tenacious/google: the Google Cloud presets (`iam()`, `gcs()` and the Cloud Storage operation
 * table), the IAM read-modify-write loop, Cloud Storage resumable uploads, and the readers of
 * Google's own retry configurations (gRPC service configs, GAPIC client configs). Imported apart
 * from `tenacious`, so an application that does not talk to Google does not bundle them.
 *
 * @example
 * import { retry } from 'tenacious';
 * import { gcs, iam } from 'tenacious/google';
 *
 * @module tenacious/google
 */
export type { PresetRetryOptions } from '../presets/preset.js';
export { type IamCommonOptions, type IamOptions, type ReadModifyWriteSteps, iam, iamReadModifyWrite } from '../presets/iam.js';
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
} from '../presets/gcs.js';
export {
  type GcsUploadBody,
  type GcsUploadOptions,
  type GcsUploadTarget,
  gcsResumableUpload,
  gcsStartResumableUpload,
} from './gcs-upload.js';
// The error an upload rejects with, here too so that an upload needs one import.
export { GcsUploadError, type GcsUploadErrorReason } from '../errors.js';
export {
  type GrpcMethodName,
  type GrpcRetryOptions,
  type GrpcServiceConfig,
  type GrpcServiceConfigOptions,
  fromGrpcServiceConfig,
  readGrpcServiceConfig,
} from './service-config.js';
export { type GaxRetryOptions, fromGaxClientConfig } from './gax-config.js';
