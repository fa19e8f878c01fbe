/**
 * The SQL service: databases by id and the engines that query them, shared by the sql verifier
 * and the /databases routes. Created once per process (src/core/services.ts); engines start
 * lazily, on the first query.
 *
 * Databases: every *.sqlite file under `dir` (recursively; id = file stem, so Spider/BIRD's
 * database/<db_id>/<db_id>.sqlite layout works), uploads (stored under `uploadDir`), and
 * PostgreSQL databases named by connection URL.
 */
import { readdirSync, readFileSync, statSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, basename, resolve } from "node:path";
import { tmpdir } from "node:os";
import { randomBytes } from "node:crypto";
import { LRUCache } from "lru-cache";
import { MachineryError } from "../core/types.js";
import { Ledger } from "../../sandbox/load.js";
import type { SandboxLoad } from "../../sandbox/types.js";
import { SqlitePool, TaskTimeout, ProcessExited } from "./sqlite-pool.js";
import { PostgresEngine, UnsafeRoleError, ConnectionBudgetError, serverOf, type PgOutcome } from "./postgres.js";
import { tokenize } from "./lex.js";
import type { DigestRule } from "./digest.js";
import type { GoldHere } from "./sqlite-worker.js";
import { DB_ID, type DatabaseInfo, type QueryOutcome, type SchemaTable } from "./types.js";
import type { Config } from "../core/config.js";

export { DB_ID };

export interface SqlServiceOptions {
  /** Scanned for *.sqlite files. */
  dir: string;
  /** Where POST /databases stores uploads (created on first upload). */
  uploadDir: string;
  /** Remove uploadDir on close (a temporary folder, for ASSAY_DATA_DIR=:memory:). */
  uploadDirTemporary?: boolean;
  /** Largest database an upload may be or a build script may write, bytes (ASSAY_SQL_MAX_DB_MB). */
  maxDbBytes?: number;
  /** CPU time a build script or an uploaded file's integrity_check may take, ms. */
  buildTimeoutMs?: number;
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
  /** Most connections one PostgreSQL database holds. */
  pgPoolSize: number;
  /** Most PostgreSQL connections open at once, all databases together (default pgPoolSize). */
  pgConnections?: number;
  /** An idle PostgreSQL connection is closed after this long, ms (default 10 s). */
  pgIdleMs?: number;
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
  /**
   * Epoch ms: the item's deadline, read when the query gets a process (a getter over
   * ctx.deadline moves with the item's stopped clock). Without `queued` it also bounds the wait.
   */
  readonly deadline: number;
  signal?: AbortSignal;
  /**
   * Wraps a SQLite query (its wait for a process, and its run, bounded by the pool in CPU time)
   * or the wait for a shared gold result: the scorer's ctx.unclocked, so neither queueing behind
   * other items nor a busy CPU counts against this item's deadline. Unset: both count, and a query
   * that cannot start by the deadline is MachineryError.
   */
  queued?: <T>(wait: Promise<T>) => Promise<T>;
  /**
   * The gold result's digest under the comparison's rule (src/sql/digest.ts): on SQLite a result
   * with the same digest comes back without its rows (`matched`). PostgreSQL ignores it. `of`:
   * the gold query's text instead, run just before (goldQuery, in this turn): the model's query
   * goes in the same message to the same process, which digests the gold's result it kept
   * (issue 35: the cold path in one round trip, the model's rows sent back only on a mismatch).
   * With `held` (a gold whose rows stayed in a process, goldQuery's `stay`): sent to the process
   * keeping it (affinity), which runs it again if it no longer does, and sends the gold's rows
   * with a mismatching result (`gold`).
   */
  digest?: DigestRule & ({ gold: string } | GoldHere);
  /** Keep the result in the SQLite process for a query sent after it with `digest.of` (gold queries). */
  keep?: boolean;
  /**
   * goldQuery on SQLite: the caller takes a result whose rows stayed in the SQLite process
   * (`kept`, rows empty) and sends its model queries with `digest.of` and `held` (issue 35: a
   * cold pair moves no gold rows to the server; they come only with a mismatching model result).
   * The first caller of a gold decides; later ones get what is cached.
   */
  stay?: boolean;
}

