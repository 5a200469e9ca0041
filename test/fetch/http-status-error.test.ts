// HttpStatusError: what the retry policy is asked about for an HTTP error response.
import { describe, expect, it } from 'vitest';
import { HttpStatusError } from '../../src/errors.js';

describe('HttpStatusError', () => {
  it('says the status, the status text when there is one, and the method', () => {
    expect(new HttpStatusError(new Response('', { status: 503 }), 'GET').message).toBe('HTTP 503 (GET)');
    expect(new HttpStatusError(new Response('', { status: 503, statusText: 'Service Unavailable' }), 'PUT').message).toBe(
      'HTTP 503 Service Unavailable (PUT)',
    );
  });
});
