// notSent reads the same shapes the error readers do: a function carrying a code is an error too.
import { describe, expect, it } from 'vitest';
import { notSent } from '../../src/not-sent.js';

describe('notSent', () => {
  it('finds the code on a function-shaped error, and under one', () => {
    const refused = Object.assign(() => undefined, { code: 'ECONNREFUSED' });
    expect(notSent(refused)).toBe(true);
    expect(notSent(new TypeError('fetch failed', { cause: refused }))).toBe(true);
    expect(notSent(Object.assign(() => undefined, { code: 'ECONNRESET' }))).toBe(false);
  });

  it('is false for an abort above the refusal: aborting says nothing about what the server got', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    // gaxios and node-fetch wrap what they were doing when aborted in an AbortError.
    const abort = Object.assign(new Error('The operation was aborted'), { name: 'AbortError', cause: refused });
    expect(notSent(abort)).toBe(false);
    expect(notSent(new DOMException('aborted', 'AbortError'))).toBe(false);
    expect(notSent(refused)).toBe(true);
  });
});
