/**
 * Rubrics, versioned: every edit is a new version, versions are never rewritten, and an item may
 * pin one. Saving content equal to the latest version is not an edit and makes no new version.
 * A deleted rubric is gone for lookups (latest and pinned alike); creating it again continues its
 * version numbers, so a number never names two different contents.
 */
import type { Sql } from "./sql.js";
import type { Wire } from "../core/types.js";
import { contentOf, rubricProblem, type Rubric, type RubricContent } from "./rubric.js";
import { slices } from "../core/slices.js";

export class RubricNotFound extends Error {
  constructor(readonly id: string, readonly version?: number) {
    super(version === undefined ? `no rubric ${JSON.stringify(id)}` : `rubric ${JSON.stringify(id)} has no version ${version}`);
    this.name = "RubricNotFound";
  }
}
export class RubricExists extends Error {
  constructor(readonly id: string) {
    super(`rubric ${JSON.stringify(id)} already exists; PUT /rubrics/${id} makes a new version of it`);
    this.name = "RubricExists";
  }
}
/** A save whose precondition (the version the writer last read) no longer holds. */
export class RubricConflict extends Error {
  constructor(
    readonly id: string,
    readonly current: number | null,
  ) {
    super(
      current === null
        ? `rubric ${JSON.stringify(id)} does not exist (deleted since it was read?); the save was refused by its If-Match`
        : `rubric ${JSON.stringify(id)} is at version ${current}, not the one this save was made from (If-Match): it was saved since; GET it again and apply the change to version ${current}`,
    );
    this.name = "RubricConflict";
  }
}
export class RubricInvalid extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RubricInvalid";
  }
}

/** The export/import document: every version of each rubric, oldest first. */
export interface RubricExport {
  format: "assay.rubrics/1";
  rubrics: { id: string; versions: Rubric[] }[];
}
/** How long an import writes before the event loop gets a turn, ms. */
const IMPORT_SLICE_MS = 10;

export const EXPORT_FORMAT = "assay.rubrics/1";

interface Row { id: string; version: number; content: string; created_at: string }

type Head = { latest: number; deleted: number };
const Q = {
  head: "SELECT latest, deleted FROM rubric WHERE id = ?",
  version: "SELECT id, version, content, created_at FROM rubric_version WHERE id = ? AND version = ?",
  versions: "SELECT id, version, content, created_at FROM rubric_version WHERE id = ? ORDER BY version",
  list: `SELECT v.id, v.version, v.content, v.created_at FROM rubric r JOIN rubric_version v ON v.id = r.id AND v.version = r.latest
         WHERE r.deleted = 0 ORDER BY r.id`,
  insertHead: "INSERT INTO rubric (id, latest, deleted) VALUES (?, ?, 0) ON CONFLICT(id) DO UPDATE SET latest = excluded.latest, deleted = 0",
  insertVersion: "INSERT INTO rubric_version (id, version, content, created_at) VALUES (?, ?, ?, ?)",
  delete: "UPDATE rubric SET deleted = 1 WHERE id = ? AND deleted = 0",
};
/** The advisory lock (PostgreSQL) a write to rubric `id` holds: replicas writing one rubric take turns. */
const lockOf = (id: string) => `rubric:${id}`;

export class RubricStore {
  constructor(private readonly db: Sql) {}

  /** Latest versions of all live rubrics, by id. */
  async list(): Promise<Rubric[]> {
    return (await this.db.all<Row>(Q.list)).map(toRubric);
  }

  /** The latest version, or the given one. Throws RubricNotFound. */
  async get(id: string, version?: number, db: Sql = this.db): Promise<Rubric> {
    const head = await db.get<Head>(Q.head, [id]);
    if (!head || head.deleted) throw new RubricNotFound(id);
    const row = await db.get<Row>(Q.version, [id, version ?? head.latest]);
    if (!row) throw new RubricNotFound(id, version);
    return toRubric(row);
  }

  async versions(id: string): Promise<Rubric[]> {
    const head = await this.db.get<Head>(Q.head, [id]);
    if (!head || head.deleted) throw new RubricNotFound(id);
    return (await this.db.all<Row>(Q.versions, [id])).map(toRubric);
  }

