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

/** All an attempt was told: what the caller's listener is told of the attempt that ends the call. */
export interface Answer {
  /** The response headers, when the server sent any. */
  readonly headers: Metadata | undefined;
  /** The response message; null when none came (grpc-js's unary calls say so). */
  readonly message: unknown;
  readonly status: StatusObject;
}

/**
 * gRFC A6's metadata: how many attempts of the call came before this one, sent by the retries
 * of every gRPC client so that a server can tell a retry from a first request.
 */
export const PREVIOUS_ATTEMPTS = 'grpc-previous-rpc-attempts';

/** One attempt's call, and the promise of its answer: it always resolves, whatever the status. */
export interface Attempt {
  readonly call: NextInterceptingCall;
  readonly answered: Promise<Answer>;
}

/**
 * Sends `request` as attempt `ctx.attempt`, in a call of `next` ending at `deadline` (epoch
 * milliseconds, what grpc-js's `deadline` option takes). When the attempt's signal aborts
 * (its limit, the call's deadline, the caller's cancel), the call is cancelled with the status
 * `cancellation` gives for the signal's reason, so that it ends at once and frees its stream.
 */
export function sendAttempt(
  next: NextCall,
  options: InterceptorOptions,
  request: Request,
  ctx: AttemptContext,
  deadline: number,
  cancellation: (reason: unknown) => readonly [code: number, details: string],
): Attempt {
  const metadata = request.metadata.clone();
  if (ctx.attempt > 1) metadata.set(PREVIOUS_ATTEMPTS, String(ctx.attempt - 1));
  const call = next({ ...options, deadline });
  const { signal } = ctx;
  const cancel = (): void => call.cancelWithStatus(...cancellation(signal.reason));
  signal.addEventListener('abort', cancel);
  const answered = new Promise<Answer>((resolve) => {
    let headers: Metadata | undefined;
    let message: unknown = null;
    const listener: InterceptingListener = {
      onReceiveMetadata: (received) => {
        headers = received;
      },
      onReceiveMessage: (received) => {
        message = received;
      },
      onReceiveStatus: (status) => {
        // Stryker disable next-line StringLiteral: equivalent: grpc-js ignores the cancel of a call that has ended; this only lets the listener go
        signal.removeEventListener('abort', cancel);
        resolve({ headers, message, status });
      },
    };
    call.start(metadata, listener);
  });
  call.sendMessageWithContext(request.context, request.message);
  call.halfClose();
  return { call, answered };
}
