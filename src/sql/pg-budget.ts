/**
 * One connection budget for every PostgreSQL database the server talks to (issue 35). pg's own
 * Pool is one pool per database: with 8 connections each and 30 s of idle life, 20 databases
 * asked a server with PostgreSQL's default `max_connections` (100) for 160 connections, and a
 * quarter of the items came back null ("sorry, too many clients already").
 *
 * Here the number of open connections (busy, idle, and being opened) across all databases never
 * passes `max`, and one database never holds more than `perDatabase`. A database that needs a
 * connection while the budget is spent takes it from another database's idle ones (the oldest
 * idle connection is closed and a new one opened), or waits, first come first served, for one to
 * be released. Idle connections close after `idleMs`.
 *
 * Waiting here is admission, never a failure: nothing times out while it waits (the SQL service
 * hands out at most `max` permits, so a query waits here only while a schema read holds one).
 * Opening a connection can fail (the server is down): that rejects, and the caller's item is null.
 */
import pg from "pg";

export interface BudgetOptions {
  /** Most connections open at once, all databases together. */
  max: number;
  /** Most connections one database (connection URL) holds. */
  perDatabase: number;
  /** An idle connection is closed after this long, ms. */
  idleMs: number;
  connectTimeoutMs: number;
  types?: pg.CustomTypesConfig;
}

/** A connection handed out: a pg.Client with pg-pool's `release(destroy?)`. */
export type BudgetClient = pg.Client & { release(destroy?: boolean | Error): void };

interface Idle {
  client: BudgetClient;
  at: number;
  timer: NodeJS.Timeout;
}

interface Db {
  url: string;
  idle: Idle[];
  /** Handed out, or being opened for a waiter. */
  busy: number;
}

interface Waiter {
  db: Db;
  resolve(c: BudgetClient): void;
  reject(e: Error): void;
}

export class ConnectionBudget {
  private readonly dbs = new Map<string, Db>();
  private readonly waiting: Waiter[] = [];
  /** Open connections (busy, idle and opening), all databases. */
  private open = 0;
  private closed = false;
  /** Highest `open` seen, and connections closed to make room for another database (tests, stats). */
  readonly counters = { peak: 0, opened: 0, evicted: 0, idleClosed: 0 };

  constructor(readonly o: BudgetOptions) {}

  private db(url: string): Db {
    let d = this.dbs.get(url);
    if (!d) this.dbs.set(url, (d = { url, idle: [], busy: 0 }));
    return d;
  }

  /** A connection to `url`: an idle one of its own, a new one, or, when the budget is spent, the next one released. */
  connect(url: string): Promise<BudgetClient> {
    if (this.closed) return Promise.reject(new Error("the PostgreSQL connections are closed"));
    return new Promise((resolve, reject) => {
      this.waiting.push({ db: this.db(url), resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    for (let i = 0; i < this.waiting.length; ) {
      const w = this.waiting[i];
      const d = w.db;
      const own = d.idle.pop(); // the most recently used: the oldest ones age out
      if (own) {
        clearTimeout(own.timer);
        d.busy++;
        this.waiting.splice(i, 1);
        w.resolve(own.client);
        continue;
      }
      if (d.busy >= this.o.perDatabase) {
        i++; // this database is at its own cap; later waiters for others may go
        continue;
      }
      if (this.open >= this.o.max && !this.evictOldestIdle()) {
        // the budget is spent and nothing idle to take: the rest wait too, except those with
        // idle connections of their own (handed out above)
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.openFor(w);
    }
  }

  /** Closes the oldest idle connection of any database; false when none is idle. */
  private evictOldestIdle(): boolean {
    let from: Db | null = null;
    for (const d of this.dbs.values()) if (d.idle.length && (!from || d.idle[0].at < from.idle[0].at)) from = d;
    if (!from) return false;
    const x = from.idle.shift()!;
    clearTimeout(x.timer);
    this.counters.evicted++;
    this.drop(x.client);
    return true;
  }

  private openFor(w: Waiter): void {
    const d = w.db;
    d.busy++;
    this.open++;
    this.counters.peak = Math.max(this.counters.peak, this.open);
    const client = new pg.Client({ connectionString: d.url, connectionTimeoutMillis: this.o.connectTimeoutMs, ...(this.o.types ? { types: this.o.types } : {}) }) as BudgetClient;
    // a connection the server drops while it is idle or in use: the query in flight rejects on
    // its own; without a listener the 'error' event would end the process
    client.on("error", () => this.forget(d, client));
    let released = false;
    client.release = (destroy?: boolean | Error) => {
      if (released) throw new Error("a PostgreSQL connection was released twice");
      released = true;
      d.busy--;
      if (destroy || this.closed) this.drop(client);
      else this.park(d, client, () => (released = false));
      this.pump();
    };
    client.connect().then(
      () => {
        this.counters.opened++;
        if (this.closed) {
          d.busy--;
          this.drop(client);
          return w.reject(new Error("the PostgreSQL connections are closed"));
        }
        w.resolve(client);
      },
      (err: Error) => {
        d.busy--;
        this.open--;
        client.end().catch(() => {});
        w.reject(err);
        this.pump();
      },
    );
  }

  private park(d: Db, client: BudgetClient, rearm: () => void): void {
    rearm();
    const entry: Idle = {
      client,
      at: Date.now(),
      timer: setTimeout(() => {
        const i = d.idle.indexOf(entry);
        if (i < 0) return;
        d.idle.splice(i, 1);
        this.counters.idleClosed++;
        this.drop(client);
        this.pump();
      }, this.o.idleMs),
    };
    entry.timer.unref();
    d.idle.push(entry);
  }

  /** An idle connection that errored: gone from the idle list and the count. */
  private forget(d: Db, client: BudgetClient): void {
    const i = d.idle.findIndex((x) => x.client === client);
    if (i < 0) return; // in use: its holder releases it (destroying it, as its query failed)
    clearTimeout(d.idle[i].timer);
    d.idle.splice(i, 1);
    this.drop(client);
    this.pump();
  }

  private drop(client: BudgetClient): void {
    this.open--;
    client.end().catch(() => {});
  }

  /** Connections open now (busy, idle, opening), idle ones, and queries waiting for one. */
  get stats() {
    let idle = 0;
    let busy = 0;
    for (const d of this.dbs.values()) {
      idle += d.idle.length;
      busy += d.busy;
    }
    return { open: this.open, busy, idle, waiting: this.waiting.length, max: this.o.max, ...this.counters };
  }

  /** Closes the idle connections and refuses new ones; busy ones close when released. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.reject(new Error("the PostgreSQL connections are closed"));
    const ends: Promise<unknown>[] = [];
    for (const d of this.dbs.values()) {
      for (const x of d.idle.splice(0)) {
        clearTimeout(x.timer);
        this.open--;
        ends.push(x.client.end().catch(() => {}));
      }
    }
    await Promise.all(ends);
  }
}
