/**
 * A request as undici's dispatcher takes it (`origin`, `path`, `method`, `headers`, `body`), seen
 * as the `fetch(input, init)` call that retryFetch plans and judges: the method, the headers (an
 * `Idempotency-Key`, a `Range`), whether the body can be sent again.
 */
import type { Dispatcher } from 'undici';

/** undici's request headers: an object, a flat `[name, value, …]` list, or an iterable of pairs. */
type UndiciHeaders = Dispatcher.DispatchOptions['headers'];

/** A header value as undici takes it; `undefined` is left out. */
type HeaderValue = string | readonly string[] | number | undefined;

/**
 * The request headers as one plain object, for retryFetch to read (a `Headers` cannot be built
 * from undici's flat list); a repeated name's values are joined with ", ", as fetch joins them.
 */
export function headersRecord(headers: UndiciHeaders): Record<string, string> {
  const record: Record<string, string> = {};
  const add = (name: unknown, value: HeaderValue): void => {
    if (value === undefined) return;
    // Names are left as written: the Headers retryFetch reads them with ignore case.
    const key = String(name);
    const joined = Array.isArray(value) ? value.join(', ') : String(value);
    const had = record[key];
    record[key] = had === undefined ? joined : `${had}, ${joined}`;
  };
  if (headers === null || headers === undefined) return record;
  if (Array.isArray(headers)) {
    // undici's flat form: name, value, name, value…
    // Stryker disable next-line EqualityOperator: <= is equivalent (its extra turn, at i === length, adds (undefined, undefined), which add() skips); >= is killed by the flat-list tests
    for (let i = 0; i < headers.length; i += 2) add(headers[i], headers[i + 1] as HeaderValue);
  } else if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const [name, value] of headers as Iterable<[string, HeaderValue]>) add(name, value);
  } else {
    for (const [name, value] of Object.entries(headers as Record<string, HeaderValue>)) add(name, value);
  }
  return record;
}

/**
 * The URL retryFetch is given for a dispatch: the origin (its scheme, host and port; a Client
 * dispatches without one, and then any will do, the path is what is sent) and the path as
 * the caller wrote it. Only a Cloud Storage resume reads it back, to add `generation`.
 */
export function urlOf(opts: Pick<Dispatcher.DispatchOptions, 'origin' | 'path'>): string {
  const origin = opts.origin === undefined ? 'http://localhost' : new URL(String(opts.origin)).origin;
  return `${origin}${opts.path}`;
}

/**
 * The path of an attempt's request: the caller's own, unless retryFetch sent another URL than
 * `sent`, the one it was given (a Cloud Storage resume pins `generation` in the query).
 */
export function pathOf(target: string | URL | Request, sent: string, path: string): string {
  if (target === sent) return path;
  const url = new URL(String(target));
  return `${url.pathname}${url.search}`;
}
