/**
 * `grpcRetryInterceptor`: a grpc-js client interceptor that makes each unary call, and each
 * server stream until its first message, one call of tenacious's engine. It picks the calls
 * it retries and their deadline; retried-call.ts runs them, attempt.ts sends each attempt.
 */
import type { Deadline, InterceptingCall, Interceptor } from '@grpc/grpc-js';
import { type GrpcInterceptorPolicy, readPolicy } from './options.js';
import { RetriedCall } from './retried-call.js';

/**
 * A grpc-js client interceptor that retries unary calls, and server streams until their first
 * message, with tenacious's rules: each call is one call of the engine, whose attempts are
 * calls of the channel.
 *
 * - **Retries** what the options' `retryable` says (default `isTransient`: UNAVAILABLE,
 *   RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, ABORTED, INTERNAL, UNKNOWN), and only while the
 *   call is `idempotent` (default `true`, as `retry()`): a DEADLINE_EXCEEDED attempt may have
 *   been carried out, so a call that must not run twice says `idempotent: false`. The presets
 *   bring their own rules (`iam()`, `gcs({ operation })`).
 * - **Bounds** the whole call by its `deadline` (and `deadlineMs`, default 120 s, whichever
 *   ends first), and each attempt by `attemptTimeoutMs`, clipped to the time left: that is a
 *   unary attempt's gRPC deadline, which the server sees (a stream's attempts keep the call's,
 *   and their limit bounds the wait for the first message).
 * - **Waits** the backoff, at least as long as a server's `grpc-retry-pushback-ms` asks.
 * - **Tells the server** which attempt it sees: attempts after the first carry
 *   `grpc-previous-rpc-attempts` (gRFC A6), beside the caller's metadata.
 * - **Answers** as grpc-js would: the caller is told the headers, message and status of the
 *   attempt that ended the call (the `ServiceError` of its last failure when it gave up);
 *   `call.cancel()` ends the call at once with CANCELLED, cancelling the attempt in flight.
 *   A server stream's first message commits it: the rest of that attempt's stream is the
 *   caller's, never retried.
 * - **Leaves alone** client and bidirectional streams, calls whose deadline has passed, and
 *   the methods a policy function returns `undefined` for.
 *
 * Bad options throw a TypeError/RangeError naming the field: here for options, when a call of
 * the method is made for a policy function. Turn the channel's own retries off
 * ({@link NO_CHANNEL_RETRIES}), or the attempts multiply.
 *
 * @example
 * const client = new IAMPolicyClient(address, credentials.createSsl(), {
 *   ...NO_CHANNEL_RETRIES,
 *   interceptors: [grpcRetryInterceptor(iam({ attemptTimeoutMs: 10_000 }))],
 * });
 * client.getIamPolicy({ resource }, { deadline: Date.now() + 60_000 }, (error, policy) => {});
 */
export function grpcRetryInterceptor(policy?: GrpcInterceptorPolicy): Interceptor {
  const retryOf = readPolicy(policy);
  return (options, next) => {
    const method = options.method_definition;
    const leftMs = untilDeadline(options.deadline);
    // A stream of requests cannot be sent again without keeping it all; a stream of responses can be retried until it begins.
    const retry = method.requestStream || !(leftMs > 0) ? undefined : retryOf(method.path);
    // grpc-js calls only the methods of InterceptingCallInterface on what an interceptor returns.
    if (retry === undefined) return next(options) as InterceptingCall;
    return new RetriedCall(next, options, retry, leftMs, method.responseStream) as unknown as InterceptingCall;
  };
}

/** Milliseconds until a call's `deadline` (a Date or epoch milliseconds); Infinity without one. */
function untilDeadline(deadline: Deadline | undefined): number {
  if (deadline === undefined) return Number.POSITIVE_INFINITY;
  return Number(deadline) - Date.now(); // a Date's number is its getTime()
}
