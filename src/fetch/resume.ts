/**
 * Download resume: a body that breaks mid-way is continued, not failed. The rest is asked for
 * with `Range: bytes=<received>-` and a validator that pins the version already half read, the
 * answer is checked (a 206 that starts where the break was, of the same object), and its bytes
 * continue the same stream. Each resume is a retry() run whose first attempt is the break
 * itself, so the break is judged, counted and waited for like any failed attempt; which run
 * (remaining deadline and attempts, signal, budget, hooks) is retryFetch's to say (the driver).
 */
import type { AttemptContext } from '../types.js';
import { HttpStatusError } from '../errors.js';
import { cancelBody } from './responses.js';

/**
 * Why a download could not be resumed (see {@link ResumeError}).
 *
 * @example
 * const retryable = (reason: ResumeErrorReason): boolean => reason === 'changed'; // start over for the new version
 */
export type ResumeErrorReason = 'changed' | 'range-ignored' | 'bad-range';

/**
 * The error a resumed body fails with when the rest cannot be had safely: the object changed
 * since the download began (`'changed'`: a 412, or another ETag or generation), the server sent
 * the whole object again after part of it had been read (`'range-ignored'`), or its answer was
 * not the range asked for (`'bad-range'`). Never retried: asking again would get the same answer.
 *
 * @example
 * try {
 *   const text = await (await retryFetch(url)).text();
 * } catch (error) {
 *   if (error instanceof ResumeError && error.reason === 'changed') {
 *     // the object was overwritten mid-download: start over to get the new version whole
 *   }
 * }
 */
export class ResumeError extends Error {
  override readonly name = 'ResumeError';
  /** Why the download could not continue. */
  readonly reason: ResumeErrorReason;
  /** Bytes received before the break. */
  readonly receivedBytes: number;

  constructor(reason: ResumeErrorReason, receivedBytes: number, detail: string, cause?: unknown) {
    super(`resume: cannot continue the download after ${receivedBytes} bytes: ${detail}`, { cause });
    this.reason = reason;
    this.receivedBytes = receivedBytes;
  }
}

/** What retryFetch lends the resume machinery: how to run attempts and send one range request. */
export interface ResumeDriver {
  /**
   * Runs `attempt` under the call's retry policy (its remaining deadline and attempts), as the
   * retries of the attempt whose body broke with `broken`.
   */
  run(broken: unknown, attempt: (ctx: AttemptContext) => Promise<Response>): Promise<Response>;
  /** Sends the request again with `headers` added and, when given, `generation` in its query. */
  send(headers: Record<string, string>, generation: string | undefined, ctx: AttemptContext): Promise<Response>;
  /** True once the reader's own signal aborted or it cancelled the body: then a break is final. */
  stopped(): boolean;
  /** The reader cancelled the body: a resume under way is abandoned. */
  stop(reason: unknown): void;
}

/** What pins the version whose bytes were received. */
interface Validator {
  readonly etag: string | undefined;
  readonly lastModified: string | undefined;
  readonly generation: string | undefined;
  /** The whole length, from Content-Length, when known. */
  readonly total: number | undefined;
}

/**
 * Whether a successful response's body can be resumed: a 200 with a body whose bytes are the
 * resource's own (a content-encoded body is decoded by fetch, and its offsets are not the ones
 * a Range counts).
 */
export function canResume(response: Response): boolean {
  const encoding = response.headers.get('content-encoding');
  return response.status === 200 && response.body !== null && (encoding === null || /^\s*identity\s*$/i.test(encoding));
}

function validatorOf(response: Response): Validator {
  const etag = response.headers.get('etag') ?? undefined;
  const length = response.headers.get('content-length');
  return {
    // A weak ETag promises equivalent content, not the same bytes: no use for a byte range.
    etag: etag !== undefined && !etag.startsWith('W/') ? etag : undefined,
    lastModified: response.headers.get('last-modified') ?? undefined,
    generation: response.headers.get('x-goog-generation') ?? undefined,
    total: length !== null && /^\d+$/.test(length) ? Number(length) : undefined,
  };
}

/** The headers of the request for the bytes from `received` on, of the same version. */
function rangeHeaders(received: number, v: Validator): Record<string, string> {
  const headers: Record<string, string> = { range: `bytes=${received}-` };
  // Cloud Storage pins the version by its generation (in the query); elsewhere the strong ETag,
  // else the modification date, makes a changed resource answer 412 instead of other bytes.
  if (v.generation === undefined) {
    if (v.etag !== undefined) headers['if-match'] = v.etag;
    else if (v.lastModified !== undefined) headers['if-unmodified-since'] = v.lastModified;
  }
  return headers;
}

/** Throws when `res` is of another version than `v` says (a 200 or a 206 alike). */
function checkSameVersion(res: Response, v: Validator, received: number): void {
  const etag = res.headers.get('etag');
  const generation = res.headers.get('x-goog-generation');
  const changed =
    (v.etag !== undefined && etag !== null && etag !== v.etag) ||
    (v.generation !== undefined && generation !== null && generation !== v.generation);
  if (changed) {
    cancelBody(res);
    throw new ResumeError(
      'changed',
      received,
      `the object changed since the download began (ETag ${v.etag ?? '-'} → ${etag ?? '-'}, generation ${v.generation ?? '-'} → ${generation ?? '-'})`,
    );
  }
}

