import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  GCS_OPERATIONS,
  gcsIdempotency,
  gcsIsIdempotent,
  gcsPreconditionMet,
  type GcsOperation,
  type GcsPreconditions,
} from '../../src/presets/gcs.js';

/*
 * The expected classification, written out by hand from Cloud Storage's "Retry strategy" page
 * (https://cloud.google.com/storage/docs/retry-strategy), its section on the idempotency of
 * operations (quoted below from the German edition), rather than read back from the source,
 * so a wrong row in the source cannot make its own test pass.
 */
const ALWAYS: readonly GcsOperation[] = [
  // "Alle get- und list-Anfragen"
  'buckets.get',
  'buckets.list',
  'buckets.getIamPolicy',
  'objects.get',
  'objects.list',
  'hmacKeys.get',
  'hmacKeys.list',
  'notifications.get',
  'notifications.list',
  'bucketAccessControls.get',
  'bucketAccessControls.list',
  'objectAccessControls.get',
  'objectAccessControls.list',
  'defaultObjectAccessControls.get',
  'defaultObjectAccessControls.list',
  'serviceAccount.get',
  // "Buckets einfügen oder löschen"
  'buckets.insert',
  'buckets.delete',
  // IAM permissions test on buckets
  'buckets.testIamPermissions',
  // "Aufbewahrungsrichtlinien sperren"
  'buckets.lockRetentionPolicy',
  // "HMAC-Schlüssel oder Pub/Sub-Benachrichtigungen löschen"
  'hmacKeys.delete',
  'notifications.delete',
];

/** Conditional rows with the preconditions (any one suffices) that make each idempotent. */
const CONDITIONAL: ReadonlyArray<readonly [GcsOperation, readonly (keyof GcsPreconditions)[]]> = [
  ['buckets.patch', ['ifMetagenerationMatch', 'etag']],
  ['buckets.update', ['ifMetagenerationMatch', 'etag']],
  ['objects.patch', ['ifMetagenerationMatch', 'etag']],
  ['objects.update', ['ifMetagenerationMatch', 'etag']],
  ['buckets.setIamPolicy', ['etag']],
  ['hmacKeys.update', ['etag']],
  ['objects.insert', ['ifGenerationMatch']],
  ['objects.copy', ['ifGenerationMatch']],
  ['objects.compose', ['ifGenerationMatch']],
  ['objects.rewrite', ['ifGenerationMatch']],
  ['objects.delete', ['ifGenerationMatch', 'generation']],
];

const NEVER: readonly GcsOperation[] = [
  'hmacKeys.create',
  'notifications.insert',
  'bucketAccessControls.insert',
  'bucketAccessControls.delete',
  'bucketAccessControls.patch',
  'bucketAccessControls.update',
  'objectAccessControls.insert',
  'objectAccessControls.delete',
  'objectAccessControls.patch',
  'objectAccessControls.update',
  'defaultObjectAccessControls.insert',
  'defaultObjectAccessControls.delete',
  'defaultObjectAccessControls.patch',
  'defaultObjectAccessControls.update',
];

const CONDITIONAL_OPS = CONDITIONAL.map(([op]) => op);

/** One present, valid value per precondition field. */
const SAMPLE: Required<GcsPreconditions> = {
  ifGenerationMatch: 1700000000000001,
  ifMetagenerationMatch: 3,
  etag: 'CAE=',
  generation: '1700000000000001',
};

const ALL_FIELDS = Object.keys(SAMPLE) as (keyof GcsPreconditions)[];

