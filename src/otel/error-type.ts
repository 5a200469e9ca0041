/**
 * `error.type` as OpenTelemetry's conventions define it: a low-cardinality name of the class of
 * an error, never its message. What the library's error readers find, through `cause` chains
 * (so a RetryError reports the error it gave up on): an HTTP status (`'503'`), a gRPC status
 * name (`'UNAVAILABLE'`), a socket error code (`'ECONNRESET'`), else the error's class name.
 */
import { GrpcStatus, grpcCodeOf, httpStatusOf, systemCodeOf } from '../classify/error-shape.js';
import { isRetryError } from '../errors.js';

/** The conventions' value when nothing better is known. */
const OTHER = '_OTHER';

/** @internal */
export function errorType(error: unknown): string {
  const status = httpStatusOf(error);
  if (status !== undefined) return String(status);
  const code = grpcCodeOf(error);
  if (code !== undefined) return Object.keys(GrpcStatus).find((name) => GrpcStatus[name as keyof typeof GrpcStatus] === code) ?? OTHER;
  const system = systemCodeOf(error);
  if (system !== undefined) return system;
  const cause = isRetryError(error) && error.cause !== undefined ? error.cause : error;
  if (cause instanceof Error) return cause.name === 'Error' ? cause.constructor.name || OTHER : cause.name;
  return OTHER;
}
