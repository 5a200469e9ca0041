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
});
