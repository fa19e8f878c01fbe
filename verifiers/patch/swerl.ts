/**
 * SWE-RL's reward (Wei et al. 2025, "SWE-RL: Advancing LLM Reasoning via Reinforcement Learning
 * on Open Software Evolution", arXiv:2502.18449; reference code src/swerl/core/reward.py in
 * facebookresearch/swe-rl), in its two input forms:
 *
 * - search/replace (the paper's own): the completion is `<think>…</think><solution>…</solution>`
 *   with fenced `### path` / `<<<<<<< SEARCH` / `=======` / `>>>>>>> REPLACE` edits; they are
 *   applied to the given files, each changed file is normalised to a `difflib.unified_diff`
 *   (n=3, headers dropped) against its original, and compared with the oracle's the same way.
 * - unified diff (the form verl's SWE-RL port scores): the completion's patch and the oracle patch
 *   are split per file with npm `diff`'s `parsePatch`, each file normalised to its hunks
 *   ("@@ -a,b +c,d @@" and the hunk's lines) joined by newlines.
 *
 * Either way the reward is the mean over all files touched by either side of
 * `difflib.SequenceMatcher(None, pred, oracle, autojunk=False).ratio()` (0 for a file only one
 * side changes), and −1 when the completion has no well-formed edit.
 */
import { parsePatch } from "diff";
import { BudgetExceeded, pySplitlines, stringRatio, unifiedDiff } from "./sequence-matcher.js";
import { pairedFences } from "../../src/core/completion.js";

export class FormatError extends Error {}

/**
 * Work limits: steps for one file's comparison, characters of one file's normalised change, and
 * characters read and copied applying search/replace edits (all edits together).
 */
export interface Limits {
  steps: number;
  chars: number;
  applyChars?: number;
}

const asLimits = (l: number | Limits): Limits => (typeof l === "number" ? { steps: l, chars: Infinity } : l);

export interface Similarity {
  path: string;
  similarity: number;
  /** Set when the change was over the size or work limits (the similarity is then 0). */
  over_budget?: boolean;
  pred_chars: number;
  oracle_chars: number;
}

export interface PatchReward {
  reward: number;
  reason: string;
  similarities: Similarity[];
}

