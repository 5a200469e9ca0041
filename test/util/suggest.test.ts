// util/suggest.ts: the "did you mean" of every options reader, the config readers and the CLI.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeName, suggest } from '../../src/util/suggest.js';

describe('suggest', () => {
  it('counts two swapped letters as one slip, so "bukcet" is "bucket", not "budget" listed first', () => {
    expect(suggest('bukcet', ['budget', 'bucket'])).toBe('bucket');
    expect(suggest('maxAtetmpts', ['maxAttempts', 'deadlineMs'])).toBe('maxAttempts');
  });

  it('ignores case, underscores, dashes and spaces', () => {
    expect(suggest('MAX_ATTEMPTS', ['deadlineMs', 'maxAttempts'])).toBe('maxAttempts');
    expect(normalizeName('get_iam-Policy x')).toBe('getiampolicyx');
  });

  it('corrects a short name by one edit at most, a longer one by two, and leaves an unrelated word alone', () => {
    expect(suggest('sze', ['size'])).toBe('size');
    expect(suggest('sx', ['size'])).toBeUndefined();
    expect(suggest('dedline', ['deadlineMs'])).toBeUndefined();
    expect(suggest('retries', ['maxAttempts', 'deadlineMs', 'retryable'])).toBeUndefined();
  });

  it('property: a name in any case is its own suggestion, and a short one with two neighbours swapped is corrected back', () => {
    // Four letters or fewer are corrected by one slip only: a swap must count as one.
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{3,4}$/), fc.nat(), (name, at) => {
        expect(suggest(name.toUpperCase(), [name])).toBe(name);
        const i = at % (name.length - 1);
        const swapped = name.slice(0, i) + (name[i + 1] as string) + (name[i] as string) + name.slice(i + 2);
        expect(suggest(swapped, [name])).toBe(name);
      }),
    );
  });
});
