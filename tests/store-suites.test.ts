/**
 * The HTTP suites that exercise the store, run again with the store on PostgreSQL: the same test
 * files, unchanged, in a child `node --test` with ASSAY_TEST_STORE=postgres, which gives every
 * test app a fresh PostgreSQL schema instead of an in-memory SQLite (tests/helpers.ts). The plain
 * run of those files is the SQLite half; tests/store.test.ts runs the store's own suite on both.
 * Skipped with the reason when no PostgreSQL answers; under CI=true that fails.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { storePgMissing } from "./store-backends.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const pgMissing = await storePgMissing();

/** Every test file whose tests create, read or score stored rubrics, presets, custom verifiers or jobs. */
export const STORE_SUITES = [
  "src/server/routes/rubrics.test.ts",
  "verifiers/compose/preset.test.ts",
  "verifiers/custom/custom.test.ts",
  "tests/jobs-routes.test.ts",
];

test("the store's HTTP suites pass with the store on PostgreSQL", { skip: pgMissing ?? undefined, timeout: 1_200_000 }, async () => {
  const child = spawn(process.execPath, ["--import", "tsx", "--test", "--test-reporter=tap", ...STORE_SUITES], {
    cwd: root,
    env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "NODE_TEST_CONTEXT")), ASSAY_TEST_STORE: "postgres" }, // without NODE_TEST_CONTEXT: a child of a `--test` run would skip its files
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const code = await new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
  const failed = out.split("\n").filter((l) => /^\s*not ok /.test(l));
  assert.equal(code, 0, `with ASSAY_TEST_STORE=postgres:\n${failed.join("\n")}\n${out.slice(-4000)}`);
  assert.match(out, /# pass [1-9]/);
});