const messageOf = (call: () => unknown): string => {
  try {
    call();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a throw');
};

/** Runtime-only misuse: lets tests pass values the types forbid without `any`. */
function loose<T>(value: unknown): T {
  return value as T;
}

describe('GCS_OPERATIONS', () => {
  it('lists exactly the operations of the three categories, each once', () => {
    const expected = [...ALWAYS, ...CONDITIONAL_OPS, ...NEVER];
    expect(new Set(expected).size).toBe(expected.length);
    expect([...GCS_OPERATIONS].sort()).toEqual([...expected].sort());
  });

  it('counts 22 always, 11 conditional and 14 never idempotent operations', () => {
    const count = (kind: string) => GCS_OPERATIONS.filter((op) => gcsIdempotency(op) === kind).length;
    expect([count('always'), count('conditional'), count('never')]).toEqual([22, 11, 14]);
  });

  it('is frozen', () => {
    expect(Object.isFrozen(GCS_OPERATIONS)).toBe(true);
    expect(() => (GCS_OPERATIONS as GcsOperation[]).push('objects.get')).toThrow(TypeError);
  });

  it('spells every name as resource.method', () => {
    for (const op of GCS_OPERATIONS) expect(op).toMatch(/^[a-zA-Z]+\.[a-zA-Z]+$/);
  });
});

describe('gcsIdempotency', () => {
  it.each(ALWAYS)('%s is always idempotent', (op) => {
    expect(gcsIdempotency(op)).toBe('always');
  });

  it.each(CONDITIONAL_OPS)('%s is conditionally idempotent', (op) => {
    expect(gcsIdempotency(op)).toBe('conditional');
  });

  it.each(NEVER)('%s is never idempotent', (op) => {
    expect(gcsIdempotency(op)).toBe('never');
  });

  it.each([
    ['objects.Get', 'objects.get'],
    ['object.get', 'objects.get'],
    ['OBJECTS.INSERT', 'objects.insert'],
    ['bucket.setIamPolicy', 'buckets.setIamPolicy'],
    ['buckets.get_iam_policy', 'buckets.getIamPolicy'],
    ['storage.objects.list', 'objects.list'],
    ['projects.hmacKeys.create', 'hmacKeys.create'],
    ['projects.serviceAccount.get', 'serviceAccount.get'],
    ['objects.pach', 'objects.patch'],
  ])('rejects %s with a TypeError suggesting %s', (input, suggestion) => {
    expect(() => gcsIdempotency(loose(input))).toThrow(TypeError);
    expect(() => gcsIdempotency(loose(input))).toThrow(`did you mean ${suggestion}?`);
    expect(() => gcsIdempotency(loose(input))).toThrow(JSON.stringify(input));
  });

  it('lists the methods of a known resource when no single name is close', () => {
    expect(() => gcsIdempotency(loose('notifications.create'))).toThrow(/notifications has get, list, delete, insert/);
  });

  it.each(['', 'frobnicate', 'objects.watchAll', 'channels.stop', 'toString', '__proto__', 'constructor'])(
    'rejects %j without a suggestion',
    (input) => {
      let message = '';
      try {
        gcsIdempotency(loose(input));
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError);
        message = (error as Error).message;
      }
      expect(message).toContain(JSON.stringify(input));
      expect(message).not.toContain('did you mean');
    },
  );

  it.each([
    [undefined, 'undefined'],
    [null, 'null'],
    [42, '42'],
    [Symbol('op'), 'Symbol(op)'],
    [{ operation: 'objects.get' }, '{"operation":"objects.get"}'],
    [['objects.get'], '["objects.get"]'],
  ])('rejects the non-string %s, naming it', (input, shown) => {
    expect(() => gcsIdempotency(loose(input))).toThrow(TypeError);
    expect(() => gcsIdempotency(loose(input))).toThrow(shown);
  });
});

