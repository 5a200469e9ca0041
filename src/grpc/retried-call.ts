/**
 * A call that the interceptor retries, unary or a server stream: to the caller (the client, or
 * the interceptors before this one) it is one call, started, sent and half-closed once, told
 * one status; under it, one call of the engine runs the attempts (attempt.ts), and the attempt
 * that ends the call is the one whose headers, message and status the caller's listener is
 * told. A server stream's call ends, for the engine, at its first message: from there on that
 * attempt's stream is the caller's, and nothing more is retried.
 */
import type { InterceptingListener, InterceptorOptions, Metadata, NextCall } from '@grpc/grpc-js';
import { GrpcStatus } from '../classify/error-shape.js';
import { configOfChecked } from '../core/options.js';
import { startCall } from '../core/retry.js';
import { timeoutOf } from '../core/schedule.js';
import { isRetryError } from '../errors.js';
import type { AttemptContext } from '../types.js';
import { type Answer, type Attempt, type MessageContext, type NextInterceptingCall, type Request, sendAttempt } from './attempt.js';
import { type MethodRetry, WHERE } from './options.js';
import { localStatus, serviceErrorOf } from './status.js';

/** How the caller cancelled (`call.cancel()` says CANCELLED, "Cancelled on client"): the engine's abort reason. */
class Cancellation {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {}
}

/**
 * The longest attempt limit sent as a gRPC deadline: 2,147,483 s. grpc-js's client sends a
 * timeout of 10^8 ms or more in whole seconds, rounded up, and its server multiplies them back
 * into a 32-bit integer of milliseconds: one second more (even 2^31 − 1 ms, rounded up) wraps
 * round to a deadline already past.
 */
const MAX_GRPC_TIMEOUT_MS = 2_147_483_000;

/** Errors of the engine that end a call on its last attempt's answer (besides that attempt's own error). */
const ENDINGS: ReadonlySet<unknown> = new Set(['RetryError', 'TimeoutError', 'ThrottledError']);

/**
 * The retried call; `deadlineMs` is how long the caller's `deadline` leaves it (Infinity
 * without one); `stream` says the method answers with a stream.
 */
export class RetriedCall implements NextInterceptingCall {
  #metadata: Metadata | undefined;
  #listener: Partial<InterceptingListener> | undefined;
  #context: MessageContext = {};
  #message: unknown;
  #latest: { readonly attempt: Attempt; error?: unknown } | undefined;
  #cancelled: Cancellation | undefined;
  /** The attempt whose stream the caller reads, once its first message has ended the engine's call. */
  #committed: Attempt | undefined;
  readonly #controller = new AbortController();

