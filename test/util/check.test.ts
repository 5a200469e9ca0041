// util/check.ts: describe() renders the bad value in every validation message (each kind of value
// once), and checkOptions / mustError / readChecked give every module the same option errors.
import { describe as group, expect, it } from 'vitest';
import { checkOptions, describe, mustError, readChecked } from '../../src/util/check.js';

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

group('checkOptions (the one option checker)', () => {
  const rules = {
    size: { ok: (v: unknown) => typeof v === 'number' && v > 0, rule: 'be a number > 0', range: true },
    name: { ok: (v: unknown) => typeof v === 'string', rule: 'be a string' },
  };

  it('builds "<where>: options.<field> must <rule>, got <value>", RangeError for a range, TypeError for a kind', () => {
    expect(() => checkOptions('make', { size: -1 }, rules)).toThrow(new RangeError('make: options.size must be a number > 0, got -1'));
    expect(() => checkOptions('make', { name: 3 }, rules)).toThrow(new TypeError('make: options.name must be a string, got 3'));
    expect(mustError('make: options.size', 'be a number > 0', NaN, true)).toBeInstanceOf(RangeError);
    expect(mustError('make: fn', 'be a function', 'x')).toEqual(new TypeError('make: fn must be a function, got "x"'));
  });

  it('refuses what is not a plain options object, and unknown keys with the known ones listed', () => {
    expect(() => checkOptions('make', null, rules)).toThrow(new TypeError('make: options must be an object, got null'));
    expect(() => checkOptions('make', [1], rules)).toThrow(new TypeError('make: options must be a plain object, got an array'));
    expect(() => checkOptions('make', new Map(), rules)).toThrow(new TypeError('make: options must be a plain object, got a Map'));
    expect(() => checkOptions('make', { sise: 1 }, rules)).toThrow(new TypeError('make: unknown option "sise" (known: size, name)'));
  });

  it('reads own properties only, skips undefined, and fills the object it is given', () => {
    const inherited = Object.create({ size: -5, bogus: 1 }) as object;
    const into: Record<string, unknown> = { size: undefined, name: undefined };
    checkOptions('make', Object.assign(inherited, { name: 'a' }), rules, into);
    expect(into).toEqual({ size: undefined, name: 'a' });
    expect(() => checkOptions('make', { size: undefined }, rules)).not.toThrow();
  });

  it('readChecked returns every field, own values only, with no prototype to read through', () => {
    const values = readChecked('make', Object.assign(Object.create({ name: 'inherited' }) as object, { size: 2 }), rules);
    expect(Object.getPrototypeOf(values)).toBeNull();
    expect({ ...values }).toEqual({ size: 2, name: undefined });
  });
});
