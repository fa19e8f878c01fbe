/**
 * PostgreSQL through `pg`. What reaches the server for one query:
 *
 * 1. `BEGIN TRANSACTION READ ONLY`, a fingerprint of the session (the settings a result may
 *    depend on, the user, its temporary relations), and `SET LOCAL`
 *    limits (statement_timeout, lock_timeout, idle_in_transaction_session_timeout): our text,
 *    one round trip. On this host statement_timeout is only the last resort: the query's limit
 *    is its backend's CPU time, read from /proc while it runs, and Assay cancels it (query()).
 * 2. `DECLARE assay_q NO SCROLL CURSOR FOR <query>` through the extended query protocol
 *    (Parse/Bind/Execute), where PostgreSQL refuses more than one statement ("cannot insert
 *    multiple commands into a prepared statement"): the query can never COMMIT, SET or run a
 *    second statement, whatever the lexer made of it.
 * 3. `FETCH` in chunks, so the row and byte caps hold while the rows arrive.
 * 4. `ROLLBACK`, then `DISCARD ALL` (settings, temp objects, advisory locks, prepared statements
 *    back to a fresh session's) before the connection goes back to the pool. A connection whose
 *    reset failed, whose query outlived its limit on our side, or whose settings fingerprint at
 *    step 1 differs from the one it had when it was new, is destroyed, never reused.
 *
 * Every result carries the fingerprint it ran under (`settings`), so the gold cache is keyed by
 * it. The role is checked once per database before its first query: one that may create
 * temporary tables or objects (a table that shadows the real one) is refused (UnsafeRoleError,
 * naming what to REVOKE); scripts/setup-postgres.sh shows a SELECT-only one.
 */
import { readFileSync } from "node:fs";
import { connect as netConnect } from "node:net";
import pg from "pg";
import { blobCell, intCell, textCell } from "./types.js";
import { schedstat } from "../../sandbox/meter.js";
import { ConnectionBudget, type BudgetClient } from "./pg-budget.js";
import type { Cell, QueryOutcome, SchemaTable } from "./types.js";

const NUMERIC_OIDS = new Set([20, 21, 23, 26, 700, 701, 1700]); // int8 int2 int4 oid float4 float8 numeric

/**
 * Values as text, except numbers (so 1 = 1.0 as in the Python evaluators), booleans (as 1/0,
 * which is what True/False equal in Python) and bytea (a blob, as SQLite's: never equal to a
 * text). Dates and times stay in PostgreSQL's text form. Each parser returns a Cell (types.ts):
 * a text is passed through textCell, so none poses as a tagged value.
 */
const byteaText = pg.types.getTypeParser(17, "text") as (v: string) => Buffer;
const types = {
  getTypeParser(oid: number, format?: string) {
    if (format === "binary") return (v: unknown) => v;
    if (NUMERIC_OIDS.has(oid)) return numberCell;
    if (oid === 16) return (v: string) => (v === "t" ? 1 : 0);
    if (oid === 17) return (v: string) => blobCell(byteaText(v));
    return textCell;
  },
} as unknown as pg.CustomTypesConfig;

/** A numeric value: an integer beyond 2^53 (int8, numeric) keeps its exact digits (types.ts intCell). */
function numberCell(v: string): Cell {
  const n = Number(v);
  return Number.isSafeInteger(n) || !/^-?\d+$/.test(v) ? n : intCell(BigInt(v));
}

const FETCH = 512;
/** How long past its own limit (or past our cancel) a query may go unanswered before its connection is destroyed. */
const WATCHDOG_GRACE_MS = 2_000;
/** How often a running query's backend CPU time is read, ms (as the SQLite pool does). */
const POLL_MS = 20;
/** Connections taken in a row whose settings were not a fresh session's, before giving up. */
const MAX_TAINTED = 3;

/**
 * The settings a SELECT's result may depend on (how values print, parse, sort, compare, which
 * tables names resolve to, whether rows are filtered), who the session runs as, and how many
 * temporary relations it holds: what a query's result may depend on beside the data. Read
 * inside the READ ONLY transaction, before SET LOCAL. (All of pg_settings cost ~5x this.)
 */
