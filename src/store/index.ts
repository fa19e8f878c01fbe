/**
 * Assay's persistence, one interface over two backends (sql.ts):
 * - embedded SQLite (the default): one file, `assay.db`, under ASSAY_DATA_DIR (default
 *   $XDG_DATA_HOME/assay, else ~/.local/share/assay; ":memory:" keeps nothing);
 * - PostgreSQL (ASSAY_STORE_URL=postgres://...): shared by every replica behind a load balancer,
 *   so a rubric, preset, custom verifier or job made on one is there on all.
 * Holds rubrics, presets and custom verifiers (versioned), the judge's verdict cache and batch
 * jobs. Nothing read from it is cached in a process except by a version read from it (versions
 * never change), so any replica answers any request.
 */
import { openDatabase, openPostgres } from "./db.js";
import { PgSql, SqliteSql, type Sql } from "./sql.js";
import { RubricStore } from "./rubrics.js";
import { JudgeCache } from "./judge-cache.js";
import { VersionedStore } from "./versioned.js";
import { presetContent, type PresetContent } from "./presets.js";
import { customContent, type CustomContent } from "./custom.js";
import { JobStore } from "./jobs.js";

export interface Store {
  readonly rubrics: RubricStore;
  readonly judgeCache: JudgeCache;
  /** Reward presets (`preset:<name>`), versioned. */
  readonly presets: VersionedStore<PresetContent>;
  /** User-written verifiers (`custom:<name>`), versioned. */
  readonly customVerifiers: VersionedStore<CustomContent>;
  readonly jobs: JobStore;
  /** "sqlite" or "postgres". */
  readonly backend: Sql["dialect"];
  close(): Promise<void>;
}

export interface StoreLocation {
  /** ASSAY_DATA_DIR: the SQLite file's folder (":memory:" keeps nothing). */
  dataDir: string;
  /** ASSAY_STORE_URL: a postgres:// URL, or "" (or "sqlite:...") for the embedded file. */
  url?: string;
}

/** Opens the store `where` names and brings its schema up to date. */
export async function openStore(where: string | StoreLocation): Promise<Store> {
  const loc = typeof where === "string" ? { dataDir: where } : where;
  const sql: Sql = loc.url && isPostgresUrl(loc.url) ? new PgSql(await openPostgres(loc.url)) : new SqliteSql(openDatabase(sqliteDir(loc)));
  return storeOn(sql);
}

/** The stores over an open backend. */
export function storeOn(sql: Sql): Store {
  return {
    rubrics: new RubricStore(sql),
    judgeCache: new JudgeCache(sql),
    presets: new VersionedStore<PresetContent>(sql, "preset", "preset", presetContent),
    customVerifiers: new VersionedStore<CustomContent>(sql, "custom_verifier", "custom verifier", customContent),
    jobs: new JobStore(sql),
    backend: sql.dialect,
    close: () => sql.close(),
  };
}

export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//i.test(url);

/** `sqlite:<folder>` names the folder of assay.db; a bare `sqlite:` (or none) is ASSAY_DATA_DIR. */
function sqliteDir(loc: StoreLocation): string {
  const rest = loc.url?.replace(/^sqlite:(\/\/)?/i, "") ?? "";
  return rest || loc.dataDir;
}

/** An in-memory SQLite store (tests). */
export function memoryStore(): Store {
  return storeOn(new SqliteSql(openDatabase(":memory:")));
}

export * from "./rubric.js";
export { RubricNotFound, RubricExists, RubricInvalid, RubricConflict, EXPORT_FORMAT, type RubricExport, type SavePrecondition } from "./rubrics.js";
export type { CachedVerdict } from "./judge-cache.js";
export type { Sql } from "./sql.js";
export { NotFound, Invalid, type Stored, type VersionedStore } from "./versioned.js";
export { compileCustom, type CustomContent } from "./custom.js";
export type { PresetContent } from "./presets.js";
export { JobStore, JobNotFound, FINISHED, type JobRow, type JobStatus } from "./jobs.js";
