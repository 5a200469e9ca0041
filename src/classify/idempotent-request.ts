/**
 * Whether an HTTP request is safe to send twice by what it says of itself: its method, or an
 * `Idempotency-Key`. Shared by retryFetch and the client adapters, so every HTTP entry resends
 * by one rule.
 */

/** Methods that RFC 9110 defines as idempotent: sending one twice has the effect of sending it once. */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);

/**
 * True for an idempotent method (upper case, as sent) or a non-blank `Idempotency-Key`, with
 * which the server promises to apply a resent request once.
 *
 * @example
 * isIdempotentRequest('PUT', undefined); // true
 * isIdempotentRequest('POST', ' '); // false: a blank key promises nothing
 * isIdempotentRequest('POST', 'order-42'); // true
 */
export function isIdempotentRequest(method: string, idempotencyKey: string | null | undefined): boolean {
  return IDEMPOTENT_METHODS.has(method) || (idempotencyKey ?? '').trim() !== '';
}
