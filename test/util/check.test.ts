// util/check.ts: describe() renders the bad value in every validation message (each kind of value
// once), and checkOptions / mustError / readChecked give every module the same option errors.
import { describe as group, expect, it } from 'vitest';
import { retry } from '../../src/index.js';
import {
  FUNCTION,
  type FieldRules,
  SIGNAL,
  answerOf,
  atLeast,
  checkOptions,
  describe,
  drawFrom,
  ignoreRejection,
  leftOut,
  mustError,
  ownFields,
  readChecked,
  wholeAtLeast,
} from '../../src/util/check.js';

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

  it('names objects that are not plain or arrays by their kind: JSON would write a Map as {}', () => {
    expect(describe(new Map([['a', 1]]))).toBe('a Map');
    expect(describe(new Date(0))).toBe('a Date');
    expect(describe(new AbortController().signal)).toBe('an AbortSignal');
    expect(describe(new TypeError('x'))).toBe('an Error');
    expect(describe([1, 'a'])).toBe('[1,"a"]');
    expect(describe(Object.create(null))).toBe('{}');
  });

  it('says "a", not "an", before a kind whose first letter is no vowel, whatever vowels follow', () => {
    expect(describe(new Float64Array(1))).toBe('a Float64Array');
    expect(describe(new WeakMap())).toBe('a WeakMap');
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
    expect(() => checkOptions('make', [1], rules)).toThrow(new TypeError('make: options must be a plain object, got [1]'));
    expect(() => checkOptions('make', new Map(), rules)).toThrow(new TypeError('make: options must be a plain object, got a Map'));
    expect(() => checkOptions('make', { colour: 1 }, rules)).toThrow(new TypeError('make: unknown option "colour" (known: size, name)'));
  });

  it('names a nested object or an argument of another name by its path', () => {
    expect(() => checkOptions('make', { size: 0 }, rules, undefined, 'options.part')).toThrow(
      new RangeError('make: options.part.size must be a number > 0, got 0'),
    );
    expect(() => readChecked('make', { colour: 1 }, rules, 'target')).toThrow(
      new TypeError('make: unknown option "colour" in target (known: size, name)'),
    );
    expect(() => readChecked('make', 'big', rules, 'target')).toThrow(new TypeError('make: target must be an object, got "big"'));
  });

  it('reads own properties only, skips undefined, and fills the object it is given', () => {
    const inherited = Object.create({ size: -5, bogus: 1 }) as object;
    const into: Record<string, unknown> = { size: undefined, name: undefined };
    checkOptions('make', Object.assign(inherited, { name: 'a' }), rules, into);
    expect(into).toEqual({ size: undefined, name: 'a' });
    expect(() => checkOptions('make', { size: undefined }, rules)).not.toThrow();
  });

  it('takes an options literal as plain even when Object.prototype was given a Symbol.toStringTag (pollution)', () => {
    const proto = Object.prototype as { [Symbol.toStringTag]?: string };
    let read: unknown;
    proto[Symbol.toStringTag] = 'Polluted';
    try {
      // Asserted after the clean-up: the assertion library reads the tag too.
      read = readChecked('make', { name: 'a' }, rules).name;
    } catch (error) {
      read = error;
    } finally {
      delete proto[Symbol.toStringTag];
    }
    expect(read).toBe('a');
    // A literal that says it is something else is taken at its word.
    expect(() => checkOptions('make', { [Symbol.toStringTag]: 'Object' }, rules)).toThrow(
      new TypeError('make: options must be a plain object, got {}'),
    );
  });

  it('readChecked returns every field, own values only, with no prototype to read through', () => {
    const values = readChecked('make', Object.assign(Object.create({ name: 'inherited' }) as object, { size: 2 }), rules);
    expect(Object.getPrototypeOf(values)).toBeNull();
    expect({ ...values }).toEqual({ size: 2, name: undefined });
  });
});

