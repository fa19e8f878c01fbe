/**
 * A small linear-time SQL lexer: enough to tell statements apart, find top-level clauses and
 * refuse what a read-only scorer must never run. It never backtracks and touches each character
 * once, so hostile model text costs O(n). It does not parse: the engine does that.
 *
 * Two dialects, because what hides a `;` differs: SQLite quotes identifiers with "", `` and [],
 * and its block comments do not nest; PostgreSQL has dollar quotes ($$..$$, $tag$..$tag$),
 * escape strings (E'..' where \' does not end the string) and nested block comments, and `[` is
 * an array subscript there. A text lexed as the wrong dialect can hide a statement from this
 * check (the engines refuse a second statement on their own: see sqlite-worker.ts, postgres.ts).
 */

export type TokKind = "word" | "quoted" | "string" | "number" | "punct" | "param";
export type Dialect = "sqlite" | "postgres";

/** Longest dollar-quote tag recognised (PostgreSQL identifiers are at most 63 bytes). */
export const MAX_DOLLAR_TAG = 63;
export interface Token {
  kind: TokKind;
  /** Lower-cased for words; verbatim otherwise. */
  text: string;
  /** Parenthesis depth at which the token sits (0 = top level). */
  depth: number;
  /** A quoted identifier: its quote character; it and a `;` say where they lie in the text, [start, end). */
  quote?: '"' | "`" | "[";
  start?: number;
  end?: number;
}

const isWordStart = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c > 127;
const isWord = (c: number) => isWordStart(c) || (c >= 48 && c <= 57) || c === 36;
const isDigit = (c: number) => c >= 48 && c <= 57;

/** The end of a PostgreSQL `$tag$` opening at `i` (the index after its second `$`), or -1. */
function dollarTagEnd(sql: string, i: number): number {
  let j = i + 1;
  if (sql.charCodeAt(j) === 36) return j + 1; // $$
  if (!isWordStart(sql.charCodeAt(j))) return -1;
  const limit = Math.min(sql.length, i + 1 + MAX_DOLLAR_TAG);
  while (j < limit) {
    const d = sql.charCodeAt(j);
    if (d === 36) return j + 1;
    if (!(isWordStart(d) || isDigit(d))) return -1;
    j++;
  }
  return -1;
}

/**
 * Tokens of `sql`, comments and whitespace dropped. Unterminated strings and comments run to the
 * end. O(n) in either dialect (PostgreSQL's dollar-quote tags are capped at MAX_DOLLAR_TAG).
 */
