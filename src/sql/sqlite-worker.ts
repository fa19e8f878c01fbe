/**
 * A child process that runs one SQLite task at a time through better-sqlite3 (synchronous),
 * receiving tasks and answering over the IPC channel. A query past its deadline cannot be
 * interrupted (better-sqlite3 exposes no sqlite3_interrupt), so the pool kills this process.
 *
 * Every database is opened read-only with `PRAGMA query_only`, and a statement must be a reader
 * that SQLite itself calls read-only (`sqlite3_stmt_readonly`): together with the lexer's checks
 * (one statement, no ATTACH/PRAGMA, no load_extension) nothing a query does can write.
 */
import Database from "better-sqlite3";
import { openSync, writeSync } from "node:fs";
import { resultDigest, type DigestRule } from "./digest.js";
import { prepareWithDqs } from "./lex.js";
import { KeptGolds, STAY_MS, type KeptGold } from "./kept.js";
import { blobCell, intCell, textCell, type Cell, type QueryOutcome, type SchemaTable } from "./types.js";

/**
 * A query, optionally with the gold result's digest under the comparison's rule: a result with
 * the same digest comes back without its rows (`matched`), any other with them. The digest is
 * given (`gold`), or taken here from the result of the gold query `of` on the same database, kept
 * by this process when it ran it (`keep`: the cold path sends the gold and the model's query in one
 * message, issue 35), if it has at most `maxRows` rows; where that result is not kept, the rows
 * come back as without a digest.
 */
export type QueryTask = {
  kind: "query";
  path: string;
  version: string;
  sql: string;
  maxRows: number;
  maxBytes: number;
  digest?: DigestRule & ({ gold: string } | GoldHere);
  /** Keep the result here for a query sent after it with `digest.of` this query's text. */
  keep?: boolean;
  /**
   * With `keep`: the rows stay here and do not come back (`kept` says how many), where the result
   * was kept (at most KEEP_BYTES) and cheap to run again (at most STAY_MS); else they come back.
   */
  stay?: boolean;
};

/**
 * The gold the model's result is digested against, kept in this process: `of` is its text, and a
 * gold with more than `maxRows` rows is not digested (the rows come back). `held`: the server holds
 * no rows of it (its rows stayed here, QueryTask.stay), so where it is no longer kept here it runs
 * again now, and on a mismatch its rows come back with the model's (`gold`) for the comparison.
 */
export type GoldHere = { of: string; maxRows: number; held?: boolean };

export type WorkerTask =
  | QueryTask
  | { kind: "schema"; path: string; version: string; once?: boolean }
  | { kind: "check"; path: string }
  | { kind: "build"; path: string; script: string; maxBytes: number };

/** A task's answer, in a slice's { answers } message. */
export type Answer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string } | { id: number; skipped: true };

/** Most tables and views GET /databases describes per database; the longest view text it shows. */
export const MAX_SCHEMA_ENTRIES = 1_000;
const MAX_VIEW_SQL = 4_000;

const MAX_OPEN = 32;
/**
 * Prepared statements kept per open database, by query text (the model's queries repeat within
 * a GRPO group, and a prepare costs as much as running a small query): the statement that passed
 * the read-only checks, its columns, and the double-quoted tokens read as literals.
 */
const MAX_STATEMENTS = 256;
interface Prepared {
  stmt: Database.Statement;
  columns: string[];
  dqs: string[];
}
interface Open {
  db: Database.Database;
  statements: Map<string, Prepared>;
}
const open = new Map<string, Open>();

function handle(path: string, version: string): Database.Database {
  return opened(path, version).db;
}

function opened(path: string, version: string): Open {
  const key = `${path}\0${version}`;
  let o = open.get(key);
  if (o) {
    open.delete(key); // LRU: re-insert at the end
    open.set(key, o);
    return o;
  }
  const db = new Database(path, { readonly: true, fileMustExist: true });
  db.pragma("query_only = ON");
  db.pragma("trusted_schema = OFF");
  open.set(key, (o = { db, statements: new Map() }));
  for (const [k, old] of open) {
    if (open.size <= MAX_OPEN) break;
    open.delete(k);
    old.statements.clear();
    old.db.close();
  }
  return o;
}

