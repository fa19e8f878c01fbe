/**
 * Reasoning-SQL's partial rewards (Pourreza et al., 2025, "Reasoning-SQL: Reinforcement Learning
 * with SQL Tailored Partial Rewards for Reasoning-Enhanced Text-to-SQL", arXiv:2503.23157, §3):
 * syntax (the query is valid for the engine), schema linking (Jaccard similarity of the tables
 * and columns the query uses with the gold query's) and n-gram similarity (Jaccard similarity of
 * the two queries' token n-grams). Execution match is the comparison in compare.ts.
 */
import nsp from "node-sql-parser";
import { LRUCache } from "lru-cache";
import { tokenize, ngramTokens, type Token } from "../../src/sql/lex.js";
import type { Engine } from "../../src/sql/types.js";

const parser = new nsp.Parser();

/** node-sql-parser is a PEG parser: ~13 µs a character, so longer text is not parsed (linking 0). */
export const MAX_PARSE_CHARS = 2_000;

export function jaccard<T>(a: Set<T>, b: Set<T>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/**
 * The schema items a query names: "table:<name>" and "column:<name>" (lower-cased; columns by
 * name, since aliases and unqualified names make the owning table guesswork). Null when the
 * parser cannot read the query.
 */
export function schemaItems(sql: string, engine: Engine): Set<string> | null {
  if (sql.length > MAX_PARSE_CHARS) return null;
  const opt = { database: engine === "postgres" ? "postgresql" : "sqlite" };
  try {
    const items = new Set<string>();
    for (const t of parser.tableList(sql, opt)) items.add(`table:${t.split("::").pop()!.toLowerCase()}`);
    for (const c of parser.columnList(sql, opt)) {
      const name = c.split("::").pop()!;
      if (name !== "(.*)") items.add(`column:${name.toLowerCase()}`);
    }
    return items;
  } catch {
    return null;
  }
}

const goldItems = new LRUCache<string, { items: Set<string> | null }>({ max: 4096 });

/** Schema-linking reward: Jaccard of schema items with the gold query's; 0 when the model's does not parse. */
export function schemaLinking(pred: string, gold: string, engine: Engine): { score: number; note?: string } {
  const key = `${engine}\0${gold}`;
  let g = goldItems.get(key);
  if (!g) goldItems.set(key, (g = { items: schemaItems(gold, engine) }));
  if (!g.items) return { score: 0, note: "gold query not readable by the SQL parser" };
  const p = schemaItems(pred, engine);
  if (!p) return { score: 0, note: pred.length > MAX_PARSE_CHARS ? `query longer than ${MAX_PARSE_CHARS} characters is not parsed` : "query not readable by the SQL parser" };
  return { score: jaccard(p, g.items) };
}

function ngrams(tokens: Token[], n: number): Set<string> {
  const toks = ngramTokens(tokens);
  const out = new Set<string>();
  if (toks.length < n) {
    if (toks.length) out.add(toks.join(" "));
    return out;
  }
  for (let i = 0; i + n <= toks.length; i++) {
    let g = toks[i];
    for (let k = 1; k < n; k++) g += " " + toks[i + k];
    out.add(g);
  }
  return out;
}

/** The gold's n-gram sets, kept with its tokens (the verifier keeps a gold's lexing by its text): once per gold and n. */
const goldNgrams = new WeakMap<Token[], Map<number, Set<string>>>();

/**
 * N-gram similarity reward: Jaccard of the token n-gram sets (keywords case-folded). Takes SQL or
 * its tokens; the gold's set is computed once per tokens array when given tokens.
 */
export function ngramSimilarity(pred: string | Token[], gold: string | Token[], n: number): number {
  const toks = (x: string | Token[]) => (typeof x === "string" ? tokenize(x) : x);
  let g: Set<string> | undefined;
  if (typeof gold === "string") g = ngrams(tokenize(gold), n);
  else {
    let byN = goldNgrams.get(gold);
    g = byN?.get(n);
    if (!g) {
      if (!byN) goldNgrams.set(gold, (byN = new Map()));
      byN.set(n, (g = ngrams(gold, n)));
    }
  }
  return jaccard(ngrams(toks(pred), n), g);
}
