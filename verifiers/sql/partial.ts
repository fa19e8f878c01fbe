/**
 * Reasoning-SQL's partial rewards (Pourreza et al., 2025, "Reasoning-SQL: Reinforcement Learning
 * with SQL Tailored Partial Rewards for Reasoning-Enhanced Text-to-SQL", arXiv:2503.23157, §3):
 * syntax (the query is valid for the engine), schema linking (Jaccard similarity of the tables
 * and columns the query uses with the gold query's) and n-gram similarity (Jaccard similarity of
 * the two queries' token n-grams). Execution match is the comparison in compare.ts.
 */
import { LRUCache } from "lru-cache";
import { tokenize, ngramTokens, type Token } from "../../src/sql/lex.js";
import type { Engine } from "../../src/sql/types.js";
import { MAX_PARSE_CHARS, ParseProcess, type Parsed } from "./parse-process.js";

export { MAX_PARSE_CHARS };

export function jaccard<T>(a: Set<T>, b: Set<T>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/**
 * Why a text is not worth the parser's time, read by the linear lexer: too long, or its
 * parentheses do not pair up (no parser reads such a query, and unclosed nesting is where
 * node-sql-parser's time grows fastest). Null when it may be parsed.
 */
export function unparsable(sql: string, engine: Engine): string | null {
  if (sql.length > MAX_PARSE_CHARS) return `query longer than ${MAX_PARSE_CHARS} characters is not parsed`;
  let depth = 0;
  for (const t of tokenize(sql, engine)) {
    if (t.kind !== "punct") continue;
    if (t.text === "(") depth++;
    else if (t.text === ")" && --depth < 0) break;
  }
  return depth === 0 ? null : "query not readable by the SQL parser (its parentheses do not pair up)";
}

let shared: ParseProcess | undefined;
/** The schema items of a query, read in the parse process (schema-items.ts says why). */
function itemsOf(sql: string, engine: Engine, parser: ParseProcess): Promise<Parsed> {
  const why = unparsable(sql, engine);
  return why ? Promise.resolve({ unreadable: why }) : parser.items(sql, engine);
}

const goldItems = new LRUCache<string, Promise<Parsed>>({ max: 4096 });

/** Schema-linking reward: Jaccard of schema items with the gold query's; 0 when the model's does not parse. */
export async function schemaLinking(pred: string, gold: string, engine: Engine, parser: ParseProcess = (shared ??= new ParseProcess())): Promise<{ score: number; note?: string }> {
  const key = `${engine}\0${gold}`;
  let g = goldItems.get(key);
  if (!g) {
    goldItems.set(key, (g = itemsOf(gold, engine, parser)));
    g.catch(() => goldItems.delete(key));
  }
  const [gi, p] = await Promise.all([g, itemsOf(pred, engine, parser)]);
  if ("unreadable" in gi) return { score: 0, note: "gold query not readable by the SQL parser" };
  if ("unreadable" in p) return { score: 0, note: p.unreadable };
  return { score: jaccard(p.items, gi.items) };
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
