/**
 * PostgreSQL through `pg`. Each query runs in its own READ ONLY transaction with a
 * statement_timeout, through a cursor (DECLARE ... CURSOR FOR), fetched in chunks so the row
 * and byte caps hold while the rows arrive; the transaction is always rolled back. The role in
 * the connection URL should be able to SELECT and nothing else (scripts/setup-postgres.sh shows
 * one); the READ ONLY transaction holds even when it can do more.
 */
import pg from "pg";
import type { Cell, QueryOutcome, SchemaTable } from "./types.js";

const NUMERIC_OIDS = new Set([20, 21, 23, 26, 700, 701, 1700]); // int8 int2 int4 oid float4 float8 numeric

/**
 * Values as text, except numbers (so 1 = 1.0 as in the Python evaluators) and booleans (as 1/0,
 * which is what True/False equal in Python). Dates and times stay in PostgreSQL's text form.
 */
const types = {
  getTypeParser(oid: number, format?: string) {
    if (format === "binary") return (v: unknown) => v;
    if (NUMERIC_OIDS.has(oid)) return (v: string) => Number(v);
    if (oid === 16) return (v: string) => (v === "t" ? 1 : 0);
    return (v: string) => v;
  },
} as unknown as pg.CustomTypesConfig;

const FETCH = 512;

export class PostgresEngine {
  private readonly pools = new Map<string, pg.Pool>();
  constructor(private readonly opts: { poolSize: number; connectTimeoutMs: number }) {}

  private pool(url: string): pg.Pool {
    let p = this.pools.get(url);
    if (!p) {
      p = new pg.Pool({ connectionString: url, max: this.opts.poolSize, connectionTimeoutMillis: this.opts.connectTimeoutMs, idleTimeoutMillis: 30_000, types });
      p.on("error", () => {}); // an idle client that dies is dropped by the pool
      this.pools.set(url, p);
    }
    return p;
  }

  /** Connection failures throw (machinery); everything the query itself does is an outcome. */
  async query(url: string, sql: string, o: { runMs: number; maxRows: number; maxBytes: number }): Promise<QueryOutcome> {
    const client = await this.pool(url).connect();
    let broken = false;
    try {
      await client.query(`BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = ${Math.max(1, Math.round(o.runMs))}; SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1000, Math.round(o.runMs * 2))}`);
      const t0 = performance.now();
      try {
        await client.query(`DECLARE assay_q NO SCROLL CURSOR FOR ${sql}`);
      } catch (err) {
        return failure(err, "prepare");
      }
      const rows: Cell[][] = [];
      let columns: string[] = [];
      let bytes = 0;
      for (;;) {
        let r: pg.QueryArrayResult;
        try {
          r = await client.query({ text: `FETCH FORWARD ${FETCH} FROM assay_q`, rowMode: "array" });
        } catch (err) {
          return failure(err, "execute");
        }
        columns = r.fields.map((f) => f.name);
        for (const row of r.rows) {
          if (rows.length >= o.maxRows) return { ok: false, stage: "execute", error: `result has more than ${o.maxRows} rows`, limit: "rows" };
          const cells = row.map(toCell);
          for (const c of cells) bytes += c === null ? 1 : typeof c === "number" ? 8 : c.length * 2 + 8;
          if (bytes > o.maxBytes) return { ok: false, stage: "execute", error: `result is larger than ${o.maxBytes} bytes`, limit: "bytes" };
          rows.push(cells);
        }
        if (r.rows.length < FETCH) break;
      }
      return { ok: true, columns, rows, bytes, ms: performance.now() - t0 };
    } catch (err) {
      broken = true;
      throw err;
    } finally {
      try {
        await client.query("ROLLBACK");
      } catch {
        broken = true;
      }
      client.release(broken);
    }
  }

  async schema(url: string, runMs: number): Promise<SchemaTable[]> {
    const client = await this.pool(url).connect();
    try {
      await client.query(`BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = ${runMs}`);
      const cols = await client.query<{ table_name: string; column_name: string; data_type: string }>(
        `SELECT table_name, column_name, data_type FROM information_schema.columns
         WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
      );
      const keys = await client.query<{ table_name: string; column_name: string; kind: string; ref: string | null }>(
        `SELECT cl.relname AS table_name, a.attname AS column_name, c.contype AS kind,
                CASE WHEN c.contype = 'f' THEN rc.relname || '(' || ra.attname || ')' END AS ref
         FROM pg_constraint c
         JOIN pg_class cl ON cl.oid = c.conrelid
         JOIN pg_namespace n ON n.oid = cl.relnamespace AND n.nspname = current_schema()
         CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, i)
         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
         LEFT JOIN pg_class rc ON rc.oid = c.confrelid
         LEFT JOIN pg_attribute ra ON ra.attrelid = c.confrelid AND ra.attnum = c.confkey[k.i]
         WHERE c.contype IN ('p', 'f')`,
      );
      const tables = new Map<string, SchemaTable>();
      for (const c of cols.rows) {
        let t = tables.get(c.table_name);
        if (!t) tables.set(c.table_name, (t = { name: c.table_name, columns: [], foreign_keys: [], rows: null }));
        t.columns.push({ name: c.column_name, type: c.data_type, primary_key: false });
      }
      for (const k of keys.rows) {
        const t = tables.get(k.table_name);
        if (!t) continue;
        if (k.kind === "p") {
          const col = t.columns.find((c) => c.name === k.column_name);
          if (col) col.primary_key = true;
        } else if (k.ref) t.foreign_keys.push({ column: k.column_name, references: k.ref });
      }
      // views (and materialized views, foreign tables) are listed, never evaluated: only base tables are counted
      const base = new Set((await client.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema() WHERE c.relkind IN ('r', 'p')`,
      )).rows.map((r) => r.name));
      for (const t of tables.values()) {
        if (!base.has(t.name)) {
          t.view = true;
          continue;
        }
        try {
          await client.query("SAVEPOINT c");
          const r = await client.query<{ n: number }>(`SELECT count(*) AS n FROM "${t.name.replaceAll('"', '""')}"`);
          t.rows = Number(r.rows[0].n);
        } catch {
          await client.query("ROLLBACK TO SAVEPOINT c");
        }
      }
      return [...tables.values()].sort((a, b) => a.name.localeCompare(b.name));
    } finally {
      await client.query("ROLLBACK").catch(() => {});
      client.release();
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.end().catch(() => {})));
    this.pools.clear();
  }
}

function toCell(v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === "number" || typeof v === "string") return v;
  if (Buffer.isBuffer(v)) return `\u0000blob:${v.toString("hex")}`;
  return String(v);
}

function failure(err: unknown, stage: "prepare" | "execute"): QueryOutcome {
  const e = err as { message?: string; code?: string };
  if (e.code === "57014") return { ok: false, stage: "execute", error: e.message ?? "canceled", limit: "timeout" };
  // any 42xxx (syntax error or access rule violation) is the text's fault even when raised at FETCH
  return { ok: false, stage: e.code?.startsWith("42") ? "prepare" : stage, error: e.message ?? String(err) };
}