export type Upload =
  | { id: string; sqlite: Buffer; replace?: boolean }
  | { id: string; script: string; replace?: boolean }
  | { id: string; postgres: string; replace?: boolean };

const SQLITE_MAGIC = Buffer.from("SQLite format 3\0", "latin1");

/**
 * A PostgreSQL query stopped by statement_timeout (wall time: on this host the last-resort net,
 * far past its CPU limit) that spent at least this share of it runnable but waiting for a CPU
 * (its backend's /proc schedstat) was stopped by the load: null, not 0. A query stopped at its
 * CPU limit or at the wall-clock net less its waits for a CPU is 0 whatever the load.
 */
export const LOADED_SHARE = 0.25;

/**
 * Whether a PostgreSQL outcome is a stop by statement_timeout after waiting for a CPU for at
 * least LOADED_SHARE of it: the load's doing, null. Never a stop by the query's CPU time or net.
 */
export function stoppedByLoad(r: PgOutcome): boolean {
  return !r.ok && r.limit === "timeout" && r.stopped === "statement_timeout" && !!r.work && r.statement_ms !== undefined && r.work.wait_ms >= LOADED_SHARE * r.statement_ms;
}

/** A PostgreSQL URL registered by upload: `<id>.postgres` in the upload folder, this JSON. */
const PG_UPLOAD = ".postgres";
interface PgUpload {
  url: string;
  /** When it was registered (ms): the database's version, so a replacement is a new version. */
  registered: number;
}
function readPgUpload(path: string): PgUpload | null {
  try {
    const r = JSON.parse(readFileSync(path, "utf8")) as Partial<PgUpload>;
    return typeof r.url === "string" && typeof r.registered === "number" ? { url: r.url, registered: r.registered } : null;
  } catch {
    return null; // removed between the listing and the read
  }
}

export class SqlService {
  private entries = new Map<string, Entry>();
  private scannedAt = 0;
  private sqlite: SqlitePool | null = null;
  private pg: PostgresEngine | null = null;
  private readonly gold: LRUCache<string, Extract<QueryOutcome, { ok: true }>>;
  private readonly inflight = new Map<string, Promise<QueryOutcome>>();
  private readonly schemas = new Map<string, { version: string; tables: SchemaTable[] } | { version: string; error: string }>();
  /**
   * PostgreSQL's connections, handed out one query each: at most pgConnections in all and
   * pgPoolSize per database, with the backlog in one ledger (made on the first query).
   */
  private pgGate: Gate | null = null;
  /**
   * Gold queries actually executed, and served from the cache (tests, GET /databases); model
   * results that matched the gold's digest and came back without rows; database files stat'ed;
   * golds a SQLite process ran again for a model query because it no longer kept them.
   */
  readonly counters = { goldRuns: 0, goldHits: 0, queries: 0, matched: 0, stats: 0, goldReruns: 0 };

  /** Other queues of SQL items whose backlog admission counts (the sql verifier's parse processes), closed with the service. */
  private readonly attached: { load(): SandboxLoad | undefined; close?(): void }[] = [];

  constructor(readonly opts: SqlServiceOptions) {
    this.gold = new LRUCache({
      max: Math.max(1, opts.goldCacheEntries),
      maxSize: Math.max(1, opts.goldCacheBytes),
      // a gold whose rows stayed in a SQLite process costs its key and a few fields here
      sizeCalculation: (v, k) => Math.max(1, (v.kept ? 64 : v.bytes) + k.length * 2),
    });
  }