const RESULT_SETTINGS = [
  "search_path", "DateStyle", "IntervalStyle", "TimeZone", "extra_float_digits", "bytea_output", "standard_conforming_strings",
  "lc_monetary", "lc_numeric", "lc_time", "default_text_search_config", "xmloption", "xmlbinary", "row_security",
  "transform_null_equals", "array_nulls", "client_encoding", "session_replication_role", "default_transaction_read_only",
  "default_transaction_isolation", "statement_timeout", "lock_timeout", "max_parallel_workers_per_gather", "work_mem", "role",
];
const FINGERPRINT_SQL =
  `SELECT concat_ws(';', ${RESULT_SETTINGS.map((n) => `current_setting('${n}')`).join(", ")}, current_user, session_user,` +
  ` (SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema())) AS fp`;

/** The role in a PostgreSQL URL may do more than SELECT; the message says what to REVOKE. */
export class UnsafeRoleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeRoleError";
  }
}

/**
 * `stopped`: what stopped a query at its time limit: its backend's CPU time (`cpu`), the wall-clock
 * safety net less the time spent waiting for a CPU (`wall`), both ours, read from /proc; or
 * PostgreSQL's statement_timeout (`statement_timeout`: wall-clock time, `statement_ms` of it), the
 * last-resort net where /proc is read, the limit itself where it cannot be (a remote server).
 */
export type PgOutcome = QueryOutcome & { settings?: string; stopped?: "cpu" | "wall" | "statement_timeout"; statement_ms?: number };

/** Limits of one query, ms. */
export interface PgLimits {
  /** CPU time of the backend (wall-clock time where its /proc entry cannot be read). */
  runMs: number;
  /** Wall-clock safety net, not counting time waiting for a CPU; default 2 x runMs + 1 s. */
  netMs?: number;
  /** statement_timeout where /proc is read (wall time, the last resort); default 10 x runMs + 5 s, at most the net + 60 s. */
  lastMs?: number;
  maxRows: number;
  maxBytes: number;
}

/**
 * ASSAY_SQL_PG_CONNECTIONS does not fit a server's `max_connections`: the server refuses to
 * start, and the message says what to set.
 */
export class ConnectionBudgetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConnectionBudgetError";
  }
}

