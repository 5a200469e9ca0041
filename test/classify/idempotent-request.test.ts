// The one rule by which retryFetch and the HTTP adapters resend a request: an RFC 9110
// idempotent method, or a non-blank Idempotency-Key.
import { describe, expect, it } from 'vitest';
import { isIdempotentRequest } from '../../src/classify/idempotent-request.js';

describe('isIdempotentRequest', () => {
  it.each(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE'])('resends %s, key or not', (method) => {
    expect(isIdempotentRequest(method, undefined)).toBe(true);
    expect(isIdempotentRequest(method, null)).toBe(true);
  });

  it.each(['POST', 'PATCH', 'CONNECT', 'get'])('sends %s once without a key (methods are compared as sent, upper case)', (method) => {
    expect(isIdempotentRequest(method, undefined)).toBe(false);
    expect(isIdempotentRequest(method, null)).toBe(false);
    expect(isIdempotentRequest(method, '')).toBe(false);
  });

  it('resends a POST with a key, and not with a blank one', () => {
    expect(isIdempotentRequest('POST', 'order-42')).toBe(true);
    expect(isIdempotentRequest('POST', ' x ')).toBe(true);
    expect(isIdempotentRequest('POST', '  \t')).toBe(false);
  });
});
