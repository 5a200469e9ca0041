// util/literal-memo.ts: "the same options as last time", the one comparison retry()'s options
// reader and gcs() make before reading a literal again.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { instant } from '../../src/testing/index.js';
import { type LiteralMemo, emptyMemo, holdsLiteral, rememberLiteral } from '../../src/util/literal-memo.js';
import { polluted } from '../helpers/pollution.js';

/** A memo holding `options`, remembered with its own values. */
const memoOf = (options: Record<string, unknown>): LiteralMemo => {
  const memo = emptyMemo();
  rememberLiteral(memo, options, options);
  return memo;
};

describe('holdsLiteral', () => {
  it('holds another object with the same keys, in the same order, holding the same values', () => {
    const retryable = () => true;
    const memo = memoOf({ maxAttempts: 5, retryable });
    expect(holdsLiteral(memo, { maxAttempts: 5, retryable })).toBe(true);
    expect(holdsLiteral(memo, { retryable, maxAttempts: 5 })).toBe(false);
    // Another key holding the same value at the same place: the keys are compared, not only the values.
    expect(holdsLiteral(memo, { deadlineMs: 5, retryable })).toBe(false);
    expect(holdsLiteral(memo, { maxAttempts: 5, retryable: () => true })).toBe(false);
    expect(holdsLiteral(memo, { maxAttempts: '5', retryable })).toBe(false);
    expect(holdsLiteral(memo, { maxAttempts: 5 })).toBe(false);
    expect(holdsLiteral(memo, { maxAttempts: 5, retryable, deadlineMs: 1 })).toBe(false);
    expect(holdsLiteral(memo, { maxAttempts: 5, retryable, deadlineMs: undefined })).toBe(false);
  });

  it('holds only plain objects (util/check.ts, isPlainObject): not a Map, an array or a primitive, even with no key at all', () => {
    const memo: LiteralMemo = [];
    expect(holdsLiteral(memo, {})).toBe(true);
    expect(holdsLiteral(memo, Object.create(null))).toBe(true);
    for (const other of [new Map(), [], new Date(0), undefined, null, 5]) expect(holdsLiteral(memo, other), String(other)).toBe(false);
  });

  it('never holds options marked by instant(), whose marker for…in does not list', () => {
    const memo = memoOf({ maxAttempts: 5 });
    expect(holdsLiteral(memo, instant({ maxAttempts: 5 }))).toBe(false);
    expect(holdsLiteral(memo, { maxAttempts: 5 })).toBe(true);
  });

  it('never takes a key inherited from a polluted Object.prototype for an own one, even with the value remembered', () => {
    const memo = memoOf({ operation: 'objects.get' });
    expect(polluted({ operation: 'objects.get' }, () => holdsLiteral(memo, {}))).toBe(false);
    // Nor once remembered with it: such options are read at every call.
    const dirty = polluted({ maxAttempts: 1 }, () => {
      const remembered = emptyMemo();
      rememberLiteral(remembered, { deadlineMs: 5 }, { deadlineMs: 5 });
      return [holdsLiteral(remembered, { deadlineMs: 5 }), remembered.length];
    });
    expect(dirty).toEqual([false, 4]);
  });

  it('agrees with comparing the own entries, for any two literals', () => {
    const literal = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'maxAttempts'), fc.constantFrom(0, 1, 'x', undefined, null, true));
    fc.assert(
      fc.property(literal, literal, (a, b) => {
        const same = JSON.stringify(Object.entries(a), (_k, v) => (v === undefined ? '<undefined>' : v));
        const other = JSON.stringify(Object.entries(b), (_k, v) => (v === undefined ? '<undefined>' : v));
        expect(holdsLiteral(memoOf(a), b)).toBe(same === other);
      }),
    );
  });
});

describe('emptyMemo', () => {
  it('holds no options at all, not even {}, until one is remembered', () => {
    const memo = emptyMemo();
    expect(holdsLiteral(memo, {})).toBe(false);
    expect(holdsLiteral(memo, { maxAttempts: 5 })).toBe(false);
    rememberLiteral(memo, {}, {});
    expect(holdsLiteral(memo, {})).toBe(true);
  });
});

describe('rememberLiteral', () => {
  it('replaces what the memo held, a longer literal by a shorter one included', () => {
    const memo = memoOf({ maxAttempts: 5, deadlineMs: 100 });
    rememberLiteral(memo, { maxAttempts: 3 }, { maxAttempts: 3 });
    expect(holdsLiteral(memo, { maxAttempts: 3 })).toBe(true);
    expect(holdsLiteral(memo, { maxAttempts: 5, deadlineMs: 100 })).toBe(false);
  });

  it('remembers the values the reader read, not reading a getter again', () => {
    let reads = 0;
    const options = {
      get maxAttempts() {
        reads++;
        return 5;
      },
    };
    const memo = emptyMemo();
    rememberLiteral(memo, options, { maxAttempts: 3 });
    expect(reads).toBe(0);
    expect(holdsLiteral(memo, { maxAttempts: 3 })).toBe(true);
    expect(holdsLiteral(memo, { maxAttempts: 5 })).toBe(false);
  });
});
