/**
 * The SQL service: databases by id and the engines that query them, shared by the sql verifier
 * and the /databases routes. Created once per process (src/core/services.ts); engines start
 * lazily, on the first query.
 *
 * Databases: every *.sqlite file under `dir` (recursively; id = file stem, so Spider/BIRD's
 * database/<db_id>/<db_id>.sqlite layout works), uploads (stored under `uploadDir`), and
 * PostgreSQL databases named by connection URL.
 */
import { readdirSync, statSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, basename, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { LRUCache } from "lru-cache";
import Database from "better-sqlite3";
import { MachineryError } from "../core/types.js";
import { SqlitePool, TaskTimeout, ProcessExited } from "./sqlite-pool.js";
import { PostgresEngine } from "./postgres.js";
import { tokenize } from "./lex.js";
import { DB_ID, type DatabaseInfo, type QueryOutcome, type SchemaTable } from "./types.js";
import type { Config } from "../core/config.js";

export { DB_ID };

export interface SqlServiceOptions {
  /** Scanned for *.sqlite files. */
  dir: string;
  /** Where POST /databases stores uploads (created on first upload). */
  uploadDir: string;
  /** PostgreSQL databases from the configuration: id and connection URL. */
  postgres: { id: string; url: string }[];
  /** Longest any one query may run, ms (an item's own deadline may cut it shorter). */
  timeoutMs: number;
  /** Most rows / bytes a result may have; past either the query stops and counts as failed. */
  maxRows: number;
  maxResultBytes: number;
  /** Gold results kept: entries and total bytes. */
  goldCacheEntries: number;
  goldCacheBytes: number;
  /** Child processes running SQLite queries. */
  threads: number;
  /** Connections per PostgreSQL database. */
  pgPoolSize: number;
  /** Whether POST /databases may register a PostgreSQL URL (the server would connect to it). */
  allowUrlUpload: boolean;
}

interface Entry extends DatabaseInfo {
  /** SQLite file, or PostgreSQL URL. */
  location: string;
}

/** The item names a database this process does not know: the item's fault (status invalid). */
export class UnknownDatabaseError extends Error {
  constructor(readonly id: string, known: string[]) {
    const hint = known.length ? `known: ${known.slice(0, 20).join(", ")}${known.length > 20 ? ", ..." : ""}` : "none registered (set ASSAY_SQL_DIR or POST /databases)";
    super(`unknown database ${JSON.stringify(id)}; ${hint}`);
    this.name = "UnknownDatabaseError";
  }
}

/** An upload the service refuses; the message says what to change (HTTP 400/409). */
export class UploadError extends Error {
  constructor(message: string, readonly status = 400) {
    super(message);
    this.name = "UploadError";
  }
}

export interface QueryOptions {
  /** Epoch ms: the item's deadline (queueing + running). */
  deadline: number;
  signal?: AbortSignal;
}

export type Upload =
  | { id: string; sqlite: Buffer; replace?: boolean }
  | { id: string; script: string; replace?: boolean }
  | { id: string; postgres: string; replace?: boolean };

const SQLITE_MAGIC = Buffer.from("SQLite format 3\0", "latin1");

export class SqlService {
  private entries = new Map<string, Entry>();
  private scannedAt = 0;
  private sqlite: SqlitePool | null = null;
  private pg: PostgresEngine | null = null;
  private readonly gold: LRUCache<string, Extract<QueryOutcome, { ok: true }>>;
  private readonly inflight = new Map<string, Promise<QueryOutcome>>();
  private readonly schemas = new Map<string, { version: string; tables: SchemaTable[] }>();
  /** Gold queries actually executed, and served from the cache (tests, GET /databases). */
  readonly counters = { goldRuns: 0, goldHits: 0, queries: 0 };

  constructor(readonly opts: SqlServiceOptions) {
    this.gold = new LRUCache({
      max: Math.max(1, opts.goldCacheEntries),
      maxSize: Math.max(1, opts.goldCacheBytes),
      sizeCalculation: (v, k) => Math.max(1, v.bytes + k.length * 2),
    });
  }

  private engineSqlite(): SqlitePool {
    return (this.sqlite ??= new SqlitePool(this.opts.threads));
  }
  private enginePg(): PostgresEngine {
    return (this.pg ??= new PostgresEngine({ poolSize: this.opts.pgPoolSize, connectTimeoutMs: 5_000 }));
  }

  /**
   * Starts the SQLite processes now when there are SQLite databases (the server's warm-up waits
   * on it, so the first items do not pay for the forks). Says what it did.
   */
  async warmUp(): Promise<string> {
    this.scan(0);
    const n = [...this.entries.values()].filter((e) => e.engine === "sqlite").length;
    if (!n) return `no SQLite databases (under ${this.opts.dir}): nothing to start`;
    const pool = this.engineSqlite();
    await pool.ready();
    return `${pool.size} SQLite process${pool.size === 1 ? "" : "es"} for ${n} database${n === 1 ? "" : "s"}`;
  }

  /** Re-reads the directory when the last read is older than `maxAgeMs`. */
  private scan(maxAgeMs = 1_000): void {
    if (Date.now() - this.scannedAt < maxAgeMs) return;
    this.scannedAt = Date.now();
    const next = new Map<string, Entry>();
    for (const p of this.opts.postgres) next.set(p.id, { id: p.id, engine: "postgres", version: "0", source: "config", location: p.url });
    const uploads = resolve(this.opts.uploadDir);
    for (const dir of [this.opts.uploadDir, this.opts.dir]) {
      let names: string[];
      try {
        names = (readdirSync(dir, { recursive: true }) as string[]).filter((n) => n.endsWith(".sqlite")).sort();
      } catch {
        continue; // a missing directory holds no databases
      }
      for (const name of names) {
        const path = resolve(dir, name);
        const id = basename(name, ".sqlite");
        if (!DB_ID.test(id) || next.has(id)) continue; // first one wins: uploads, then the dir in path order
        const source = path.startsWith(uploads + "/") ? "upload" : "dir";
        next.set(id, { id, engine: "sqlite", version: "", source, location: path });
      }
    }
    // URLs registered by upload live only in memory
    for (const e of this.entries.values()) if (e.engine === "postgres" && e.source === "upload" && !next.has(e.id)) next.set(e.id, e);
    this.entries = next;
  }

  /** The database's entry with a fresh version, or undefined. */
  private lookup(id: string): Entry | undefined {
    this.scan();
    let e = this.entries.get(id);
    if (!e) {
      // a file dropped in a moment ago; bounded, so items naming unknown ids cannot make every
      // lookup walk the directory
      this.scan(250);
      e = this.entries.get(id);
    }
    if (!e) return undefined;
    if (e.engine === "sqlite") {
      try {
        const st = statSync(e.location);
        e.version = `${st.ino}:${st.size}:${st.mtimeMs}`;
      } catch {
        this.entries.delete(id);
        return undefined;
      }
    }
    return e;
  }

  /** The database or UnknownDatabaseError. */
  database(id: string): DatabaseInfo {
    const e = this.lookup(id);
    if (!e) throw new UnknownDatabaseError(id, [...this.entries.keys()].sort());
    return { id: e.id, engine: e.engine, version: e.version, source: e.source };
  }

  list(): DatabaseInfo[] {
    this.scan(0);
    return [...this.entries.keys()].sort().map((id) => this.database(id));
  }

  /** Tables, columns, keys and row counts (cached per version). */
  async describe(id: string): Promise<DatabaseInfo & { tables: SchemaTable[] }> {
    const e = this.lookup(id);
    if (!e) throw new UnknownDatabaseError(id, [...this.entries.keys()].sort());
    const info = { id: e.id, engine: e.engine, version: e.version, source: e.source };
    const hit = this.schemas.get(id);
    if (hit && hit.version === e.version) return { ...info, tables: hit.tables };
    const ms = Math.max(this.opts.timeoutMs, 30_000);
    const tables = e.engine === "sqlite" ? await this.engineSqlite().schema(e.location, e.version, ms) : await this.enginePg().schema(e.location, ms);
    this.schemas.set(id, { version: e.version, tables });
    return { ...info, tables };
  }

  /**
   * Runs one query (already checked by checkQuery). The outcome says what the query did,
   * including "stopped at its time limit"; a failure of our machinery (a process that could not
   * start in time, PostgreSQL unreachable) throws MachineryError.
   */
  async query(id: string, sql: string, o: QueryOptions): Promise<QueryOutcome> {
    const e = this.lookup(id);
    if (!e) throw new UnknownDatabaseError(id, [...this.entries.keys()].sort());
    return this.run(e, sql, o);
  }

  private async run(e: Entry, sql: string, o: QueryOptions): Promise<QueryOutcome> {
    this.counters.queries++;
    const left = o.deadline - Date.now();
    if (left <= 0) throw new MachineryError("deadline passed before the query could start");
    const runMs = Math.min(this.opts.timeoutMs, left);
    const caps = { maxRows: this.opts.maxRows, maxBytes: this.opts.maxResultBytes };
    if (e.engine === "sqlite") {
      try {
        return await this.engineSqlite().query({ kind: "query", path: e.location, version: e.version, sql, ...caps }, runMs, o.deadline, o.signal);
      } catch (err) {
        if (err instanceof TaskTimeout) {
          if (err.started) return { ok: false, stage: "execute", error: `query stopped after ${err.ms} ms (limit ${runMs} ms)`, limit: "timeout" };
          throw new MachineryError(`SQLite query could not start before the deadline: ${err.message}`);
        }
        // the process died under this query (memory, a crash): what the query did, so a
        // model cannot make its item unscorable by crashing it
        if (err instanceof ProcessExited) return { ok: false, stage: "execute", error: "the query ended its SQLite process (out of memory?)" };
        throw new MachineryError(`SQLite process failed: ${(err as Error).message}`);
      }
    }
    try {
      return await this.enginePg().query(e.location, sql, { runMs, ...caps });
    } catch (err) {
      throw new MachineryError(`PostgreSQL ${e.id}: ${(err as Error).message}`);
    }
  }

  /**
   * A gold query's result, run once per (database, version, SQL) and kept in an LRU: the items
   * of a GRPO group that share a gold query wait on one execution. Failures are not kept.
   */
  async goldQuery(id: string, sql: string, o: QueryOptions): Promise<QueryOutcome & { cached: boolean }> {
    const e = this.lookup(id);
    if (!e) throw new UnknownDatabaseError(id, [...this.entries.keys()].sort());
    const key = `${e.id}\0${e.version}\0${sql}`;
    const hit = this.gold.get(key);
    if (hit) {
      this.counters.goldHits++;
      return { ...hit, cached: true };
    }
    let p = this.inflight.get(key);
    const shared = !!p;
    if (!p) {
      this.counters.goldRuns++;
      // other items may wait on it: it may queue until this item's deadline, and then runs under
      // the service's time limit whatever is left of the item's
      p = this.run(e, sql, { deadline: Math.max(o.deadline, Date.now() + this.opts.timeoutMs) }).then((r) => {
        if (r.ok) this.gold.set(key, r);
        return r;
      });
      this.inflight.set(key, p);
      p.finally(() => this.inflight.delete(key)).catch(() => {});
    }
    if (shared) this.counters.goldHits++;
    const r = await untilDeadline(p, o);
    return { ...r, cached: shared };
  }

  /** Stores an uploaded SQLite file, builds one from a SQL script, or registers a PostgreSQL URL. */
  async upload(u: Upload): Promise<DatabaseInfo & { tables: SchemaTable[] }> {
    if (!DB_ID.test(u.id)) throw new UploadError(`id ${JSON.stringify(u.id)} must match ${DB_ID.source}`);
    this.scan(0);
    const existing = this.entries.get(u.id);
    if (existing && !(u.replace && existing.source === "upload")) {
      throw new UploadError(
        existing.source === "upload" ? `database ${u.id} exists; send "replace": true to replace it` : `database ${u.id} exists in ${existing.source === "dir" ? "ASSAY_SQL_DIR" : "the configuration"} and cannot be replaced`,
        409,
      );
    }
    if ("postgres" in u) {
      if (!this.opts.allowUrlUpload) throw new UploadError("registering PostgreSQL URLs over HTTP is off; set ASSAY_SQL_ALLOW_URL_UPLOAD=1 or list it in ASSAY_SQL_POSTGRES", 403);
      if (!/^postgres(ql)?:\/\//.test(u.postgres)) throw new UploadError("postgres must be a postgres:// or postgresql:// URL");
      const entry: Entry = { id: u.id, engine: "postgres", version: String(Date.now()), source: "upload", location: u.postgres };
      this.entries.set(u.id, entry);
      try {
        return await this.describe(u.id);
      } catch (err) {
        this.entries.delete(u.id);
        throw new UploadError(`cannot read the database at that URL: ${(err as Error).message}`);
      }
    }
    mkdirSync(this.opts.uploadDir, { recursive: true });
    const final = join(this.opts.uploadDir, `${u.id}.sqlite`);
    const tmp = join(this.opts.uploadDir, `.${u.id}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      if ("sqlite" in u) {
        if (u.sqlite.length < 100 || !u.sqlite.subarray(0, 16).equals(SQLITE_MAGIC)) throw new UploadError("sqlite is not a SQLite 3 database file (bad header)");
        writeFileSync(tmp, u.sqlite);
        normalizeFile(tmp);
      } else {
        const bad = scriptProblem(u.script);
        if (bad) throw new UploadError(bad);
        const r = await this.engineSqlite().build(tmp, u.script, Math.max(this.opts.timeoutMs, 60_000));
        if (!r.ok) throw new UploadError(`the script failed: ${r.error}`);
      }
      renameSync(tmp, final);
    } catch (err) {
      rmSync(tmp, { force: true });
      if (err instanceof UploadError) throw err;
      if (err instanceof TaskTimeout) throw new UploadError(`the script ran longer than allowed (${err.message})`);
      throw new UploadError(`cannot use that database: ${(err as Error).message}`);
    }
    this.scan(0);
    return this.describe(u.id);
  }

  stats() {
    return { ...this.counters, gold_cache_entries: this.gold.size, gold_cache_bytes: this.gold.calculatedSize, sqlite: this.sqlite?.stats ?? null };
  }

  async close(): Promise<void> {
    const s = this.sqlite;
    const p = this.pg;
    this.sqlite = null;
    this.pg = null;
    await Promise.all([s?.close(), p?.close()]);
  }
}

/** The service as the configuration describes it (src/core/services.ts builds it once). */
export function createSqlService(config: Config): SqlService {
  const c = config.sql;
  return new SqlService({
    dir: c.dir,
    uploadDir: c.uploadDir || join(c.dir, "uploads"),
    postgres: c.postgres,
    timeoutMs: c.timeoutMs,
    maxRows: c.maxRows,
    maxResultBytes: c.maxResultBytes,
    goldCacheEntries: c.goldCacheEntries,
    goldCacheBytes: c.goldCacheBytes,
    threads: c.threads || config.workers,
    pgPoolSize: c.pgPoolSize,
    allowUrlUpload: c.allowUrlUpload,
  });
}

/** Opens an uploaded file once: it must be a readable database, and is switched out of WAL mode. */
function normalizeFile(path: string): void {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma("trusted_schema = OFF");
    const ok = db.pragma("quick_check", { simple: true });
    if (ok !== "ok") throw new UploadError(`the database file is damaged: ${String(ok)}`);
    db.pragma("journal_mode = DELETE");
  } catch (err) {
    if (err instanceof UploadError) throw err;
    throw new UploadError(`the database file cannot be opened: ${(err as Error).message}`);
  } finally {
    db.close();
  }
  // no -wal/-shm left beside it
  for (const ext of ["-wal", "-shm"]) rmSync(path + ext, { force: true });
}

/** Why a build script is refused: it may create and fill tables, never reach other files. */
export function scriptProblem(script: string): string | null {
  const tokens = tokenize(script);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind !== "word") continue;
    if (t.text === "attach" || t.text === "detach") return "ATTACH/DETACH is not allowed in a build script";
    if (t.text === "vacuum") return "VACUUM is not allowed in a build script";
    if (t.text === "pragma" && !/^(foreign_keys|encoding|page_size|user_version|application_id)$/.test(tokens[i + 1]?.text ?? "")) {
      return `PRAGMA ${tokens[i + 1]?.text ?? ""} is not allowed in a build script`;
    }
    if ((t.text === "load_extension" || t.text === "readfile" || t.text === "writefile") && tokens[i + 1]?.text === "(") return `${t.text}() is not allowed in a build script`;
  }
  return null;
}

function untilDeadline<T>(p: Promise<T>, o: QueryOptions): Promise<T> {
  const left = o.deadline - Date.now();
  return new Promise<T>((res, rej) => {
    const t = setTimeout(() => rej(new MachineryError("deadline passed while waiting for the gold query")), Math.max(0, left));
    const onAbort = () => rej(new MachineryError("request aborted while waiting for the gold query"));
    o.signal?.addEventListener("abort", onAbort, { once: true });
    p.then(res, rej).finally(() => {
      clearTimeout(t);
      o.signal?.removeEventListener("abort", onAbort);
    });
  });
}