/** The query's statement, from the cache or prepared (and checked read-only) now; a string says why it was refused. */
function prepared(o: Open, sql: string): Prepared | string {
  const hit = o.statements.get(sql);
  if (hit) {
    o.statements.delete(sql); // LRU: re-insert at the end
    o.statements.set(sql, hit);
    return hit;
  }
  let stmt: Database.Statement;
  let dqs: string[];
  try {
    // double-quoted literals as the references' SQLite reads them (lex.ts, prepareWithDqs)
    ({ value: stmt, literals: dqs } = prepareWithDqs(sql, (s) => o.db.prepare(s)));
  } catch (err) {
    return (err as Error).message;
  }
  if (!stmt.reader || !stmt.readonly) return "not a read-only query";
  const p: Prepared = { stmt: stmt.raw(true).safeIntegers(true), columns: stmt.columns().map((c) => c.name), dqs };
  o.statements.set(sql, p);
  if (o.statements.size > MAX_STATEMENTS) o.statements.delete(o.statements.keys().next().value!);
  return p;
}

/** A SQLite value as the comparison sees it: blobs become tagged hex, and no text poses as a tagged value (types.ts). */
function cell(v: unknown): Cell {
  if (v === null || typeof v === "number") return v as Cell;
  if (typeof v === "string") return textCell(v);
  if (typeof v === "bigint") return intCell(v);
  if (Buffer.isBuffer(v)) return blobCell(v);
  return textCell(String(v));
}

function sizeOf(c: Cell): number {
  return c === null ? 1 : typeof c === "number" ? 8 : c.length * 2 + 8;
}

/** Gold results kept here for the model queries sent after them (src/sql/kept.ts). */
const kept = new KeptGolds();

const keptKey = (path: string, version: string, sql: string) => `${path}\0${version}\0${sql}`;

/**
 * The kept gold the model's result is compared with: kept here, or (`held`) run again now when it
 * is not; null when neither (not kept and not `held`, or its rerun failed).
 */
function goldHere(t: QueryTask, d: GoldHere): { k: KeptGold; ran: boolean } | null {
  const key = keptKey(t.path, t.version, d.of);
  const k = kept.get(key);
  if (k) return { k, ran: false };
  if (!d.held) return null;
  const g = execute({ ...t, sql: d.of, digest: undefined, keep: undefined, stay: undefined });
  if (!g.ok) return null;
  const again: KeptGold = { rows: g.rows, bytes: g.bytes, stayed: true, digests: new Map() };
  kept.set(key, again);
  return { k: again, ran: true };
}

/** The digest of a kept gold under the model query's rule (computed once per rule), or undefined past maxRows. */
function keptDigest(k: KeptGold, d: DigestRule & { maxRows: number }): string | undefined {
  if (k.rows.length > d.maxRows) return undefined;
  const rule = d.ordered ? "ordered" : d.rows;
  let g = k.digests.get(rule);
  if (g === undefined) k.digests.set(rule, (g = resultDigest(k.rows, d)));
  return g;
}

/** Runs the query: its rows (each value as the comparison sees it), or why it failed. */
function execute(t: QueryTask): Extract<QueryOutcome, { ok: true }> | Extract<QueryOutcome, { ok: false }> {
  const p = prepared(opened(t.path, t.version), t.sql);
  if (typeof p === "string") return { ok: false, stage: "prepare", error: p };
  const { stmt, columns, dqs } = p;
  const rows: Cell[][] = [];
  let bytes = 0;
  const t0 = performance.now();
  try {
    for (const raw of stmt.iterate() as IterableIterator<unknown[]>) {
      if (rows.length >= t.maxRows) {
        return { ok: false, stage: "execute", error: `result has more than ${t.maxRows} rows`, limit: "rows" };
      }
      // in place: the row better-sqlite3 made is ours
      const row = raw as Cell[];
      for (let i = 0; i < raw.length; i++) bytes += sizeOf((row[i] = cell(raw[i])));
      if (bytes > t.maxBytes) {
        return { ok: false, stage: "execute", error: `result is larger than ${t.maxBytes} bytes`, limit: "bytes" };
      }
      rows.push(row);
    }
  } catch (err) {
    return { ok: false, stage: "execute", error: (err as Error).message };
  }
  return { ok: true, columns, rows, bytes, ms: performance.now() - t0, ...(dqs.length ? { dqs } : {}) };
}

