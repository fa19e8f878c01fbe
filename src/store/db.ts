/**
 * Opens the store's database and brings its schema up to date: the SQLite file under
 * ASSAY_DATA_DIR (PRAGMA user_version counts the migrations that ran), or the PostgreSQL that
 * ASSAY_STORE_URL names (a `schema_migrations` table, one row per migration; replicas starting
 * together take turns under an advisory lock, so each migration runs once).
 */
import Database from "better-sqlite3";
import pg from "pg";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

export type DB = Database.Database;

/** Schema migrations, applied in order; PRAGMA user_version records how many ran. Append only. */
const MIGRATIONS: string[] = [
  `CREATE TABLE rubric (
     id TEXT PRIMARY KEY,
     latest INTEGER NOT NULL,
     deleted INTEGER NOT NULL DEFAULT 0
   );
   CREATE TABLE rubric_version (
     id TEXT NOT NULL,
     version INTEGER NOT NULL,
     content TEXT NOT NULL,
     created_at TEXT NOT NULL,
     PRIMARY KEY (id, version)
   );
   CREATE TABLE judge_cache (
     key TEXT PRIMARY KEY,
     model TEXT NOT NULL,
     template TEXT NOT NULL,
     verdict TEXT NOT NULL,
     created_at TEXT NOT NULL
   );`,
  // Batch jobs (src/jobs): the items as uploaded, one result per item (the primary key is what
  // makes a re-scored item after a crash land once), running counts kept beside the job.
  `CREATE TABLE job (
     id TEXT PRIMARY KEY,
     status TEXT NOT NULL,
     total INTEGER NOT NULL DEFAULT 0,
     done INTEGER NOT NULL DEFAULT 0,
     n_ok INTEGER NOT NULL DEFAULT 0,
     n_error INTEGER NOT NULL DEFAULT 0,
     n_invalid INTEGER NOT NULL DEFAULT 0,
     reward_sum REAL NOT NULL DEFAULT 0,
     options TEXT NOT NULL,
     error TEXT,
     created_at TEXT NOT NULL,
     started_at TEXT,
     finished_at TEXT,
     run_started_ms INTEGER,
     run_start_done INTEGER NOT NULL DEFAULT 0
   );
   CREATE TABLE job_item (
     job_id TEXT NOT NULL,
     idx INTEGER NOT NULL,
     item TEXT NOT NULL,
     grp TEXT,
     PRIMARY KEY (job_id, idx)
   ) WITHOUT ROWID;
   CREATE TABLE job_result (
     job_id TEXT NOT NULL,
     idx INTEGER NOT NULL,
     status TEXT NOT NULL,
     reward REAL,
     elapsed_ms REAL NOT NULL,
     result TEXT NOT NULL,
     PRIMARY KEY (job_id, idx)
   ) WITHOUT ROWID;`,
  // Reward presets and custom verifiers: versioned as rubrics are (see versioned.ts).
  `CREATE TABLE preset (id TEXT PRIMARY KEY, latest INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0);
   CREATE TABLE preset_version (id TEXT NOT NULL, version INTEGER NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (id, version));
   CREATE TABLE custom_verifier (id TEXT PRIMARY KEY, latest INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0);
   CREATE TABLE custom_verifier_version (id TEXT NOT NULL, version INTEGER NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (id, version));`,
];

/** `dir` ":memory:" gives a private in-memory database (tests). */
export function openDatabase(dir: string): DB {
  let db: DB;
  if (dir === ":memory:") db = new Database(":memory:");
  else {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new Error(`ASSAY_DATA_DIR=${JSON.stringify(dir)} cannot be created: ${(err as Error).message}; point it at a writable folder`);
    }
    db = new Database(join(dir, "assay.db"));
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
  }
  db.pragma("busy_timeout = 5000");
  const have = db.pragma("user_version", { simple: true }) as number;
  if (have > MIGRATIONS.length) {
    db.close();
    throw new Error(`${dir}/assay.db was written by a newer Assay (schema ${have} > ${MIGRATIONS.length}); use that version or another ASSAY_DATA_DIR`);
  }
  for (let i = have; i < MIGRATIONS.length; i++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[i]);
      db.pragma(`user_version = ${i + 1}`);
    })();
  }
  return db;
}

/**
 * PostgreSQL's schema, the same tables as MIGRATIONS in PostgreSQL's types. Append only; each
 * entry runs once, in its own transaction, recorded in schema_migrations. Beyond SQLite's: a job's
 * `seq` (the submission order SQLite keeps as rowid) and `owner`/`lease_until`, the replica scoring
 * it and until when its hold lasts unless renewed (src/jobs/service.ts).
 */