export function tokenize(sql: string, dialect: Dialect = "sqlite"): Token[] {
  const pg = dialect === "postgres";
  const out: Token[] = [];
  const n = sql.length;
  let i = 0;
  let depth = 0;
  while (i < n) {
    const c = sql.charCodeAt(i);
    if (c <= 32) { i++; continue; }
    // -- line comment
    if (c === 45 && sql.charCodeAt(i + 1) === 45) {
      const j = sql.indexOf("\n", i + 2);
      i = j < 0 ? n : j + 1;
      continue;
    }
    // /* block comment */; PostgreSQL's nest
    if (c === 47 && sql.charCodeAt(i + 1) === 42) {
      if (!pg) {
        const j = sql.indexOf("*/", i + 2);
        i = j < 0 ? n : j + 2;
        continue;
      }
      let level = 1;
      let j = i + 2;
      while (j < n && level > 0) {
        const d = sql.charCodeAt(j);
        if (d === 47 && sql.charCodeAt(j + 1) === 42) { level++; j += 2; }
        else if (d === 42 && sql.charCodeAt(j + 1) === 47) { level--; j += 2; }
        else j++;
      }
      i = j;
      continue;
    }
    // PostgreSQL $$dollar-quoted$$ and $tag$dollar-quoted$tag$ strings (no escapes inside)
    if (pg && c === 36) {
      const open = dollarTagEnd(sql, i);
      if (open > 0) {
        const k = sql.indexOf(sql.slice(i, open), open);
        const j = k < 0 ? n : k + (open - i);
        out.push({ kind: "string", text: sql.slice(i, j), depth });
        i = j;
        continue;
      }
    }
    // 'string' with '' escapes; X'..', B'..', N'..' prefixes lex as word + string, which is fine.
    // PostgreSQL's E'..' (the word just before is a lone E) also takes backslash escapes.
    if (c === 39) {
      const prev = out.length ? out[out.length - 1] : null;
      const escapes = pg && prev !== null && prev.kind === "word" && prev.text === "e" && i > 0 && (sql.charCodeAt(i - 1) | 32) === 101;
      let j = i + 1;
      if (escapes) {
        out.pop(); // the E is part of the string
        for (;;) {
          if (j >= n) break;
          const d = sql.charCodeAt(j);
          if (d === 92) { j += 2; continue; }
          if (d === 39) {
            if (sql.charCodeAt(j + 1) === 39) { j += 2; continue; }
            j++;
            break;
          }
          j++;
        }
        j = Math.min(j, n);
        out.push({ kind: "string", text: sql.slice(i - 1, j), depth });
        i = j;
        continue;
      }
      for (;;) {
        const k = sql.indexOf("'", j);
        if (k < 0) { j = n; break; }
        if (sql.charCodeAt(k + 1) === 39) { j = k + 2; continue; }
        j = k + 1;
        break;
      }
      out.push({ kind: "string", text: sql.slice(i, j), depth });
      i = j;
      continue;
    }
    // "identifier"; SQLite also `identifier` and [identifier] (in PostgreSQL `[` is a subscript)
    if (c === 34 || (!pg && (c === 96 || c === 91))) {
      const close = c === 91 ? "]" : String.fromCharCode(c);
      let j = i + 1;
      for (;;) {
        const k = sql.indexOf(close, j);
        if (k < 0) { j = n; break; }
        if (c !== 91 && sql.charCodeAt(k + 1) === c) { j = k + 2; continue; }
        j = k + 1;
        break;
      }
      const inner = sql.slice(i + 1, j - 1);
      const quote = c === 34 ? '"' : c === 96 ? "`" : "[";
      out.push({ kind: "quoted", text: c === 91 ? inner : inner.split(close + close).join(close), depth, quote, start: i, end: j });
      i = j;
      continue;
    }
    if (isDigit(c) || (c === 46 && isDigit(sql.charCodeAt(i + 1)))) {
      let j = i + 1;
      while (j < n) {
        const d = sql.charCodeAt(j);
        if (isWord(d) || d === 46) j++;
        else if ((d === 43 || d === 45) && (sql.charCodeAt(j - 1) | 32) === 101) j++; // 1e-5
        else break;
      }
      out.push({ kind: "number", text: sql.slice(i, j), depth });
      i = j;
      continue;
    }
    if (isWordStart(c)) {
      let j = i + 1;
      while (j < n && isWord(sql.charCodeAt(j))) j++;
      out.push({ kind: "word", text: sql.slice(i, j).toLowerCase(), depth });
      i = j;
      continue;
    }
    if (c === 63 || c === 58 || c === 64) {
      // ?, ?1, :name, @name, $1 (handled as word char above only after a word start)
      let j = i + 1;
      while (j < n && isWord(sql.charCodeAt(j))) j++;
      if (j > i + 1 || c === 63) {
        out.push({ kind: "param", text: sql.slice(i, j), depth });
        i = j;
        continue;
      }
    }
    if (c === 36 && isDigit(sql.charCodeAt(i + 1))) {
      let j = i + 1;
      while (j < n && isDigit(sql.charCodeAt(j))) j++;
      out.push({ kind: "param", text: sql.slice(i, j), depth });
      i = j;
      continue;
    }
    if (c === 40) { out.push({ kind: "punct", text: "(", depth }); depth++; i++; continue; }
    if (c === 41) { depth = Math.max(0, depth - 1); out.push({ kind: "punct", text: ")", depth }); i++; continue; }
    // two-character operators
    const two = sql.slice(i, i + 2);
    if (two === "<=" || two === ">=" || two === "<>" || two === "!=" || two === "==" || two === "||" || two === "::") {
      out.push({ kind: "punct", text: two, depth });
      i += 2;
      continue;
    }
    // a `;` says where it lies (checkDialect cuts trailing ones off the text)
    out.push(c === 59 ? { kind: "punct", text: ";", depth, start: i, end: i + 1 } : { kind: "punct", text: sql[i], depth });
    i++;
  }
  return out;
}