function runQuery(t: QueryTask): QueryOutcome {
  const r = execute(t);
  if (!r.ok) return r;
  const { rows } = r;
  if (t.keep) {
    // the rows stay here (only how many go back) when kept and cheap to run again if evicted
    const stay = !!t.stay && r.ms <= STAY_MS;
    if (kept.set(keptKey(t.path, t.version, t.sql), { rows, bytes: r.bytes, stayed: stay, digests: new Map() }) && stay) {
      return { ...r, rows: [], kept: { rows: rows.length } };
    }
  }
  // the gold's digest came with the query (or its result is kept here): a result with the same
  // one goes back without its rows
  const d = t.digest;
  if (!d) return r;
  const here = "gold" in d ? null : goldHere(t, d);
  const gold = "gold" in d ? d.gold : here ? keptDigest(here.k, d) : undefined;
  const matched = gold !== undefined && resultDigest(rows, d) === gold;
  // cpuMs: set for the whole slice of tasks it ran in (the event loop below), by wall-time share
  if (matched) return { ...r, rows: [], matched: { rows: rows.length }, ...(here?.ran ? { reran: true } : {}) };
  // a mismatch: the comparison needs the gold's rows, which the server does not hold
  const send = here && ("held" in d && d.held ? true : here.k.stayed);
  return { ...r, ...(send ? { gold: here.k.rows } : {}), ...(here?.ran ? { reran: true } : {}) };
}

/**
 * Tables (columns, keys, row counts) and views, from the schema's text. Nothing here evaluates a
 * view, or even compiles one (a view's columns would need its query planned, and nested views
 * can make that arbitrarily long): a view is listed with its CREATE text. Virtual tables are not
 * counted (counting one runs its module's code).
 */
function schema(t: Extract<WorkerTask, { kind: "schema" }>): SchemaTable[] {
  if (t.once) {
    const db = new Database(t.path, { readonly: true, fileMustExist: true });
    try {
      db.pragma("query_only = ON");
      db.pragma("trusted_schema = OFF");
      return schemaOf(db);
    } finally {
      db.close();
    }
  }
  return schemaOf(handle(t.path, t.version));
}

function schemaOf(db: Database.Database): SchemaTable[] {
  const entries = db
    .prepare(`SELECT type, name, sql FROM sqlite_schema WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' ORDER BY name LIMIT ${MAX_SCHEMA_ENTRIES}`)
    .all() as { type: "table" | "view"; name: string; sql: string | null }[];
  return entries.map(({ type, name, sql }) => {
    if (type === "view") {
      const text = sql ?? "";
      return { name, view: true, sql: text.length > MAX_VIEW_SQL ? `${text.slice(0, MAX_VIEW_SQL)}...` : text, columns: [], foreign_keys: [], rows: null };
    }
    const cols = db.prepare("SELECT name, type, pk FROM pragma_table_info(?)").all(name) as { name: string; type: string; pk: number }[];
    const fks = db.prepare("SELECT \"from\" AS col, \"table\" AS ref, \"to\" AS refcol FROM pragma_foreign_key_list(?)").all(name) as { col: string; ref: string; refcol: string | null }[];
    const quoted = `"${name.replaceAll('"', '""')}"`;
    let rows: number | null = null;
    if (!/^\s*create\s+virtual\b/i.test(sql ?? "")) {
      try {
        rows = db.prepare(`SELECT count(*) FROM main.${quoted}`).pluck().get() as number;
      } catch {
        rows = null;
      }
    }
    return {
      name,
      columns: cols.map((c) => ({ name: c.name, type: c.type || null, primary_key: c.pk > 0 })),
      foreign_keys: fks.map((f) => ({ column: f.col, references: `${f.ref}(${f.refcol ?? ""})` })),
      rows,
    };
  });
}

/** An uploaded file, before it is registered: it opens, passes integrity_check, and leaves WAL mode. */
function check(t: Extract<WorkerTask, { kind: "check" }>): { ok: true } | { ok: false; error: string } {
  let db: Database.Database;
  try {
    db = new Database(t.path, { fileMustExist: true });
  } catch (err) {
    return { ok: false, error: `the database file cannot be opened: ${(err as Error).message}` };
  }
  try {
    db.pragma("trusted_schema = OFF");
    const problems = db.pragma("integrity_check(20)", { simple: false }) as { integrity_check: string }[];
    const said = problems.map((p) => p.integrity_check);
    if (said.length !== 1 || said[0] !== "ok") return { ok: false, error: `the database file is damaged (integrity_check: ${said.slice(0, 5).join("; ")})` };
    db.pragma("journal_mode = DELETE");
    return { ok: true };
  } catch (err) {
    return { ok: false, error: `the database file cannot be read: ${(err as Error).message}` };
  } finally {
    db.close();
  }
}