  private engineSqlite(): SqlitePool {
    return (this.sqlite ??= new SqlitePool(this.opts.threads));
  }
  private enginePg(): PostgresEngine {
    return (this.pg ??= new PostgresEngine({ poolSize: this.opts.pgPoolSize, maxConnections: this.pgMax(), idleMs: this.opts.pgIdleMs, connectTimeoutMs: 5_000 }));
  }
  private pgMax(): number {
    return Math.max(1, this.opts.pgConnections ?? this.opts.pgPoolSize);
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
        names = (readdirSync(dir, { recursive: true }) as string[]).filter((n) => n.endsWith(".sqlite") || (dir === this.opts.uploadDir && n.endsWith(PG_UPLOAD))).sort();
      } catch {
        continue; // a missing directory holds no databases
      }
      for (const name of names) {
        const path = resolve(dir, name);
        if (name.endsWith(PG_UPLOAD)) {
          const id = basename(name, PG_UPLOAD);
          if (!DB_ID.test(id) || next.has(id)) continue;
          const r = readPgUpload(path);
          if (r) next.set(id, { id, engine: "postgres", version: String(r.registered), source: "upload", location: r.url });
          continue;
        }
        const id = basename(name, ".sqlite");
        if (!DB_ID.test(id) || next.has(id)) continue; // first one wins: uploads, then the dir in path order
        const source = path.startsWith(uploads + "/") ? "upload" : "dir";
        next.set(id, { id, engine: "sqlite", version: "", source, location: path });
      }
    }
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
    if (e.engine === "sqlite" && !this.statted.has(e)) {
      try {
        this.counters.stats++;
        const st = statSync(e.location);
        e.version = `${st.ino}:${st.size}:${st.mtimeMs}`;
      } catch {
        this.entries.delete(id);
        return undefined;
      }
      this.statted.add(e);
      this.unstat ??= setImmediate(() => {
        this.statted.clear();
        this.unstat = null;
      }).unref();
    }
    return e;
  }

  /**
   * SQLite entries whose file was stat'ed in this turn of the event loop: the version holds until
   * the next turn, so the items a batch starts together (each looking its database up three
   * times) share one statSync per database, and a file replaced between two turns is seen.
   */
  private readonly statted = new Set<Entry>();
  private unstat: NodeJS.Immediate | null = null;

  /**
   * Whether the gold query's result is at hand: cached, or being run for another item (so the
   * model's query can wait for it and go with its digest). SQLite only; false when unknown.
   */
  goldAtHand(id: string, sql: string): boolean {
    const e = this.lookup(id);
    if (!e || e.engine !== "sqlite") return false;
    const key = goldKey(e, "", sql);
    return this.gold.has(key) || this.inflight.has(key);
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
    if (hit && hit.version === e.version) {
      if ("error" in hit) throw new Error(hit.error);
      return { ...info, tables: hit.tables };
    }
    const ms = Math.max(this.opts.timeoutMs, 10_000);
    let tables: SchemaTable[];
    try {
      tables = e.engine === "sqlite" ? await this.engineSqlite().schema(e.location, e.version, ms) : await this.enginePg().schema(e.location, ms);
    } catch (err) {
      // kept too: a database whose schema cannot be read in time is not re-read on every GET
      const error = err instanceof TaskTimeout ? `its schema could not be read within ${ms} ms of CPU time` : (err as Error).message;
      if (e.engine === "sqlite") this.schemas.set(id, { version: e.version, error });
      throw new Error(error);
    }
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
    const caps = { maxRows: this.opts.maxRows, maxBytes: this.opts.maxResultBytes };
    if (e.engine === "sqlite") {
      // the limit is fixed when a process takes the query: what is left of the item's deadline then
      let limitMs = this.opts.timeoutMs;
      const limit = () => (limitMs = Math.max(1, Math.min(this.opts.timeoutMs, o.deadline - Date.now())));
      try {
        const running = this.engineSqlite().query(
          { kind: "query", path: e.location, version: e.version, sql, ...caps, ...(o.digest ? { digest: o.digest } : {}), ...(o.keep ? { keep: true } : {}), ...(o.keep && o.stay ? { stay: true } : {}) },
          {
            limitMs: limit,
            netMs: () => Math.max(limitMs, Math.min(limitMs * 2 + 1_000, o.deadline - Date.now())),
            expectMs: this.opts.timeoutMs,
            startBy: o.queued ? undefined : o.deadline,
            signal: o.signal,
            ...(o.digest && "of" in o.digest ? { withPrevious: !o.digest.held } : {}),
            // a gold and the model queries digested against it go to the process keeping its rows
            ...(o.keep ? { affinity: keptKey(e, sql) } : o.digest && "of" in o.digest ? { affinity: keptKey(e, o.digest.of) } : {}),
          },
        );
        // With `queued`, the item's clock stops for the whole query: its wait for a process, and
        // its run, which the pool itself stops at what was left of the deadline, counted in CPU
        // time and in wall-clock time not spent waiting for a CPU. A busy machine slows the query
        // but cannot make its item null.
        const r = await (o.queued ? o.queued(running) : running);
        if (r.ok && r.matched) this.counters.matched++;
        if (r.ok && r.reran) this.counters.goldReruns++;
        return r;
      } catch (err) {
        if (err instanceof TaskTimeout) {
          if (err.started) {
            const what = err.by === "cpu" ? `${Math.round(err.ms)} ms of CPU time` : `${Math.round(err.ms)} ms of wall-clock time not spent waiting for a CPU`;
            return { ok: false, stage: "execute", error: `query stopped after ${what} (limit ${limitMs} ms of CPU time)`, limit: "timeout" };
          }
          if (o.signal?.aborted) throw new MachineryError("request aborted while the query waited for a SQLite process");
          throw new MachineryError(`SQLite query could not start before the deadline: ${err.message}`);
        }
        // the process died under this query (memory, a crash): what the query did, so a
        // model cannot make its item unscorable by crashing it
        if (err instanceof ProcessExited) return { ok: false, stage: "execute", error: "the query ended its SQLite process (out of memory?)" };
        throw new MachineryError(`SQLite process failed: ${(err as Error).message}`);
      }
    }
    // PostgreSQL: the service hands out the pool's connections itself (one permit each), so a
    // query's wait for one is seen: counted in the ledger, and unclocked like SQLite's.
    // One budget for all databases (issue 35): the wait for a connection is admission, never the
    // item's deadline (with `queued` its clock is stopped, and the wait has no end of its own).
    const g = (this.pgGate ??= new Gate(this.pgMax(), Math.min(this.opts.pgPoolSize, this.pgMax())));
    const ticket = g.ledger.enter(Math.min(this.opts.timeoutMs, left));
    const running = (async () => {
      try {
        await g.acquire(e.location, o.queued ? undefined : o.deadline, o.signal);
      } catch (err) {
        ticket.end(false);
        throw err;
      }
      ticket.start();
      try {
        // the limit, fixed when the connection is had: what is left of the item's deadline then,
        // in CPU time of the backend where its /proc entry is read (the engine stops it at that, or
        // at the wall-clock net less its waits for a CPU; statement_timeout is the last resort),
        // in wall time elsewhere. With `queued` the item's clock is stopped for the whole query.
        const room = () => (o.queued ? Infinity : o.deadline - Date.now());
        const runMs = Math.max(1, Math.min(this.opts.timeoutMs, o.deadline - Date.now()));
        const netMs = Math.max(runMs, Math.min(runMs * 2 + 1_000, o.deadline - Date.now()));
        const lastMs = Math.max(netMs, Math.min(runMs * 10 + 5_000, netMs + 60_000, room()));
        let r: PgOutcome;
        try {
          r = await this.enginePg().query(e.location, sql, { runMs, netMs, lastMs, ...caps });
        } catch (err) {
          throw new MachineryError(`PostgreSQL ${e.id}: ${(err as Error).message}`);
        }
        // statement_timeout is wall time: a query it stopped after spending a good share of it
        // waiting for a CPU was stopped by the load, not by its own work: ours to mask (null), never a 0
        if (!r.ok && r.work && stoppedByLoad(r)) {
          throw new MachineryError(
            `PostgreSQL ${e.id}: the query reached the ${r.statement_ms} ms wall-clock safety limit after waiting ${Math.round(r.work.wait_ms)} ms for a CPU (it ran ${Math.round(r.work.cpu_ms)} ms of its ${runMs} ms of CPU time): the database host was loaded, so this is not scored; retry it`,
          );
        }
        return r;
      } finally {
        ticket.end();
        g.release(e.location);
      }
    })();
    return o.queued ? o.queued(running) : running;
  }

  /**
   * The SQL backlog for admission: the busier of the SQLite processes and the PostgreSQL
   * connections (a new item's database is not looked at). Nothing before the first query.
   */
  load(): SandboxLoad | undefined {
    let worst = this.sqlite?.load();
    for (const x of [this.pgGate?.ledger.load(), ...this.attached.map((a) => a.load())]) {
      if (x && (!worst || x.waitMs > worst.waitMs)) worst = x;
    }
    return worst;
  }

  /**
   * Adds a queue that SQL items wait in (the sql verifier's parse processes) to the backlog
   * admission reads (`load`); closed when the service closes.
   */
  attach(queue: { load(): SandboxLoad | undefined; close?(): void }): void {
    this.attached.push(queue);
  }

  /**
   * Start-up check of every configured PostgreSQL database's role: throws (the server refuses to
   * start) when one may create temporary tables or objects, naming what to REVOKE. A database
   * that does not answer yet is reported in `unreachable` and checked again before its first query.
   */
  async checkPostgres(): Promise<{ unreachable: { id: string; error: string }[] }> {
    const unreachable: { id: string; error: string }[] = [];
    const unsafe: string[] = [];
    for (const p of this.opts.postgres) {
      try {
        await this.enginePg().checkRole(p.url);
      } catch (err) {
        if (err instanceof UnsafeRoleError) unsafe.push(`PostgreSQL database ${p.id} (ASSAY_SQL_POSTGRES): ${err.message}`);
        else unreachable.push({ id: p.id, error: (err as Error).message });
      }
    }
    if (unsafe.length) throw new UnsafeRoleError(unsafe.join("\n"));
    await this.checkConnectionBudget(unreachable.map((u) => u.id));
    return { unreachable };
  }

  /**
   * Start-up check of the connection budget against each PostgreSQL server's `SHOW
   * max_connections` (issue 35): ASSAY_SQL_PG_CONNECTIONS must be at most half of what is left
   * after the reserved connections, so other clients (psql, a migration, a second Assay) still
   * get in. Throws ConnectionBudgetError naming the setting and the most it may be.
   */
  async checkConnectionBudget(skip: string[] = []): Promise<{ server: string; max: number; reserved: number; fits: number }[]> {
    const seen = new Map<string, { id: string; url: string }>();
    for (const p of this.opts.postgres) if (!skip.includes(p.id) && !seen.has(serverOf(p.url))) seen.set(serverOf(p.url), p);
    const out: { server: string; max: number; reserved: number; fits: number }[] = [];
    const cap = this.pgMax();
    for (const [server, p] of seen) {
      let lim: { max: number; reserved: number; usable: number };
      try {
        lim = await this.enginePg().serverLimit(p.url);
      } catch {
        continue; // not answering now: its role is checked before its first query
      }
      const fits = Math.max(1, Math.floor(lim.usable / 2));
      out.push({ server, max: lim.max, reserved: lim.reserved, fits });
      if (cap > fits) {
        throw new ConnectionBudgetError(
          `ASSAY_SQL_PG_CONNECTIONS is ${cap}, but the PostgreSQL server at ${server} (database ${p.id}) has max_connections = ${lim.max}, ${lim.reserved} of them reserved; ` +
            `Assay keeps to at most half of the rest so other clients still get in: set ASSAY_SQL_PG_CONNECTIONS to ${fits} or less, or raise max_connections in that server's postgresql.conf`,
        );
      }
    }
    return out;
  }

  /**
   * A gold query's result, run once per (database, version, SQL) and kept in an LRU: the items
   * of a GRPO group that share a gold query wait on one execution. Failures are not kept.
   */
  async goldQuery(id: string, sql: string, o: QueryOptions): Promise<QueryOutcome & { cached: boolean }> {
    const e = this.lookup(id);
    if (!e) throw new UnknownDatabaseError(id, [...this.entries.keys()].sort());
    // PostgreSQL: keyed by the settings fresh sessions run under (every query runs on one)
    const keyFor = (settings: string) => goldKey(e, settings, sql);
    const key = keyFor(e.engine === "postgres" ? this.enginePg().settingsKey(e.location) : "");
    const hit = this.gold.get(key);
    if (hit) {
      this.counters.goldHits++;
      return { ...hit, cached: true };
    }
    let p = this.inflight.get(key);
    const shared = !!p;
    if (!p) {
      this.counters.goldRuns++;
      // other items may wait on it: it waits for a process as long as it takes (admission bounds
      // the queue), then runs under the service's time limit whatever is left of this item's
      const limitMs = this.opts.timeoutMs;
      p = this.run(e, sql, { get deadline() { return Date.now() + limitMs * 2 + 1_000; }, queued: (w) => w, keep: true, stay: o.stay }).then((r) => {
        if (r.ok) {
          const { settings, ...kept } = r as PgOutcome & { ok: true };
          this.gold.set(settings === undefined ? key : keyFor(settings), kept);
        }
        return r;
      });
      this.inflight.set(key, p);
      p.finally(() => this.inflight.delete(key)).catch(() => {});
    }
    if (shared) this.counters.goldHits++;
    const r = await (o.queued ? o.queued(untilDeadline(p, o, false)) : untilDeadline(p, o, true));
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
      const registered = Date.now();
      const entry: Entry = { id: u.id, engine: "postgres", version: String(registered), source: "upload", location: u.postgres };
      this.entries.set(u.id, entry);
      let described: DatabaseInfo & { tables: SchemaTable[] };
      try {
        described = await this.describe(u.id);
      } catch (err) {
        this.entries.delete(u.id);
        throw new UploadError(`cannot read the database at that URL: ${(err as Error).message}`);
      }
      // Kept once it answered, as a file beside the uploaded SQLite files: every replica that
      // shares the folder, and this one after a restart, knows the id (the URL holds a password:
      // the file is the server's alone to read).
      mkdirSync(this.opts.uploadDir, { recursive: true, mode: 0o700 });
      const tmp = join(this.opts.uploadDir, `.${u.id}.${randomBytes(6).toString("hex")}.tmp`);
      writeFileSync(tmp, JSON.stringify({ url: u.postgres, registered } satisfies PgUpload) + "\n", { mode: 0o600 });
      renameSync(tmp, join(this.opts.uploadDir, u.id + PG_UPLOAD));
      rmSync(join(this.opts.uploadDir, `${u.id}.sqlite`), { force: true }); // what it replaced, if anything
      this.scan(0);
      return described;
    }
    // Checked before it is registered: a refused upload leaves no file and no entry behind.
    const maxBytes = this.opts.maxDbBytes ?? 256 * 1024 ** 2;
    const mb = (n: number) => `${Math.ceil(n / 1024 ** 2)} MiB`;
    const cpuMs = this.opts.buildTimeoutMs ?? 30_000;
    if ("sqlite" in u && u.sqlite.length > maxBytes) {
      throw new UploadError(`the database file is ${mb(u.sqlite.length)}, past ASSAY_SQL_MAX_DB_MB (${mb(maxBytes)}); raise it, or put the file under ASSAY_SQL_DIR`, 413);
    }
    mkdirSync(this.opts.uploadDir, { recursive: true, mode: 0o700 });
    const final = join(this.opts.uploadDir, `${u.id}.sqlite`);
    const tmp = join(this.opts.uploadDir, `.${u.id}.${randomBytes(6).toString("hex")}.tmp`);
    const pool = this.engineSqlite();
    let tables: SchemaTable[];
    try {
      if ("sqlite" in u) {
        if (u.sqlite.length < 100 || !u.sqlite.subarray(0, 16).equals(SQLITE_MAGIC)) throw new UploadError("sqlite is not a SQLite 3 database file (bad header)");
        writeFileSync(tmp, u.sqlite);
        const r = await pool.check(tmp, cpuMs);
        if (!r.ok) throw new UploadError(r.error);
      } else {
        const bad = scriptProblem(u.script);
        if (bad) throw new UploadError(bad);
        const r = await pool.build(tmp, u.script, maxBytes, cpuMs);
        if (!r.ok) {
          throw r.full
            ? new UploadError(`the script's database grew past ASSAY_SQL_MAX_DB_MB (${mb(maxBytes)}): ${r.error}; insert less, or raise ASSAY_SQL_MAX_DB_MB`, 413)
            : new UploadError(`the script failed: ${r.error}`);
        }
      }
      for (const ext of ["-wal", "-shm", "-journal"]) rmSync(tmp + ext, { force: true });
      tables = await pool.schema(tmp, `upload:${randomBytes(6).toString("hex")}`, Math.max(this.opts.timeoutMs, 10_000), true);
      renameSync(tmp, final);
      rmSync(join(this.opts.uploadDir, u.id + PG_UPLOAD), { force: true }); // a URL it replaced
    } catch (err) {
      for (const ext of ["", "-wal", "-shm", "-journal"]) rmSync(tmp + ext, { force: true });
      if (err instanceof UploadError) throw err;
      if (err instanceof TaskTimeout) throw new UploadError(`checking the database took more than ${cpuMs} ms of CPU time (ASSAY_SQL_BUILD_TIMEOUT_MS); make it smaller, or raise the limit`, 422);
      if (err instanceof ProcessExited) throw new UploadError("checking the database ended its SQLite process (out of memory?); make it smaller", 422);
      throw new UploadError(`cannot use that database: ${(err as Error).message}`);
    }
    this.scan(0);
    const info = this.database(u.id);
    this.schemas.set(u.id, { version: info.version, tables });
    return { ...info, tables };
  }

  stats() {
    return { ...this.counters, gold_cache_entries: this.gold.size, gold_cache_bytes: this.gold.calculatedSize, sqlite: this.sqlite?.stats ?? null, postgres: this.pg?.connections.stats ?? null };
  }

  async close(): Promise<void> {
    if (this.unstat) clearImmediate(this.unstat);
    const s = this.sqlite;
    const p = this.pg;
    this.sqlite = null;
    this.pg = null;
    for (const a of this.attached.splice(0)) a.close?.();
    await Promise.all([s?.close(), p?.close()]);
    if (this.opts.uploadDirTemporary) rmSync(this.opts.uploadDir, { recursive: true, force: true });
  }
}