/** `sql` without trailing semicolons and whitespace (models often end with `;`). */
export function stripTrailingSemicolons(sql: string): string {
  let end = sql.length;
  for (;;) {
    while (end > 0 && sql.charCodeAt(end - 1) <= 32) end--;
    if (end > 0 && sql[end - 1] === ";") { end--; continue; }
    break;
  }
  return sql.slice(0, end);
}

/**
 * True when the statement's outermost query has an ORDER BY (one inside a subquery does not
 * count). A query wholly wrapped in parentheses, any number of pairs (`((SELECT … ORDER BY x))`,
 * which PostgreSQL runs as the query inside), has its outermost query inside them; in
 * `(SELECT … ORDER BY x) UNION (SELECT …)` the first pair closes before the end, so that ORDER
 * BY orders one branch only. Linear: one pass finds where each leading `(` closes.
 */
export function hasTopLevelOrderBy(tokens: Token[]): boolean {
  const top = wrappingPairs(tokens);
  for (let i = 0; i + 1 < tokens.length; i++) {
    const t = tokens[i];
    if (t.depth === top && t.kind === "word" && t.text === "order" && tokens[i + 1].kind === "word" && tokens[i + 1].text === "by") return true;
  }
  return false;
}

/** How many pairs of parentheses wrap the whole statement: the j-th leading `(` closes at the j-th token from the end. */
function wrappingPairs(tokens: Token[]): number {
  const n = tokens.length;
  let lead = 0;
  while (lead < n && tokens[lead].kind === "punct" && tokens[lead].text === "(") lead++;
  if (!lead) return 0;
  // the first `)` back at depth d closes the leading `(` at depth d
  const closes: number[] = new Array(lead).fill(-1);
  for (let i = lead; i < n; i++) {
    const t = tokens[i];
    if (t.kind === "punct" && t.text === ")" && t.depth < lead && closes[t.depth] < 0) closes[t.depth] = i;
  }
  let k = 0;
  while (k < lead && closes[k] === n - 1 - k) k++;
  return k;
}

/** Functions no scored query may call: side effects, other sessions, files, or memory bombs. */
const DENIED_FUNCTIONS = new Set([
  // SQLite
  "load_extension", "randomblob", "zeroblob", "fts3_tokenizer", "readfile", "writefile", "edit",
  // PostgreSQL: other sessions, files, locks that outlive the transaction, settings
  "pg_cancel_backend", "pg_terminate_backend", "pg_reload_conf", "pg_rotate_logfile",
  "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "lo_import", "lo_export",
  "pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared",
  "pg_advisory_xact_lock", "pg_advisory_xact_lock_shared", "set_config", "dblink", "dblink_exec",
  "pg_notify", "txid_current", "pg_current_xact_id", "nextval", "setval", "pg_switch_wal",
]);

/** Statement keywords that may begin a read-only query. */
const QUERY_STARTS = new Set(["select", "with", "values"]);

export type QueryCheck = { ok: true; sql: string; tokens: Token[] } | { ok: false; reason: string };

/**
 * Whether `sql` is one read-only query we are willing to hand to an engine. The engine settings
 * (read-only connection, query_only, READ ONLY transaction, SELECT-only role) are the real
 * barrier; this check adds a clear reason for the model and a second wall.
 */
