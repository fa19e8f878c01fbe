/**
 * The store's two backends for tests: the embedded SQLite (in memory) and PostgreSQL, each test
 * on a schema of its own so tests never see each other's rows. PostgreSQL is the loopback one
 * scripts/setup-postgres.sh starts (ASSAY_STORE_TEST_POSTGRES overrides it); when it does not
 * answer, its tests skip with the reason, and under CI=true they fail.
 *
 * ASSAY_TEST_STORE=postgres makes every testApp/testRuntime whose store would be in memory use
 * a fresh PostgreSQL schema instead: the HTTP suites that exercise the store then run against the
 * shared backend unchanged (tests/store-suites.test.ts runs them so).
 */
import { randomBytes } from "node:crypto";
import { pgMissingAt } from "./helpers.js";

export const STORE_PG = process.env.ASSAY_STORE_TEST_POSTGRES ?? "postgres://assay:assay@127.0.0.1:5432/assay_test";

let missing: Promise<string | null> | undefined;
/** Why PostgreSQL cannot be used here (null when it can); under CI=true a missing one throws. */
export async function storePgMissing(): Promise<string | null> {
  missing ??= pgMissingAt(STORE_PG).then((why) => {
    if (why && process.env.CI === "true") throw new Error(`CI=true and the store's PostgreSQL is missing: ${why}`);
    return why;
  });
  return missing;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};
let swept = false;

/**
 * A URL of STORE_PG whose search_path is a new, empty schema; `drop` removes it and everything in
 * it. Schemas are named after the test process; the first call in a process drops those left by
 * test processes no longer running (a test app that was never closed leaves its schema).
 */
export async function freshSchema(base = STORE_PG): Promise<{ url: string; schema: string; drop: () => Promise<void> }> {
  const { default: pg } = await import("pg");
  const schema = `assay_t_${process.pid}_${randomBytes(4).toString("hex")}`;
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    if (!swept) {
      swept = true;
      const { rows } = await c.query<{ nspname: string }>("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'assay\\_t\\_%'");
      for (const { nspname } of rows) {
        const pid = Number(/^assay_t_(\d+)_[0-9a-f]+$/.exec(nspname)?.[1]);
        if (pid && !alive(pid)) await c.query(`DROP SCHEMA IF EXISTS ${nspname} CASCADE`).catch(() => {});
      }
    }
    await c.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await c.end();
  }
  const url = `${base}${base.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    url,
    schema,
    drop: async () => {
      const d = new pg.Client({ connectionString: base });
      await d.connect();
      try {
        await d.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await d.end();
      }
    },
  };
}