describe('gcsPreconditionMet', () => {
  describe.each(CONDITIONAL)('%s', (op, enough) => {
    it('is not met without preconditions', () => {
      expect(gcsPreconditionMet(op, undefined)).toBe(false);
      expect(gcsPreconditionMet(op, {})).toBe(false);
      expect(gcsPreconditionMet(loose(op), loose(null))).toBe(false);
    });

    it.each(enough)('is met by %s alone', (field) => {
      expect(gcsPreconditionMet(op, { [field]: SAMPLE[field] })).toBe(true);
    });

    it('is not met by any other field alone', () => {
      for (const field of ALL_FIELDS.filter((f) => !enough.includes(f))) {
        expect(gcsPreconditionMet(op, { [field]: SAMPLE[field] }), field).toBe(false);
      }
    });

    it('treats undefined and null fields as absent', () => {
      const blanks = Object.fromEntries(ALL_FIELDS.map((f, i) => [f, i % 2 ? null : undefined]));
      expect(gcsPreconditionMet(op, loose(blanks))).toBe(false);
    });
  });

  it.each(['objects.insert', 'objects.copy', 'objects.compose', 'objects.rewrite', 'objects.delete'] as const)(
    'counts ifGenerationMatch 0 (create only if absent) as present for %s',
    (op) => {
      expect(gcsPreconditionMet(op, { ifGenerationMatch: 0 })).toBe(true);
      expect(gcsPreconditionMet(op, { ifGenerationMatch: '0' })).toBe(true);
      expect(gcsPreconditionMet(op, { ifGenerationMatch: 0n })).toBe(true);
    },
  );

  it('accepts generation only for objects.delete', () => {
    expect(gcsPreconditionMet('objects.delete', { generation: 5 })).toBe(true);
    for (const op of ['objects.insert', 'objects.copy', 'objects.compose', 'objects.rewrite', 'objects.patch'] as const) {
      expect(gcsPreconditionMet(op, { generation: 5 }), op).toBe(false);
    }
  });

  it('needs etag for buckets.setIamPolicy and hmacKeys.update; metageneration is not enough', () => {
    for (const op of ['buckets.setIamPolicy', 'hmacKeys.update'] as const) {
      expect(gcsPreconditionMet(op, { etag: 'BwWWja0YfJA=' })).toBe(true);
      expect(gcsPreconditionMet(op, { ifMetagenerationMatch: 1 })).toBe(false);
      expect(gcsPreconditionMet(op, { etag: '' })).toBe(false);
    }
  });

  it('accepts ifSourceGenerationMatch and other unrelated fields but ignores them', () => {
    const extra = loose<GcsPreconditions>({ ifSourceGenerationMatch: 4, ifGenerationNotMatch: 2, userProject: 'p' });
    expect(gcsPreconditionMet('objects.copy', extra)).toBe(false);
  });

  it('is true for always-idempotent and false for never-idempotent operations, whatever is given', () => {
    for (const op of ALWAYS) {
      expect(gcsPreconditionMet(op, undefined)).toBe(true);
      expect(gcsPreconditionMet(op, SAMPLE)).toBe(true);
    }
    for (const op of NEVER) {
      expect(gcsPreconditionMet(op, undefined)).toBe(false);
      expect(gcsPreconditionMet(op, SAMPLE)).toBe(false);
    }
  });

  it('accepts 64-bit generations as strings and bigints', () => {
    expect(gcsPreconditionMet('objects.insert', { ifGenerationMatch: '9223372036854775807' })).toBe(true);
    expect(gcsPreconditionMet('objects.insert', { ifGenerationMatch: 9223372036854775807n })).toBe(true);
    expect(gcsPreconditionMet('objects.insert', { ifGenerationMatch: Number.MAX_SAFE_INTEGER })).toBe(true);
  });

  it('rejects an unknown operation', () => {
    expect(() => gcsPreconditionMet(loose('objects.Insert'), {})).toThrow(/did you mean objects\.insert\?/);
  });

  describe('validation', () => {
    it.each([
      [5, '5'],
      ['ifGenerationMatch=0', '"ifGenerationMatch=0"'],
      [true, 'true'],
      [[], '[]'],
      [() => 0, 'function'],
    ])('rejects non-object preconditions %s', (value, shown) => {
      expect(() => gcsPreconditionMet('objects.insert', loose(value))).toThrow(TypeError);
      expect(() => gcsPreconditionMet('objects.insert', loose(value))).toThrow(shown);
    });

    const generationFields = ['ifGenerationMatch', 'ifMetagenerationMatch', 'generation'] as const;

    it.each([
      [NaN, 'NaN'],
      [-1, '-1'],
      [1.5, '1.5'],
      [Infinity, 'Infinity'],
      [Number.MAX_SAFE_INTEGER + 2, String(Number.MAX_SAFE_INTEGER + 2)],
      ['', '""'],
      ['-1', '"-1"'],
      ['1.5', '"1.5"'],
      [' 7', '" 7"'],
      ['0x10', '"0x10"'],
      ['9223372036854775808', '"9223372036854775808"'],
      [-1n, '-1n'],
      [9223372036854775808n, '9223372036854775808n'],
    ])('rejects generation-like value %s with a RangeError naming field and value', (value, shown) => {
      for (const field of generationFields) {
        const call = () => gcsPreconditionMet('objects.delete', loose({ [field]: value }));
        expect(call, field).toThrow(RangeError);
        expect(call, field).toThrow(field);
        expect(call, field).toThrow(shown);
      }
    });

    it.each([
      [true, 'true'],
      [{}, '{}'],
      [[1], '[1]'],
    ])('rejects generation-like value of the wrong type %s with a TypeError', (value, shown) => {
      for (const field of generationFields) {
        const call = () => gcsPreconditionMet('objects.delete', loose({ [field]: value }));
        expect(call, field).toThrow(TypeError);
        expect(call, field).toThrow(field);
        expect(call, field).toThrow(shown);
      }
    });

    it.each([
      [5, '5'],
      [true, 'true'],
      [{ etag: 'x' }, '{"etag":"x"}'],
    ])('rejects etag %s with a TypeError naming it', (value, shown) => {
      const call = () => gcsPreconditionMet('buckets.setIamPolicy', loose({ etag: value }));
      expect(call).toThrow(TypeError);
      expect(call).toThrow('etag');
      expect(call).toThrow(shown);
    });

    it('says to pass a generation past Number.MAX_SAFE_INTEGER as a string or bigint', () => {
      const call = () => gcsPreconditionMet('objects.insert', { ifGenerationMatch: 2 ** 60 });
      expect(call).toThrow(RangeError);
      expect(call).toThrow('pass a string or bigint');
      expect(gcsPreconditionMet('objects.insert', { ifGenerationMatch: (2n ** 60n).toString() })).toBe(true);
    });

    it('validates even when the operation does not need preconditions', () => {
      expect(() => gcsPreconditionMet('objects.get', { ifGenerationMatch: -1 })).toThrow(RangeError);
      expect(() => gcsPreconditionMet('hmacKeys.create', loose({ etag: 5 }))).toThrow(TypeError);
    });

    it.each([
      ['IfMetagenerationMatch', 'ifMetagenerationMatch'],
      ['if_generation_match', 'ifGenerationMatch'],
      ['ifGenerationMatc', 'ifGenerationMatch'],
      ['ETag', 'etag'],
      ['generations', 'generation'],
    ])('rejects the misspelled field %s, suggesting %s', (key, suggestion) => {
      const call = () => gcsPreconditionMet('objects.patch', loose({ [key]: 1 }));
      expect(call).toThrow(TypeError);
      expect(call).toThrow(`did you mean ${suggestion}?`);
    });
  });
});

