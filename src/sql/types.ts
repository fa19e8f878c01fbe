/** Shapes shared by the SQL engines, the service and its callers. */

/** What a database id may be: a file stem without path separators. */
export const DB_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/**
 * A result value: SQLite and PostgreSQL values are mapped onto these three (see README). An
 * integer beyond 2^53 (where a JavaScript number would round it) is the text INT_TAG + its exact
 * digits, and a blob BLOB_TAG + its hex, which compare exactly (src/sql/digest.ts cellKey). A
 * text value never poses as either: one that starts with NUL (`char(0)||'int:'||…`, the tags'
 * first character) is sent as TEXT_TAG + itself (textCell), so every string that starts with NUL
 * is a tag, and distinct values stay distinct.
 */
export type Cell = null | number | string;

/** Prefix of an exact integer beyond Number.MAX_SAFE_INTEGER. */
export const INT_TAG = "\u0000int:";
/** Prefix of a blob's hex digits. */
export const BLOB_TAG = "\u0000blob:";
/** Prefix of a text value that starts with NUL (textCell). */
export const TEXT_TAG = "\u0000text:";

/** A text value as a Cell: itself, or TEXT_TAG + itself when it starts with NUL (so it cannot pose as a tagged value). */
export function textCell(s: string): Cell {
  return s.charCodeAt(0) === 0 ? TEXT_TAG + s : s;
}

/** A blob as a Cell: BLOB_TAG and its hex digits (never equal to a text value). */
export function blobCell(b: Buffer): Cell {
  return BLOB_TAG + b.toString("hex");
}

/** An integer as a Cell: a number where that is exact, else INT_TAG and its digits. */
export function intCell(v: bigint): Cell {
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : `${INT_TAG}${v}`;
}

/** An integer's exact digits from a Cell made by intCell, or null when the cell is not one. */
export function bigIntDigits(c: Cell): string | null {
  return typeof c === "string" && c.startsWith(INT_TAG) ? c.slice(INT_TAG.length) : null;
}

export type QueryOutcome =
  | {
      ok: true;
      columns: string[];
      rows: Cell[][];
      bytes: number;
      /** Wall-clock and CPU time the engine spent on it (cpuMs: SQLite's process's, or a PostgreSQL backend's on this host). */
      ms: number;
      cpuMs?: number;
      /** Double-quoted tokens SQLite's DQS rule read as string literals (lex.ts prepareWithDqs). */
      dqs?: string[];
      /**
       * The query went with the gold result's digest and its result has the same one (src/sql/
       * digest.ts): its rows were not sent back (`rows` is empty); this is how many it had.
       */
      matched?: { rows: number };
      /**
       * A gold query run with `stay` (QueryOptions): its rows stayed in the SQLite process that
       * ran it (`rows` is empty); this is how many it had.
       */
      kept?: { rows: number };
      /**
       * A model query digested against a gold kept in its SQLite process whose rows the server
       * does not hold, that did not match: the gold's rows, for the comparison.
       */
      gold?: Cell[][];
      /** The gold was no longer kept in that process, so it ran there again first. */
      reran?: true;
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
