/**
 * The closest of `words` to what was written, for "did you mean …?": the one fewest edits away (an edit adds, drops,
 * changes or swaps two neighbouring letters; case is ignored), if that is at most 40% of its length.
 */
function closest(written: string, words: readonly string[]): string | undefined {
  let best: { word: string; distance: number } | undefined;
  for (const word of words) {
    const distance = edits(written.toLowerCase(), word.toLowerCase());
    if (distance <= word.length * 0.4 && (best === undefined || distance < best.distance)) best = { word, distance };
  }
  return best?.word;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of adjacent letters. */
function edits(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * What a discriminated union says of a value that names none of its kinds: the kinds it has (its options without
 * `undefined`, which a kind with a default adds) and the closest one.
 */
export function unknownKind(value: unknown, options: readonly unknown[]): string {
  const kinds = options.filter((option): option is string => typeof option === 'string');
  const near = typeof value === 'string' ? closest(value, kinds) : undefined;
  const given = value === undefined ? '' : ` ${JSON.stringify(value)}`;
  const hint = near ? ` did you mean "${near}"?` : '';
  return `Invalid option${given}:${hint} expected one of ${kinds.map((kind) => `"${kind}"`).join('|')}`;
}
