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
import { MAX_PARSE_CHARS, ParseProcess, type ParseFor, type Parsed } from "./parse-process.js";

export { MAX_PARSE_CHARS };

export function jaccard<T>(a: Set<T>, b: Set<T>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/**
 * Why a text is not worth the parser's time, read by the linear lexer: too long, its parentheses
 * do not pair up (no parser reads such a query, and unclosed nesting is where node-sql-parser's
 * time grows fastest), or it holds one of the two invalid shapes the parser backtracks on at a
 * cost exponential in their nesting: a `CAST(` with no `AS` directly inside it (`CAST(` eight
 * deep: 3 s; six: 1.6 s), or a `CASE` with no `END` before its parentheses close (PostgreSQL's
 * grammar: `CASE WHEN(` eight deep, 2.4 s). Neither engine accepts either (`CAST(x)` and an
 * unterminated CASE are syntax errors), so such a query's schema score is 0 at once, whatever
 * its depth. Null when it may be parsed.
 */
export function unparsable(sql: string, engine: Engine): string | null {
  if (sql.length > MAX_PARSE_CHARS) return `query longer than ${MAX_PARSE_CHARS} characters is not parsed`;
  // one frame per open parenthesis (and one for the text): a CAST's, whether an AS sat directly in it, and its open CASEs
  const stack: { cast: boolean; as: boolean; cases: number }[] = [{ cast: false, as: true, cases: 0 }];
  let prev: Token | undefined;
  for (const t of tokenize(sql, engine)) {
    const top = stack[stack.length - 1];
    if (t.kind === "word") {
      if (t.text === "as") top.as = true;
      else if (t.text === "case") top.cases++;
      else if (t.text === "end" && top.cases > 0) top.cases--;
    } else if (t.kind === "punct" && t.text === "(") {
      const cast = prev?.kind === "word" && (prev.text === "cast" || prev.text === "try_cast");
      stack.push({ cast, as: !cast, cases: 0 });
    } else if (t.kind === "punct" && t.text === ")") {
      if (stack.length === 1) return PARENS;
      const f = stack.pop()!;
      if (!f.as) return "query not readable by the SQL parser (a CAST without AS)";
      if (f.cases) return "query not readable by the SQL parser (a CASE without END)";
    }
    prev = t;
  }
  if (stack.length > 1) return PARENS;
  return stack[0].cases ? "query not readable by the SQL parser (a CASE without END)" : null;
}
const PARENS = "query not readable by the SQL parser (its parentheses do not pair up)";

/** The schema items of a query, read in the parse process (schema-items.ts says why). */
function itemsOf(sql: string, engine: Engine, parser: ParseProcess, item?: ParseFor): Promise<Parsed> {
  const why = unparsable(sql, engine);
  return why ? Promise.resolve({ unreadable: why }) : parser.items(sql, engine, item);
}

/**
 * Gold queries' items by engine and text. A gold is read with the whole budget and for no item
 * in particular (an item that ends does not take its group's gold with it), and a reading that
 * was stopped (the budget on a loaded machine, a process that died) is not kept.
 */
const goldItems = new LRUCache<string, Promise<Parsed>>({ max: 4096 });

let shared: ParseProcess | undefined;

/**
 * Schema-linking reward: Jaccard of schema items with the gold query's; 0 with a note when the
 * model's does not parse or its parse was stopped. `item`: the model's item (its query is dropped
 * when the item ends and never runs past what is left of its deadline).
 */
export async function schemaLinking(
  pred: string,
  gold: string,
  engine: Engine,
  parser: ParseProcess = (shared ??= new ParseProcess()),
  item?: ParseFor,
): Promise<{ score: number; note?: string }> {
  const key = `${engine}\0${gold}`;
  let g = goldItems.get(key);
  if (!g) {
    const mine = itemsOf(gold, engine, parser);
    goldItems.set(key, (g = mine));
    const forget = () => goldItems.get(key) === mine && goldItems.delete(key);
    mine.then((r) => "stopped" in r && r.stopped && forget(), forget);
  }
  const [gi, p] = await Promise.all([g, itemsOf(pred, engine, parser, item)]);
  if ("unreadable" in gi) return { score: 0, note: gi.stopped ? `gold query not read: ${gi.unreadable}` : "gold query not readable by the SQL parser" };
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
