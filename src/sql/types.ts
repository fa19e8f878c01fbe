/** Shapes shared by the SQL engines, the service and its callers. */

/** What a database id may be: a file stem without path separators. */
export const DB_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** A result value: SQLite and PostgreSQL values are mapped onto these three (see README). */
export type Cell = null | number | string;

export type QueryOutcome =
  | {
      ok: true;
      columns: string[];
      rows: Cell[][];
      bytes: number;
      /** Wall-clock and CPU time the engine spent on it (cpuMs: SQLite's process's, or a PostgreSQL backend's on this host). */
      ms: number;
      cpuMs?: number;
    }
  | {
      ok: false;
      /** prepare: the engine refused the text (syntax, unknown table); execute: it failed while running. */
      stage: "check" | "prepare" | "execute";
      error: string;
      /** Set when the query was stopped by us rather than failing on its own. */
      limit?: "rows" | "bytes" | "timeout";
      /**
       * What the query's process did while it ran, where it can be read (a PostgreSQL backend on
       * this host): CPU time, and time it was runnable but waiting for a CPU (the load).
       */
      work?: { cpu_ms: number; wait_ms: number };
    };

export interface SchemaColumn {
  name: string;
  type: string | null;
  primary_key: boolean;
}

export interface SchemaTable {
  name: string;
  columns: SchemaColumn[];
  foreign_keys: { column: string; references: string }[];
  /** Exact row count, or null when it was not counted (a view, a virtual table) or could not be. */
  rows: number | null;
  /** A view: listed by its CREATE text (`sql`), never evaluated or compiled. */
  view?: true;
  sql?: string;
}

export type Engine = "sqlite" | "postgres";

export interface DatabaseInfo {
  id: string;
  engine: Engine;
  /** Changes whenever the database's content may have changed (file rewritten, re-uploaded). */
  version: string;
  /** Where it came from: "dir" (ASSAY_SQL_DIR), "upload", "config" (ASSAY_SQL_POSTGRES). */
  source: "dir" | "upload" | "config";
}
