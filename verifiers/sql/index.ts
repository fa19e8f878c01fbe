/**
 * sql: execution accuracy. The model's query and the gold query run on the same database
 * (SQLite in a pool of killable child processes, or PostgreSQL in a READ ONLY transaction) and their results
 * are compared as Spider's test-suite evaluation does by default, or as BIRD does. Reasoning-SQL's
 * partial rewards (syntax, schema linking, n-gram similarity) are in details and can be blended
 * in with `weights`.
 */
import { Type, type Static } from "@sinclair/typebox";
import { defineVerifier } from "../../src/core/verifier.js";
import { InvalidItemError, type Outcome } from "../../src/core/types.js";
import { checkQuery, dqsRewrite, hasTopLevelOrderBy, MAX_DQS_LITERALS, type QueryCheck } from "../../src/sql/lex.js";
import { DB_ID, UnknownDatabaseError, type SqlService } from "../../src/sql/service.js";
import type { QueryOutcome } from "../../src/sql/types.js";
import { LRUCache } from "lru-cache";
import { compareResults, digestMatch, digestRule, goldDigest, type CompareOptions } from "./compare.js";
import { extractSql, MAX_SQL_CHARS } from "./extract.js";
import { ngramSimilarity, schemaLinking } from "./partial.js";
import { ParseProcess, PARSE_BUDGET_MS } from "./parse-process.js";

const dbId = (description: string) => Type.String({ pattern: DB_ID.source, description });
const weight = (what: string) => Type.Optional(Type.Number({ minimum: 0, maximum: 1000, description: `weight of ${what}` }));

export const SqlReference = Type.Union([
  Type.String({ minLength: 1, maxLength: MAX_SQL_CHARS, description: "the gold SQL query" }),
  Type.Object(
    {
      sql: Type.String({ minLength: 1, maxLength: MAX_SQL_CHARS, description: "the gold SQL query" }),
      database: Type.Optional(dbId("the database to run both queries on (overrides options.database)")),
    },
    { additionalProperties: false },
  ),
]);

export const SqlOptions = Type.Object(
  {
    database: Type.Optional(dbId("the database to run both queries on (GET /databases lists them)")),
    db_id: Type.Optional(dbId("alias of database, as Spider and BIRD name it")),
    rows: Type.Union([Type.Literal("bag"), Type.Literal("set")], {
      default: "bag",
      description: "bag: duplicate rows count (Spider test-suite); set: they do not (BIRD)",
    }),
    order: Type.Union([Type.Literal("auto"), Type.Literal("ignore"), Type.Literal("always")], {
      default: "auto",
      description: "row order matters: auto = when the gold query has a top-level ORDER BY",
    }),
    column_order: Type.Union([Type.Literal("any"), Type.Literal("strict")], {
      default: "any",
      description: "any: columns may come in another order (Spider test-suite); strict: same order (BIRD)",
    }),
    float_digits: Type.Integer({
      minimum: 0,
      maximum: 17,
      default: 12,
      description:
        "float tolerance: two numbers, not both integers, are equal when they differ by at most 10^-float_digits of the larger in magnitude; two integers always compare exactly; 0 = every number exact (BIRD, Spider)",
    }),
    weights: Type.Optional(
      Type.Object(
        {
          execution: weight("execution match"),
          syntax: weight("syntax (the query prepares on the engine)"),
          schema: weight("schema linking (Jaccard of tables and columns with the gold query's)"),
          ngram: weight("n-gram similarity with the gold query"),
        },
        { additionalProperties: false, description: "blend of partial rewards (Reasoning-SQL); reward = sum(w*r)/sum(w); default execution alone" },
      ),
    ),
    ngram: Type.Integer({ minimum: 1, maximum: 8, default: 2, description: "n of the n-gram similarity" }),
    empty_gold: Type.Union([Type.Literal("match"), Type.Literal("zero"), Type.Literal("invalid")], {
      default: "match",
      description:
        "a gold query that returns no rows: match = an empty model result matches it (Spider test-suite, BIRD; a policy can learn to return nothing with placeholder values); zero = the item scores 0; invalid = the item is refused",
    }),
  },
  { additionalProperties: false },
);

type Weights = NonNullable<Static<typeof SqlOptions>["weights"]>;