group('the shared rules and helpers', () => {
  it('SIGNAL takes what has aborted and both listener methods, and nothing less', () => {
    expect(SIGNAL.ok(new AbortController().signal)).toBe(true);
    expect(SIGNAL.ok({ aborted: false, addEventListener() {}, removeEventListener() {} })).toBe(true);
    expect(SIGNAL.ok({ addEventListener() {}, removeEventListener() {} })).toBe(false);
    expect(SIGNAL.ok({ aborted: false, addEventListener() {} })).toBe(false);
    expect(SIGNAL.ok(null)).toBe(false);
  });

  it('atLeast and wholeAtLeast say their bound, and hold it', () => {
    const rules = { delay: atLeast(0), copies: wholeAtLeast(1) };
    expect(() => checkOptions('make', { delay: -0.5 }, rules)).toThrow(
      new RangeError('make: options.delay must be a finite number >= 0, got -0.5'),
    );
    expect(() => checkOptions('make', { delay: Number.POSITIVE_INFINITY }, rules)).toThrow(RangeError);
    expect(() => checkOptions('make', { delay: 0, copies: 1 }, rules)).not.toThrow();
    expect(() => checkOptions('make', { copies: 1.5 }, rules)).toThrow(
      new RangeError('make: options.copies must be a safe integer >= 1, got 1.5'),
    );
    expect(() => checkOptions('make', { copies: 0 }, rules)).toThrow(RangeError);
  });

  it('leftOut refuses any value but undefined, saying why', () => {
    const rules = { retryOnResult: leftOut('uploads judge by protocol') };
    expect(() => checkOptions('upload', { retryOnResult: undefined }, rules)).not.toThrow();
    expect(() => checkOptions('upload', { retryOnResult: false }, rules)).toThrow(
      new TypeError('upload: options.retryOnResult must be left out (uploads judge by protocol), got false'),
    );
  });

  it('answerOf takes what a predicate returned as a boolean, null and undefined as false; a promise is refused', async () => {
    expect(answerOf('make', 'retryable', undefined)).toBe(false);
    expect(answerOf('make', 'retryable', null)).toBe(false);
    expect(answerOf('make', 'retryable', 1)).toBe(true);
    expect(() => answerOf('make', 'retryable', Promise.resolve(false))).toThrow(
      new TypeError('make: options.retryable must return a boolean, got a promise'),
    );
    // As retry() asks it: a predicate that returns nothing means "do not retry".
    const busy = new Error('busy');
    let attempts = 0;
    const failing = () => {
      attempts++;
      throw busy;
    };
    await expect(retry(failing, { retryable: () => undefined as unknown as boolean })).rejects.toBe(busy);
    await expect(retry(failing, { retryable: () => null as unknown as boolean })).rejects.toBe(busy);
    expect(attempts).toBe(2);
  });

  it('drawFrom checks every draw, naming where the rng came from', () => {
    expect(drawFrom(() => 0.25, 'make: options.rng')).toBe(0.25);
    expect(drawFrom(() => 1, 'make: options.rng')).toBe(1);
    expect(() => drawFrom(() => 1.01, 'make: options.rng')).toThrow(
      new RangeError('make: options.rng must return a number in [0, 1], got 1.01'),
    );
    expect(() => drawFrom(() => Number.NaN, 'x')).toThrow(RangeError);
    expect(() => drawFrom(() => '0.5' as unknown as number, 'x')).toThrow(RangeError);
  });

  it('ignoreRejection handles what any thenable rejects with, and never throws, whatever its then does', async () => {
    const later = new Error('later');
    const rejected = Promise.reject(later);
    ignoreRejection(rejected);
    // An odd thenable: its then is called (by Promise.resolve, a microtask later) with handlers that are used.
    let calls = 0;
    ignoreRejection({
      then(_: unknown, reject: (e: unknown) => void) {
        calls++;
        reject(later);
      },
    });
    ignoreRejection({
      then() {
        throw later;
      },
    });
    ignoreRejection(
      Object.defineProperty({}, 'then', {
        get() {
          throw later;
        },
      }),
    );
    for (const plain of [undefined, null, 0, 'x', {}, { then: 1 }]) expect(() => ignoreRejection(plain)).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toBe(1);
    // No unhandled rejection: test/setup/fail-on-unhandled.ts fails this test otherwise.
  });

  it('ownFields copies own fields of a plain object only', () => {
    const fields = ownFields('make: target.headers', Object.assign(Object.create({ inherited: 'x' }) as object, { a: '1' }));
    expect(Object.getPrototypeOf(fields)).toBeNull();
    expect({ ...fields }).toEqual({ a: '1' });
    expect(() => ownFields('make: target.headers', new Map())).toThrow(
      new TypeError('make: target.headers must be a plain object, got a Map'),
    );
    expect(() => ownFields('make: target.headers', 'a: b')).toThrow(new TypeError('make: target.headers must be an object, got "a: b"'));
  });
});

group('an unknown option: the closest known one, else the list', () => {
  const rules: FieldRules = { maxAttempts: FUNCTION, deadlineMs: FUNCTION, size: FUNCTION };

  it('suggests the closest known option for a typo, as the config readers and the CLI do', () => {
    expect(() => checkOptions('make', { maxAtempts: 3 }, rules)).toThrow(
      new TypeError('make: unknown option "maxAtempts" (did you mean "maxAttempts"?)'),
    );
    // Case, underscores and dashes do not count against a name.
    expect(() => checkOptions('make', { max_attempts: 3 }, rules)).toThrow(
      new TypeError('make: unknown option "max_attempts" (did you mean "maxAttempts"?)'),
    );
    expect(() => readChecked('make', { deadlineMS: 3 }, rules, 'options.part')).toThrow(
      new TypeError('make: unknown option "deadlineMS" in options.part (did you mean "deadlineMs"?)'),
    );
  });

  it('lists the known options when none is close', () => {
    expect(() => checkOptions('make', { retries: 3 }, rules)).toThrow(
      new TypeError('make: unknown option "retries" (known: maxAttempts, deadlineMs, size)'),
    );
    // A short name is corrected by one edit at most: "sx" is not "size".
    expect(() => checkOptions('make', { sx: 3 }, rules)).toThrow(
      new TypeError('make: unknown option "sx" (known: maxAttempts, deadlineMs, size)'),
    );
  });
});
