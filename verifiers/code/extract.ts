/** Finds the program in a completion: the last fenced block of the language, else the whole text. */
import { canonicalLanguage } from "../../sandbox/languages.js";
import { afterThink } from "../../src/core/completion.js";

export type ExtractMode = "last_block" | "first_block" | "full";

const FENCE = /(^|\n)[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n([\s\S]*?)\n?[ \t]*\2[ \t]*(?=\n|$)/g;

export interface Extracted {
  code: string;
  via: "fenced block" | "untagged block" | "any block" | "whole text";
}

export function extractProgram(response: string, language: string, mode: ExtractMode = "last_block"): Extracted {
  const text = afterThink(response);
  if (mode === "full") return { code: text, via: "whole text" };
  const want = canonicalLanguage(language) ?? language;
  const blocks: { lang: string; body: string }[] = [];
  for (const m of text.matchAll(FENCE)) blocks.push({ lang: m[3].toLowerCase(), body: m[4] });
  const pick = (list: typeof blocks) => (mode === "first_block" ? list[0] : list[list.length - 1]);
  const tagged = blocks.filter((b) => b.lang && (canonicalLanguage(b.lang) ?? b.lang) === want);
  if (tagged.length) return { code: pick(tagged).body, via: "fenced block" };
  const untagged = blocks.filter((b) => !b.lang);
  if (untagged.length) return { code: pick(untagged).body, via: "untagged block" };
  if (blocks.length) return { code: pick(blocks).body, via: "any block" };
  return { code: text, via: "whole text" };
}
