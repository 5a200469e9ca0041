/**
 * Starting a Cloud Storage resumable upload: the `POST …?uploadType=resumable` that returns the
 * session URI, with the write's preconditions as query parameters and the caller's extra headers.
 * A resumable upload is an `objects.insert`, so whether a failed start may be sent again is
 * `gcs({ operation: 'objects.insert', preconditions })`'s decision, as for any other insert.
 * The protocol: Cloud Storage, "Resumable uploads", https://cloud.google.com/storage/docs/resumable-uploads
 */
import { HttpStatusError } from '../errors.js';
import { type GcsCommonOptions, type GcsPreconditions, type GcsRetryStrategy, gcs } from '../presets/gcs.js';
import { optionsBag, ownFields } from '../presets/preset.js';
import { describe } from '../util/check.js';
import { suggest } from '../util/suggest.js';
import type { FetchFunction } from './fetch-options.js';
import { cancelBody } from './responses.js';
import { retryFetch } from './retry-fetch.js';

/**
 * What {@link gcsStartResumableUpload} needs: where the object goes, and the OAuth 2.0 access
 * token to send; plus the write's preconditions, extra headers, `gcs()`'s overrides and the
 * fetch to call.
 *
 * @example
 * const target: GcsUploadTarget = { bucket: 'my-bucket', name: 'logs/today.txt', token, contentType: 'text/plain' };
 */
export interface GcsUploadTarget extends GcsCommonOptions {
  bucket: string;
  /** The object name. */
  name: string;
  /** An OAuth 2.0 access token, sent as `Authorization: Bearer <token>`. */
  token: string;
  /** The object's Content-Type, sent as `X-Upload-Content-Type`. */
  contentType?: string;
  /**
   * The write's preconditions, sent as query parameters of the session start and applied by
   * Cloud Storage when the upload completes: `{ ifGenerationMatch: 0 }` writes only if no live
   * object has the name (a 412 otherwise). `ifGenerationMatch` and `ifMetagenerationMatch`
   * only: `etag` and `generation` are not parameters of an upload. They also decide, as for
   * `gcs({ operation: 'objects.insert', preconditions })`, whether a failed start is sent again:
   * under the default strategy, only with `ifGenerationMatch`.
   */
  preconditions?: GcsPreconditions;
  /**
   * As `gcs()`'s: `'conditional'` (default) resends a failed start only with `ifGenerationMatch`;
   * `'always'` resends it anyway; `'never'` never does.
   */
  strategy?: GcsRetryStrategy;
  /**
   * More headers for the session start, e.g. `x-upload-content-length`, `x-goog-user-project`,
   * or a customer-supplied encryption key (`x-goog-encryption-*`). The ones this function sets
   * (`authorization`, `content-type`, and `x-upload-content-type` with `contentType`) are
   * refused, as is a name given twice in two spellings.
   */
  headers?: Record<string, string>;
  /** The JSON API's root. Default `https://storage.googleapis.com`. */
  baseUrl?: string;
  /** The fetch to call. Default: `globalThis.fetch`. */
  fetch?: FetchFunction;
}

const OWN_KEYS = ['bucket', 'name', 'token', 'contentType', 'preconditions', 'strategy', 'headers', 'baseUrl', 'fetch'];
/** The object write's preconditions an upload's start takes, as JSON API query parameters. */
const UPLOAD_PRECONDITIONS = ['ifGenerationMatch', 'ifMetagenerationMatch'] as const;
const WHERE = 'gcsStartResumableUpload: target';

/**
 * Starts a resumable upload (`POST …/upload/storage/v1/b/<bucket>/o?uploadType=resumable`)
 * and resolves with the session URI (the `Location` of the answer) for `gcsResumableUpload`.
 * `preconditions` go in the query (`&ifGenerationMatch=0`), `headers` with the request.
 * Retried under `gcs({ operation: 'objects.insert', preconditions, strategy })`'s policy: under
 * the default strategy a failed start is sent again only with `ifGenerationMatch` (a request
 * that never left, such as a refused connection, is always safe to send again). Rejects with
 * the `HttpStatusError` of an answer that is not a 200 with a `Location`. Bad input throws
 * before any request, naming the field.
 *
 * @example
 * const sessionUri = await gcsStartResumableUpload({
 *   bucket: 'my-bucket', name: 'report.csv', token, contentType: 'text/csv',
 *   preconditions: { ifGenerationMatch: 0 }, // create only: and safe to send again
 * });
 * await gcsResumableUpload(sessionUri, new Blob([csv]));
 */