function blend(parts: { execution: number; syntax: number; schema: number | null; ngram: number }, w: Weights): number {
  let num = 0;
  let den = 0;
  for (const k of ["execution", "syntax", "schema", "ngram"] as const) {
    const wk = w[k] ?? 0;
    if (!wk) continue;
    num += wk * (parts[k] ?? 0);
    den += wk;
  }
  return den > 0 ? num / den : 0;
}

export const sql = defineVerifier({
  name: "sql",
  description: "The model's SQL returns the same result as the gold SQL on a real database (SQLite or PostgreSQL); optional Reasoning-SQL partial rewards.",
  reference: SqlReference,
  options: SqlOptions,
  // admission: refused with 429 past ASSAY_SQL_MAX_WAIT_MS of SQL backlog
  usesSql: true,
  async verify(item, ctx): Promise<Outcome> {
    const service = await ctx.services.sql();
    const o = item.options;
    const ref = typeof item.reference === "string" ? { sql: item.reference, database: undefined } : item.reference;
    const id = ref.database ?? o.database ?? o.db_id;
    if (!id) throw new InvalidItemError("name the database: options.database (or options.db_id), or reference.database", "options");
    let engine;
    try {
      engine = service.database(id).engine;
    } catch (err) {
      if (err instanceof UnknownDatabaseError) throw new InvalidItemError(err.message, ref.database ? "reference" : "options");
      throw err;
    }
    let gold = goldCheck(ref.sql, engine);
    if (!gold.ok) throw new InvalidItemError(`the gold query is not one read-only query: ${gold.reason}`);
    const known = engine === "postgres" ? pgConverted.get(gold.sql) : undefined;
    const convertedGold = known && goldCheck(known.sql, engine);
    if (convertedGold && convertedGold.ok) gold = convertedGold;
    const w: Weights = o.weights ?? { execution: 1 };
    if (!Object.values(w).some((x) => x && x > 0)) throw new InvalidItemError("options.weights: at least one weight must be above 0", "options");

    const { sql: text, source } = extractSql(item.response);
    const details: Record<string, unknown> = { database: id, engine, extracted_from: source, sql: text.slice(0, 2_000), ...(known ? { gold_dqs: known.literals } : {}) };
    const pred = text.length <= MAX_SQL_CHARS ? checkQuery(text, engine) : null;
    const ngram = text.length <= MAX_SQL_CHARS ? ngramSimilarity(pred?.ok ? pred.tokens : text, gold.tokens, o.ngram) : 0;
    // the wait for a parse process does not count against the item's deadline (a flood of
    // queries that each run the parser to its budget must not make other items null); the parse
    // itself never runs past what is left of it
    let schema: { score: number; note?: string } | null = null;
    if (w.schema && text.length > MAX_SQL_CHARS) schema = { score: 0, note: "query too long" };
    else if (w.schema) {
      const linking = schemaLinking(text, gold.sql, engine, parserOf(service), { signal: ctx.signal, get deadline() { return ctx.deadline; } });
      schema = await (ctx.unclocked ? ctx.unclocked(linking) : linking);
    }
    const score = (execution: number, syntax: number, reason: string, extra: Record<string, unknown> = {}): Outcome => {
      const parts = { execution, syntax, schema: schema?.score ?? null, ngram };
      return {
        reward: blend(parts, w),
        reason,
        details: { ...details, ...extra, rewards: { ...parts, ...(schema?.note ? { schema_note: schema.note } : {}) } },
      };
    };

    if (!text) return score(0, 0, "no SQL found in the response");
    if (!pred) return score(0, 0, `SQL longer than ${MAX_SQL_CHARS} characters is not run`);

    // The deadline as it stands when a query gets its process: waiting for one (or for a gold
    // result another item is computing) stops the item's clock, so only its own queries count.
    const q = { get deadline() { return ctx.deadline; }, signal: ctx.signal, queued: ctx.unclocked?.bind(ctx) };
    // A gold result at hand (cached, or being run for another item of the group): the model's
    // query waits for it and goes with its digest, so a result that equals it comes back without
    // its rows (issue 35). Otherwise both run at once and the model's rows come back.
    const atHand = pred.ok && service.goldAtHand(id, gold.sql);
    const ordered = o.order === "always" || (o.order === "auto" && hasTopLevelOrderBy(gold.tokens));
    const rule: CompareOptions = { rows: o.rows, ordered, columnOrder: o.column_order, floatDigits: o.float_digits };
    // on SQLite the gold's rows stay in the process that ran it (issue 35): only how many come
    // back, and the model's query is digested against them there
    const goldP = service.goldQuery(id, gold.sql, { ...q, get deadline() { return ctx.deadline; }, stay: true });
    // Not at hand: the gold runs now, and the model's query goes in the same message to the same
    // SQLite process, which digests the model's result against the gold's it just ran (issue 35:
    // the cold path in one round trip, the model's rows sent back only when they differ)
    let predP = pred.ok && !atHand ? service.query(id, pred.sql, { ...q, get deadline() { return ctx.deadline; }, digest: { ...digestRule(rule), of: gold.sql, maxRows: DIGEST_MAX_GOLD_ROWS } }) : null;
    predP?.catch(() => {}); // settled below; a gold failure returns first
    let g = await goldP;
    if (!g.ok && engine === "postgres" && gold.ok) {
      // A gold written for SQLite's double-quoted literals (Spider, BIRD): on PostgreSQL "France"
      // is a column that does not exist. Converted as SQLite would read it (lex.ts dqsRewrite),
      // once per token, and remembered, so later items run the converted gold directly.
      const converted = await convertPgGold(gold, g.error, (s) => service.goldQuery(id, s, q));
      if (converted) ({ gold, g } = converted), (details.gold_dqs = converted.literals);
    }
    if (!g.ok) {
      return { reward: null, reason: `the gold query failed on ${id}: ${g.error}`, details: { ...details, gold_error: g.error, gold_limit: g.limit ?? null } };
    }
    details.gold_cached = g.cached;
    const goldCount = g.kept ? g.kept.rows : g.rows.length;
    const goldEmpty = goldCount === 0;
    details.gold_empty = goldEmpty;
    if (goldEmpty && o.empty_gold === "invalid") {
      throw new InvalidItemError(
        `the gold query returns no rows on ${id}, and options.empty_gold is "invalid": an empty gold rewards any query that returns nothing (placeholder values); give a gold that returns rows, or set empty_gold to "zero" or "match"`,
      );
    }
    if (g.dqs?.length) details.gold_dqs = g.dqs;
    if (!pred.ok) return score(0, 0, `query refused: ${pred.reason}`, { error: pred.reason });
    if (!predP) {
      // the gold's rows stayed in a SQLite process: the model's query goes there, digested
      // against them (run again there if they are no longer kept); else against the rows here
      const gd = g.kept
        ? { ...digestRule(rule), of: gold.sql, maxRows: DIGEST_MAX_GOLD_ROWS, held: true }
        : g.rows.length <= DIGEST_MAX_GOLD_ROWS ? { ...digestRule(rule), gold: goldDigest(g.rows, rule) } : undefined;
      predP = service.query(id, pred.sql, { get deadline() { return ctx.deadline; }, signal: q.signal, queued: q.queued, digest: gd });
    }
    const p = await predP;
    if (!p.ok) {
      const syntax = p.stage === "execute" ? 1 : 0;
      const work = p.work ? ` (it ran ${Math.round(p.work.cpu_ms)} ms on a CPU and waited ${Math.round(p.work.wait_ms)} ms for one)` : "";
      const why = p.limit === "timeout" ? `query stopped at its time limit: ${p.error}${work}` : p.limit ? `query result over the cap: ${p.error}` : `query failed: ${p.error}`;
      return score(0, syntax, why, { error: p.error.slice(0, 1_000), limit: p.limit ?? null, ...(p.work ? { work: p.work } : {}) });
    }
    const dqs = p.dqs?.length ? { dqs: p.dqs } : {};
    const predRows = p.matched ? p.matched.rows : p.rows.length;
    if (goldEmpty && o.empty_gold === "zero") {
      return score(0, 1, `the gold query returns no rows, and options.empty_gold is "zero": the item scores 0 whatever the model returns`, { rows: { model: predRows, gold: 0 }, ...dqs });
    }
    // a result whose digest equals the gold's came back without its rows: the comparison's verdict on it
    let goldRows = g.rows;
    if (!p.matched && g.kept) {
      // a mismatch on a gold whose rows stayed in a SQLite process: they came with the model's
      // result, or (that process no longer had them, or the model's query went elsewhere) are fetched now
      if (p.gold) goldRows = p.gold;
      else {
        const again = await service.query(id, gold.sql, { get deadline() { return ctx.deadline; }, signal: q.signal, queued: q.queued });
        if (!again.ok) return { reward: null, reason: `the gold query failed on ${id} when its rows were fetched for the comparison: ${again.error}`, details: { ...details, gold_error: again.error, gold_limit: again.limit ?? null } };
        goldRows = again.rows;
      }
    }
    const cmp = p.matched ? digestMatch(goldCount, p.matched.rows, rule) : await compareResults(goldRows, p.rows, rule);
    return score(cmp.match ? 1 : 0, 1, cmp.reason, {
      ordered,
      rows: { model: predRows, gold: goldCount },
      columns: { model: p.columns, gold: g.columns },
      ...(cmp.permutation ? { permutation: cmp.permutation } : {}),
      ...dqs,
      ms: Math.round(p.ms * 100) / 100,
      ...(p.cpuMs !== undefined ? { cpu_ms: Math.round(p.cpuMs * 100) / 100 } : {}),
    });
  },
});