/**
 * Builds a new database file from a SQL script (the lexer has already refused ATTACH and
 * friends). The file cannot grow past `maxBytes`: max_page_count on the main and temp schemas,
 * so a short script cannot write gigabytes; SQLite then fails the statement with SQLITE_FULL.
 */
function build(t: Extract<WorkerTask, { kind: "build" }>): { ok: true } | { ok: false; error: string; full?: boolean } {
  const db = new Database(t.path);
  try {
    db.pragma("trusted_schema = OFF");
    const pageSize = db.pragma("page_size", { simple: true }) as number;
    const pages = Math.max(1, Math.floor(t.maxBytes / pageSize));
    db.pragma(`max_page_count = ${pages}`);
    db.pragma(`temp.max_page_count = ${pages}`);
    db.exec(t.script);
    db.pragma("journal_mode = DELETE");
    return { ok: true };
  } catch (err) {
    const e = err as Error & { code?: string };
    return { ok: false, error: e.message, full: e.code === "SQLITE_FULL" };
  } finally {
    db.close();
  }
}

export function run(task: WorkerTask): unknown {
  switch (task.kind) {
    case "query":
      return runQuery(task);
    case "schema":
      return schema(task);
    case "check":
      return check(task);
    case "build":
      return build(task);
  }
}

/**
 * Longest a slice of tasks runs before its answers go back in one message and the loop reads the
 * channel (a `skip`), ms. A slice starts a task only while it is under this, so answers that wait
 * in a slice behind a long task took at most this long together.
 */
export const SLICE_MS = 2;

// As a child process: tasks come in batches ({ tasks }) and run in order, in slices of at most
// about SLICE_MS: the answers of a slice go back in one message ({ answers }), one getrusage a
// slice (each query's CPU time is its share of the slice's by wall time), so a batch of quick
// queries costs one write each way (issue 35: a message and two getrusage per query were a
// third of this process's time). Before each task its id is written to the progress file the
// pool named (argv[2]; a pwrite, which wakes nobody): the pool reads it when it polls, so it
// knows which task of a slice is running, charges that one its CPU time, and takes back only the
// ones behind it. Between two slices the loop reads the channel: a { skip } naming tasks the pool
// took back (they waited behind a long one and went to another process) arrives in time for them
// to be answered as skipped.
if (process.send) {
  const pending: { id: number; task: WorkerTask }[] = [];
  const skip = new Set<number>();
  const progress = process.argv[2] ? openSync(process.argv[2], "r+") : null;
  const mark = new Float64Array(1);
  let lastId = 0;
  let scheduled = false;
  const step = () => {
    scheduled = false;
    if (!pending.length) return;
    const answers: Answer[] = [];
    /** Queries answered in this slice with their wall time, for their share of its CPU time. */
    const timed: { out: { cpuMs?: number }; ms: number }[] = [];
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    let t = t0;
    while (pending.length && (answers.length === 0 || t - t0 < SLICE_MS)) {
      const next = pending.shift()!;
      lastId = next.id;
      if (skip.delete(next.id)) {
        answers.push({ id: next.id, skipped: true });
        continue;
      }
      if (progress !== null) {
        mark[0] = next.id;
        writeSync(progress, mark, 0, 8, 0);
      }
      try {
        const value = run(next.task);
        answers.push({ id: next.id, ok: true, value });
        const t1 = performance.now();
        if (next.task.kind === "query" && (value as QueryOutcome).ok) timed.push({ out: value as { cpuMs?: number }, ms: t1 - t });
        t = t1;
      } catch (err) {
        answers.push({ id: next.id, ok: false, error: (err as Error).message });
        t = performance.now();
      }
    }
    const c = process.cpuUsage(c0);
    const cpuMs = (c.user + c.system) / 1000;
    const wall = Math.max(t - t0, 1e-6);
    for (const q of timed) q.out.cpuMs = (cpuMs * q.ms) / wall;
    process.send!({ answers });
    if (pending.length) schedule();
  };
  const schedule = () => {
    if (!scheduled) (scheduled = true), setImmediate(step);
  };
  process.on("message", (msg: { tasks?: { id: number; task: WorkerTask }[]; skip?: number[] }) => {
    if (msg.tasks) {
      pending.push(...msg.tasks);
      schedule();
    }
    // ids already run are not kept (they would never be seen again)
    if (msg.skip) for (const id of msg.skip) if (id > lastId) skip.add(id);
  });
  // the parent went away: nothing left to answer
  process.on("disconnect", () => process.exit(0));
  process.send({ ready: true });
}