export async function gcsStartResumableUpload(target: GcsUploadTarget): Promise<string> {
  const { own, overrides } = optionsBag('gcsStartResumableUpload', target, OWN_KEYS);
  refuseRetryOnResult(WHERE, overrides);
  for (const key of ['bucket', 'name', 'token']) {
    if (typeof own[key] !== 'string' || own[key] === '') {
      throw new TypeError(`${WHERE}.${key} must be a non-empty string, got ${describe(own[key])}`);
    }
  }
  const query = preconditionQuery(own.preconditions);
  const headers: Record<string, string> = {
    authorization: `Bearer ${own.token as string}`,
    'content-type': 'application/json; charset=UTF-8',
  };
  if (own.contentType !== undefined) headers['x-upload-content-type'] = String(own.contentType);
  addHeaders(headers, own.headers);
  // gcs() checks the preconditions' values and the strategy, and decides from them.
  const preconditions = own.preconditions as GcsPreconditions | undefined;
  const strategy = own.strategy as GcsRetryStrategy | undefined;
  const policy = gcs({ ...(overrides as GcsCommonOptions), operation: 'objects.insert', preconditions, strategy });
  const base = String(own.baseUrl ?? 'https://storage.googleapis.com').replace(/\/+$/, '');
  const url = `${base}/upload/storage/v1/b/${encodeURIComponent(own.bucket as string)}/o?uploadType=resumable&name=${encodeURIComponent(own.name as string)}${query}`;
  const res = await retryFetch(
    url,
    { method: 'POST', headers, body: JSON.stringify({ name: own.name }) },
    { ...policy, fetch: own.fetch as FetchFunction | undefined },
  );
  const location = res.headers.get('location');
  cancelBody(res);
  if (!res.ok || location === null) throw new HttpStatusError(res, 'POST');
  return location;
}

/**
 * `&ifGenerationMatch=0…` for the preconditions. gcs() checks their values; a name it would
 * ignore (a typo, `etag`, `generation`, `ifGenerationNotMatch`) is refused here, since it would
 * be dropped from the query and the write would run unguarded.
 */
function preconditionQuery(preconditions: unknown): string {
  if (preconditions === undefined || preconditions === null) return '';
  const bag = ownFields(`${WHERE}.preconditions`, preconditions);
  let query = '';
  for (const key of Object.keys(bag)) {
    const value = bag[key];
    if (!(UPLOAD_PRECONDITIONS as readonly string[]).includes(key)) {
      const hint = suggest(key, UPLOAD_PRECONDITIONS);
      throw new TypeError(
        `${WHERE}.preconditions.${key} is not a precondition an upload's start takes, got ${describe(value)}: ${hint === undefined ? `use ${UPLOAD_PRECONDITIONS.join(' or ')}` : `did you mean ${hint}?`}`,
      );
    }
    if (value !== undefined && value !== null) query += `&${key}=${encodeURIComponent(String(value))}`;
  }
  return query;
}

/**
 * Adds the caller's headers to `headers`, checked here (by fetch's own Headers) rather than
 * once the first attempt began; refuses one the start sets already, in any spelling.
 */
function addHeaders(headers: Record<string, string>, extra: unknown): void {
  if (extra === undefined) return;
  const bag = ownFields(`${WHERE}.headers`, extra);
  for (const name of Object.keys(bag)) {
    const value = bag[name];
    const lower = name.toLowerCase();
    let problem = typeof value !== 'string' ? 'must be a string' : Object.hasOwn(headers, lower) ? 'is given already' : '';
    try {
      if (problem === '') headers[lower] = new Headers({ [name]: value as string }).get(name) as string;
    } catch {
      problem = 'is not a valid header';
    }
    if (problem !== '') throw new TypeError(`${WHERE}.headers[${JSON.stringify(name)}] ${problem}, got ${describe(value)}`);
  }
}

/**
 * The uploads judge each answer by the protocol (a 308 is progress, not a value to retry), so
 * `retryOnResult` has no meaning there: refused, naming the field, rather than applied to a 308.
 *
 * @internal
 */
export function refuseRetryOnResult(subject: string, overrides: Record<string, unknown>): void {
  const { retryOnResult } = overrides;
  if (retryOnResult !== undefined) {
    throw new TypeError(
      `${subject}.retryOnResult is not supported, got ${describe(retryOnResult)}: an upload's answers are judged by its protocol`,
    );
  }
}
