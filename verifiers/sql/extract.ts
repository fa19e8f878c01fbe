/** The model's SQL: the last ```sql block of the answer, else the answer itself. */
import { afterThink } from "../../src/core/completion.js";

/** Longest SQL we hand to an engine; longer is scored 0 without running. */
export const MAX_SQL_CHARS = 32_000;

export type SqlSource = "sql_block" | "code_block" | "text" | "answer" | "answer_sql_block" | "answer_code_block";

/**
 * The answer part is the text after the last </think>, and in that after the last </reasoning>
 * (so nothing inside `<think>` or `<reasoning>` counts). If it holds an `<answer>` tag (R1 style),
 * the last `<answer>…</answer>` is the answer (an unclosed last one runs to the end), and a
 * fenced block inside it is taken as below. Otherwise the last fenced block tagged sql (```sql, ```SQL, ```sqlite, ```postgresql) wins, then the last untagged
 * ``` block, then the whole answer. An unclosed last fence runs to the end. Tags are matched in
 * lower case, as written by R1-style templates. Linear in the response's length (lastIndexOf and
 * one pass over the fences).
 */
export function extractSql(response: string): { sql: string; source: SqlSource } {
  const text = afterThink(afterThink(response), "reasoning");
  const open = text.lastIndexOf("<answer>");
  if (open >= 0) {
    const bodyStart = open + "<answer>".length;
    const close = text.indexOf("</answer>", bodyStart);
    const inner = fenced(text.slice(bodyStart, close < 0 ? text.length : close));
    return { sql: inner.sql, source: inner.source === "text" ? "answer" : `answer_${inner.source}` };
  }
  return fenced(text);
}

/** The last ```sql block of `text`, else its last untagged ``` block, else all of it. */
function fenced(text: string): { sql: string; source: "sql_block" | "code_block" | "text" } {
  let best: { start: number; tagged: boolean } | null = null;
  // walk fences from the end: each ``` either opens or closes a block; count them from the start
  const fences: number[] = [];
  for (let i = text.indexOf("```"); i >= 0; i = text.indexOf("```", i + 3)) fences.push(i);
  for (let k = 0; k < fences.length; k += 2) {
    const open = fences[k];
    const tag = fenceTag(text, open).trim().toLowerCase();
    const tagged = tag === "sql" || tag === "sqlite" || tag === "postgresql" || tag === "postgres" || tag === "psql";
    if (tagged || tag === "") {
      if (tagged || !best?.tagged) best = { start: k, tagged };
    }
  }
  if (best) {
    const open = fences[best.start];
    const tagEnd = open + 3 + fenceTag(text, open).length;
    const bodyStart = tagEnd + (text[tagEnd] === "\n" ? 1 : 0);
    const close = fences[best.start + 1] ?? text.length;
    return { sql: text.slice(bodyStart, Math.max(bodyStart, close)).trim(), source: best.tagged ? "sql_block" : "code_block" };
  }
  return { sql: text.trim(), source: "text" };
}

/** The info string after the fence at `open`: up to 40 characters, ending at a newline (bounded, so many fences stay linear). */
function fenceTag(text: string, open: number): string {
  let end = open + 3;
  const stop = Math.min(text.length, open + 43);
  while (end < stop && text[end] !== "\n" && text[end] !== "`") end++;
  return text.slice(open + 3, end);
}
