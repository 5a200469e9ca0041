/**
 * One attempt of a retried unary call: a call of what comes after the interceptor (the next
 * interceptor, or the channel) with the caller's request, the attempt's own deadline and, from
 * the second attempt on, how many came before it; cancelled when the engine abandons it.
 */
import type { InterceptingListener, InterceptorOptions, Metadata, NextCall, StatusObject } from '@grpc/grpc-js';
import type { AttemptContext } from '../types.js';

/** What an interceptor calls (the next interceptor, or the channel's call). */
export type NextInterceptingCall = ReturnType<NextCall>;

/** grpc-js's context of a message (its write flags), passed along untouched. */
export type MessageContext = Parameters<NextInterceptingCall['sendMessageWithContext']>[0];

/** The request the caller started: sent again, unchanged, by every attempt. */
export interface Request {
  readonly metadata: Metadata;
  readonly context: MessageContext;
  readonly message: unknown;
}

/**
 * What an attempt was told, as far as the call needs it: a unary attempt's whole answer, or a
 * server stream's beginning (its headers and first message; its status comes later).
 */
export interface Answer {
  /** The response headers, when the server sent any. */
  readonly headers: Metadata | undefined;
  /** The (first) response message; null when none came (grpc-js's unary calls say so). */
  readonly message: unknown;
  /** Undefined when a stream's first message came: the stream goes on. */
  readonly status: StatusObject | undefined;
}

/**
 * gRFC A6's metadata: how many attempts of the call came before this one, sent by the retries
 * of every gRPC client so that a server can tell a retry from a first request.
 */
export const PREVIOUS_ATTEMPTS = 'grpc-previous-rpc-attempts';

/** One attempt's call, and the promise of its answer: it always resolves, whatever the status. */
export interface Attempt {
  readonly call: NextInterceptingCall;
  /** A unary attempt's answer, at its status; a stream's first message, or its status when none came. */
  readonly answered: Promise<Answer>;
  /** The stream goes on for the caller: what comes after its first message goes to `listener`. */
  commit(listener: Partial<InterceptingListener>): void;
}

/**
 * Sends `request` as attempt `ctx.attempt`, in a call of `next` ending at `deadline` (epoch
 * milliseconds, what grpc-js's `deadline` option takes; undefined keeps the caller's). When the
 * attempt's signal aborts (its limit, the call's deadline, the caller's cancel), the call is
 * cancelled with the status `cancellation` gives for the signal's reason, so that it ends at
 * once and frees its stream. A server stream's attempt (`stream`) reads its first message.
 */
export function sendAttempt(
  next: NextCall,
  options: InterceptorOptions,
  request: Request,
  ctx: AttemptContext,
  deadline: number | undefined,
  cancellation: (reason: unknown) => readonly [code: number, details: string],
  stream: boolean,
): Attempt {
  const metadata = request.metadata.clone();
  if (ctx.attempt > 1) metadata.set(PREVIOUS_ATTEMPTS, String(ctx.attempt - 1));
  const call = next(deadline === undefined ? options : { ...options, deadline });
  const { signal } = ctx;
  const cancel = (): void => call.cancelWithStatus(...cancellation(signal.reason));
  signal.addEventListener('abort', cancel);
  // The caller's listener, once the stream is committed; until then, a status that came after
  // the first message waits for it.
  let caller: Partial<InterceptingListener> | undefined;
  let ended: StatusObject | undefined;
  let resolve: (answer: Answer) => void = () => {};
  const answered = new Promise<Answer>((settle) => (resolve = settle));
  let headers: Metadata | undefined;
  let message: unknown = null;
  const listener: InterceptingListener = {
    onReceiveMetadata: (received) => {
      headers = received;
    },
    onReceiveMessage: (received) => {
      if (caller !== undefined) return caller.onReceiveMessage?.(received);
      message = received;
      if (stream) resolve({ headers, message, status: undefined });
    },
    onReceiveStatus: (status) => {
      // Stryker disable next-line StringLiteral: equivalent: grpc-js ignores the cancel of a call that has ended; this only lets the listener go
      signal.removeEventListener('abort', cancel);
      if (caller !== undefined) return caller.onReceiveStatus?.(status);
      ended = status;
      resolve({ headers, message, status });
    },
  };
  call.start(metadata, listener);
  call.sendMessageWithContext(request.context, request.message);
  call.halfClose();
  // A stream reads when asked, and the first message is the attempt's. (A unary call reads its
  // answer by itself, grpc-js's BaseUnaryInterceptingCall: asking it too changes nothing.)
  call.startRead();
  const commit = (to: Partial<InterceptingListener>): void => {
    caller = to;
    if (ended !== undefined) to.onReceiveStatus?.(ended);
  };
  return { call, answered, commit };
}