function count(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

const PY_WS = new Set([..."\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"]);
/** Python's `str.strip()`. */
export function pyStrip(s: string): string {
  let i = 0, j = s.length;
  while (i < j && PY_WS.has(s[i])) i++;
  while (j > i && PY_WS.has(s[j - 1])) j--;
  return s.slice(i, j);
}

/** SWE-RL's `extract_thought_solution`. */
export function extractThoughtSolution(output: string): { thought: string; answer: string } {
  for (const tag of ["<think>", "</think>", "<solution>", "</solution>"]) {
    if (count(output, tag) !== 1) throw new FormatError(`count of ${tag} is not 1`);
  }
  const thought = pyStrip(output.split("<think>")[1].split("</think>")[0]);
  const answer = pyStrip(output.split("<solution>")[1].split("</solution>")[0]);
  if (thought.length === 0) throw new FormatError("Thought is empty");
  return { thought, answer };
}

const SEARCH_OPEN = "\n<<<<<<< SEARCH\n";
const DIVIDER = "\n=======\n";
const REPLACE_CLOSE = "\n>>>>>>> REPLACE\n```";

/**
 * SWE-RL's `parse_search_replace`: what `re.findall` of
 * ```.*?\n### (.*)\n<<<<<<< SEARCH\n([\s\S]*?)\n=======\n([\s\S]*?)\n>>>>>>> REPLACE\n```
 * finds, computed by string search (linear: each delimiter is searched for once per block).
 */
export function parseSearchReplace(text: string): Map<string, [string, string][]> {
  const out = new Map<string, [string, string][]>();
  let from = 0;
  for (;;) {
    const fence = text.indexOf("```", from);
    if (fence < 0) break;
    const fenceEnd = text.indexOf("\n", fence + 3);
    if (fenceEnd < 0) break;
    const pathStart = fenceEnd + 1;
    const pathEnd = text.startsWith("### ", pathStart) ? text.indexOf("\n", pathStart + 4) : -1;
    if (pathEnd < 0 || !text.startsWith(SEARCH_OPEN, pathEnd)) { from = fence + 1; continue; }
    const searchStart = pathEnd + SEARCH_OPEN.length;
    // The lazy groups end at the first delimiter; with none left, no later block can match.
    const divider = text.indexOf(DIVIDER, searchStart);
    if (divider < 0) break;
    const replaceStart = divider + DIVIDER.length;
    const close = text.indexOf(REPLACE_CLOSE, replaceStart);
    if (close < 0) break;
    const path = text.slice(pathStart + 4, pathEnd);
    const search = text.slice(searchStart, divider);
    const replace = text.slice(replaceStart, close);
    const list = out.get(path);
    if (list) list.push([search, replace]);
    else out.set(path, [[search, replace]]);
    from = close + REPLACE_CLOSE.length;
  }
  return out;
}

/**
 * The longest a file's content may grow to (its "\n"-prefixed working copy) while edits are
 * applied, for an original of `originalLength` characters and `maxChange` (max_change_chars).
 * Past it the normalised change cannot be within `maxChange`: every line of the new file outside
 * difflib's equal blocks is printed as "+line", and the equal blocks hold at most 2·|old| + 1
 * characters of it (lines and terminators), so the change is at least |new| − 2·|old| − 2 long.
 * Such a file counts similarity 0 uncompared, as compareChanges would score it, without the
 * content ever being built (an empty SEARCH is "\n", which replace-all puts after every line).
 * HARD_CAP keeps the legacy call with no character limit within what a string can hold.
 */
const HARD_CAP = 64 * 1024 * 1024;
export function contentCap(originalLength: number, maxChange: number): number {
  return Math.min(HARD_CAP, 2 * originalLength + maxChange + 16);
}

/**
 * The length of `content` once every `search` in it (non-overlapping, left to right, as
 * `str.replace`) becomes `replace`: 0 occurrences give -1, and a length past `cap` gives
 * Infinity as soon as the count shows it (one indexOf pass, stopped there).
 */
export function replacedLength(content: string, search: string, replace: string, cap: number): number {
  const grow = replace.length - search.length;
  let n = content.length;
  let found = false;
  for (let i = content.indexOf(search); i >= 0; i = content.indexOf(search, i + search.length)) {
    found = true;
    if (grow <= 0) break; // shrinking (or same length): the length is not needed, only that it occurs
    n += grow;
    if (n > cap) return Infinity;
  }
  return found ? n : -1;
}

/**
 * Applying the edits would read and copy more characters than the budget allows. The edits not
 * applied cannot be shown to apply, so it scores as an edit that does not (-1): the one score
 * never above what SWE-RL would give.
 */
export class ApplyBudgetExceeded extends FormatError {
  constructor(readonly budget: number) {
    super(`applying the edits needs more than ${budget} characters of work (edits left unchecked)`);
  }
}

export interface ApplyLimits {
  /** max_change_chars: a file grown past contentCap(original, maxChange) is not built. */
  maxChange?: number;
  /** Characters all edits together may scan and copy (each edit costs its file's current length). */
  work?: number;
  /** Filled with the files grown past their cap: path -> a lower bound on its normalised change's length. */
  over?: Map<string, number>;
}

/**
 * SWE-RL's `apply_code_change` (Python's `str.replace` replaces every occurrence). A file whose
 * content would grow past `contentCap(original, maxChange)` is not built: its path goes into
 * `over` (it counts similarity 0, as its diff would), and a later edit of that file, which could
 * only be checked against the content not built, is malformed (-1: never above SWE-RL's score,
 * which is -1 if that edit does not apply and a similarity near 0 otherwise). Each edit reads and
 * copies its file once, so many edits of a large file cost their product: past `work` characters
 * in all, ApplyBudgetExceeded (-1, likewise).
 */
export function applyCodeChange(context: Record<string, string>, edits: Map<string, [string, string][]>, limits: ApplyLimits = {}): Map<string, string> {
  const { maxChange = Infinity, work = Infinity, over } = limits;
  const out = new Map<string, string>();
  let spent = 0;
  for (const [path, pairs] of edits) {
    const original = Object.prototype.hasOwnProperty.call(context, path) ? context[path] : "";
    const cap = contentCap(original.length, maxChange);
    let content: string | null = "\n" + original;
    for (let [search, replace] of pairs) {
      if (search === replace) throw new FormatError("Search and replace blocks are identical");
      if (content === null) throw new FormatError(`an edit of ${path} after it grew past ${cap} characters cannot be checked`);
      spent += content.length;
      if (spent > work) throw new ApplyBudgetExceeded(work);
      search = "\n" + search;
      replace = "\n" + replace;
      const length = replacedLength(content, search, replace, cap);
      if (length < 0) throw new FormatError(`Search block not found in the code: ${search.slice(0, 200)}`);
      if (length === Infinity) {
        content = null;
        continue;
      }
      content = content.split(search).join(replace);
    }
    if (content === null) {
      if (!over) throw new FormatError(`editing ${path} makes it longer than ${cap} characters`);
      over.set(path, cap + 1 - 2 * original.length - 3); // |new| - 2·|old| - 2, |new| = content length - 1
    } else out.set(path, content.slice(1));
  }
  return out;
}

/** SWE-RL's `generate_unified_diff`: difflib.unified_diff over splitlines(), minus the 2 header lines. */
export function generateUnifiedDiff(oldCode: string, newCode: string, budget: number): string {
  const lines = unifiedDiff(pySplitlines(oldCode), pySplitlines(newCode), "old", "new", 3, budget);
  return lines.length < 2 ? "" : lines.slice(2).join("\n");
}

/** SWE-RL's `compute_change_similarities` + the mean. */
export function compareChanges(pred: Map<string, string>, oracle: Map<string, string>, limits: number | Limits, autojunk = false, overPred?: ReadonlyMap<string, number>): PatchReward {
  const { steps: budget, chars } = asLimits(limits);
  const paths = new Set([...oracle.keys(), ...pred.keys(), ...(overPred?.keys() ?? [])]);
  const similarities: Similarity[] = [];
  for (const path of paths) {
    const p = pred.get(path) ?? "";
    const o = oracle.get(path) ?? "";
    const s: Similarity = { path, similarity: 0, pred_chars: p.length, oracle_chars: o.length };
    const overLength = overPred?.get(path);
    if (overLength !== undefined) {
      // Grown past contentCap: its change is longer than `chars` (pred_chars: a lower bound).
      s.pred_chars = overLength;
      s.over_budget = true;
    } else if (p !== "" && o !== "" && (p.length > chars || o.length > chars)) s.over_budget = true;
    else if (p !== "" && o !== "") {
      try {
        s.similarity = stringRatio(p, o, autojunk, budget);
      } catch (e) {
        if (!(e instanceof BudgetExceeded)) throw e;
        s.over_budget = true;
      }
    }
    similarities.push(s);
  }
  if (!similarities.length) return { reward: 1, reason: "neither side changes any file", similarities };
  const reward = similarities.reduce((acc, s) => acc + s.similarity, 0) / similarities.length;
  const over = similarities.some((s) => s.over_budget);
  return {
    reward,
    reason: `mean similarity ${reward.toFixed(4)} over ${similarities.length} file(s)${over ? " (a file over the comparison limits counts 0)" : ""}`,
    similarities,
  };
}

function normalizedPatches(context: Record<string, string>, contents: Map<string, string>, budget: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, content] of contents) {
    const patch = generateUnifiedDiff(Object.prototype.hasOwnProperty.call(context, path) ? context[path] : "", content, budget);
    if (patch) out.set(path, patch);
  }
  return out;
}