  /** POST: a new rubric. Throws RubricExists when a live one has that id. */
  async create(id: string, content: RubricContent): Promise<Rubric> {
    return this.db.tx(async (t) => {
      const head = await t.get<Head>(Q.head, [id]);
      if (head && !head.deleted) throw new RubricExists(id);
      return this.append(t, id, content, head?.latest ?? 0);
    }, lockOf(id));
  }

  /**
   * PUT: a new version when the content differs from the latest (or the rubric does not exist or
   * was deleted). `created` says whether a version was written. With `onlyIf` (HTTP's If-Match),
   * only when the latest version is one of those, or with "exists" when there is a live rubric;
   * else RubricConflict, checked in the same transaction as the write.
   */
  async save(id: string, content: RubricContent, db: Sql = this.db, onlyIf?: SavePrecondition): Promise<{ rubric: Rubric; created: boolean }> {
    return db.tx(async (t) => {
      const head = await t.get<Head>(Q.head, [id]);
      const current = head && !head.deleted ? head.latest : null;
      if (onlyIf && !(onlyIf === "exists" ? current !== null : current !== null && onlyIf.includes(current))) throw new RubricConflict(id, current);
      if (head && !head.deleted) {
        const latest = (await t.get<Row>(Q.version, [id, head.latest]))!;
        if (latest.content === JSON.stringify(contentOf(content))) return { rubric: toRubric(latest), created: false };
      }
      return { rubric: await this.append(t, id, content, head?.latest ?? 0), created: true };
    }, lockOf(id));
  }

  /** Throws RubricNotFound when there is no live rubric with that id. */
  async delete(id: string): Promise<void> {
    if ((await this.db.run(Q.delete, [id])) === 0) throw new RubricNotFound(id);
  }

  async export(ids?: string[]): Promise<RubricExport> {
    const chosen = ids ?? (await this.list()).map((r) => r.id);
    const rubrics = [];
    for (const id of chosen) rubrics.push({ id, versions: await this.versions(id) });
    return { format: EXPORT_FORMAT, rubrics };
  }

  /**
   * A rubric the store lacks (or deleted) gets every version, in order: into an empty store this
   * reproduces the version numbers. A rubric the store has gets only the document's latest
   * content, as PUT does (nothing when equal), so importing twice adds nothing. All or nothing:
   * one bad rubric imports none.
   */
  async import(doc: RubricExport): Promise<{ id: string; version: number; added: number }[]> {
    // SQLite's statements are synchronous: thousands of rubrics in one document held the event
    // loop for seconds. The transaction lets the loop run between rubrics (other store calls
    // wait for it, every other request goes on).
    const slice = slices(IMPORT_SLICE_MS);
    return this.db.tx(async (t) => {
      const out = [];
      for (const { id, versions } of doc.rubrics) {
        await slice.pause();
        const head = await t.get<Head>(Q.head, [id]);
        const apply = head && !head.deleted ? versions.slice(-1) : versions;
        let added = 0;
        let last: Rubric | undefined;
        for (const v of apply) {
          const r = await this.save(id, v, t);
          if (r.created) added++;
          last = r.rubric;
        }
        out.push({ id, version: last!.version, added });
      }
      return out;
    });
  }

  private async append(t: Sql, id: string, content: RubricContent, after: number): Promise<Rubric> {
    const problem = rubricProblem(content);
    if (problem) throw new RubricInvalid(problem);
    const version = after + 1;
    const created_at = new Date().toISOString();
    await t.run(Q.insertVersion, [id, version, JSON.stringify(contentOf(content)), created_at]);
    await t.run(Q.insertHead, [id, version]);
    return this.get(id, version, t);
  }
}

/** The versions a save may start from, or "exists" (If-Match: *). */
export type SavePrecondition = readonly number[] | "exists";

function toRubric(row: Row): Rubric {
  // Stored content went through contentOf: every criterion has its kind.
  return { id: row.id, version: row.version, ...(JSON.parse(row.content) as Omit<Wire["RubricInput"], "id">), created_at: row.created_at };
}
