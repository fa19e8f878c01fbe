/** The model's SQL: the last ```sql block of the answer, else its last other fenced block, else the answer itself. */
import { afterThink } from "../../src/core/completion.js";

/** Longest SQL we hand to an engine; longer is scored 0 without running. */
export const MAX_SQL_CHARS = 32_000;

export type SqlSource = "sql_block" | "code_block" | "text" | "answer" | "answer_sql_block" | "answer_code_block";

/** Info-string tags that mark a block as the SQL (lower case). */
const SQL_TAGS = new Set(["sql", "sqlite", "sqlite3", "postgresql", "postgres", "psql", "pgsql"]);

/**
 * The answer part is the text after the last </think>, and in that after the last </reasoning>
 * (so nothing inside `<think>` or `<reasoning>` counts); a `<think>` or `<reasoning>` opened and
 * never closed (a truncated completion) leaves no answer (src/core's afterThink). If the answer
 * part holds `<answer>` tags (R1 style), the last `<answer>…</answer>` is the answer, and a fenced
 * block inside it is taken as below; an `<answer>` with no `</answer>` after it runs to the end,
 * and is the answer only when no fenced block comes before it (else it is prose: "no <answer>
 * tag needed"). Otherwise the last fenced block tagged sql (```sql, ```SQL, ```sqlite,
 * ```postgresql, ```sql title=x) wins, then the last other fenced block (untagged, ```mysql, …),
 * then the whole answer. Fences are read by line as CommonMark does (see `fencedSql`). Tags are
 * matched in lower case, as written by R1-style templates. Linear in the response's length
 * (a few lastIndexOf/includes and one pass over the lines).
 */
export function extractSql(response: string): { sql: string; source: SqlSource } {
  const text = afterThink(afterThink(response, "think"), "reasoning");
  const close = text.lastIndexOf("</answer>");
  const unclosed = text.indexOf("<answer>", close < 0 ? 0 : close + "</answer>".length);
  if (unclosed >= 0) {
    const whole = fencedSql(text);
    if (whole.firstAt >= 0 && whole.firstAt < unclosed) return { sql: whole.sql, source: whole.source };
    return inAnswer(fencedSql(text.slice(unclosed + "<answer>".length)));
  }
  const open = close < 0 ? -1 : text.lastIndexOf("<answer>", close);
  if (open >= 0) return inAnswer(fencedSql(text.slice(open + "<answer>".length, close)));
  const f = fencedSql(text);
  return { sql: f.sql, source: f.source };
}

function inAnswer(f: Fenced): { sql: string; source: SqlSource } {
  return { sql: f.sql, source: f.source === "text" ? "answer" : `answer_${f.source}` };
}

interface Fenced {
  sql: string;
  source: "sql_block" | "code_block" | "text";
  /** Where the first fenced block's opening line starts, -1 when there is none. */
  firstAt: number;
}

const isBlank = (c: number) => c === 32 || c === 9 || c === 13;
/** A character of a language tag: [A-Za-z0-9_+#.-]. */
const isTag = (c: number) =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 43 || c === 35 || c === 46 || c === 45;

/**
 * The last fenced block tagged sql, else the last other fenced block (untagged or another tag),
 * else all of `text`. Fences as CommonMark reads them: a fence is a line that starts (after
 * spaces or tabs: fences nested in list items are indented) with a run of three or more
 * backticks or tildes; a backtick fence's info string holds no backtick (``` inside a line of
 * prose, or `SELECT '```'`, is not a fence), and its first word is the tag. A block is closed by
 * a later line that ends with a run of the same character at least as long as the opening one,
 * and nothing after it (so ````sql is closed by ```` and not by ```; a line `SELECT 1```` closes
 * too, what comes before the run being part of the body); a block never closed runs to the end,
 * less a last line that opens with such a run (```sql written where ``` was meant).
 * Blocks whose body is blank are skipped. One pass over the lines, each character looked at a
 * bounded number of times: linear in the text.
 */
export function fencedSql(text: string): Fenced {
  const n = text.length;
  let firstAt = -1;
  let lastSql: [number, number] | null = null;
  let lastOther: [number, number] | null = null;
  /** The block being read: its fence character and length, whether it is tagged sql, where its body starts. */
  let open: { ch: number; len: number; sql: boolean; body: number; fenceLine: number } | null = null;
  const take = (from: number, to: number, sql: boolean) => {
    for (let k = from; k < to; k++) {
      if (text.charCodeAt(k) > 32) {
        if (sql) lastSql = [from, to];
        else lastOther = [from, to];
        return;
      }
    }
  };
  for (let ls = 0; ls <= n; ) {
    let le = text.indexOf("\n", ls);
    if (le < 0) le = n;
    if (open) {
      // a closing line: ends (blanks aside) with a run of `open.ch` at least `open.len` long
      let e = le;
      while (e > ls && isBlank(text.charCodeAt(e - 1))) e--;
      let r = e;
      while (r > ls && text.charCodeAt(r - 1) === open.ch) r--;
      if (e - r >= open.len) {
        take(open.body, r, open.sql);
        open = null;
      } else if (e > ls) {
        // the last line with text: a fence that cannot close the block (```sql after the
        // query) is dropped from a block that is never closed
        let i = ls;
        while (i < e && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
        let j = i;
        while (j < e && text.charCodeAt(j) === open.ch) j++;
        open.fenceLine = j - i >= open.len ? ls : -1;
      }
    } else {
      let i = ls;
      while (i < le && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
      const ch = text.charCodeAt(i);
      if (ch === 96 || ch === 126) {
        let j = i;
        while (j < le && text.charCodeAt(j) === ch) j++;
        const len = j - i;
        // a backtick fence's info string may not hold a backtick: else the line is prose
        let info = ch === 96 ? j : le;
        while (info < le && text.charCodeAt(info) !== 96) info++;
        if (len >= 3 && info === le) {
          let k = j;
          while (k < le && isBlank(text.charCodeAt(k))) k++;
          let t = k;
          while (t < le && isTag(text.charCodeAt(t))) t++;
          if (firstAt < 0) firstAt = ls;
          open = { ch, len, sql: t - k <= 12 && SQL_TAGS.has(text.slice(k, t).toLowerCase()), body: Math.min(n, le + 1), fenceLine: -1 };
        }
      }
    }
    ls = le + 1;
  }
  if (open) take(open.body, open.fenceLine >= 0 ? open.fenceLine : n, open.sql);
  const best: [number, number] | null = lastSql ?? lastOther;
  if (best) return { sql: text.slice(best[0], best[1]).trim(), source: lastSql ? "sql_block" : "code_block", firstAt };
  return { sql: text.trim(), source: "text", firstAt };
}
