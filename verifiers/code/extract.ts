/**
 * Finds the program in a completion: the last fenced block of the language, else the whole text.
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

interface Fence {
  char: "`" | "~";
  len: number;
  /** Where the info string's first word (the language tag) lies in the line. */
  langStart: number;
  langEnd: number;
  /** Nothing but the fence and whitespace: it may close a block. */
  bare: boolean;
}

const isBlank = (c: number) => c === 32 || c === 9 || c === 13;
/** A character of a language tag: [A-Za-z0-9_+#.-]. */
const isTag = (c: number) =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 43 || c === 35 || c === 46 || c === 45;

function fenceOf(line: string): Fence | null {
  let i = 0;
  while (i < line.length && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i++;
  const ch = line[i];
  if (ch !== "`" && ch !== "~") return null;
  let j = i;
  while (j < line.length && line[j] === ch) j++;
  const len = j - i;
  if (len < 3) return null;
  let k = j;
  while (k < line.length && isBlank(line.charCodeAt(k))) k++;
  let e = k;
  while (e < line.length && isTag(line.charCodeAt(e))) e++;
  return { char: ch, len, langStart: k, langEnd: e, bare: k === line.length };
}

/** Every closed fenced block, in order. Linear in the text. */
export function fencedBlocks(text: string): { lang: string; body: string }[] {
  const lines = text.split("\n");
  const fences = new Array<Fence | null>(lines.length);
  for (let i = 0; i < lines.length; i++) {
    const c = lines[i].charCodeAt(0);
    // Most lines start with neither a fence character nor indentation: no call, no object.
    fences[i] = c === 96 || c === 126 || c === 32 || c === 9 ? fenceOf(lines[i]) : null;
  }
  // Longest bare fence of each character at or after each line.
  const after = { "`": new Int32Array(lines.length + 1), "~": new Int32Array(lines.length + 1) };
  for (let i = lines.length - 1; i >= 0; i--) {
    after["`"][i] = after["`"][i + 1];
    after["~"][i] = after["~"][i + 1];
    const f = fences[i];
    if (f?.bare) after[f.char][i] = Math.max(after[f.char][i], f.len);
  }
  const blocks: { lang: string; body: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = fences[i];
    if (!open || after[open.char][i + 1] < open.len) continue; // nothing can close it
    let j = i + 1;
    for (; j < lines.length; j++) {
      const f = fences[j];
      if (f && f.bare && f.char === open.char && f.len >= open.len) break;
    }
    blocks.push({ lang: lines[i].slice(open.langStart, open.langEnd).toLowerCase(), body: lines.slice(i + 1, j).join("\n") });
    i = j;
  }
  return blocks;
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
  if (blocks.length) return { code: pick(blocks).body, via: "any block" };
  return { code: text, via: "whole text" };
}