/**
 * The oracle side of the comparison, computed once per reference and kept (a GRPO group scores
 * many completions against one oracle). Least-recently-used, small references only.
 */
const oracleCache = new Map<string, Map<string, string>>();
function cachedOracle(key: string, make: () => Map<string, string>): Map<string, string> {
  if (key.length > 200_000) return make();
  let v = oracleCache.get(key);
  if (v) {
    oracleCache.delete(key);
  } else {
    v = make();
    if (oracleCache.size >= 64) oracleCache.delete(oracleCache.keys().next().value!);
  }
  oracleCache.set(key, v);
  return v;
}

/** SWE-RL's `calculate_search_replace_reward`. */
export function searchReplaceReward(
  context: Record<string, string>, oracleNewContent: Record<string, string>, output: string, limitsIn: number | Limits,
): PatchReward {
  const limits = asLimits(limitsIn);
  const budget = limits.steps;
  try {
    const { answer } = extractThoughtSolution(output);
    const edits = parseSearchReplace(answer);
    if (edits.size === 0) throw new FormatError("No valid search blocks found");
    const over = new Map<string, number>();
    const predNew = applyCodeChange(context, edits, { maxChange: limits.chars, work: limits.applyChars, over });
    const oracle = cachedOracle(`sr\u0000${budget}\u0000${JSON.stringify([context, oracleNewContent])}`, () =>
      normalizedPatches(context, new Map(Object.entries(oracleNewContent)), budget));
    const pred = normalizedPatches(context, predNew, budget);
    return compareChanges(pred, oracle, limits, false, over);
  } catch (e) {
    if (e instanceof FormatError) return { reward: -1, reason: `malformed: ${e.message}`, similarities: [] };
    if (e instanceof BudgetExceeded) return { reward: 0, reason: `files too large to diff within the budget (${e.budget} steps)`, similarities: [] };
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Unified-diff form

/** unidiff's `PatchedFile.path`. */
function patchPath(source: string, target: string): string {
  if (source.startsWith("a/") && (target.startsWith("b/") || target === "/dev/null")) return source.slice(2);
  if (target.startsWith("b/") && source === "/dev/null") return target.slice(2);
  return source;
}

/**
 * path -> that file's hunks, each "@@ -a,b +c,d @@" plus its lines, joined by newlines and
 * stripped (the normalisation verl's SWE-RL port applies through unidiff). Throws on a patch that
 * does not parse; an empty map means no hunks.
 */
export function fileLevelDiff(patch: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of parsePatch(patch)) {
    if (!file.hunks.length) continue;
    const hunks = file.hunks.map((h) => {
      // parsePatch moves a zero-length range's start up by one; print it as written.
      const oldStart = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart;
      const newStart = h.newLines === 0 ? h.newStart - 1 : h.newStart;
      return pyStrip(`@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@\n${h.lines.join("\n")}`);
    });
    out.set(patchPath(file.oldFileName ?? "", file.newFileName ?? ""), pyStrip(hunks.join("\n")));
  }
  return out;
}

/** `fileLevelDiff` of an oracle patch, cached; throws as `fileLevelDiff` does. */
export function oracleFiles(patch: string): Map<string, string> {
  return cachedOracle(`ud\u0000${patch}`, () => fileLevelDiff(patch));
}

/**
 * The patch a completion gives: the last ```diff / ```patch fence, else the text from the first
 * line that starts a diff ("diff --git", "--- ", "Index:").
 */
export function extractPatch(text: string): string | null {
  let found: string | null = null;
  for (const f of pairedFences(text)) if (f.lang === "diff" || f.lang === "patch" || f.lang === "udiff") found = f.body;
  if (found !== null) return found;
  for (const marker of ["diff --git ", "--- ", "Index: "]) {
    if (text.startsWith(marker)) return text;
    const at = text.indexOf("\n" + marker);
    if (at >= 0) return text.slice(at + 1);
  }
  return null;
}

/** The unified-diff reward: −1 when the completion has no patch with at least one hunk. */
export function unifiedDiffReward(completion: string, oraclePatch: string, limits: number | Limits): PatchReward {
  const oracle = oracleFiles(oraclePatch);
  const text = extractPatch(completion);
  if (text === null) return { reward: -1, reason: "no patch in the completion", similarities: [] };
  let pred: Map<string, string>;
  try {
    pred = fileLevelDiff(text);
  } catch (e) {
    return { reward: -1, reason: `malformed patch: ${(e as Error).message.slice(0, 200)}`, similarities: [] };
  }
  if (pred.size === 0) return { reward: -1, reason: "the patch has no hunks", similarities: [] };
  return compareChanges(pred, oracle, limits);
}