/**
 * `n` permits (PostgreSQL connections, all databases), at most `perKey` to one database, first
 * come first served among those whose database has room, with the backlog in a ledger
 * (sandbox/load.ts). A waiter gives up at `startBy` or when its signal aborts (MachineryError:
 * it never started).
 *
 * A released permit goes first to a waiter for the same database among the next AFFINITY ones:
 * its connection is idle and open, so the query needs no new one (with 20 databases over 16
 * connections, strict order opened a new connection, and closed another database's idle one,
 * for nearly every query). The oldest waiter is passed over so at most AFFINITY_SKIPS times:
 * a database with no connection open still gets one after that many queries end.
 */
const AFFINITY = 64;
const AFFINITY_SKIPS = 16;

export class Gate {
  readonly ledger: Ledger;
  private free: number;
  private readonly held = new Map<string, number>();
  private readonly waiting: { key: string; skipped: number; give: () => void }[] = [];
  constructor(n: number, private readonly perKey = n) {
    this.free = n;
    this.ledger = new Ledger(n);
  }
  private room(key: string): boolean {
    return this.free > 0 && (this.held.get(key) ?? 0) < this.perKey;
  }
  private take(key: string): void {
    this.free--;
    this.held.set(key, (this.held.get(key) ?? 0) + 1);
  }
  acquire(key: string, startBy?: number, signal?: AbortSignal): Promise<void> {
    if (this.room(key) && !this.waiting.some((w) => w.key === key)) {
      this.take(key);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const w = {
        key,
        skipped: 0,
        give: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", refuse);
          resolve();
        },
      };
      const refuse = () => {
        const i = this.waiting.indexOf(w);
        if (i < 0) return;
        this.waiting.splice(i, 1);
        clearTimeout(timer);
        reject(new MachineryError(signal?.aborted ? "request aborted while the query waited for a PostgreSQL connection" : "PostgreSQL query could not start before the deadline: every connection was busy"));
      };
      if (startBy !== undefined) timer = setTimeout(refuse, Math.max(0, startBy - Date.now()));
      signal?.addEventListener("abort", refuse, { once: true });
      this.waiting.push(w);
      this.pump();
    });
  }
  release(key: string): void {
    const n = (this.held.get(key) ?? 1) - 1;
    if (n > 0) this.held.set(key, n);
    else this.held.delete(key);
    this.free++;
    const head = this.waiting[0];
    if (head && head.skipped < AFFINITY_SKIPS) {
      const i = this.waiting.slice(0, AFFINITY).findIndex((w) => w.key === key);
      if (i >= 0 && this.room(key)) {
        if (i > 0) head.skipped++;
        const [w] = this.waiting.splice(i, 1);
        this.take(key);
        w.give();
      }
    }
    this.pump();
  }
  private pump(): void {
    for (let i = 0; i < this.waiting.length && this.free > 0; ) {
      const w = this.waiting[i];
      if (!this.room(w.key)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.take(w.key);
      w.give();
    }
  }
}

