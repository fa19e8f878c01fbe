/**
 * The schema items a query names, read with node-sql-parser. Its generated PEG parser has no
 * memo table, so some texts cost time exponential in their nesting (`CAST(` five times, not
 * closed: 0.5 s; eight times, closed, without `AS`: 6 s), and one 58-character text makes V8
 * abort the whole process ("invalid size error"). It therefore runs only in its own process
 * (parse-child.ts, driven by parse-process.ts), never on the server's thread.
 */
import sqliteGrammar from "node-sql-parser/build/sqlite.js";
import postgresGrammar from "node-sql-parser/build/postgresql.js";
import type { Engine } from "../../src/sql/types.js";
import { MAX_PARSE_CHARS } from "./parse-process.js";

// The two dialects' builds, not the package's all-dialects one: 75 ms to load instead of ~190,
// paid again by every process that replaces one killed at its budget (same parsers, same results)
const parsers = { sqlite: new sqliteGrammar.Parser(), postgres: new postgresGrammar.Parser() };

/**
 * "table:<name>" and "column:<name>" (lower-cased; columns by name, since aliases and
 * unqualified names make the owning table guesswork). Null when the parser cannot read the query.
 */
export function schemaItems(sql: string, engine: Engine): Set<string> | null {
  if (sql.length > MAX_PARSE_CHARS) return null;
  const opt = { database: engine === "postgres" ? "postgresql" : "sqlite" };
  try {
    const items = new Set<string>();
    const parser = parsers[engine];
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