/**
 * The schema-linking parse processes, one set per SQL service: as many as it has SQLite processes
 * (ASSAY_SQL_WORKERS, by default one a core), started as the queue needs them; their backlog
 * counts in the service's admission, and they close with it.
 */
const parsers = new WeakMap<SqlService, ParseProcess>();
function parserOf(service: SqlService): ParseProcess {
  let p = parsers.get(service);
  if (!p) {
    parsers.set(service, (p = new ParseProcess(PARSE_BUDGET_MS, service.opts.threads)));
    service.attach(p);
  }
  return p;
}

/**
 * Largest gold result digested for the model's query (on the server, once per gold and rule:
 * a few ms at this size); a larger one is compared row by row as before.
 */
export const DIGEST_MAX_GOLD_ROWS = 4_096;

/**
 * Gold queries' checks (lexing, guards), by engine and text: a GRPO group's items share one gold,
 * so it is lexed once, not once per item. Bounded by the texts' total length.
 */
const goldChecks = new LRUCache<string, QueryCheck>({ max: 4_096, maxSize: 8_000_000, sizeCalculation: (_v, k) => Math.max(1, k.length * 4) });

function goldCheck(sql: string, engine: "sqlite" | "postgres"): QueryCheck {
  const key = `${engine}\0${sql}`;
  let c = goldChecks.get(key);
  if (!c) goldChecks.set(key, (c = checkQuery(sql, engine)));
  return c;
}

