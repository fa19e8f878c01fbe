/**
 * Named, versioned documents with the rubric store's conventions (rubrics.ts): every edit is a
 * new version, versions are never rewritten, saving content equal to the latest makes no new
 * version, a deleted name is gone for lookups and re-creating it continues its numbers (a
 * number never names two contents). Presets and custom verifiers are kept this way.
 */
import type { Sql } from "./sql.js";

export class NotFound extends Error {
  constructor(readonly kind: string, readonly what: string, readonly version?: number) {
    super(version === undefined ? `no ${kind} ${JSON.stringify(what)}` : `${kind} ${JSON.stringify(what)} has no version ${version}`);
    this.name = "NotFound";
  }
}
export class Invalid extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Invalid";
  }
}

export type Stored<C> = C & { name: string; version: number; created_at: string };

interface Row { id: string; version: number; content: string; created_at: string }

export class VersionedStore<C extends object> {
  private readonly q;

  /**
   * `table` names the two tables (`<table>`, `<table>_version`; see db.ts). `canonical` gives
   * the content in a fixed key order (what versions are compared on) or throws Invalid.
   */
  constructor(private readonly db: Sql, private readonly table: string, readonly kind: string, private readonly canonical: (c: C) => C) {
    this.q = {
      head: `SELECT latest, deleted FROM ${table} WHERE id = ?`,
      version: `SELECT id, version, content, created_at FROM ${table}_version WHERE id = ? AND version = ?`,
      versions: `SELECT id, version, content, created_at FROM ${table}_version WHERE id = ? ORDER BY version`,
      list: `SELECT v.id, v.version, v.content, v.created_at FROM ${table} r JOIN ${table}_version v ON v.id = r.id AND v.version = r.latest WHERE r.deleted = 0 ORDER BY r.id`,
      insertHead: `INSERT INTO ${table} (id, latest, deleted) VALUES (?, ?, 0) ON CONFLICT(id) DO UPDATE SET latest = excluded.latest, deleted = 0`,
      insertVersion: `INSERT INTO ${table}_version (id, version, content, created_at) VALUES (?, ?, ?, ?)`,
      delete: `UPDATE ${table} SET deleted = 1 WHERE id = ? AND deleted = 0`,
    };
  }

  async list(): Promise<Stored<C>[]> {
    return (await this.db.all<Row>(this.q.list)).map((r) => this.toStored(r));
  }

  /** The latest version, or the given one. Throws NotFound. */
  async get(name: string, version?: number, db: Sql = this.db): Promise<Stored<C>> {
    const head = await db.get<{ latest: number; deleted: number }>(this.q.head, [name]);
    if (!head || head.deleted) throw new NotFound(this.kind, name);
    const row = await db.get<Row>(this.q.version, [name, version ?? head.latest]);
    if (!row) throw new NotFound(this.kind, name, version);
    return this.toStored(row);
  }

  /** The latest version's number (a cheap lookup for callers that cache versions, which never change). Throws NotFound. */
  async latest(name: string): Promise<number> {
    const head = await this.db.get<{ latest: number; deleted: number }>(this.q.head, [name]);
    if (!head || head.deleted) throw new NotFound(this.kind, name);
    return head.latest;
  }

  async versions(name: string): Promise<Stored<C>[]> {
    const head = await this.db.get<{ latest: number; deleted: number }>(this.q.head, [name]);
    if (!head || head.deleted) throw new NotFound(this.kind, name);
    return (await this.db.all<Row>(this.q.versions, [name])).map((r) => this.toStored(r));
  }

  /** A new version when the content differs from the latest (or there is none). */
  async save(name: string, content: C): Promise<{ doc: Stored<C>; created: boolean }> {
    const text = JSON.stringify(this.canonical(content));
    return this.db.tx(async (t) => {
      const head = await t.get<{ latest: number; deleted: number }>(this.q.head, [name]);
      if (head && !head.deleted) {
        const latest = (await t.get<Row>(this.q.version, [name, head.latest]))!;
        if (latest.content === text) return { doc: this.toStored(latest), created: false };
      }
      const version = (head?.latest ?? 0) + 1;
      await t.run(this.q.insertVersion, [name, version, text, new Date().toISOString()]);
      await t.run(this.q.insertHead, [name, version]);
      return { doc: await this.get(name, version, t), created: true };
    }, `${this.table}:${name}`);
  }

  async delete(name: string): Promise<void> {
    if ((await this.db.run(this.q.delete, [name])) === 0) throw new NotFound(this.kind, name);
  }

  private toStored(row: Row): Stored<C> {
    return { name: row.id, version: row.version, ...(JSON.parse(row.content) as C), created_at: row.created_at };
  }
}
