/**
 * Reading HTTP headers off whatever a client library hands over (a `Headers` object or a plain
 * object of strings, numbers or arrays), and the `Retry-After` value among them. Shared by the
 * error-shape readers and `HttpStatusError`, so Retry-After is parsed in one place.
 */
import { isBag } from './cause-chain.js';

/**
 * The `Retry-After` of `headers` in milliseconds, if valid: an HTTP-date is measured from the
 * same headers' `Date` when they have a valid one, else from `nowMs`.
 */
export function retryAfterIn(headers: unknown, nowMs: number): number | undefined {
  const header = headerValue(headers, 'retry-after');
  // An HTTP-date in Retry-After is a time on the server's clock; RFC 9110 §10.2.3 means it to be
  // read against the same response's `Date` (when the server sent it), not against this
  // machine's clock, which may be off by any amount. A server an hour ahead saying "retry at
  // <its now + 2 s>" asks for 2 s.
  return header === undefined ? undefined : parseRetryAfter(header, httpDate(headerValue(headers, 'date')) ?? nowMs);
}

/**
 * Parses an HTTP `Retry-After` value into milliseconds from `nowMs`: delta-seconds (`"120"`)
 * or an HTTP-date (`"Wed, 21 Oct 2015 07:28:00 GMT"`, 0 when already past). `undefined`
 * when the value is neither.
 *
 * @example
 * parseRetryAfter('120'); // 120000
 * parseRetryAfter(response.headers.get('retry-after') ?? ''); // undefined when absent
 */
export function parseRetryAfter(value: string, nowMs: number = Date.now()): number | undefined {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = httpDate(text);
  return at === undefined ? undefined : Math.max(0, at - nowMs);
}

// An HTTP-date always names a weekday or month; the test keeps Date.parse from guessing at junk.
// No header (undefined) is tested as "undefined", which Date.parse refuses: undefined too.
function httpDate(text: string | undefined): number | undefined {
  const at = /[a-z]{3}/i.test(text as string) ? Date.parse(text as string) : Number.NaN;
  return Number.isNaN(at) ? undefined : at;
}

/** The value of header `name` (lower case) in `headers`, if it has one. */
export function headerValue(headers: unknown, name: string): string | undefined {
  if (!isBag(headers)) return undefined;
  if (typeof headers.get === 'function') {
    const value: unknown = (headers.get as (key: string) => unknown).call(headers, name);
    return typeof value === 'string' ? value : undefined;
  }
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() !== name) continue;
    const value = headers[key];
    if (typeof value === 'string') return value;
    if (typeof value === 'number') return String(value);
    if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  }
  return undefined;
}