export function checkQuery(sql: string, dialect?: Dialect): QueryCheck {
  if (dialect) return checkDialect(sql, dialect);
  // engine unknown: refused if either dialect's reading refuses it
  const pg = checkDialect(sql, "postgres");
  return pg.ok ? checkDialect(sql, "sqlite") : pg;
}

function checkDialect(sql: string, dialect: Dialect): QueryCheck {
  // SQLite's prepare stops at a NUL (`SELECT a FROM t\0 WHERE 0` would run as `SELECT a FROM t`),
  // Python's sqlite3 (the references') refuses the text, and PostgreSQL refuses it too
  if (sql.includes("\0")) return { ok: false, reason: "the query contains a NUL character (\\0), which no engine reads as SQL" };
  let text = stripTrailingSemicolons(sql);
  let tokens = tokenize(text, dialect);
  // `;` followed by nothing but `;` (comments are no tokens: `SELECT 1; -- done`) ends the one
  // statement: the text is cut before the first of them, so the engine never sees what follows
  let end = tokens.length;
  while (end > 0 && tokens[end - 1].kind === "punct" && tokens[end - 1].text === ";") end--;
  if (end < tokens.length) {
    text = stripTrailingSemicolons(text.slice(0, tokens[end].start));
    tokens = tokens.slice(0, end);
  }
  if (!tokens.length) return { ok: false, reason: "empty query" };
  let first = 0;
  while (first < tokens.length && tokens[first].text === "(") first++;
  const head = tokens[first];
  if (!head || head.kind !== "word" || !QUERY_STARTS.has(head.text)) {
    return { ok: false, reason: `only a SELECT/WITH/VALUES query is scored, not ${head ? JSON.stringify(head.text.slice(0, 20).toUpperCase()) : "an empty statement"}` };
  }
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind === "punct" && t.text === ";") return { ok: false, reason: "more than one statement" };
    // PostgreSQL: a `$` that opens no dollar quote we recognise (a tag over MAX_DOLLAR_TAG characters)
    if (dialect === "postgres" && t.kind === "punct" && t.text === "$") return { ok: false, reason: `a $ that is not a parameter or a dollar quote (tags are at most ${MAX_DOLLAR_TAG} characters)` };
    // a function named by a quoted identifier is still that function (`"zeroblob"(1e9)`, `[randomblob](9)`)
    if (t.kind === "quoted" && tokens[i + 1]?.text === "(" && DENIED_FUNCTIONS.has(t.text.toLowerCase())) {
      return { ok: false, reason: `function ${t.text.toLowerCase()}() is not allowed in a scored query` };
    }
    if (t.kind !== "word") continue;
    // ATTACH, DETACH, PRAGMA, VACUUM, TRUNCATE, GRANT, REVOKE are statements: the first word (SELECT,
    // WITH or VALUES) and the one-statement rule keep them out, so they are legal names here
    // (`count(*) AS merge`, a column `pragma`); MERGE needs INTO, refused below
    if (DENIED_FUNCTIONS.has(t.text) && tokens[i + 1]?.text === "(") return { ok: false, reason: `function ${t.text}() is not allowed in a scored query` };
    // PostgreSQL: SELECT ... INTO creates a table; FOR UPDATE/SHARE takes row locks
    if (t.text === "into") return { ok: false, reason: `${tokens[i - 1]?.text === "merge" ? "MERGE" : "SELECT INTO"} is not allowed in a scored query` };
    if (t.text === "for" && tokens[i + 1]?.kind === "word" && ["update", "share", "no", "key"].includes(tokens[i + 1].text)) {
      return { ok: false, reason: "row locks (FOR UPDATE/SHARE) are not allowed in a scored query" };
    }
    // data-modifying CTEs: WITH x AS (DELETE ... RETURNING ...)
    if (t.text === "insert" || t.text === "update" || t.text === "delete" || t.text === "replace" && tokens[i + 1]?.text === "into") {
      return { ok: false, reason: `${t.text.toUpperCase()} is not allowed in a scored query` };
    }
    if ((t.text === "create" || t.text === "drop" || t.text === "alter") && t.depth === 0) {
      return { ok: false, reason: `${t.text.toUpperCase()} is not allowed in a scored query` };
    }
  }
  return { ok: true, sql: text, tokens };
}