describe('gcsIsIdempotent', () => {
  const ROWS: ReadonlyArray<readonly [string, GcsOperation, GcsPreconditions | undefined, boolean, boolean, boolean]> = [
    // label, operation, preconditions, always, conditional, never
    ['always op', 'objects.get', undefined, true, true, false],
    ['conditional op with its precondition', 'objects.insert', { ifGenerationMatch: 0 }, true, true, false],
    ['conditional op without it', 'objects.insert', undefined, true, false, false],
    ['conditional op with the wrong one', 'objects.insert', { etag: 'x' }, true, false, false],
    ['never op', 'hmacKeys.create', undefined, true, false, false],
    ['never op with preconditions', 'bucketAccessControls.patch', SAMPLE, true, false, false],
  ];

  it.each(ROWS)('%s: always/conditional/never', (_label, op, pre, always, conditional, never) => {
    expect(gcsIsIdempotent(op, pre, 'always')).toBe(always);
    expect(gcsIsIdempotent(op, pre, 'conditional')).toBe(conditional);
    expect(gcsIsIdempotent(op, pre, 'never')).toBe(never);
  });

  it('under "conditional" agrees with the table and gcsPreconditionMet for every operation', () => {
    for (const op of GCS_OPERATIONS) {
      for (const pre of [undefined, {}, SAMPLE]) {
        const kind = gcsIdempotency(op);
        const expected = kind === 'always' ? true : kind === 'never' ? false : gcsPreconditionMet(op, pre);
        expect(gcsIsIdempotent(op, pre, 'conditional'), op).toBe(expected);
      }
    }
  });

  it.each([['sometimes'], ['Always'], [''], [undefined], [1]])('rejects the strategy %s, naming it', (strategy) => {
    const call = () => gcsIsIdempotent('objects.get', undefined, loose(strategy));
    expect(call).toThrow(TypeError);
    expect(call).toThrow(strategy === undefined ? 'undefined' : String(strategy === '' ? '""' : strategy));
  });

  it('suggests the nearest strategy', () => {
    expect(() => gcsIsIdempotent('objects.get', undefined, loose('Conditonal'))).toThrow(/did you mean conditional\?/);
  });

  it('rejects unknown operations and bad preconditions under every strategy', () => {
    for (const strategy of ['always', 'conditional', 'never'] as const) {
      expect(() => gcsIsIdempotent(loose('object.get'), undefined, strategy)).toThrow(TypeError);
      expect(() => gcsIsIdempotent('objects.get', { ifGenerationMatch: NaN }, strategy)).toThrow(RangeError);
    }
  });
});