/** The service as the configuration describes it (src/core/services.ts builds it once). */
export function createSqlService(config: Config): SqlService {
  const c = config.sql;
  return new SqlService({
    dir: c.dir,
    // uploads live with the rest of the server's data; with nothing kept, in a folder of its own,
    // named now and made by the first upload (a server that never takes one leaves nothing behind)
    ...(c.uploadDir ? { uploadDir: c.uploadDir }
      : config.dataDir === ":memory:" ? { uploadDir: join(tmpdir(), `assay-databases-${process.pid}-${randomBytes(6).toString("hex")}`), uploadDirTemporary: true }
      : { uploadDir: join(config.dataDir, "databases") }),
    maxDbBytes: c.maxDbMb * 1024 ** 2,
    buildTimeoutMs: c.buildTimeoutMs,
    postgres: c.postgres,
    timeoutMs: c.timeoutMs,
    maxRows: c.maxRows,
    maxResultBytes: c.maxResultBytes,
    goldCacheEntries: c.goldCacheEntries,
    goldCacheBytes: c.goldCacheBytes,
    threads: c.threads || config.workers,
    pgPoolSize: c.pgPoolSize,
    pgConnections: c.pgConnections,
    pgIdleMs: c.pgIdleS * 1000,
    allowUrlUpload: c.allowUrlUpload,
  });
}

