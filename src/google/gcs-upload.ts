/**
 * Cloud Storage resumable uploads: the body goes to the session in chunks, and after a failure
 * the session is asked how much it kept (`Content-Range: bytes *\/<total>`, answered by a 308
 * whose `Range` names the bytes persisted), so the upload continues from there instead of from
 * byte 0. The session URI names one upload, which makes every request of it safe to resend;
 * which failures are worth a retry, and how long to wait, are `gcs()`'s for `objects.insert`.
 * The protocol: Cloud Storage, "Resumable uploads", https://cloud.google.com/storage/docs/resumable-uploads
 */
import { FUNCTION, type FieldRules, isInteger, leftOut, mustError, readChecked } from '../util/check.js';
import { type GcsCommonOptions, gcsPreset } from '../presets/gcs.js';
import { presetRules } from '../presets/preset.js';
import type { AttemptContext } from '../types.js';
import { configOfChecked } from '../core/options.js';
import { startCall } from '../core/retry.js';
import type { FetchFunction } from '../fetch/fetch-options.js';
import { GcsUploadError, HttpStatusError } from '../errors.js';
import { PEEK_LIMIT_BYTES, cancelBody, peekText } from '../fetch/responses.js';
import { UPLOAD_RETRY_ON_RESULT } from './gcs-upload-start.js';
import { invocationHeaders } from '../fetch/invocation-headers.js';

export { type GcsUploadTarget, gcsStartResumableUpload } from './gcs-upload-start.js';

/** Cloud Storage takes chunks in multiples of this (the last one excepted). */
const QUANTUM = 256 * 1024;

/**
 * A body `gcsResumableUpload` can slice without copying it: a `Blob` (a file in the browser,
 * `fs.openAsBlob` in Node), an `ArrayBuffer` or a typed array such as a `Buffer`.
 *
 * @example
 * const body: GcsUploadBody = await openAsBlob('backup.tar'); // node:fs, not read into memory
 */
export type GcsUploadBody = Blob | ArrayBuffer | ArrayBufferView;

/**
 * Options of {@link gcsResumableUpload}: `gcs()`'s overrides (deadline, backoff, attempts,
 * signal, hooks, budget) plus the chunk size and the fetch to call.
 *
 * @example
 * const options: GcsUploadOptions = { chunkSizeBytes: 32 * 1024 * 1024, deadlineMs: 120_000 };
 */
export interface GcsUploadOptions extends GcsCommonOptions {
  /**
   * Bytes per request: a multiple of 256 KiB (Cloud Storage's rule), default 8 MiB; `Infinity`
   * sends the whole body in one request. Bigger chunks mean fewer requests; smaller ones, less
   * to send again when a request fails before the service persisted it.
   */
  chunkSizeBytes?: number;
  /** The fetch to call. Default: `globalThis.fetch`, looked up at the call. */
  fetch?: FetchFunction;
}

/** What gcsResumableUpload reads: gcs()'s overrides, the chunk size and the fetch to call. */
const UPLOAD_RULES: FieldRules = /* @__PURE__ */ presetRules({
  chunkSizeBytes: {
    ok: (v) => v === Infinity || (isInteger(v) && v > 0 && v % QUANTUM === 0),
    rule: 'be a multiple of 262144 (256 KiB) or Infinity',
    range: true,
  },
  fetch: FUNCTION,
  retryOnResult: UPLOAD_RETRY_ON_RESULT,
  idempotent: /* @__PURE__ */ leftOut('every request of an upload session is safe to resend'),
  hedge: /* @__PURE__ */ leftOut('an upload sends its chunks in order from the offset the session reports: two copies would race over it'),
});

/** The offset after the bytes a 308's `Range: bytes=0-<last>` says were persisted; 0 without one. */
function persistedOf(res: Response, total: number): number {
  const range = res.headers.get('range');
  if (range === null) return 0;
  const last = /^bytes=0-(\d+)$/.exec(range);
  const offset = last === null ? NaN : Number(last[1]) + 1;
  if (!(offset <= total))
    throw new GcsUploadError('protocol', res.status, `the session answered Range ${JSON.stringify(range)} for a ${total}-byte upload`);
  return offset;
}