const PG_MIGRATIONS: string[] = [
  `CREATE TABLE rubric (id TEXT PRIMARY KEY, latest INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0);
   CREATE TABLE rubric_version (id TEXT NOT NULL, version INTEGER NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (id, version));
   CREATE TABLE judge_cache (key TEXT PRIMARY KEY, model TEXT NOT NULL, template TEXT NOT NULL, verdict TEXT NOT NULL, created_at TEXT NOT NULL);`,
  `CREATE TABLE job (
     seq BIGSERIAL UNIQUE,
     id TEXT PRIMARY KEY,
     status TEXT NOT NULL,
     total INTEGER NOT NULL DEFAULT 0,
     done INTEGER NOT NULL DEFAULT 0,
     n_ok INTEGER NOT NULL DEFAULT 0,
     n_error INTEGER NOT NULL DEFAULT 0,
     n_invalid INTEGER NOT NULL DEFAULT 0,
     reward_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
     options TEXT NOT NULL,
     error TEXT,
     created_at TEXT NOT NULL,
     started_at TEXT,
     finished_at TEXT,
     run_started_ms BIGINT,
     run_start_done INTEGER NOT NULL DEFAULT 0,
     owner TEXT,
     lease_until BIGINT
   );
   CREATE TABLE job_item (job_id TEXT NOT NULL, idx INTEGER NOT NULL, item TEXT NOT NULL, grp TEXT, PRIMARY KEY (job_id, idx));
   CREATE TABLE job_result (
     job_id TEXT NOT NULL, idx INTEGER NOT NULL, status TEXT NOT NULL, reward DOUBLE PRECISION,
     elapsed_ms DOUBLE PRECISION NOT NULL, result TEXT NOT NULL, PRIMARY KEY (job_id, idx)
   );`,
  `CREATE TABLE preset (id TEXT PRIMARY KEY, latest INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0);
   CREATE TABLE preset_version (id TEXT NOT NULL, version INTEGER NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (id, version));
   CREATE TABLE custom_verifier (id TEXT PRIMARY KEY, latest INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0);
   CREATE TABLE custom_verifier_version (id TEXT NOT NULL, version INTEGER NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (id, version));`,
];

/** The advisory lock replicas take while migrating (any fixed number: it names the store's migrations). */
const MIGRATION_LOCK = 0x61737361; // "assa"

/** Counts and sums as numbers: bigint (count, sum of integers) and numeric would otherwise be strings. */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20 || oid === 1700 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

/** Connects to ASSAY_STORE_URL and applies the migrations it lacks. The URL's password never reaches an error message. */
export async function openPostgres(url: string, poolSize = 10): Promise<pg.Pool> {
  const shown = redact(url);
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types, connectionTimeoutMillis: 10_000, allowExitOnIdle: true });
  pool.on("error", () => {}); // an idle connection dropped by the server: the next query opens another
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    await pool.end().catch(() => {});
    throw new Error(`ASSAY_STORE_URL=${shown}: cannot connect (${(err as Error).message}); check the host, port, user, password and database, or unset ASSAY_STORE_URL for the embedded SQLite store`);
  }
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      await client.query("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())");
      const have = Number((await client.query("SELECT coalesce(max(version), 0) AS v FROM schema_migrations")).rows[0].v);
      if (have > PG_MIGRATIONS.length) {
        throw new Error(`ASSAY_STORE_URL=${shown} was written by a newer Assay (schema ${have} > ${PG_MIGRATIONS.length}); use that version or another database`);
      }
      for (let i = have; i < PG_MIGRATIONS.length; i++) {
        await client.query("BEGIN");
        try {
          await client.query(PG_MIGRATIONS[i]);
          await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [i + 1]);
          await client.query("COMMIT");
        } catch (err) {
          await client.query("ROLLBACK").catch(() => {});
          throw new Error(`ASSAY_STORE_URL=${shown}: migration ${i + 1} failed: ${(err as Error).message}`);
        }
      }
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => {});
    }
  } catch (err) {
    client.release();
    await pool.end().catch(() => {});
    throw err;
  }
  client.release();
  return pool;
}

/** How many migrations each backend has (tests). */
export const SCHEMA_VERSIONS = { sqlite: MIGRATIONS.length, postgres: PG_MIGRATIONS.length };

/** A connection URL with its password replaced by `***`. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(an unparsable URL)";
  }
}
