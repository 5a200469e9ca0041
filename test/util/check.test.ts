// describe() renders the bad value in every validation message; each kind of value once.
import { describe as group, expect, it } from 'vitest';
import { describe } from '../../src/util/check.js';

group('describe (values in error messages)', () => {
  it('names functions, and says when they have no name', () => {
    function retryable(): boolean {
      return true;
    }
    expect(describe(retryable)).toBe('a function (retryable)');
    expect(describe(Object.defineProperty(() => true, 'name', { value: '' }))).toBe('a function (anonymous)');
  });

  it('writes a bigint with its n', () => {
    expect(describe(10n)).toBe('10n');
  });

  it('writes strings quoted, objects as JSON, and other values as themselves', () => {
    expect(describe('5s')).toBe('"5s"');
    expect(describe({ a: 1 })).toBe('{"a":1}');
    expect(describe(null)).toBe('null');
    expect(describe(undefined)).toBe('undefined');
    expect(describe(Number.NaN)).toBe('NaN');
  });

  it('falls back to the object tag for what JSON cannot write', () => {
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    expect(describe(cyclic)).toBe('[object Object]');
    expect(describe({ toJSON: () => undefined })).toBe('[object Object]');
    const bare = Object.create(null) as { self?: unknown }; // no toString to fall back on
    bare.self = bare;
    expect(describe(bare)).toBe('[object Object]');
  });
});