/**
 * Checks the answer to a range request: a 206 of the same version starting at `received` (or,
 * when `restartable`, a 200 of the same version: the whole body again). Returns whether it is
 * a restart. Throws a ResumeError for what asking again cannot fix, an HttpStatusError for an
 * error status (for the retry policy to judge).
 */
function accept(res: Response, received: number, v: Validator, restartable: boolean, method: string): boolean {
  if (res.status === 412) {
    cancelBody(res);
    throw new ResumeError('changed', received, 'the object changed since the download began (HTTP 412 to the resume request)');
  }
  if (res.status >= 400) {
    cancelBody(res);
    throw new HttpStatusError(res, method);
  }
  checkSameVersion(res, v, received);
  if (res.status === 200 && res.body !== null) {
    if (restartable) return true;
    cancelBody(res);
    throw new ResumeError(
      'range-ignored',
      received,
      `the server ignored "Range: bytes=${received}-" and sent the whole body again (HTTP 200), after part of it had been read`,
    );
  }
  const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(res.headers.get('content-range')?.trim() ?? '');
  const total = range?.[3] === '*' ? undefined : Number(range?.[3]);
  if (
    res.status !== 206 ||
    range === null ||
    Number(range[1]) !== received ||
    (v.total !== undefined && total !== undefined && total !== v.total)
  ) {
    cancelBody(res);
    throw new ResumeError(
      'bad-range',
      received,
      `asked for bytes ${received}- of ${v.total ?? '?'}, got HTTP ${res.status} with Content-Range ${JSON.stringify(res.headers.get('content-range'))}`,
    );
  }
  return false;
}

/** Reads a response's body, resuming it after each break. */
interface ResumingReader {
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(reason: unknown): Promise<void>;
}

/**
 * A reader of `first`'s body that resumes after breaks. A server that ignores Range may send
 * the whole body again only before any byte was received (none was handed over yet).
 */
function resumingReader(first: Response, driver: ResumeDriver, method: string): ResumingReader {
  const v = validatorOf(first);
  let reader = (first.body as ReadableStream<Uint8Array>).getReader();
  let received = 0;
  const resume = async (broken: unknown): Promise<void> => {
    let restart = false;
    const next = await driver.run(broken, async (ctx) => {
      const res = await driver.send(rangeHeaders(received, v), v.generation, ctx);
      restart = accept(res, received, v, received === 0, method);
      return res;
    });
    if (restart) received = 0;
    reader = (next.body as ReadableStream<Uint8Array>).getReader();
  };
  return {
    async read() {
      for (;;) {
        try {
          const chunk = await reader.read();
          if (!chunk.done) received += chunk.value.byteLength;
          return chunk;
        } catch (error) {
          if (driver.stopped()) throw error;
          await resume(error);
        }
      }
    },
    cancel: (reason) => {
      driver.stop(reason);
      return reader.cancel(reason);
    },
  };
}

/** Copies what `new Response()` cannot take from the original: where it came from. */
function likeOriginal(body: BodyInit, first: Response): Response {
  const res = new Response(body, { status: first.status, statusText: first.statusText, headers: first.headers });
  for (const key of ['url', 'redirected', 'type'] as const) Object.defineProperty(res, key, { value: first[key] });
  return res;
}

/**
 * `first`, with a body that resumes after breaks: a stream read as the caller reads (pull), so
 * what was received is what was handed over, and a restart is allowed only before the first byte.
 */
export function resumingResponse(first: Response, driver: ResumeDriver, method: string): Response {
  const reader = resumingReader(first, driver, method);
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const chunk = await reader.read();
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return likeOriginal(body, first);
}

/**
 * A body read into memory across attempts (`bufferBody`): an attempt whose body breaks fails
 * with the break (retry() judges it and waits), keeping what it had; the next attempt asks only
 * for the rest. Nobody has read a byte yet, so a server that ignores Range may send the whole
 * body again: the buffer starts over.
 */
export interface BodyBuffer {
  /** The headers and generation of the next attempt's request, once a body broke; else undefined. */
  next(): { headers: Record<string, string>; generation: string | undefined } | undefined;
  /** Reads `res` (the first answer, or the answer to `next()`) to its end into the buffer. */
  fill(res: Response, method: string): Promise<Response>;
}

/** An empty {@link BodyBuffer}. */
export function bodyBuffer(): BodyBuffer {
  let v: Validator | undefined;
  let chunks: Uint8Array[] = [];
  let received = 0;
  let first: Response | undefined;
  return {
    next: () => (v === undefined ? undefined : { headers: rangeHeaders(received, v), generation: v.generation }),
    async fill(res, method) {
      if (v === undefined) {
        v = validatorOf(res);
        first = res;
      } else if (accept(res, received, v, true, method)) {
        chunks = [];
        received = 0;
      }
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        chunks.push(chunk.value);
        received += chunk.value.byteLength;
      }
      const whole = new Uint8Array(received);
      let at = 0;
      for (const chunk of chunks) {
        whole.set(chunk, at);
        at += chunk.byteLength;
      }
      return likeOriginal(whole, first as Response);
    },
  };
}
