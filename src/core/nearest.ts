/**
 * The known name nearest a misspelt one, for "did you mean …?" in error messages (a verifier's
 * name, an ASSAY_* variable). Edit distance with swaps (optimal string alignment), case-insensitive, over short names: each
 * call is O(|a|·|b|) per candidate, and callers pass names, never model text (`a` is cut to 64
 * characters, so a hostile name costs no more than a short one).
 */

/** Edits (insert, delete, replace, swap two neighbours) between `a` and `b`: "exatc" is 1 from "exact". */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      cur[j] = d;
    }
    before = prev;
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * The candidate nearest `name`, when it is near enough to be what was meant: at most a third of
 * the longer name's length apart (at least 1, at most 4 edits). Ties go to the first candidate.
 */
export function nearest(name: string, candidates: Iterable<string>): string | undefined {
  const a = name.slice(0, 64).toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(a, c.toLowerCase());
    const limit = Math.min(4, Math.max(1, Math.floor(Math.max(a.length, c.length) / 3)));
    if (d <= limit && d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return best;
}

/** "; did you mean X?" when a near name exists, else "". */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const n = nearest(name, candidates);
  return n === undefined ? "" : `; did you mean ${n}?`;
}
