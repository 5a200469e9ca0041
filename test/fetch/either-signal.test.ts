// The signals of a retryFetch call (src/fetch/either-signal.ts): one signal from the caller's
// two, told by either until disposed. Real AbortSignals; listeners counted with node:events.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { eitherSignal } from '../../src/fetch/either-signal.js';

describe('eitherSignal', () => {
  it('hands a lone signal (or none) through as it is: nothing to combine, nothing to dispose', () => {
    const only = new AbortController().signal;
    expect(eitherSignal(only, undefined).signal).toBe(only);
    expect(eitherSignal(undefined, only).signal).toBe(only);
    const neither = eitherSignal(undefined, undefined);
    expect(neither.signal).toBeUndefined();
    expect(() => neither.dispose()).not.toThrow();
    expect(getEventListeners(only, 'abort')).toHaveLength(0);
  });

  it.each([0, 1])('aborts when signal %i of the two aborts, with its reason', (which) => {
    const controllers = [new AbortController(), new AbortController()] as const;
    const either = eitherSignal(controllers[0].signal, controllers[1].signal);
    expect(either.signal?.aborted).toBe(false);
    const reason = new Error(`signal ${which}`);
    controllers[which]?.abort(reason);
    expect(either.signal?.aborted).toBe(true);
    expect(either.signal?.reason).toBe(reason);
    either.dispose();
  });

  it('starts aborted when either was aborted already, with the reason of the first that was', () => {
    const first = new Error('first');
    const second = new Error('second');
    expect(eitherSignal(AbortSignal.abort(first), new AbortController().signal).signal?.reason).toBe(first);
    expect(eitherSignal(new AbortController().signal, AbortSignal.abort(second)).signal?.reason).toBe(second);
    expect(eitherSignal(AbortSignal.abort(first), AbortSignal.abort(second)).signal?.reason).toBe(first);
  });

  it('once disposed, leaves no listener on either and no longer follows them', () => {
    const a = new AbortController();
    const b = new AbortController();
    const either = eitherSignal(a.signal, b.signal);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(1);
    either.dispose();
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(0);
    a.abort(new Error('after the call'));
    expect(either.signal?.aborted).toBe(false);
  });

  it('keeps one listener on a long-lived signal shared by many calls, and none once they are disposed', () => {
    const shared = new AbortController();
    const calls = Array.from({ length: 50 }, () => eitherSignal(shared.signal, new AbortController().signal));
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    const reason = new Error('shutdown');
    shared.abort(reason);
    expect(calls.every((call) => call.signal?.reason === reason)).toBe(true);
    for (const call of calls) call.dispose();
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });
});
