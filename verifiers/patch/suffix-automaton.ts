/**
 * `find_longest_match` for SequenceMatcher without junk (isjunk=None, autojunk=False, SWE-RL's
 * setting) in linear time, with a suffix automaton over b[blo:bhi].
 *
 * Without junk and without popular elements difflib's answer is the longest common substring of
 * a[alo:ahi] and b[blo:bhi] (its extension loops can add nothing), and among the longest ones the
 * one that ends first in `a`, then the one that starts first in `b`: difflib scans i upwards
 * keeping the first strictly longer match, and for one i scans j upwards. Walking `a` through an
 * automaton of the b range gives, at each i, the longest substring ending at i that occurs in the
 * range, and the automaton state's first end position in b gives its first (smallest) j. Same
 * answer, O(len(a) + len(b)) per call instead of difflib's O(Σ occurrences).
 */
import { IntMap } from "../../src/core/int-map.js";

/**
 * Longest match as difflib's find_longest_match (no junk) would report it: [i, j, size].
 * `a` and `b` hold symbols in [0, alphabet).
 */
export function longestMatchSam(
  a: ArrayLike<number>, b: ArrayLike<number>, alphabet: number, alo: number, ahi: number, blo: number, bhi: number,
): [number, number, number] {
  const SYMBOLS = Math.max(alphabet, 1);
  const m = bhi - blo;
  if (m <= 0 || ahi <= alo) return [alo, blo, 0];
  const maxStates = 2 * m + 1;
  const len = new Int32Array(maxStates);
  const link = new Int32Array(maxStates);
  const firstpos = new Int32Array(maxStates);
  // Each state's outgoing edges as a linked list (to copy them when cloning) plus a hash for lookup.
  const maxEdges = 3 * m + 4;
  const edgeSym = new Int32Array(maxEdges);
  const edgeNext = new Int32Array(maxEdges);
  const head = new Int32Array(maxStates).fill(-1);
  const trans = new IntMap(maxEdges, (maxStates + 1) * SYMBOLS);
  let edges = 0;
  const addEdge = (state: number, sym: number, to: number) => {
    edgeSym[edges] = sym;
    edgeNext[edges] = head[state];
    head[state] = edges++;
    trans.set(state * SYMBOLS + sym, to);
  };
  link[0] = -1;
  let size = 1, last = 0;
  for (let pos = blo; pos < bhi; pos++) {
    const c = b[pos];
    const cur = size++;
    len[cur] = len[last] + 1;
    firstpos[cur] = pos;
    let p = last;
    while (p !== -1 && trans.get(p * SYMBOLS + c) === -1) {
      addEdge(p, c, cur);
      p = link[p];
    }
    if (p === -1) link[cur] = 0;
    else {
      const q = trans.get(p * SYMBOLS + c);
      if (len[p] + 1 === len[q]) link[cur] = q;
      else {
        const clone = size++;
        len[clone] = len[p] + 1;
        firstpos[clone] = firstpos[q];
        link[clone] = link[q];
        for (let e = head[q]; e !== -1; e = edgeNext[e]) addEdge(clone, edgeSym[e], trans.get(q * SYMBOLS + edgeSym[e]));
        while (p !== -1 && trans.get(p * SYMBOLS + c) === q) {
          trans.set(p * SYMBOLS + c, clone);
          p = link[p];
        }
        link[q] = clone;
        link[cur] = clone;
      }
    }
    last = cur;
  }
  let v = 0, l = 0, best = 0, besti = alo, bestj = blo;
  for (let i = alo; i < ahi; i++) {
    const c = a[i];
    let t = trans.get(v * SYMBOLS + c);
    while (t === -1 && v !== 0) {
      v = link[v];
      l = len[v];
      t = trans.get(v * SYMBOLS + c);
    }
    if (t === -1) { v = 0; l = 0; }
    else { v = t; l++; }
    if (l > best) {
      best = l;
      besti = i - l + 1;
      bestj = firstpos[v] - l + 1;
    }
  }
  return [besti, bestj, best];
}
