/** Edit distance (insertions, deletions, substitutions, swaps of neighbours) between two words. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known word `word` was most likely meant to be — ignoring case, a typo (at most a third of
 * its letters off, and at most 2) or a prefix of at least 3 letters — spelt as in `known`, or
 * `undefined` when none is close.
 */
export function closestWord(word: string, known: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  const prefixed = typed.length >= 3 ? known.filter((k) => k.toLowerCase().startsWith(typed)) : [];
  if (prefixed.length === 1) return prefixed[0];
  const limit = Math.min(2, Math.max(1, Math.floor(typed.length / 3)));
  let best: { word: string; distance: number } | undefined;
  for (const k of known) {
    const dist = distance(typed, k.toLowerCase());
    if (dist <= limit && (best === undefined || dist < best.distance)) best = { word: k, distance: dist };
  }
  return best?.word;
}
