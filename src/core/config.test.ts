import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { loadConfig, settingsList, settingsMarkdown } from "./config.js";
import { packageRoot } from "./contract.js";

test("defaults work with an empty environment", () => {
  const c = loadConfig({});
  assert.equal(c.port, 8787);
  assert.equal(c.sandbox.backend, "auto");
  assert.equal(c.sandbox.poolSize, Math.max(4, availableParallelism()), "the sandbox pool follows the machine");
  assert.equal(loadConfig({ ASSAY_SANDBOX_POOL: "3" }).sandbox.poolSize, 3);
  assert.equal(c.sandbox.runCodeSlackMs, 7000);
  assert.equal(c.sandbox.runCodePython, "python-sci");
  assert.ok(c.workers >= 1, "0 workers resolves to the cores");
});

test("a bad value is a start-up error naming every bad variable, never a silent default", () => {
  assert.throws(() => loadConfig({ ASSAY_SANDBOX_POOL: "lots" }), /ASSAY_SANDBOX_POOL="lots" is not an integer/);
  assert.throws(() => loadConfig({ ASSAY_SANDBOX: "podman" }), /ASSAY_SANDBOX="podman" is not one of auto, docker, bwrap, none/);
  assert.throws(() => loadConfig({ ASSAY_MAX_BODY: "big" }), /ASSAY_MAX_BODY="big" is not a size/);
  assert.throws(() => loadConfig({ ASSAY_PORT: "70000", ASSAY_LOG_LEVEL: "loud" }), (e: Error) => /ASSAY_PORT/.test(e.message) && /ASSAY_LOG_LEVEL/.test(e.message));
});

test("overrides (the CLI's --host/--port) win over the environment", () => {
  const c = loadConfig({ ASSAY_PORT: "9000", ASSAY_HOST: "0.0.0.0" }, { port: 1234 });
  assert.equal(c.port, 1234);
  assert.equal(c.host, "0.0.0.0");
});

test("sizes, lists and the deadline cap", () => {
  const c = loadConfig({ ASSAY_MAX_BODY: "2mb", ASSAY_API_KEYS: " a, b ,", ASSAY_DEADLINE_MS: "200000" });
  assert.equal(c.maxBodyBytes, 2 * 1024 * 1024);
  assert.deepEqual(c.apiKeys, ["a", "b"]);
  assert.equal(c.maxDeadlineMs, 200000, "the cap is never below the default deadline");
});

test("docs/configuration.md's table is the one generated from config.ts (`npx assay config --markdown`)", () => {
  const doc = readFileSync(`${packageRoot()}/docs/configuration.md`, "utf8");
  assert.ok(doc.includes(settingsMarkdown()), "docs/configuration.md's table is stale: paste the output of `npx assay config --markdown`");
  for (const s of settingsList()) assert.ok(doc.includes(`\`${s.env}\``), s.env);
  assert.ok(readFileSync(`${packageRoot()}/README.md`, "utf8").includes("(docs/configuration.md)"), "the README links the table");
});