/** The server a URL names (host and port), to check each server's limit once. */
export function serverOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.searchParams.get("host") ?? (u.hostname || "localhost")}:${u.searchParams.get("port") ?? (u.port || "5432")}`;
  } catch {
    return url;
  }
}

/** Whether `url` names a server on this host, whose backends' /proc entries are theirs. */
function isLocal(url: string): boolean {
  try {
    const u = new URL(url);
    const host = u.searchParams.get("host") ?? u.hostname;
    return host === "" || host.startsWith("/") || host === "localhost" || host === "[::1]" || host === "::1" || /^127\./.test(host);
  } catch {
    return false;
  }
}

interface PoolState {
  /** This database's connections, out of the engine's one budget. */
  pool: { connect(): Promise<pg.PoolClient> };
  /** Set once the role has passed the check; a failed check is retried on the next use. */
  role: Promise<void> | null;
  /** The settings fingerprint of the newest fresh connection (the gold cache's key part). */
  settings: string;
}

export class PostgresEngine {
  private readonly pools = new Map<string, PoolState>();
  /** Each connection's fingerprint from its first use, when it was a fresh session. */
  private readonly baseline = new WeakMap<pg.PoolClient, string>();
  /** Connections with our 'error' listener. */
  private readonly listening = new WeakSet<pg.PoolClient>();
  /** Each connection's backend pid when its /proc entry is a PostgreSQL process on this host. */
  private readonly backend = new WeakMap<pg.PoolClient, number | null>();
  /** Connections destroyed because their state was in doubt (tests, stats). */
  readonly counters = { destroyed: 0, tainted: 0 };

  /** Every connection of every database, under one cap (src/sql/pg-budget.ts). */
  readonly connections: ConnectionBudget;

  constructor(
    private readonly opts: {
      /** Most connections one database holds. */
      poolSize: number;
      /** Most connections open at once, all databases together (default poolSize). */
      maxConnections?: number;
      /** An idle connection is closed after this long, ms (default 10 s). */
      idleMs?: number;
      connectTimeoutMs: number;
      /** Check the role's privileges before use (default true). */
      checkRole?: boolean;
    },
  ) {
    const max = Math.max(1, opts.maxConnections ?? opts.poolSize);
    this.connections = new ConnectionBudget({ max, perDatabase: Math.max(1, Math.min(opts.poolSize, max)), idleMs: opts.idleMs ?? 10_000, connectTimeoutMs: opts.connectTimeoutMs, types });
  }

  private state(url: string): PoolState {
    let s = this.pools.get(url);
    if (!s) {
      const budget = this.connections;
      s = { pool: { connect: () => budget.connect(url) as Promise<BudgetClient> as unknown as Promise<pg.PoolClient> }, role: null, settings: "" };
      this.pools.set(url, s);
    }
    return s;
  }

  /** The settings fingerprint fresh sessions on `url` have ("" before the first query). */
  settingsKey(url: string): string {
    return this.pools.get(url)?.settings ?? "";
  }

  /** Throws UnsafeRoleError when the URL's role may create temporary tables or objects. */
  async checkRole(url: string): Promise<void> {
    if (this.opts.checkRole === false) return;
    const s = this.state(url);
    s.role ??= this.inspectRole(s.pool);
    try {
      await s.role;
    } catch (err) {
      s.role = null;
      throw err;
    }
  }

  /**
   * A checked-out client the server drops (a timeout, a restart) emits 'error': the query in
   * flight rejects on its own, and an unhandled 'error' event would end the process.
   */
  private listen(client: pg.PoolClient): pg.PoolClient {
    if (!this.listening.has(client)) {
      this.listening.add(client);
      client.on("error", () => {});
    }
    return client;
  }

  /**
   * The server's connection limit: `max_connections` less the connections reserved for
   * superusers (and, from PostgreSQL 16, for pg_use_reserved_connections).
   */
  async serverLimit(url: string): Promise<{ max: number; reserved: number; usable: number }> {
    const client = this.listen(await this.state(url).pool.connect());
    let keep = false;
    try {
      const r = await client.query<{ max: string; su: string; rc: string | null }>(
        "SELECT current_setting('max_connections') AS max, current_setting('superuser_reserved_connections') AS su, current_setting('reserved_connections', true) AS rc",
      );
      keep = await reset(client, false);
      const max = Number(r.rows[0].max);
      const reserved = Number(r.rows[0].su) + Number(r.rows[0].rc ?? 0);
      return { max, reserved, usable: max - reserved };
    } finally {
      this.release(client, keep);
    }
  }

  private async inspectRole(pool: PoolState["pool"]): Promise<void> {
    const client = this.listen(await pool.connect());
    let keep = false;
    try {
      const r = await client.query<{ db: string; role: string; superuser: boolean; temp: boolean; create_db: boolean; schemas: string; scs: string }>(
        `SELECT current_database() AS db, current_user AS role, r.rolsuper AS superuser,
                has_database_privilege(current_database(), 'TEMPORARY') AS temp,
                has_database_privilege(current_database(), 'CREATE') AS create_db,
                coalesce((SELECT string_agg(quote_ident(nspname), ', ' ORDER BY nspname) FROM pg_namespace
                          WHERE has_schema_privilege(oid, 'CREATE') AND nspname !~ '^pg_(toast_)?temp_'), '') AS schemas,
                current_setting('standard_conforming_strings') AS scs
         FROM pg_roles r WHERE r.rolname = current_user`,
      );
      keep = await reset(client, false);
      const row = r.rows[0];
      if (!row) throw new UnsafeRoleError("cannot read the connecting role from pg_roles");
      const role = quoteIdent(row.role);
      const db = quoteIdent(row.db);
      if (row.superuser) throw new UnsafeRoleError(`role ${role} is a superuser; connect as a role that can only SELECT (scripts/setup-postgres.sh makes one)`);
      const may: string[] = [];
      const revoke: string[] = [];
      const dbPrivs = [row.temp ? "TEMPORARY" : "", row.create_db ? "CREATE" : ""].filter(Boolean);
      if (row.temp) may.push("create temporary tables");
      if (row.create_db) may.push(`create schemas in database ${db}`);
      if (dbPrivs.length) revoke.push(`REVOKE ${dbPrivs.join(", ")} ON DATABASE ${db} FROM PUBLIC, ${role};`);
      if (row.schemas) {
        may.push(`create objects in schema ${row.schemas}`);
        revoke.push(`REVOKE CREATE ON SCHEMA ${row.schemas} FROM PUBLIC, ${role};`);
      }
      if (may.length) {
        throw new UnsafeRoleError(
          `role ${role} may ${may.join(", ")}: a scored query could make a table that shadows the real one. ` +
            `As a superuser run: ${revoke.join(" ")} (a role that owns the database or a schema keeps these rights: connect as another role), ` +
            `or use a role that can only SELECT (scripts/setup-postgres.sh makes one)`,
        );
      }
      if (row.scs !== "on") throw new UnsafeRoleError(`standard_conforming_strings is ${row.scs} for role ${role}; run ALTER ROLE ${role} RESET standard_conforming_strings (the query check reads strings as PostgreSQL does by default)`);
    } finally {
      this.release(client, keep);
    }
  }

  private release(client: pg.PoolClient, keep: boolean): void {
    if (!keep) this.counters.destroyed++;
    client.release(!keep);
  }

  /**
   * A connection whose session is a fresh one's, in a READ ONLY transaction with the limits set:
   * its settings fingerprint. A connection that fails the comparison is destroyed and another taken.
   */
  private async begin(url: string, runMs: number, localMs = runMs): Promise<{ client: pg.PoolClient; settings: string; statementMs: number }> {
    await this.checkRole(url);
    const s = this.state(url);
    for (let tries = 0; ; tries++) {
      const client = this.listen(await s.pool.connect());
      let fp: string;
      let statementMs: number;
      try {
        if (!this.backend.has(client)) this.backend.set(client, localBackend(url, client));
        const ms = Math.max(1, Math.round(runMs));
        // where the backend's CPU time is read, statement_timeout is only the last-resort net
        statementMs = this.backend.get(client) != null ? Math.max(ms, Math.round(localMs)) : ms;
        const rs = (await client.query(
          `BEGIN TRANSACTION READ ONLY; ${FINGERPRINT_SQL}; SET LOCAL statement_timeout = ${statementMs}; SET LOCAL lock_timeout = ${ms}; SET LOCAL idle_in_transaction_session_timeout = ${Math.max(30_000, statementMs * 4)}; SET LOCAL max_parallel_workers_per_gather = 0`,
        )) as unknown as pg.QueryResult[];
        fp = String(rs[1].rows[0].fp);
      } catch (err) {
        this.release(client, false);
        throw err;
      }
      const base = this.baseline.get(client);
      if (base === undefined) {
        this.baseline.set(client, fp);
        s.settings = fp;
      } else if (base !== fp) {
        this.counters.tainted++;
        this.release(client, false);
        if (tries + 1 >= MAX_TAINTED) throw new Error(`${MAX_TAINTED} pooled connections in a row had settings unlike a fresh session's; refusing to run on them`);
        continue;
      }
      return { client, settings: fp, statementMs };
    }
  }

  /**
   * Connection failures throw (machinery); everything the query itself does is an outcome.
   *
   * Where the backend's /proc entry is read (a server on this host), the query's limit is its
   * backend's CPU time, read every POLL_MS: at `runMs` of it, or at `netMs` of wall-clock time not
   * spent waiting for a CPU, the query is canceled (SIGINT to the backend, what pg_cancel_backend
   * sends, or PostgreSQL's cancel request where this process may not signal it), so a query that
   * is only slow because the host is busy is not cut off. statement_timeout stays armed at `lastMs`
   * of wall time, the last resort. Elsewhere statement_timeout is the limit (wall time).
   */
  async query(url: string, sql: string, o: PgLimits): Promise<PgOutcome> {
    const runMs = Math.max(1, Math.round(o.runMs));
    const netMs = Math.max(runMs, Math.round(o.netMs ?? runMs * 2 + 1_000));
    const lastMs = Math.max(netMs, Math.round(o.lastMs ?? Math.min(runMs * 10 + 5_000, netMs + 60_000)));
    const { client, settings, statementMs } = await this.begin(url, runMs, lastMs);
    let keep = false;
    let timer: NodeJS.Timeout | undefined;
    let poll: NodeJS.Timeout | undefined;
    const pid = this.backend.get(client) ?? null;
    const s0 = pid === null ? null : schedstat(pid);
    const measured = (): { work?: { cpu_ms: number; wait_ms: number } } => {
      const s1 = s0 && pid !== null ? schedstat(pid) : null;
      return s0 && s1 ? { work: { cpu_ms: Math.round((s1[0] - s0[0]) / 1e5) / 10, wait_ms: Math.round((s1[1] - s0[1]) / 1e5) / 10 } } : {};
    };
    let stopped: { by: "cpu" | "wall"; ms: number } | null = null;
    let requested = false;
    try {
      const t0 = performance.now();
      const work = this.run(client, sql, o, t0);
      work.catch(() => {}); // when the watchdog wins, the destroyed connection rejects it
      let late: (v: "late") => void = () => {};
      const watchdog = new Promise<"late">((res) => {
        late = res;
        timer = setTimeout(res, statementMs + WATCHDOG_GRACE_MS, "late");
      });
      if (s0 && pid !== null) {
        poll = setInterval(() => {
          const s1 = schedstat(pid);
          if (!s1 || stopped) return;
          const cpu = (s1[0] - s0[0]) / 1e6;
          const free = performance.now() - t0 - (s1[1] - s0[1]) / 1e6;
          if (cpu >= runMs) stopped = { by: "cpu", ms: cpu };
          else if (free >= netMs) stopped = { by: "wall", ms: free };
          else return;
          clearInterval(poll);
          requested = cancelBackend(client, pid) === "request";
          // canceled: it answers now, or its connection is closed
          clearTimeout(timer);
          timer = setTimeout(late, WATCHDOG_GRACE_MS, "late");
        }, POLL_MS);
      }
      const out = await Promise.race([work, watchdog]);
      clearInterval(poll);
      const by = stopped as { by: "cpu" | "wall"; ms: number } | null;
      if (out === "late") {
        // PostgreSQL did not stop it (or did not answer): the connection's state is unknown
        const waited = by ? `${WATCHDOG_GRACE_MS} ms after it was canceled at ${limitText(by, runMs, netMs)}` : `${Math.round(statementMs + WATCHDOG_GRACE_MS)} ms after the query started`;
        return { ok: false, stage: "execute", error: `no answer ${waited}; its connection was closed`, limit: "timeout", stopped: by?.by ?? "statement_timeout", statement_ms: statementMs, ...measured() };
      }
      const m = out.ok || out.limit === "timeout" ? measured() : {};
      keep = (await reset(client, true)) && !requested;
      if (out.ok) return { ...out, settings, ...(m.work ? { cpuMs: m.work.cpu_ms } : {}) };
      if (out.limit !== "timeout") return out;
      if (by) return { ok: false, stage: "execute", error: `query stopped after ${limitText(by, runMs, netMs)}`, limit: "timeout", stopped: by.by, ...m };
      const what = s0 ? `${statementMs} ms of wall-clock time (statement_timeout, the last-resort limit; the limit is ${runMs} ms of CPU time)` : `${statementMs} ms of wall-clock time (statement_timeout)`;
      return { ...out, error: `${out.error}: query stopped after ${what}`, stopped: "statement_timeout", statement_ms: statementMs, ...m };
    } finally {
      clearTimeout(timer);
      clearInterval(poll);
      this.release(client, keep);
    }
  }

  private async run(client: pg.PoolClient, sql: string, o: { maxRows: number; maxBytes: number }, t0: number): Promise<QueryOutcome> {
    try {
      // the extended protocol: PostgreSQL parses this as exactly one statement or refuses it
      await client.query({ text: `DECLARE assay_q NO SCROLL CURSOR FOR ${sql}`, queryMode: "extended" } as pg.QueryConfig);
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
  }

  async schema(url: string, runMs: number): Promise<SchemaTable[]> {
    const { client } = await this.begin(url, runMs);
    let keep = false;
    try {
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
      keep = await reset(client, true);
      return [...tables.values()].sort((a, b) => a.name.localeCompare(b.name));
    } finally {
      this.release(client, keep);
    }
  }

  async close(): Promise<void> {
    await this.connections.close();
    this.pools.clear();
  }
}