/**
 * A 200 or 201 is the object: it must be the body that was sent. Its metadata's `size` (read
 * from a copy: the caller still reads the body) must be the body's; without one, a final answer
 * to a request that stopped short of the last byte (`sentTo` < `total`) cannot be that object.
 * Metadata is a few KiB: a body past {@link PEEK_LIMIT_BYTES} is no object's, and is refused
 * after that much is read, rather than read for as long as the server sends it.
 */
async function complete(res: Response, total: number, sentTo: number): Promise<Response> {
  // A body that breaks has no size to read, as one that is not JSON.
  // Stryker disable next-line StringLiteral: equivalent: any text that is not JSON has no size, as the empty one
  const text = await peekText(res).catch(() => '');
  if (text === undefined) {
    cancelBody(res);
    throw new GcsUploadError(
      'protocol',
      res.status,
      `HTTP ${res.status} (upload complete) with a body of more than ${PEEK_LIMIT_BYTES} bytes, which no object's metadata is`,
    );
  }
  const size = sizeOf(text);
  // Stryker disable next-line UnaryOperator: -1 and +1 differ only for a 1-byte upload, whose every request reaches the last byte (sentTo < total never holds).
  if ((size ?? (sentTo < total ? -1 : total)) !== total) {
    cancelBody(res);
    const got = size === undefined ? `after ${sentTo} bytes sent` : `for an object of ${size} bytes`;
    throw new GcsUploadError('protocol', res.status, `HTTP ${res.status} (upload complete) ${got}, but the upload is ${total} bytes`);
  }
  return res;
}

/** The `size` of an object's JSON metadata (a decimal string), or undefined when there is none to read. */
function sizeOf(text: string): number | undefined {
  try {
    // A body of `null` throws at `.size`, into the catch, as a body that is not JSON does.
    const size: unknown = JSON.parse(text).size;
    return /^\d+$/.test(String(size)) ? Number(size) : undefined;
  } catch {}
}

/** The failed attempt a 308 is when it reports nothing beyond the `persisted` bytes reported before. */
function noProgress(res: Response, persisted: number, total: number): GcsUploadError {
  const range = res.headers.get('range');
  return new GcsUploadError(
    'no-progress',
    res.status,
    `HTTP 308 ${range === null ? 'without Range' : `with Range ${range}`}: nothing persisted past the ${persisted} bytes of ${total} reported before`,
  );
}

/** Throws what an answer other than 200, 201 or 308 means. */
function failure(res: Response): never {
  cancelBody(res);
  if (res.status === 404 || res.status === 410) {
    throw new GcsUploadError(
      'session-expired',
      res.status,
      `the upload session expired (HTTP ${res.status}); start a new session and upload again`,
    );
  }
  if (res.status >= 400) throw new HttpStatusError(res, 'PUT');
  throw new GcsUploadError('protocol', res.status, `unexpected HTTP ${res.status} from the upload session`);
}

/**
 * Uploads `body` to a Cloud Storage resumable-upload session and resolves with the final
 * response (200 or 201, the object's metadata as JSON). The body goes in chunks of
 * `chunkSizeBytes`; when a request fails (a dropped connection, a 503 after part of the chunk
 * was persisted), the session is asked how far it got and the upload continues from that byte:
 * nothing persisted is sent again. Each stretch of progress has its own run of retries under
 * `gcs({ operation: 'objects.insert' })`'s policy: a 308 that reports bytes persisted beyond any
 * reported before ends the run, and the next starts afresh (the deadline and `maxAttempts`
 * bound the time and attempts without progress, not the whole upload); a 308 that reports
 * nothing new is a failed attempt, backed off and counted like a 503. Every request is resent
 * safely: the session URI names one upload. Rejects with a {@link GcsUploadError} when the
 * session expired (404/410) or its final answer is not the object sent (`'protocol'`: a `size`
 * other than the body's, a 200 before the last byte was sent, or a body longer than 64 KiB,
 * which no object's metadata is: only that much of it is read), with the `HttpStatusError`
 * of a status not worth retrying, or with
 * retry()'s `RetryError` (whose `cause` is a `'no-progress'` GcsUploadError when the session
 * kept nothing).
 * `onSuccess` and `onGiveUp` are the upload's: called once, counting every chunk's attempts;
 * `retryOnResult` is refused (a 308 is progress, not a value to retry), and so is `hedge` (the
 * chunks go in order from one offset: two copies would race over it), before any request.
 *
 * @example
 * const sessionUri = await gcsStartResumableUpload({ bucket: 'my-bucket', name: 'backups/db.tar', token });
 * const res = await gcsResumableUpload(sessionUri, await readFile('db.tar'), { chunkSizeBytes: 16 * 1024 * 1024 });
 * console.log((await res.json()).generation);
 */
