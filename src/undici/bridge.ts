/**
 * The bridge from undici's dispatcher to the fetch-shaped function retryFetch calls: each attempt
 * is one `dispatch()` down the chain, its events turned into a `Response` whose body is a stream
 * fed by the socket (paused while nobody reads, so memory stays bounded). retryFetch judges that
 * Response as it judges fetch's; undici is never loaded here, only its handler protocol is used.
 */
import type { Dispatcher } from 'undici';
import type { FetchFunction } from '../fetch/fetch-options.js';
import { pathOf } from './request.js';

/**
 * How much of a body waits in its stream before the socket is paused. A short body (an error
 * page) arrives whole, so its request ends and its connection serves the next attempt whether
 * or not anyone reads it; a longer one that nobody will read is cut, which closes its connection.
 */
export const QUEUED_BYTES = 64 * 1024;

const QUEUE: QueuingStrategy<Uint8Array> = { highWaterMark: QUEUED_BYTES, size: (chunk) => chunk.byteLength };

/** Statuses whose response has no body (fetch refuses a body for them). */
const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([204, 205, 304]);

/**
 * The fetch-shaped function whose every call dispatches `opts` once through `dispatch`, with the
 * headers retryFetch asks for (a `Range`, validators) when they are not `planned`, the caller's
 * own, which then go out in the form the caller gave them. `sent` is the URL retryFetch was given.
 */
export function bridgeFetch(
  dispatch: Dispatcher['dispatch'],
  opts: Dispatcher.DispatchOptions,
  sent: string,
  planned: unknown,
): FetchFunction {
  // retryFetch always passes init, with the attempt's signal.
  return (target, init) =>
    new Promise<Response>((resolve, reject) => {
      const { headers, signal } = init as RequestInit & { signal: AbortSignal };
      const attempt = {
        ...opts,
        path: pathOf(target, sent, opts.path),
        headers: headers === planned ? opts.headers : (headers as Record<string, string>),
      };
      dispatch(attempt, attemptHandler(signal, resolve, reject));
    });
}

/** The fetch headers of a response, from undici's (lower-case names, a list for a repeated one). */
export function fetchHeaders(headers: Record<string, string | string[] | undefined>): Headers {
  const result = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    for (const one of [value as string | string[]].flat()) result.append(name, one);
  }
  return result;
}

/**
 * The handler of one attempt's dispatch: resolves with the Response at its status line (a 1xx
 * is not the answer, and is skipped), rejects with undici's own error when there is none, and
 * errors the body stream when the connection breaks later. `signal` (the attempt's) aborts it.
 */
function attemptHandler(
  signal: AbortSignal,
  resolve: (response: Response) => void,
  reject: (error: unknown) => void,
): Dispatcher.DispatchHandler {
  // Set at the status line, before any data, end or error that uses it.
  let body!: ReadableStreamDefaultController<Uint8Array>;
  let answered = false;
  let stop = (): void => {};
  // Hygiene, not behaviour: aborting a dispatch that has ended does nothing in undici.
  // Stryker disable next-line all: equivalent, see above
  const done = (): void => signal.removeEventListener('abort', stop);
  return {
    onRequestStart(ctrl) {
      // Once per dispatch: undici calls it again only for a pipelined request it resends itself.
      stop = () => ctrl.abort(signal.reason as Error);
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop);
    },
    onResponseStart(ctrl, status, headers, statusText) {
      if (status < 200) return;
      const stream = new ReadableStream<Uint8Array>(
        {
          start: (c) => {
            body = c;
          },
          pull: () => ctrl.resume(),
          // Nobody will read the rest: a request still under way is cut (see QUEUED_BYTES); one
          // that has ended is not touched (undici ignores the abort of an ended dispatch).
          cancel: () => ctrl.abort(new Error('tenaciousInterceptor: the body was discarded')),
        },
        QUEUE,
      );
      let response: Response;
      try {
        response = new Response(NULL_BODY_STATUSES.has(status) ? null : stream, { status, statusText, headers: fetchHeaders(headers) });
      } catch (error) {
        // A status fetch cannot carry (600 and up): the attempt fails with fetch's own words.
        ctrl.abort(error as Error);
        return;
      }
      answered = true;
      resolve(response);
    },
    onResponseData(ctrl, chunk) {
      // undici hands over an empty chunk on every resume: queued, it would be pulled, resume
      // the socket and come again, a loop of microtasks that starves the socket it waits for.
      if (chunk.byteLength === 0) return;
      body.enqueue(chunk);
      // Nobody reads: stop the socket until the reader pulls.
      // Stryker disable next-line EqualityOperator: pausing at a full queue or one chunk past it holds the same bound
      if ((body.desiredSize as number) <= 0) ctrl.pause();
    },
    onResponseEnd() {
      done();
      body.close();
    },
    onResponseError(_ctrl, error) {
      done();
      if (answered) body.error(error);
      else reject(error);
    },
  };
}