type GoldOutcome = QueryOutcome & { cached: boolean };

/** Golds converted for PostgreSQL (original text -> converted), bounded. */
const pgConverted = new Map<string, { sql: string; literals: string[] }>();
const MAX_CONVERTED = 1_000;

/**
 * A PostgreSQL gold that failed with `column "X" does not exist` where X is a double-quoted
 * token: rerun with such tokens as string literals (SQLite's rule), one name at a time, at most
 * MAX_DQS_LITERALS names. The result, or null when the rule does not apply.
 */
async function convertPgGold(
  gold: Extract<QueryCheck, { ok: true }>,
  error: string,
  run: (sql: string) => Promise<GoldOutcome>,
): Promise<{ gold: Extract<QueryCheck, { ok: true }>; g: GoldOutcome; literals: string[] } | null> {
  let text = gold.sql;
  const literals: string[] = [];
  let last: GoldOutcome | null = null;
  for (let why = error; ; why = last.error) {
    const next = literals.length < MAX_DQS_LITERALS ? dqsRewrite(text, why, "postgres") : null;
    if (!next) break;
    text = next.sql;
    literals.push(next.literal);
    last = await run(text);
    if (last.ok) break;
  }
  if (!last) return null;
  const checked = checkQuery(text, "postgres");
  if (!checked.ok) return null;
  if (last.ok) {
    if (pgConverted.size >= MAX_CONVERTED) pgConverted.delete(pgConverted.keys().next().value!);
    pgConverted.set(gold.sql, { sql: text, literals });
  }
  return { gold: checked, g: last, literals };
}

export default [sql];
