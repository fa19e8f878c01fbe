/**
 * Finds the program in a completion: the last fenced block of the language, else the last
 * untagged block, else the last block of another tag that is not a run's input or output
 * (```text, ```output ...), else the last block, else the whole text.
 *
 * Fences are read line by line, once (model text is hostile: a regex with a lazy body and a
 * back-reference took seconds on 25 KB of unclosed fences). A fence line is three or more
 * backticks or tildes, optionally indented, with an optional info string; a block closes at a
 * bare fence line of the same character at least as long. An opener that no later line can
 * close is ordinary text: a suffix table of the longest bare fence still to come answers that
 * in O(1), so the scan stays linear however many openers are left unclosed.
 */
import { fenceLanguage } from "../../sandbox/languages.js";
import { afterThink } from "../../src/core/completion.js";

export type ExtractMode = "last_block" | "first_block" | "full";

export interface Extracted {
  code: string;
  via: "fenced block" | "untagged block" | "any block" | "whole text";
}

const isBlank = (c: number) => c === 32 || c === 9 || c === 13;
/** A character of a language tag: [A-Za-z0-9_+#.-]. */
const isTag = (c: number) =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 43 || c === 35 || c === 46 || c === 45;

/** Info strings of a block that holds a run's input or output, or prose, never a program. */
const NOT_CODE = new Set(["text", "txt", "plaintext", "plain", "output", "out", "stdout", "stderr", "input", "in", "stdin", "console", "terminal", "log", "markdown", "md", "none"]);

const BACKTICK = 96;
const TILDE = 126;

/**
 * Every closed fenced block, in order. Linear in the text, and light on allocation: the lines'
 * fences live in typed arrays (a megabyte of fence lines made an object per line, and the
 * garbage collector's share made its time vary five-fold from run to run).
 */
export function fencedBlocks(text: string): { lang: string; body: string }[] {
  let n = 1;
  for (let p = text.indexOf("\n"); p >= 0; p = text.indexOf("\n", p + 1)) n++;
  /** Line i is text[start[i], start[i + 1] - 1) (the last ends at the text's end). */
  const start = new Int32Array(n + 1);
  for (let i = 1, p = text.indexOf("\n"); p >= 0; p = text.indexOf("\n", p + 1)) start[i++] = p + 1;
  start[n] = text.length + 1;
  // Each line's fence: its character (0: not a fence), length, language tag, whether bare.
  const ch = new Uint8Array(n);
  const len = new Int32Array(n);
  const tagAt = new Int32Array(n);
  const tagEnd = new Int32Array(n);
  const bare = new Uint8Array(n);
  const indent = new Int32Array(n);
  for (let l = 0; l < n; l++) {
    const ls = start[l], le = start[l + 1] - 1;
    let i = ls;
    while (i < le && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
    const c = i < le ? text.charCodeAt(i) : -1;
    if (c !== BACKTICK && c !== TILDE) continue;
    let j = i;
    while (j < le && text.charCodeAt(j) === c) j++;
    if (j - i < 3) continue;
    let k = j;
    while (k < le && isBlank(text.charCodeAt(k))) k++;
    let e = k;
    while (e < le && isTag(text.charCodeAt(e))) e++;
    ch[l] = c === BACKTICK ? 1 : 2;
    indent[l] = i - ls;
    len[l] = j - i;
    tagAt[l] = k;
    tagEnd[l] = e;
    bare[l] = k === le ? 1 : 0;
  }
  // Longest bare fence of each character at or after each line.
  const after = [new Int32Array(0), new Int32Array(n + 1), new Int32Array(n + 1)];
  for (let l = n - 1; l >= 0; l--) {
    after[1][l] = after[1][l + 1];
    after[2][l] = after[2][l + 1];
    if (bare[l]) after[ch[l]][l] = Math.max(after[ch[l]][l], len[l]);
  }
  const blocks: { lang: string; body: string }[] = [];
  for (let l = 0; l < n; l++) {
    const c = ch[l];
    if (!c || after[c][l + 1] < len[l]) continue; // not a fence, or nothing can close it
    let j = l + 1;
    while (!(bare[j] && ch[j] === c && len[j] >= len[l])) j++;
    blocks.push({ lang: text.slice(tagAt[l], tagEnd[l]).toLowerCase(), body: j > l + 1 ? (indent[l] ? outdent(text, start, l + 1, j, indent[l]) : text.slice(start[l + 1], start[j] - 1)) : "" });
    l = j;
  }
  return blocks;
}

/**
 * Lines [from, to) of `text` with up to `by` leading spaces or tabs taken off each: a fence
 * indented in a list item (`1. step\n   ```python`) indents its code as much, and CommonMark
 * takes the fence's indentation off its content lines (Python would read the rest as an
 * IndentationError). Linear in the lines' length.
 */
function outdent(text: string, start: Int32Array, from: number, to: number, by: number): string {
  const out: string[] = [];
  for (let l = from; l < to; l++) {
    let i = start[l];
    const le = start[l + 1] - 1;
    while (i < le && i - start[l] < by && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
    out.push(text.slice(i, le));
  }
  return out.join("\n");
}

export function extractProgram(response: string, language: string, mode: ExtractMode = "last_block"): Extracted {
  const text = afterThink(response);
  if (mode === "full") return { code: text, via: "whole text" };
  // Tags are read through sandbox/languages.ts's aliases (```py, ```c++, ```golang ...);
  // python-sci's program is a ```python block.
  const want = fenceLanguage(language);
  const blocks = fencedBlocks(text);
  const pick = (list: typeof blocks) => (mode === "first_block" ? list[0] : list[list.length - 1]);
  const tagged = blocks.filter((b) => b.lang && fenceLanguage(b.lang) === want);
  if (tagged.length) return { code: pick(tagged).body, via: "fenced block" };
  const untagged = blocks.filter((b) => !b.lang);
  if (untagged.length) return { code: pick(untagged).body, via: "untagged block" };
  // Another tag's block before a ```text / ```output one: a C++ task answered in a ```c block
  // and followed by the sample run in ```text is the C block, not the sample.
  const code = blocks.filter((b) => !NOT_CODE.has(b.lang));
  if (code.length) return { code: pick(code).body, via: "any block" };
  if (blocks.length) return { code: pick(blocks).body, via: "any block" };
  return { code: text, via: "whole text" };
}
