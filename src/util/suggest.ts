/**
 * "Did you mean …?" for names a caller may misspell (Cloud Storage operations, strategies and
 * precondition fields). Pure.
 *
 * @internal
 */

/** Lower case, without underscores, dashes or spaces: `get_iam_policy` reads as `getIamPolicy`. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[_\-\s]/g, '');
}

/**
 * The candidate closest to `input` after `normalize`: the first at the smallest edit distance,
 * if that distance is small (one edit for names of four letters or fewer, two otherwise, so
 * that unrelated short words are not "corrected").
 *
 * @example
 * suggest('nevr', ['always', 'never'], normalizeName); // 'never'
 */
export function suggest<T extends string>(
  input: string,
  candidates: readonly T[],
  normalize: (name: string) => string = normalizeName,
): T | undefined {
  const wanted = normalize(input);
  let best: T | undefined;
  let bestDistance = wanted.length <= 4 ? 2 : 3;
  for (const candidate of candidates) {
    const distance = editDistance(wanted, normalize(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Edit distance counting two swapped neighbours as one edit (optimal string alignment): "bukcet"
 * is one slip from "bucket", and must not lose to "budget", two substitutions away. Two rolling
 * rows and the one before them; the names here are a few dozen characters.
 */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let before = previous; // read from the second row on, once it is the row two above

  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      let best = Math.min(
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
      );
      // A swap of neighbours (off either string's start, a character reads as undefined: no match).
      if (a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (before[j - 2] as number) + 1);
      current[j] = best;
    }
    before = previous;
    previous = current;
  }
  return previous[b.length] as number;
}
