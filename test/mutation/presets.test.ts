// Edges of the presets that their main tests (test/presets/*) leave open, found by mutation
// testing: exact messages, typo suggestions at their limits, and values of the wrong kind.
import { describe, expect, it } from 'vitest';
import { checkStrategy, gcsIdempotency, gcsPreconditionMet } from '../../src/presets/gcs-operations.js';
import { gcs } from '../../src/presets/gcs.js';
import { iam, iamReadModifyWrite } from '../../src/presets/iam.js';
import { readOptions } from '../../src/core/options.js';

const messageOf = (call: () => unknown): string => {
  try {
    call();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a throw');
};

describe('the shared presets', () => {
  // They are constants, validated by the first retry() that gets them rather than at import.
  it('pass retry()\'s validation as they are, and are the same object call after call', () => {
    const presets = [iam(), iam({ retryNotFound: true }), gcs({ operation: 'objects.get' }), gcs({ operation: 'objects.insert' })];
    for (const preset of presets) {
      expect(Object.isFrozen(preset)).toBe(true);
      expect(() => readOptions(preset)).not.toThrow();
    }
    expect(new Set(presets).size).toBe(4);
    expect(iam()).toBe(presets[0]);
    expect(gcs({ operation: 'objects.insert' })).toBe(presets[3]);
  });
});

describe('preset option errors', () => {
  it('re-issue only retry()\'s own TypeError/RangeError; anything else a check meets passes through as it is', () => {
    const boom = new Error('budget getter exploded');
    const budget = {
      get record(): never {
        throw boom;
      },
      canRetry: () => true,
    };
    let thrown: unknown;
    try {
      iam({ budget } as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBe(boom);
  });
});

describe('checkStrategy', () => {
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
    expect(messageOf(() => gcsIdempotency('xstorage.objects.get' as never))).toBe(`Unknown Cloud Storage operation "xstorage.objects.get": ${generic}`);
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
    expect(messageOf(() => gcsIdempotency(-0 as never))).toBe(`${prefix}-0`);
    expect(messageOf(() => gcsIdempotency(cyclic as never))).toBe(`${prefix}[object Object]`);
    const bare = Object.create(null) as { self?: unknown }; // no toString to fall back on
    bare.self = bare;
    expect(messageOf(() => gcsIdempotency(bare as never))).toBe(`${prefix}[object Object]`);
    expect(messageOf(() => gcsIdempotency(function objectsGet() {} as never))).toBe(`${prefix}function objectsGet`);
    expect(messageOf(() => gcsIdempotency(Object.defineProperty(() => 1, 'name', { value: '' }) as never))).toBe(
      `${prefix}function (anonymous)`,
    );
    expect(messageOf(() => gcsIdempotency(null as never))).toBe(`${prefix}null`);
    expect(messageOf(() => gcsIdempotency(Symbol('op') as never))).toBe(`${prefix}Symbol(op)`);
  });

  it('take a generation of -0 as 0', () => {
    expect(gcsPreconditionMet('objects.delete', { generation: -0 })).toBe(true);
  });
});

describe('gcs()', () => {
  it('refuses idempotent together with preconditions', () => {
    // @ts-expect-error the type refuses it too
    expect(messageOf(() => gcs({ idempotent: true, preconditions: { ifGenerationMatch: 0 } }))).toBe(
      'gcs: options.idempotent decides by itself whether to resend; drop it, or drop operation, preconditions and strategy',
    );
  });

  it('explains in full why it needs an operation', () => {
    // @ts-expect-error the type refuses it too
    expect(messageOf(() => gcs())).toBe(
      "gcs: options.operation is required under strategy 'conditional' (the default): name the JSON API method, " +
        "e.g. gcs({ operation: 'objects.get' }), so the preset can tell whether the request is safe to resend; " +
        "or decide yourself with strategy: 'always' or idempotent: true",
    );
  });
});

describe('iam() and iamReadModifyWrite()', () => {
  it('refuse a backoff of null, and a jitter of null, by what they are', () => {
    expect(messageOf(() => iam({ backoff: null as never }))).toBe('iam: options.backoff must be an object, got null');
    expect(messageOf(() => iam({ backoff: { jitter: null as never } }))).toMatch(/^iam: options\.backoff\.jitter must be 'none', 'full', 'equal'/);
  });

  it('say steps must be an object when they are not', () => {
    expect(messageOf(() => iamReadModifyWrite('steps' as never))).toBe(
      'iamReadModifyWrite: steps must be an object { read, modify, write }, got "steps"',
    );
  });
});