describe('properties', () => {
  const generation = fc.oneof(
    fc.nat(),
    fc.bigInt({ min: 0n, max: 9223372036854775807n }),
    fc.bigInt({ min: 0n, max: 9223372036854775807n }).map(String),
  );
  const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
  const preconditions: fc.Arbitrary<GcsPreconditions | undefined> = fc.option(
    fc.record(
      {
        ifGenerationMatch: maybe(generation),
        ifMetagenerationMatch: maybe(generation),
        etag: maybe(fc.string()),
        generation: maybe(generation),
      },
      { requiredKeys: [] },
    ),
    { nil: undefined },
  );
  const operation = fc.constantFrom(...GCS_OPERATIONS);

  it("'always' is true and 'never' is false for every operation, whatever the preconditions", () => {
    fc.assert(
      fc.property(operation, preconditions, (op, pre) => {
        expect(gcsIsIdempotent(op, pre, 'always')).toBe(true);
        expect(gcsIsIdempotent(op, pre, 'never')).toBe(false);
      }),
    );
  });

  it("'conditional' is never more permissive than 'always' nor stricter than 'never'", () => {
    fc.assert(
      fc.property(operation, preconditions, (op, pre) => {
        const conditional = gcsIsIdempotent(op, pre, 'conditional');
        if (gcsIdempotency(op) === 'always') expect(conditional).toBe(true);
        if (gcsIdempotency(op) === 'never') expect(conditional).toBe(false);
      }),
    );
  });

  it('a conditional operation is safe exactly when one of its preconditions is present', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CONDITIONAL), preconditions, ([op, enough], pre) => {
        const present = (field: keyof GcsPreconditions) => {
          const value = pre?.[field];
          return value !== undefined && value !== '';
        };
        expect(gcsPreconditionMet(op, pre)).toBe(enough.some(present));
      }),
    );
  });
});