/** What stopped a query, for its message. */
function limitText(by: { by: "cpu" | "wall"; ms: number }, runMs: number, netMs: number): string {
  return by.by === "cpu"
    ? `${Math.round(by.ms)} ms of CPU time (limit ${runMs} ms of CPU time)`
    : `${Math.round(by.ms)} ms of wall-clock time not spent waiting for a CPU (safety net ${netMs} ms; the limit is ${runMs} ms of CPU time)`;
}

/**
 * Cancels the statement running on a local backend: SIGINT, which is what pg_cancel_backend()
 * sends (it needs no free connection: every pooled one may be running a query); where this
 * process may not signal PostgreSQL's processes (another OS user), PostgreSQL's cancel request
 * on a new socket (the backend's pid and secret key, no login), as libpq's PQcancel does.
 * A signal that reaches a backend between statements is ignored by PostgreSQL; a request may
 * arrive late, so its connection is not reused.
 */
function cancelBackend(client: pg.PoolClient, pid: number): "signal" | "request" {
  try {
    process.kill(pid, "SIGINT");
    return "signal";
  } catch {
    // EPERM: not ours to signal
  }
  const c = client as unknown as { host?: string; port?: number; processID?: number; secretKey?: number };
  if (!c.processID || c.secretKey == null) return "request";
  const msg = Buffer.alloc(16);
  msg.writeInt32BE(16, 0);
  msg.writeInt32BE(80877102, 4); // CancelRequest
  msg.writeInt32BE(c.processID, 8);
  msg.writeInt32BE(c.secretKey, 12);
  const port = c.port ?? 5432;
  const sock = c.host?.startsWith("/") ? netConnect(`${c.host}/.s.PGSQL.${port}`) : netConnect(port, c.host || "127.0.0.1");
  sock.setTimeout(WATCHDOG_GRACE_MS, () => sock.destroy());
  sock.on("error", () => {});
  sock.on("connect", () => sock.end(msg));
  return "request";
}

