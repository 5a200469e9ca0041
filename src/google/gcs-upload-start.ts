/**
 * Starting a Cloud Storage resumable upload: the `POST …?uploadType=resumable` that returns the
 * session URI, with the write's preconditions as query parameters and the caller's extra headers.
 * A resumable upload is an `objects.insert`, so whether a failed start may be sent again is
 * `gcs({ operation: 'objects.insert', preconditions })`'s decision, as for any other insert.
 * The protocol: Cloud Storage, "Resumable uploads", https://cloud.google.com/storage/docs/resumable-uploads
 */
import { HttpStatusError } from '../errors.js';
import { type GcsCommonOptions, type GcsPreconditions, type GcsRetryStrategy, PRECONDITIONS, STRATEGY, gcsPreset } from '../presets/gcs.js';
import { presetRules } from '../presets/preset.js';
import {
  FUNCTION,
  type FieldRule,
  checkField,
  type FieldRules,
  describe,
  isPlainObject,
  leftOut,
  ownFields,
  readChecked,
} from '../util/check.js';
import { suggest } from '../util/suggest.js';
import type { FetchFunction } from '../fetch/fetch-options.js';
import { cancelBody } from '../fetch/responses.js';
import { retryFetch } from '../fetch/retry-fetch.js';

/**
 * What {@link gcsStartResumableUpload} needs: where the object goes, and the OAuth 2.0 access
 * token to send; plus the write's preconditions, extra headers, `gcs()`'s overrides and the
 * fetch to call.
 *
 * @example
 * const target: GcsUploadTarget = { bucket: 'my-bucket', name: 'logs/today.txt', token, contentType: 'text/plain' };
 */
export interface GcsUploadTarget extends Omit<GcsCommonOptions, 'name'> {
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

const NON_EMPTY: FieldRule = { ok: (v) => typeof v === 'string' && v !== '', rule: 'be a non-empty string' };
const STRING: FieldRule = { ok: (v) => typeof v === 'string', rule: 'be a string' };

/**
 * What both uploads refuse: they judge each answer by the protocol (a 308 is progress, not a
 * value to retry), so `retryOnResult` has no meaning there.
 *
 * @internal
 */
export const UPLOAD_RETRY_ON_RESULT: FieldRule = /* @__PURE__ */ leftOut("an upload's answers are judged by its protocol");

/** Everything a target holds: where the object goes, how to start, and gcs()'s overrides. */
const START_RULES: FieldRules = /* @__PURE__ */ presetRules({
  bucket: NON_EMPTY,
  name: NON_EMPTY,
  token: NON_EMPTY,
  contentType: STRING,
  preconditions: PRECONDITIONS,
  strategy: STRATEGY,
  headers: { ok: isPlainObject, rule: 'be a plain object of header names and values' },
  baseUrl: STRING,
  fetch: FUNCTION,
  retryOnResult: UPLOAD_RETRY_ON_RESULT,
  idempotent: /* @__PURE__ */ leftOut('preconditions and strategy decide whether a failed start is sent again'),
});
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
  const own = readChecked('gcsStartResumableUpload', target, START_RULES, 'target');
  // Required: undefined breaks their rule.
  for (const key of ['bucket', 'name', 'token']) checkField('gcsStartResumableUpload', 'target', key, START_RULES, own[key]);
  const query = preconditionQuery(own.preconditions);
  const headers: Record<string, string> = {
    authorization: `Bearer ${own.token as string}`,
    'content-type': 'application/json; charset=UTF-8',
  };
  if (own.contentType !== undefined) headers['x-upload-content-type'] = own.contentType as string;
  addHeaders(headers, own.headers);
  // The preset checks the preconditions' values, and decides from them and the strategy.
  own.operation = 'objects.insert';
  // `name` is the object's here, not the operation's: the call is named after its operation.
  const policy = gcsPreset('gcsStartResumableUpload', { ...own, name: undefined }, 'target');
  const base = ((own.baseUrl as string | undefined) ?? 'https://storage.googleapis.com').replace(/\/+$/, '');
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
  // readChecked found a plain object already: ownFields only copies its own fields, never throws.
  const bag = ownFields(WHERE, preconditions);
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
  // As for the preconditions: a plain object, checked already.
  const bag = ownFields(WHERE, extra);
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