  constructor(
    private readonly next: NextCall,
    private readonly options: InterceptorOptions,
    private readonly retry: MethodRetry,
    private readonly deadlineMs: number,
    private readonly stream: boolean,
  ) {}

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.#metadata = metadata;
    this.#listener = listener;
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.#context = context;
    this.#message = message;
  }

  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }

  /** The request is complete: the call of the engine begins. */
  halfClose(): void {
    const { options, config } = this.retry;
    const request: Request = { metadata: this.#metadata as Metadata, context: this.#context, message: this.#message };
    try {
      const deadlineMs = Math.min(config.deadlineMs, this.deadlineMs);
      // The options were checked when the interceptor was made; the deadline and signal are the call's own.
      const engine = configOfChecked({ ...options, deadlineMs, signal: this.#controller.signal }, WHERE);
      const call = startCall((ctx) => this.#send(request, ctx), engine);
      call.settled.then(
        () => this.#tell((this.#latest as { attempt: Attempt }).attempt.answered),
        (error: unknown) => this.#giveUp(error),
      );
    } catch (error) {
      this.#giveUp(error); // the call's telemetry threw as the call began
    }
  }

  /**
   * The caller asks for the stream's next message. Each attempt reads its own first message (a
   * unary call, its answer): only a committed stream has more to read.
   */
  startRead(): void {
    this.#committed?.call.startRead();
  }

  /**
   * The caller's cancel: the engine stops, the running attempt's call is cancelled with the
   * caller's status; a committed stream, the engine done with it, is cancelled as it is.
   */
  cancelWithStatus(code: number, details: string): void {
    if (this.#committed !== undefined) return this.#committed.call.cancelWithStatus(code, details);
    if (this.#cancelled !== undefined) return;
    this.#cancelled = new Cancellation(code, details);
    this.#controller.abort(this.#cancelled);
  }

  getPeer(): string {
    return this.#latest?.attempt.call.getPeer() ?? 'unknown';
  }

  getAuthContext(): ReturnType<NextInterceptingCall['getAuthContext']> {
    return this.#latest?.attempt.call.getAuthContext() ?? null;
  }

  /**
   * Attempt `ctx.attempt`: the request, sent within the attempt's limit and the call's deadline.
   * A unary attempt's gRPC deadline is that limit, which the server sees; a stream's stays the
   * caller's (a stream may outlive its first message's limit), and its signal bounds the wait for it.
   */
  #send(request: Request, ctx: AttemptContext): Promise<unknown> {
    // A stream whose first message retryOnResult refused is still open: it ends here. (Any other
    // attempt before this one has ended, and grpc-js ignores the cancel of a call that has.)
    // Stryker disable next-line StringLiteral: equivalent: the server sees a cancel, never its words, and nobody listens to that call any more
    this.#latest?.attempt.call.cancelWithStatus(GrpcStatus.CANCELLED, 'Superseded by a retry');
    const limitMs = Math.min(timeoutOf(this.retry.config, ctx.attempt), ctx.remainingMs);
    // A longer limit would reach grpc-js's server negative (MAX_GRPC_TIMEOUT_MS), and it would end
    // the attempt at once. Such a limit is kept by the attempt's signal alone (its cancel tells
    // the server); the gRPC deadline stays the caller's.
    const deadline = this.stream || !(limitMs <= MAX_GRPC_TIMEOUT_MS) ? undefined : Date.now() + limitMs;
    const attempt = sendAttempt(this.next, this.options, request, ctx, deadline, this.#cancellation, this.stream);
    const latest: { attempt: Attempt; error?: unknown } = { attempt };
    this.#latest = latest;
    return attempt.answered.then(({ message, status }) => {
      if (status === undefined || status.code === GrpcStatus.OK) return message;
      latest.error = serviceErrorOf(status);
      throw latest.error;
    });
  }

  /** The status an abandoned attempt is cancelled with: the caller's, or its deadline's. */
  readonly #cancellation = (reason: unknown): readonly [number, string] =>
    reason instanceof Cancellation ? [reason.code, reason.details] : [GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded'];

  /**
   * The call failed: the caller is told the last attempt's answer (grpc-js's status, once it
   * has come), or, when no attempt was sent or the caller cancelled, a status of the
   * interceptor's own. An error of the policies (user code that threw) is not hidden behind
   * the last answer: it becomes an INTERNAL status that names it.
   */
  #giveUp(error: unknown): void {
    // The engine rejects with its signal's reason, and only cancelWithStatus aborts it, with a Cancellation.
    if (error instanceof Cancellation) return this.#tellLocal(error.code, error.details);
    const latest = this.#latest;
    const name = (error as { name?: unknown } | undefined)?.name;
    if (!ENDINGS.has(name) && (latest === undefined || error !== latest.error)) {
      return this.#tellLocal(GrpcStatus.INTERNAL, `${WHERE}: ${String(error)}`);
    }
    if (latest !== undefined) return this.#tell(latest.attempt.answered);
    // No attempt was sent: a pause the gate asked for outlasted the deadline, or the throttle refused.
    if (isRetryError(error)) return this.#tellLocal(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
    this.#tellLocal(GrpcStatus.UNAVAILABLE, (error as Error).message);
  }

  #tellLocal(code: number, details: string): void {
    this.#tell(Promise.resolve({ headers: undefined, message: null, status: localStatus(code, details, this.#metadata as Metadata) }));
  }

  /** Never at once: the caller listens to its call's events only once the client method has returned it. */
  #tell(answered: Promise<Answer>): void {
    void answered.then((answer) => this.#tellNow(answer));
  }

  /**
   * Tells the caller's listener of the answer that ends the call: its headers, one message
   * (a unary call's, null when none came; a stream's first), one status; or, for a stream that
   * goes on, hands the rest of it over.
   */
  #tellNow({ headers, message, status }: Answer): void {
    const listener = this.#listener as Partial<InterceptingListener>;
    if (headers !== undefined) listener.onReceiveMetadata?.(headers);
    if (!this.stream || status === undefined) listener.onReceiveMessage?.(message);
    if (status !== undefined) return listener.onReceiveStatus?.(status);
    const { attempt } = this.#latest as { attempt: Attempt }; // the one whose first message this is
    this.#committed = attempt;
    attempt.commit(listener);
  }
}
