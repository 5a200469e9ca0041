/**
 * tenacious/tanstack-query: TanStack Query's `retry` and `retryDelay` from tenacious's rules (its
 * classification, backoff and `Retry-After`). Types only from `@tanstack/query-core`: nothing of
 * TanStack's is loaded by it.
 *
 * @example
 * import { queryRetry } from 'tenacious/tanstack-query';
 *
 * const options = { queryKey: ['user', 42], queryFn: loadUser, ...queryRetry({ maxAttempts: 3 }) };
 *
 * @module tenacious/tanstack-query
 */
export { type QueryRetry, queryRetry } from './query-retry.js';
export type { QueryRetryOptions } from './query-retry-options.js';
