#!/usr/bin/env node
// Runs every *.test.ts under the project's source folders with Node's test runner (through tsx),
// then the Python client's pytest suite when Python is present. Exit code is non-zero if any failed.
import { readdirSync, statSync, existsSync } from "node:fs";
import { join, relative } from "node:path";
import { spawnSync } from "node:child_process";

const root = new URL("..", import.meta.url).pathname;
const roots = ["src", "verifiers", "sandbox", "tests"];
const only = process.argv.slice(2);
const files = [];
function walk(dir) {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist" || name.startsWith(".")) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith(".test.ts")) files.push(relative(root, p));
  }
}
for (const r of roots) if (existsSync(join(root, r))) walk(join(root, r));
const selected = only.length ? files.filter((f) => only.some((o) => f.includes(o))) : files;
selected.sort();
if (only.length && !selected.length) {
  // A filter that matches nothing would run nothing and pass: a typo must not look like green.
  console.error(`npm test -- ${only.join(" ")}: no test file's path contains ${only.map((o) => JSON.stringify(o)).join(" or ")}; ` +
    `test files are the *.test.ts under ${roots.join("/, ")}/ (e.g. npm test -- verifiers/math)`);
  process.exit(1);
}
// Test files at a time: Node's own default (one fewer than the cores; on CI's 2 cores, one at a
// time) unless ASSAY_TEST_CONCURRENCY says. Two at a time on 2 cores took node:test from 38 to 24
// minutes on 2026-11-29, but some wall-clock checks then read a CPU hog in the file beside them
// (README.md, CI), so it is not CI's default yet.
const concurrencyEnv = process.env.ASSAY_TEST_CONCURRENCY;
const concurrency = concurrencyEnv ? Number(concurrencyEnv) : undefined;
if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1)) {
  console.error(`ASSAY_TEST_CONCURRENCY=${concurrencyEnv}: not a whole number of test files at a time (1 or more)`);
  process.exit(1);
}
let failed = false;
if (selected.length) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "--test", ...(concurrency ? [`--test-concurrency=${concurrency}`] : []), "--test-reporter=spec", ...selected], {
    cwd: root, stdio: "inherit",
  });
  failed ||= r.status !== 0;
}
const py = join(root, "clients/python");
if (!only.length && existsSync(join(py, "tests")) && process.env.ASSAY_SKIP_PYTHON !== "1") {
  // Without pytest a laptop skips the Python suite with a notice; CI (CI=true), where
  // scripts/setup-python.sh installed it, fails instead. Tests of optional stacks (TRL) follow
  // the same rule inside pytest (tests/conftest.py `need`).
  const probe = spawnSync("python3", ["-c", "import pytest"], { cwd: py, stdio: "ignore" });
  if (probe.status !== 0 && process.env.CI !== "true") {
    console.log("Python client tests skipped: python3 with pytest not found (bash scripts/setup-python.sh installs it)");
  } else {
    const r = spawnSync("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], { cwd: py, stdio: "inherit" });
    if (r.error) console.error(`python3: ${r.error.message}`);
    failed ||= r.status !== 0;
  }
}
process.exit(failed ? 1 : 0);
