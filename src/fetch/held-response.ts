/**
 * The held response of a retryFetch call: the last response that failed with a retryable
 * status, kept with its body unread until the next attempt starts. If the call ends before that
 * (out of attempts, time or budget, or the request may not be resent), it is the answer, as
 * fetch would have returned it; otherwise nobody will read it, and its body is cancelled so that
 * its connection is freed.
 */
import { type HttpStatusError, RetryError } from '../errors.js';
import { cancelBody } from './responses.js';

/** The one response a call holds back, at most: see the module's comment. */
export interface HeldResponse {
  /**
   * Keeps `failure`'s response as the call's possible answer. One held before it is released:
   * hedged copies fail side by side, and only the latest can still be returned.
   */
  hold(failure: HttpStatusError): void;
  /** Cancels the held response's body, if one is held: a new attempt starts, or another response won. */
  release(): void;
  /**
   * Settles the call that failed with `error`: the held response when `error` is its failure or
   * a `RetryError` caused by it (the call gave up on that very response: it is returned, body
   * intact); otherwise the held response is released and `error` is thrown.
   */
  settle(error: unknown): Response;
}

/** An empty {@link HeldResponse}. */
export function heldResponse(): HeldResponse {
  let held: HttpStatusError | undefined;
  const release = (): void => {
    if (held !== undefined) cancelBody(held.response);
    held = undefined;
  };
  return {
    hold(failure) {
      release();
      held = failure;
    },
    release,
    settle(error) {
      const last = held;
      held = undefined;
      if (last !== undefined && (error === last || (error instanceof RetryError && error.cause === last))) return last.response;
      if (last !== undefined) cancelBody(last.response);
      throw error;
    },
  };
}