/** Word-level tokens for n-gram similarity: keywords and identifiers lower-cased, literals verbatim. */
export function ngramTokens(tokens: Token[]): string[] {
  return tokens.map((t) => (t.kind === "quoted" ? t.text.toLowerCase() : t.text));
}

/**
 * SQLite's double-quoted string literals (its "DQS" misfeature, which Spider's and BIRD's gold
 * queries rely on: `WHERE country = "France"`). SQLite's rule: a double-quoted token that
 * resolves to no column is a string literal. better-sqlite3's bundled SQLite is compiled with
 * SQLITE_DQS=0, where that token is the error `no such column: "France" - should this be a string
 * literal in single-quotes?` instead, which SQLite raises exactly where the rule would have
 * applied. `dqsRewrite` turns that error back into the rule: every unqualified double-quoted
 * token spelled as the one named (not `t."x"` nor `"t".x`) becomes a single-quoted literal.
 * Returns the rewritten text and the literal, or null when the error is not that one (or names
 * no such token). Linear in the text's length.
 */
/** SQLite names the token unescaped (`"a""b"` is named `"a"b"`): the name is everything between the outer quotes. */
const SQLITE_DQS_ERROR = /^no such column: "(.*)" - should this be a string literal in single-quotes\?$/s;
/** PostgreSQL's error for a double-quoted token that names no column. */
const PG_NO_COLUMN = /column "((?:[^"]|"")*)" does not exist/;

export function dqsRewrite(sql: string, error: string, dialect: Dialect = "sqlite"): { sql: string; literal: string } | null {
  const m = (dialect === "sqlite" ? SQLITE_DQS_ERROR : PG_NO_COLUMN).exec(error);
  if (!m) return null;
  const name = dialect === "sqlite" ? m[1] : m[1].replaceAll('""', '"');
  const tokens = tokenize(sql, dialect);
  const dot = (t: Token | undefined) => t !== undefined && t.kind === "punct" && t.text === ".";
  let out = "";
  let from = 0;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.kind !== "quoted" || t.quote !== '"' || t.text !== name || dot(tokens[k - 1]) || dot(tokens[k + 1])) continue;
    out += `${sql.slice(from, t.start)}'${name.replaceAll("'", "''")}'`;
    from = t.end!;
  }
  if (from === 0) return null;
  return { sql: out + sql.slice(from), literal: name };
}

/**
 * Distinct double-quoted literals one query may have read as SQLite reads them: each costs a
 * prepare (SQLite names one per error), so a query of 32,000 characters costs at most this many
 * + 1 prepares (~33 x 1 ms) rather than one per token (3,000 literals: 6.6 s of CPU). Spider's
 * and BIRD's golds have a handful.
 */
export const MAX_DQS_LITERALS = 32;

/**
 * `prepare(sql)`, applying SQLite's double-quoted-literal rule on the errors above: one retry per
 * distinct name SQLite reports, at most MAX_DQS_LITERALS. Returns what prepared and the tokens
 * read as literals; throws the last error when the rule does not apply (or past the cap, with a
 * note saying so).
 */
export function prepareWithDqs<T>(sql: string, prepare: (sql: string) => T, dialect: Dialect = "sqlite"): { value: T; sql: string; literals: string[] } {
  const literals: string[] = [];
  for (;;) {
    try {
      return { value: prepare(sql), sql, literals };
    } catch (err) {
      const next = dqsRewrite(sql, (err as Error).message ?? "", dialect);
      if (!next) throw err;
      if (literals.length >= MAX_DQS_LITERALS) {
        (err as Error).message += ` (more than ${MAX_DQS_LITERALS} double-quoted literals: write string literals in single quotes)`;
        throw err;
      }
      sql = next.sql;
      literals.push(next.literal);
    }
  }
}
