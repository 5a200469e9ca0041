/**
 * The headers with which Google's Cloud Storage clients tell the service that a request is an
 * attempt of a call it may have seen before: `x-goog-api-client` carries
 * `gccl-invocation-id/<uuid> gccl-attempt-count/<n>` (one id for the whole call, the count per
 * attempt), and `x-goog-gcs-idempotency-token` the same id. retryFetch sends them under
 * `gcs()`, so that the service's logs and its own idempotency checks see one call, not many.
 */
import type { AttemptContext } from '../types.js';

/** The `service` that `gcs()` sets: requests under it carry the headers below. */
export const CLOUD_STORAGE = 'storage';

/** Tokens of `x-goog-api-client` that name the call and the attempt: ours replace a caller's. */
const CALL_TOKEN = /^gccl-(?:invocation-id|attempt-count)\//;

/**
 * The invocation headers of attempt `ctx`, merged with the request's own `headers`: a caller's
 * `x-goog-api-client` keeps its tokens (`gl-node/20 gccl/7.0.0`, say) before ours, and a
 * caller's `x-goog-gcs-idempotency-token` is kept.
 *
 * @example
 * invocationHeaders(new Headers({ 'x-goog-api-client': 'gl-node/20' }), ctx);
 * // { 'x-goog-api-client': 'gl-node/20 gccl-invocation-id/3f0c… gccl-attempt-count/2', 'x-goog-gcs-idempotency-token': '3f0c…' }
 */
export function invocationHeaders(headers: Headers | undefined, ctx: AttemptContext): Record<string, string> {
  const id = ctx.invocationId;
  const own = (headers?.get('x-goog-api-client') ?? '').split(' ').filter((token) => token !== '' && !CALL_TOKEN.test(token));
  return {
    'x-goog-api-client': [...own, `gccl-invocation-id/${id}`, `gccl-attempt-count/${ctx.attempt}`].join(' '),
    'x-goog-gcs-idempotency-token': headers?.get('x-goog-gcs-idempotency-token') ?? id,
  };
}
