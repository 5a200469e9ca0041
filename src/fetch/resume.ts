/**
 * Download resume: a body that breaks mid-way is continued, not failed. The rest is asked for
 * with `Range: bytes=<received>-` and a validator that pins the version already half read; the
 * answer is judged by the integrity rule (transfer/download.ts: the bytes of one version of the
 * object, exactly, or an error) and its bytes continue the same stream. Each resume is a further
 * run of the call whose first failure is the break itself, so the break is judged, counted and
 * waited for like any failed attempt; which run (remaining deadline and attempts, signal, budget,
 * hooks) is the driver's to say (resume-driver.ts).
 */
import { ResumeError } from '../errors.js';
import { type Answer, type DownloadProgress, identity, trackDownload } from '../transfer/download.js';
import type { AttemptContext } from '../types.js';
import { cancelBody, ignore } from './responses.js';

/** What retryFetch lends the resume machinery: how to run attempts and send one range request. */
export interface ResumeDriver {
  /**
   * Runs `attempt` as a further run of the call: the retries of the attempt whose body broke
   * with `broken`; with `broken` undefined, the first attempt is sent at once, as the
   * continuation of the same attempt (a part ended short of the whole, which is no failure).
   * `progressed`: bytes arrived since the last run began, so the limits count afresh.
   */
  run(broken: unknown, attempt: (ctx: AttemptContext) => Promise<Response>, progressed: boolean): Promise<Response>;
  /** Sends the request again with `headers` added and, when given, `generation` in its query. */
  send(headers: Record<string, string>, generation: string | undefined, ctx: AttemptContext): Promise<Response>;
  /** True once the reader's own signal aborted or it cancelled the body: then a break is final. */
  stopped(): boolean;
  /** The reader cancelled the body: a resume under way is abandoned. */
  stop(reason: unknown): void;
}

/**
 * Whether a successful response's body can be resumed: a 200 with a body whose bytes are the
 * resource's own (a content-encoded body is decoded by fetch, and its offsets are not the ones
 * a Range counts).
 */
export function canResume(response: Response): boolean {
  return response.status === 200 && response.body !== null && identity(response.headers.get('content-encoding'));
}

/** The error a body that ended before its declared end is resumed after, like a break. */
function truncated(progress: DownloadProgress): Error {
  return new Error(`the body ended after ${progress.received} bytes, before the end its headers declared`);
}

/**
 * Judges an answer for the rest, cancelling its body when it is refused. Returns what it is
 * and, for an answer that ends the object (`'end'`, a 416), an empty body to read instead of its own.
 */
function accept(progress: DownloadProgress, res: Response, method: string, restartable: boolean): [Answer, Response] {
  let answer: Answer;
  try {
    answer = progress.answer(res, method, restartable);
  } catch (error) {
    cancelBody(res);
    throw error;
  }
  if (answer !== 'end') return [answer, res];
  cancelBody(res);
  return [answer, new Response(new Uint8Array(0))];
}

/** Reads a response's body, resuming it after each break. */
interface ResumingReader {
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(reason: unknown): Promise<void>;
}

/**
 * A reader of `first`'s body that resumes after breaks. A server that ignores Range may send
 * the whole body again only before any byte was received (none was handed over yet); without a
 * validator, bytes already handed over are never continued.
 */
