// The held response (src/fetch/held-response.ts): the last retryable-status response, kept
// unread until the next attempt starts, or returned when the call gives up on it. Real Response
// objects whose bodies record whether they were cancelled; no server, no clock.
import { describe, expect, it } from 'vitest';
import { HttpStatusError, RetryError } from '../../src/errors.js';
import { heldResponse } from '../../src/fetch/held-response.js';

/** An HttpStatusError of a response whose body says `text` and records its cancellation. */
function failure(status: number, text = `body of ${status}`) {
  const state = { cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { error: new HttpStatusError(new Response(body, { status }), 'GET'), state };
}

/** What `settle` throws, or a marker that it returned. */
function thrownBy(settle: () => Response): unknown {
  try {
    settle();
  } catch (error) {
    return error;
  }
  return 'returned';
}

describe('the held response', () => {
  it('is the answer, body intact, when the call fails with its own failure (not resendable)', async () => {
    const held = heldResponse();
    const busy = failure(503, 'busy');
    held.hold(busy.error);
    const answer = held.settle(busy.error);
    expect(answer).toBe(busy.error.response);
    expect(await answer.text()).toBe('busy');
    expect(busy.state.cancelled).toBe(false);
  });

  it('is the answer when the call gives up on it (a RetryError caused by its failure)', async () => {
    const held = heldResponse();
    const busy = failure(429, 'slow down');
    held.hold(busy.error);
    const answer = held.settle(new RetryError('attempts', 3, 10, busy.error));
    expect(answer).toBe(busy.error.response);
    expect(await answer.text()).toBe('slow down');
  });

  it('is cancelled when the call fails for another reason, and that error is thrown unchanged', async () => {
    const held = heldResponse();
    const busy = failure(503);
    held.hold(busy.error);
    const reason = new Error('caller went away');
    expect(thrownBy(() => held.settle(reason))).toBe(reason);
    await Promise.resolve();
    expect(busy.state.cancelled).toBe(true);
  });

  it('is cancelled when the RetryError was caused by a later failure (a network error after it)', async () => {
    const held = heldResponse();
    const busy = failure(503);
    held.hold(busy.error);
    const giveUp = new RetryError('deadline', 2, 100, new TypeError('fetch failed'));
    expect(thrownBy(() => held.settle(giveUp))).toBe(giveUp);
    await Promise.resolve();
    expect(busy.state.cancelled).toBe(true);
  });

  it('holds one response at most: holding another cancels the first, and only the latest is returned', async () => {
    const held = heldResponse();
    const first = failure(503, 'first');
    const second = failure(502, 'second');
    held.hold(first.error);
    held.hold(second.error);
    await Promise.resolve();
    expect(first.state.cancelled).toBe(true);
    expect(await held.settle(second.error).text()).toBe('second');
    expect(second.state.cancelled).toBe(false);
  });

  it("does not return the latest when the call fails with an earlier copy's failure", async () => {
    const held = heldResponse();
    const first = failure(503, 'first');
    const second = failure(502, 'second');
    held.hold(first.error);
    held.hold(second.error);
    expect(thrownBy(() => held.settle(first.error))).toBe(first.error);
    await Promise.resolve();
    expect(second.state.cancelled).toBe(true);
  });

  it('release cancels it (a new attempt starts): the call can no longer return it', async () => {
    const held = heldResponse();
    const busy = failure(503);
    held.hold(busy.error);
    held.release();
    await Promise.resolve();
    expect(busy.state.cancelled).toBe(true);
    expect(thrownBy(() => held.settle(busy.error))).toBe(busy.error);
  });

  it('settles with nothing held by throwing the error, whatever it is (even undefined)', () => {
    const held = heldResponse();
    expect(() => held.release()).not.toThrow();
    expect(thrownBy(() => held.settle(undefined))).toBeUndefined();
    const busy = failure(503);
    expect(thrownBy(() => held.settle(busy.error))).toBe(busy.error);
  });

  it('is given up by settle: a second settle of the same failure throws it', () => {
    const held = heldResponse();
    const busy = failure(503);
    held.hold(busy.error);
    expect(held.settle(busy.error)).toBe(busy.error.response);
    expect(thrownBy(() => held.settle(busy.error))).toBe(busy.error);
    expect(busy.state.cancelled).toBe(false);
  });
});
