// util/suggest.ts: the "did you mean" of every options reader, the config readers and the CLI.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeName, suggest } from '../../src/util/suggest.js';

/** Optimal string alignment distance, written plainly (the whole table): what suggest() must agree with. */
function referenceDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      row[j] = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

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

  it('property: suggests a candidate exactly when its distance (swaps counting one) is within the limit: one edit up to four letters, two above', () => {
    const word = fc.stringMatching(/^[abc]{0,6}$/);
    fc.assert(
      fc.property(word, word, (input, candidate) => {
        const limit = input.length <= 4 ? 1 : 2;
        const expected = referenceDistance(input, candidate) <= limit ? candidate : undefined;
        expect(suggest(input, [candidate], (name) => name)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
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