/** Why a build script is refused: it may create and fill tables, never reach other files. */
export function scriptProblem(script: string): string | null {
  const tokens = tokenize(script);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind !== "word") continue;
    if (t.text === "attach" || t.text === "detach") return "ATTACH/DETACH is not allowed in a build script";
    if (t.text === "vacuum") return "VACUUM is not allowed in a build script";
    // not page_size: the size cap (max_page_count) is counted in pages of the default size
    if (t.text === "pragma" && !/^(foreign_keys|encoding|user_version|application_id)$/.test(tokens[i + 1]?.text ?? "")) {
      return `PRAGMA ${tokens[i + 1]?.text ?? ""} is not allowed in a build script`;
    }
    if ((t.text === "load_extension" || t.text === "readfile" || t.text === "writefile") && tokens[i + 1]?.text === "(") return `${t.text}() is not allowed in a build script`;
  }
  return null;
}

/** Which SQLite process a gold's rows are kept in (and its model queries go to): the pool's affinity key. */
function keptKey(e: Entry, sql: string): string {
  return `${e.location}\0${e.version}\0${sql}`;
}

/** A gold result's cache key: database, its version, the settings PostgreSQL sessions run under ("" on SQLite), the SQL. */
function goldKey(e: Entry, settings: string, sql: string): string {
  return `${e.id}\0${e.version}\0${settings}\0${sql}`;
}

function untilDeadline<T>(p: Promise<T>, o: QueryOptions, timed: boolean): Promise<T> {
  const left = o.deadline - Date.now();
  return new Promise<T>((res, rej) => {
    const t = timed ? setTimeout(() => rej(new MachineryError("deadline passed while waiting for the gold query")), Math.max(0, left)) : undefined;
    const onAbort = () => rej(new MachineryError("request aborted while waiting for the gold query"));
    o.signal?.addEventListener("abort", onAbort, { once: true });
    p.then(res, rej).finally(() => {
      clearTimeout(t);
      o.signal?.removeEventListener("abort", onAbort);
    });
  });
}