describe("gcsIsIdempotent's strategy argument", () => {
  const checkStrategy = (strategy: string) => gcsIsIdempotent('objects.get', undefined, strategy as never);
  const expected = "Unknown Cloud Storage retry strategy \"sometimes\": expected 'always', 'conditional' or 'never'";

  it('suggests nothing for a word that is not close', () => {
    expect(messageOf(() => checkStrategy('sometimes'))).toBe(expected);
  });

  it('suggests within one edit for four letters or fewer, two for longer words', () => {
    expect(messageOf(() => checkStrategy('nevr'))).toMatch(/; did you mean never\?$/);
    expect(messageOf(() => checkStrategy('nexe'))).not.toContain('did you mean');
    expect(messageOf(() => checkStrategy('nev'))).not.toContain('did you mean');
    expect(messageOf(() => checkStrategy('nevxx'))).toMatch(/; did you mean never\?$/);
  });
});

describe('unknown Cloud Storage operations', () => {
  const generic = "expected a JSON API method name such as 'objects.get' or 'buckets.setIamPolicy'";

  it('suggest the first of two equally close names, in table order', () => {
    expect(messageOf(() => gcsIdempotency('buckets.xetIamPolicy' as never))).toBe(
      'Unknown Cloud Storage operation "buckets.xetIamPolicy": did you mean buckets.getIamPolicy?',
    );
  });

  it('drop the storage. and projects. prefixes only at the start', () => {
    expect(messageOf(() => gcsIdempotency('storage.objects.get' as never))).toMatch(/did you mean objects\.get\?$/);
    expect(messageOf(() => gcsIdempotency('projects.hmacKeys.create' as never))).toMatch(/did you mean hmacKeys\.create\?$/);
    expect(messageOf(() => gcsIdempotency('xstorage.objects.get' as never))).toBe(
      `Unknown Cloud Storage operation "xstorage.objects.get": ${generic}`,
    );
    expect(messageOf(() => gcsIdempotency('myprojects.hmacKeys.create' as never))).toBe(
      `Unknown Cloud Storage operation "myprojects.hmacKeys.create": ${generic}`,
    );
  });

  it('list the methods of a known resource, and nothing more for a name without a resource or an unknown one', () => {
    expect(messageOf(() => gcsIdempotency('objects.frob' as never))).toBe(
      `Unknown Cloud Storage operation "objects.frob": ${generic}; objects has get, list, insert, copy, compose, rewrite, delete, patch, update`,
    );
    expect(messageOf(() => gcsIdempotency('objectsx' as never))).toBe(`Unknown Cloud Storage operation "objectsx": ${generic}`);
    expect(messageOf(() => gcsIdempotency('widgets.get' as never))).toBe(`Unknown Cloud Storage operation "widgets.get": ${generic}`);
  });

  it('describe what they got when it is not a string', () => {
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    const prefix = "Cloud Storage operation must be a string such as 'objects.get'; got ";
    expect(messageOf(() => gcsIdempotency(-0 as never))).toBe(`${prefix}0`);
    expect(messageOf(() => gcsIdempotency(cyclic as never))).toBe(`${prefix}[object Object]`);
    const bare = Object.create(null) as { self?: unknown }; // no toString to fall back on
    bare.self = bare;
    expect(messageOf(() => gcsIdempotency(bare as never))).toBe(`${prefix}[object Object]`);
    expect(messageOf(() => gcsIdempotency(function objectsGet() {} as never))).toBe(`${prefix}a function (objectsGet)`);
    expect(messageOf(() => gcsIdempotency(Object.defineProperty(() => 1, 'name', { value: '' }) as never))).toBe(
      `${prefix}a function (anonymous)`,
    );
    expect(messageOf(() => gcsIdempotency(null as never))).toBe(`${prefix}null`);
    expect(messageOf(() => gcsIdempotency(Symbol('op') as never))).toBe(`${prefix}Symbol(op)`);
  });

  it('take a generation of -0 as 0', () => {
    expect(gcsPreconditionMet('objects.delete', { generation: -0 })).toBe(true);
  });
});