export async function gcsResumableUpload(sessionUri: string | URL, body: GcsUploadBody, options?: GcsUploadOptions): Promise<Response> {
  const own = readChecked('gcsResumableUpload', options === undefined ? {} : options, UPLOAD_RULES);
  const chunk = (own.chunkSizeBytes ?? 8 * 1024 * 1024) as number;
  const send = (own.fetch ?? globalThis.fetch) as FetchFunction;
  // Without a global fetch (an old runtime) the option is required.
  if (typeof send !== 'function') throw mustError('gcsResumableUpload: options.fetch', FUNCTION.rule, send);
  const data = bytesOf(body);
  own.operation = 'objects.insert';
  const { retryable, ...common } = gcsPreset('gcsResumableUpload', own);
  const policy = {
    ...common,
    idempotent: true,
    // A 308 that kept nothing new asks for the bytes again, as a 503 would: the same backoff and
    // limits, whatever the caller's predicate knows of HTTP statuses. Its answer is read as
    // retry() reads it: undefined is no.
    retryable: (error: unknown, ctx?: AttemptContext) =>
      (error instanceof GcsUploadError && error.reason === 'no-progress') || retryable(error, ctx),
  };
  const total = data.size;
  const put = async (ctx: AttemptContext, range: string, part?: BodyInit): Promise<Response> =>
    send(sessionUri, {
      method: 'PUT',
      headers: { 'content-range': range, ...invocationHeaders(undefined, ctx) },
      body: part ?? null,
      signal: ctx.signal,
    });

  // Where the next request starts: what the session said last (it may go back, and is obeyed).
  let offset = 0;
  // The most the session ever said it kept. Only going past it is progress: a 308 that does not
  // is a failed attempt, so a session that keeps nothing (or keeps going back) runs out of
  // attempts or time instead of being sent the same bytes forever.
  let persisted = 0;

  /** One attempt: after a failure, first asks the session how far it got; then sends chunk after chunk. */
  const upload = async (ctx: AttemptContext): Promise<Response> => {
    if (ctx.attempt > 1) {
      const status = await put(ctx, `bytes */${total}`);
      // Complete already (the last chunk's answer was lost): nothing says what was sent but the size.
      if (status.status === 200 || status.status === 201) return complete(status, total, total);
      if (status.status !== 308) failure(status);
      offset = persistedOf(status, total);
      cancelBody(status);
    }
    for (;;) {
      const end = Math.min(offset + (chunk as number), total);
      // Nothing left to send (an empty body, or a 308 that named every byte): ask for the object.
      const range = offset === total ? `bytes */${total}` : `bytes ${offset}-${end - 1}/${total}`;
      const answer = await put(ctx, range, data.slice(offset, end));
      if (answer.status === 200 || answer.status === 201) return complete(answer, total, end);
      if (answer.status !== 308) failure(answer);
      offset = persistedOf(answer, total);
      cancelBody(answer);
      if (offset <= persisted) throw noProgress(answer, persisted, total);
      persisted = offset;
      // Bytes persisted are kept whatever fails next: the limits count from here.
      ctx.progress();
    }
  };
  // The preset checked the caller's options; the rest is the upload's own.
  return startCall(upload, configOfChecked(policy, 'gcsResumableUpload')).settled;
}

/** A body's size and a way to cut it, without copying. */
function bytesOf(body: unknown): { size: number; slice(start: number, end: number): BodyInit } {
  if (typeof Blob === 'function' && body instanceof Blob) return { size: body.size, slice: (start, end) => body.slice(start, end) };
  const view =
    body instanceof ArrayBuffer
      ? new Uint8Array(body)
      : ArrayBuffer.isView(body)
        ? new Uint8Array(body.buffer, body.byteOffset, body.byteLength)
        : undefined;
  if (view === undefined) throw mustError('gcsResumableUpload: body', 'be a Blob, an ArrayBuffer or a typed array', body);
  return { size: view.byteLength, slice: (start, end) => view.subarray(start, end) as Uint8Array<ArrayBuffer> };
}
