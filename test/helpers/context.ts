// An attempt's context as the engine hands it to fn and the policies, for tests that ask a
// policy or judge() directly, without a call.
import type { AttemptContext } from '../../src/index.js';

/** A first attempt's context at the call's start, with `fields` in place of those defaults. */
export function attemptContext(fields: Partial<AttemptContext> = {}): AttemptContext {
  return {
    attempt: 1,
    copy: 1,
    invocationId: 'id',
    progress() {},
    elapsedMs: 0,
    remainingMs: 1000,
    signal: new AbortController().signal,
    ...fields,
  };
}