function resumingReader(first: Response, driver: ResumeDriver, method: string): ResumingReader {
  const progress = trackDownload(first);
  let reader = (first.body as ReadableStream<Uint8Array>).getReader();
  // Bytes received when the last run began: only bytes past it are progress.
  let receivedAtRun = 0;
  /** Asks for the rest after `broken` (undefined: a part ended short) and reads on from its answer. */
  const resume = async (broken: unknown): Promise<void> => {
    if (progress.received > 0 && !progress.pinned) {
      throw new ResumeError(
        'unpinned',
        progress.received,
        'the first response carries no ETag, Last-Modified or x-goog-generation, so the rest could be of another version',
        broken,
      );
    }
    const progressed = progress.received > receivedAtRun;
    receivedAtRun = progress.received;
    const next = await driver.run(
      broken,
      async (ctx) => {
        const { headers, generation } = progress.rest();
        return accept(progress, await driver.send(headers, generation, ctx), method, progress.received === 0)[1];
      },
      progressed,
    );
    // (Cancelled while the answer was on its way, the run rejects instead and the answer's body
    // is cancelled where it arrives: retryFetch discards the response of an aborted attempt.)
    reader = (next.body as ReadableStream<Uint8Array>).getReader();
  };
  const next = async (): Promise<ReadableStreamReadResult<Uint8Array> | 'more'> => {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (error) {
      if (driver.stopped()) throw error;
      await resume(error);
      return 'more';
    }
    if (!chunk.done) {
      try {
        progress.take(chunk.value);
      } catch (error) {
        // Refused bytes: nobody will read the rest of this answer.
        reader.cancel(error).catch(ignore);
        throw error;
      }
      return chunk;
    }
    const end = progress.ended();
    if (end === 'complete') return chunk;
    await resume(end === 'truncated' ? truncated(progress) : undefined);
    return 'more';
  };
  return {
    async read() {
      for (;;) {
        const chunk = await next();
        if (chunk !== 'more') return chunk;
      }
    },
    async cancel(reason) {
      driver.stop(reason);
      // The reader may be the broken one, whose cancel rejects with the break already handled:
      // cancelling a body resolves, as fetch's does.
      await reader.cancel(reason).catch(ignore);
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
 * body again (the buffer starts over), and a body that pins no version starts over whole.
 */
export interface BodyBuffer {
  /** The headers and generation of the next request, once a body broke or a part ended short; else undefined. */
  next(): { headers: Record<string, string>; generation: string | undefined } | undefined;
  /**
   * Reads `res` (the first answer, or the answer to `next()`) to its end into the buffer, for the
   * attempt whose signal is `signal`: the whole response, or undefined when a part ended short of
   * the whole (send `next()` and fill again). Once `signal` aborts (the attempt was abandoned),
   * its body is cancelled and nothing more of it reaches the buffer.
   */
  fill(res: Response, method: string, signal: AbortSignal): Promise<Response | undefined>;
}

/** An empty {@link BodyBuffer}. */
export function bodyBuffer(): BodyBuffer {
  let progress: DownloadProgress | undefined;
  let chunks: Uint8Array[] = [];
  let first: Response | undefined;
  // Only the latest fill may write: an abandoned attempt's body may still be arriving.
  let current = 0;
  const reset = (): void => {
    progress = undefined;
    chunks = [];
  };
  return {
    next: () => (progress === undefined ? undefined : progress.rest()),
    async fill(answer, method, signal) {
      // Stryker disable next-line UpdateOperator: counting down gives each fill a number of its own just as well
      const mine = ++current;
      let res = answer;
      if (progress === undefined) {
        progress = trackDownload(res);
        first = res;
      } else {
        const [kind, body] = accept(progress, res, method, true);
        if (kind === 'restart') chunks = [];
        res = body;
      }
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const abandon = (): void => {
        reader.cancel(signal.reason).catch(ignore);
      };
      // Removed below whatever happens, and a signal aborts once: no need for `once`.
      signal.addEventListener('abort', abandon);
      const own = progress;
      try {
        for (;;) {
          const chunk = await reader.read();
          if (mine !== current || signal.aborted) throw signal.reason;
          if (chunk.done) break;
          own.take(chunk.value);
          chunks.push(chunk.value);
        }
        const end = own.ended();
        if (end === 'truncated') throw truncated(own);
        if (end === 'more') return undefined;
      } catch (error) {
        // The body is locked to this reader: cancelling it is what frees the connection.
        reader.cancel(error).catch(ignore);
        // A version nobody pinned cannot be continued: the next attempt starts over whole.
        if (mine === current && !own.pinned) reset();
        throw error;
      } finally {
        signal.removeEventListener('abort', abandon);
      }
      const whole = new Uint8Array(own.received);
      let at = 0;
      for (const chunk of chunks) {
        whole.set(chunk, at);
        at += chunk.byteLength;
      }
      return likeOriginal(whole, first as Response);
    },
  };
}
