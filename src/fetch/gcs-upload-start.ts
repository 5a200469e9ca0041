/**
 * Starting a Cloud Storage resumable upload: the `POST …?uploadType=resumable` that returns the
 * session URI `gcsResumableUpload` sends the body to.
 * The protocol: Cloud Storage, "Resumable uploads", https://cloud.google.com/storage/docs/resumable-uploads
 */
import { HttpStatusError } from '../errors.js';
import { type GcsCommonOptions, gcs } from '../presets/gcs.js';
import { optionsBag } from '../presets/preset.js';
import { describe } from '../util/check.js';
import type { FetchFunction } from './fetch-options.js';
import { cancelBody } from './responses.js';
import { retryFetch } from './retry-fetch.js';

/**
 * What {@link gcsStartResumableUpload} needs: where the object goes, and the OAuth 2.0 access
 * token to send; plus `gcs()`'s overrides and the fetch to call.
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
  /** The JSON API's root. Default `https://storage.googleapis.com`. */
  baseUrl?: string;
  /** The fetch to call. Default: `globalThis.fetch`. */
  fetch?: FetchFunction;
}

/**
 * Starts a resumable upload (`POST …/upload/storage/v1/b/<bucket>/o?uploadType=resumable`)
 * and resolves with the session URI (the `Location` of the answer) for `gcsResumableUpload`.
 * Retried under `gcs({ operation: 'objects.insert' })`'s policy: starting a session writes
 * nothing, and a session never used expires on its own, so sending it again is safe. Rejects
 * with the `HttpStatusError` of an answer that is not a 200 with a `Location`.
 *
 * @example
 * const sessionUri = await gcsStartResumableUpload({ bucket: 'my-bucket', name: 'report.csv', token, contentType: 'text/csv' });
 * await gcsResumableUpload(sessionUri, new Blob([csv]));
 */
export async function gcsStartResumableUpload(target: GcsUploadTarget): Promise<string> {
  const keys = ['bucket', 'name', 'token', 'contentType', 'baseUrl', 'fetch'];
  const { own, overrides } = optionsBag('gcsStartResumableUpload', target, keys);
  refuseRetryOnResult('gcsStartResumableUpload: target', overrides);
  for (const key of ['bucket', 'name', 'token']) {
    if (typeof own[key] !== 'string' || own[key] === '') {
      throw new TypeError(`gcsStartResumableUpload: target.${key} must be a non-empty string, got ${describe(own[key])}`);
    }
  }
  const base = String(own.baseUrl ?? 'https://storage.googleapis.com').replace(/\/+$/, '');
  const url = `${base}/upload/storage/v1/b/${encodeURIComponent(own.bucket as string)}/o?uploadType=resumable&name=${encodeURIComponent(own.name as string)}`;
  const headers: Record<string, string> = {
    authorization: `Bearer ${own.token as string}`,
    'content-type': 'application/json; charset=UTF-8',
  };
  if (own.contentType !== undefined) headers['x-upload-content-type'] = String(own.contentType);
  const policy = { ...gcs({ ...(overrides as GcsCommonOptions), operation: 'objects.insert' }), idempotent: true };
  const res = await retryFetch(
    url,
    { method: 'POST', headers, body: JSON.stringify({ name: own.name }) },
    { ...policy, fetch: own.fetch as FetchFunction | undefined },
  );
  const location = res.headers.get('location');
  if (!res.ok || location === null) {
    cancelBody(res);
    throw new HttpStatusError(res, 'POST');
  }
  cancelBody(res);
  return location;
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
