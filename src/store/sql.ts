/**
 * The store's two backends behind one small async interface: the embedded SQLite file (the
 * default; better-sqlite3, synchronous underneath, each call a sub-millisecond indexed lookup) and
 * a shared PostgreSQL (ASSAY_STORE_URL=postgres://...) that several replicas use at once. The
 * stores (rubrics.ts, versioned.ts, jobs.ts, judge-cache.ts) are written once against this: SQL
 * with `?` placeholders in the subset both engines read; where the engines differ a store asks
 * `dialect`.
 */
import type Database from "better-sqlite3";
import type pg from "pg";

export type Dialect = "sqlite" | "postgres";

export interface Sql {
  readonly dialect: Dialect;
  /** True when other processes may write the same store at once (PostgreSQL). */
  readonly shared: boolean;
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /**
   * Runs `fn` in one transaction on the handle it is given (all or nothing). `lock` names what
   * it reads and then writes (a rubric's id, ...): on PostgreSQL a transaction-scoped advisory
   * lock on it serialises replicas doing the same; SQLite's single writer already does. Inside
   * `fn`, `tx` on the handle joins the open transaction.
   */
  tx<T>(fn: (t: Sql) => Promise<T>, lock?: string): Promise<T>;
  close(): Promise<void>;
}

// ------------------------------------------------------------------------------------- SQLite

/** better-sqlite3 underneath: statements prepared once per text; a transaction holds the others off. */
export class SqliteSql implements Sql {
  readonly dialect = "sqlite";
  readonly shared = false;
  private readonly stmts = new Map<string, Database.Statement>();
  /** Settled when the open transaction ends; undefined when none is open. */
  private busy?: Promise<void>;
  private readonly inner: Sql;

  constructor(readonly db: Database.Database) {
    const self = this;
    this.inner = {
      dialect: "sqlite",
      shared: false,
      all: async <T>(sql: string, p: readonly unknown[] = []) => self.stmt(sql).all(...p) as T[],
      get: async <T>(sql: string, p: readonly unknown[] = []) => self.stmt(sql).get(...p) as T | undefined,
      run: async (sql: string, p: readonly unknown[] = []) => self.stmt(sql).run(...p).changes,
      tx: <T>(fn: (t: Sql) => Promise<T>) => fn(self.inner),
      close: () => self.close(),
    };
  }

  private stmt(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (!s) this.stmts.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  async all<T>(sql: string, p: readonly unknown[] = []): Promise<T[]> {
    while (this.busy) await this.busy;
    return this.stmt(sql).all(...p) as T[];
  }
  async get<T>(sql: string, p: readonly unknown[] = []): Promise<T | undefined> {
    while (this.busy) await this.busy;
    return this.stmt(sql).get(...p) as T | undefined;
  }
  async run(sql: string, p: readonly unknown[] = []): Promise<number> {
    while (this.busy) await this.busy;
    return this.stmt(sql).run(...p).changes;
  }

  async tx<T>(fn: (t: Sql) => Promise<T>): Promise<T> {
    while (this.busy) await this.busy;
    let release!: () => void;
    this.busy = new Promise<void>((r) => (release = r));
    try {
      this.db.exec("BEGIN");
      try {
        const v = await fn(this.inner);
        this.db.exec("COMMIT");
        return v;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw err;
      }
    } finally {
      this.busy = undefined;
      release();
    }
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

// ----------------------------------------------------------------------------------- PostgreSQL

/** `?` placeholders as PostgreSQL's `$1, $2, ...` (the stores' SQL has no `?` inside literals). */
const numbered = new Map<string, string>();
function pgText(sql: string): string {
  let t = numbered.get(sql);
  if (t === undefined) {
    let n = 0;
    t = sql.replace(/\?/g, () => `$${++n}`);
    numbered.set(sql, t);
  }
  return t;
}

type Queryable = Pick<pg.Pool | pg.PoolClient, "query">;

export class PgSql implements Sql {
  readonly dialect = "postgres";
  readonly shared = true;

  constructor(private readonly pool: pg.Pool, private readonly on: Queryable = pool, private readonly inTx = false) {}

  async all<T>(sql: string, p: readonly unknown[] = []): Promise<T[]> {
    return (await this.on.query(pgText(sql), p as unknown[])).rows as T[];
  }
  async get<T>(sql: string, p: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, p))[0];
  }
  async run(sql: string, p: readonly unknown[] = []): Promise<number> {
    return (await this.on.query(pgText(sql), p as unknown[])).rowCount ?? 0;
  }

  async tx<T>(fn: (t: Sql) => Promise<T>, lock?: string): Promise<T> {
    if (this.inTx) {
      if (lock) await this.on.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [lock]);
      return fn(this);
    }
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      try {
        if (lock) await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [lock]);
        const v = await fn(new PgSql(this.pool, client, true));
        await client.query("COMMIT");
        return v;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      }
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    if (!this.inTx) await this.pool.end();
  }
}
