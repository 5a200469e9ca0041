// notSent reads the same shapes the error readers do: a function carrying a code is an error too.
import { describe, expect, it } from 'vitest';
import { notSent } from '../../src/classify/not-sent.js';

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

  it('an AggregateError with no errors proves nothing; one whose errors were all refused does', () => {
    expect(notSent(new AggregateError([], 'nothing tried'))).toBe(false);
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(notSent(new AggregateError([refused, refused]))).toBe(true);
    // Errors of errors are not read: only one connect's attempts.
    expect(notSent(new AggregateError([new AggregateError([refused])]))).toBe(false);
  });

  it('a system code with a syscall other than connect or getaddrinfo proves nothing; a non-system code with connect neither', () => {
    expect(notSent(Object.assign(new Error('x'), { code: 'EHOSTUNREACH', syscall: 'write' }))).toBe(false);
    expect(notSent(Object.assign(new Error('x'), { code: 'EAI_FAIL', syscall: 'getaddrinfo' }))).toBe(true);
    expect(notSent(Object.assign(new Error('x'), { code: 'ERR_SOMETHING', syscall: 'connect' }))).toBe(false);
  });

  it('reads the Deno message only on a TypeError', () => {
    expect(notSent(new Error('client error (Connect): tcp connect error'))).toBe(false);
    expect(notSent(new TypeError('client error (Connect): tcp connect error'))).toBe(true);
  });

  it('walks gaxios 6\'s `error` when there is no cause, and stops at a reset above a refusal', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(notSent(Object.assign(new Error('request failed'), { error: refused }))).toBe(true);
    expect(notSent(Object.assign(new Error('reset'), { code: 'ECONNRESET', error: refused }))).toBe(false);
  });
});
