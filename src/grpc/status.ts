/**
 * gRPC statuses as the engine and the caller see them: an attempt's status becomes the error
 * grpc-js would hand a callback (a `ServiceError`), so that the predicates, the presets and the
 * pushback reader judge it as they judge grpc-js's own; and the few statuses the interceptor
 * reports itself are made as grpc-js makes its client-side ones.
 */
import type { Metadata, ServiceError, StatusObject } from '@grpc/grpc-js';
import { GrpcStatus } from '../classify/error-shape.js';

/** The name of each code, as grpc-js's `status` enum has it. */
const NAMES: readonly string[] = /* @__PURE__ */ Object.keys(GrpcStatus);

/**
 * The error grpc-js makes of a status that is not OK (`callErrorFromStatus`): an `Error` whose
 * message is `<code> <NAME>: <details>`, with the status's `code`, `details` and `metadata`
 * (the trailers, where `grpc-retry-pushback-ms` is read).
 */
export function serviceErrorOf(status: StatusObject): ServiceError {
  return Object.assign(new Error(`${status.code} ${NAMES[status.code]}: ${status.details}`), status);
}

/**
 * A status of the interceptor's own (the caller cancelled between attempts, the call gave up
 * before its first attempt), with empty metadata as grpc-js gives its client-side statuses.
 * The metadata is made by the caller's own grpc-js (the class of the request's metadata), so
 * this module needs grpc-js's types only and the entry loads nothing of it.
 */
export function localStatus(code: number, details: string, like: Metadata): StatusObject {
  const MetadataClass = like.constructor as new () => Metadata;
  return { code, details, metadata: new MetadataClass() };
}