/** The connection's backend pid, when the server is on this host and /proc shows it is PostgreSQL's. */
function localBackend(url: string, client: pg.PoolClient): number | null {
  const pid = (client as unknown as { processID?: number }).processID;
  if (!pid || !isLocal(url)) return null;
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").startsWith("postgres") && schedstat(pid) ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Ends the transaction (when `inTransaction`) and resets the session to a fresh one's. True when
 * the connection may be reused; false when any step failed (the caller destroys it).
 */
async function reset(client: pg.PoolClient, inTransaction: boolean): Promise<boolean> {
  try {
    if (inTransaction) await client.query("ROLLBACK");
    await client.query("DISCARD ALL");
    return true;
  } catch {
    return false;
  }
}

function quoteIdent(s: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(s) ? s : `"${s.replaceAll('"', '""')}"`;
}

/**
 * A parsed PostgreSQL value as the comparison sees it: the parsers above already made numbers and
 * strings Cells (a text through textCell, an int8 past 2^53 through intCell); a Buffer (binary
 * format) becomes a blob, and anything else text that cannot pose as a tagged value (types.ts).
 */
function toCell(v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === "number" || typeof v === "string") return v;
  if (Buffer.isBuffer(v)) return blobCell(v);
  return textCell(String(v));
}

function failure(err: unknown, stage: "prepare" | "execute"): QueryOutcome {
  const e = err as { message?: string; code?: string };
  if (e.code === "57014") return { ok: false, stage: "execute", error: e.message ?? "canceled", limit: "timeout" };
  // any 42xxx (syntax error or access rule violation) is the text's fault even when raised at FETCH
  return { ok: false, stage: e.code?.startsWith("42") ? "prepare" : stage, error: e.message ?? String(err) };
}
