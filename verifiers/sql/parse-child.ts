/**
 * The process that reads schema items with node-sql-parser (schema-items.ts), one query at a
 * time, for parse-process.ts: a query that runs the parser too long is stopped by killing this
 * process, and one that makes V8 abort takes only this process with it.
 */
import { schemaItems } from "./schema-items.js";
import type { Engine } from "../../src/sql/types.js";

process.on("message", (m: { id: number; sql: string; engine: Engine }) => {
  const items = schemaItems(m.sql, m.engine);
  process.send!({ id: m.id, items: items ? [...items] : null });
});
// the server is gone: nothing is left to answer
process.on("disconnect", () => process.exit(0));
process.send!({ ready: true });
