// The document reader shared by the Google readers: paths, errors that name the path and the
// value, unknown keys with the closest known one, status codes and numbers.
import { describe, expect, it } from 'vitest';
import { docError, lookUp, pathOf, readFields, readMap, readNumber, readStatusCodes } from '../../src/google/config-doc.js';
import { thrown } from '../helpers/thrown.js';

describe('pathOf', () => {
  it('joins with a point, indexes with brackets, and has no point at the root', () => {
    expect(pathOf('', 'methodConfig')).toBe('methodConfig');
    expect(pathOf('methodConfig', 0)).toBe('methodConfig[0]');
    expect(pathOf('methodConfig[0]', 'name')).toBe('methodConfig[0].name');
  });
});

describe('docError', () => {
  it('is a TypeError naming the path and the value, or a RangeError when asked', () => {
    const type = docError('w', 'a.b', 'be a list', 3);
    expect(type).toBeInstanceOf(TypeError);
    expect(type.message).toBe('w: a.b must be a list, got 3');
    const range = docError('w', 'a', 'be > 0', -1, true);
    expect(range).toBeInstanceOf(RangeError);
    expect(range.message).toBe('w: a must be > 0, got -1');
    expect(docError('w', '', 'be an object', null).message).toBe('w: the document must be an object, got null');
  });
});

describe('readFields', () => {
  it('names the closest known key, or lists the known keys when none is close', () => {
    expect(thrown(() => readFields('w', 'p', { alpah: 1 }, ['alpha', 'beta']))).toEqual(
      new TypeError('w: unknown field "alpah" in p (did you mean "alpha"?)'),
    );
    expect(thrown(() => readFields('w', 'p', { qqqqqq: 1 }, ['alpha', 'beta']))).toEqual(
      new TypeError('w: unknown field "qqqqqq" in p (known: alpha, beta)'),
    );
    expect(thrown(() => readFields('w', '', { qqqqqq: 1 }, ['alpha']))).toEqual(
      new TypeError('w: unknown field "qqqqqq" at the top of the document (known: alpha)'),
    );
  });

  it('reads snake_case as camelCase only when asked', () => {
    expect({ ...readFields('w', 'p', { max_tokens: 3 }, ['maxTokens'], true) }).toEqual({ maxTokens: 3 });
    expect(() => readFields('w', 'p', { max_tokens: 3 }, ['maxTokens'])).toThrow(TypeError);
  });
});

describe('readMap', () => {
  it('takes any key of an object, and refuses what is no object', () => {
    expect({ ...readMap('w', 'p', { any: 1, other: 2 }) }).toEqual({ any: 1, other: 2 });
    for (const value of [null, undefined, 'ab', 3, ['x']])
      expect(thrown(() => readMap('w', 'p', value))).toEqual(
        new TypeError(`w: p must be an object, got ${value === undefined ? 'undefined' : JSON.stringify(value)}`),
      );
  });
});

describe('lookUp', () => {
  it('finds an own entry, and names the closest or the known ones otherwise', () => {
    expect(lookUp('w', 'p', 'method', 'a', { a: 1 })).toBe(1);
    expect(thrown(() => lookUp('w', 'p', 'method', 'toString', {}))).toEqual(
      new TypeError('w: no method "toString" in p (there are none)'),
    );
    expect(thrown(() => lookUp('w', 'p', 'method', 'qqqqqq', { alpha: 1 }))).toEqual(
      new TypeError('w: no method "qqqqqq" in p (known: alpha)'),
    );
  });
});

describe('readStatusCodes', () => {
  it('reads names in any case and the numbers 0 to 16', () => {
    expect(readStatusCodes('w', 'p', ['unavailable', 'DEADLINE_EXCEEDED', 0, 16])).toEqual([14, 4, 0, 16]);
  });

  it('refuses a number out of 0 to 16 or not whole with a RangeError', () => {
    for (const code of [-1, 17, 1.5, Number.NaN]) {
      const error = thrown(() => readStatusCodes('w', 'p', [2, code]));
      expect(error).toBeInstanceOf(RangeError);
      expect(error.message).toBe(`w: p[1] must be a gRPC status code from 0 to 16, got ${code}`);
    }
  });

  it('refuses what is no list, no name and no number, with the exact message', () => {
    expect(thrown(() => readStatusCodes('w', 'p', 'UNAVAILABLE'))).toEqual(
      new TypeError('w: p must be a list of gRPC status codes, got "UNAVAILABLE"'),
    );
    expect(thrown(() => readStatusCodes('w', 'p', [null]))).toEqual(
      new TypeError('w: p[0] must be a gRPC status code name or number, got null'),
    );
  });

  it('names the closest code name, and no hint when none is close', () => {
    expect(thrown(() => readStatusCodes('w', 'p', ['UNAVAILABEL']))).toEqual(
      new TypeError('w: p[0] must be a gRPC status code name such as "UNAVAILABLE", got "UNAVAILABEL" (did you mean "UNAVAILABLE"?)'),
    );
    expect(thrown(() => readStatusCodes('w', 'p', ['zzzzzzzz']))).toEqual(
      new TypeError('w: p[0] must be a gRPC status code name such as "UNAVAILABLE", got "zzzzzzzz"'),
    );
  });
});

describe('readNumber', () => {
  const positive = (v: number) => v > 0;

  it('returns a finite number that passes the rule', () => {
    expect(readNumber('w', 'p', 2.5, positive, 'be > 0')).toBe(2.5);
  });

  it('refuses what is no number with a TypeError, and a number out of range with a RangeError', () => {
    const text = thrown(() => readNumber('w', 'p', '5', positive, 'be > 0'));
    expect(text).toBeInstanceOf(TypeError);
    expect(text.message).toBe('w: p must be > 0, got "5"');
    for (const value of [0, Number.POSITIVE_INFINITY, Number.NaN]) {
      const error = thrown(() => readNumber('w', 'p', value, positive, 'be > 0'));
      expect(error).toBeInstanceOf(RangeError);
      expect(error.message).toBe(`w: p must be > 0, got ${value}`);
    }
  });
});
