/** `assay score FILE --server URL`: submits, follows, writes results in order, prints the summary; a second run after an interruption follows the same job. */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { testApp } from "./helpers.js";
import { tempDir } from "./scratch.js";

const root = new URL("..", import.meta.url).pathname;
const dir = tempDir("assay-jobs-cli-");
const server = await testApp({ ASSAY_JOB_CHUNK: "10", ASSAY_BATCH_CONCURRENCY: "4" });
const http = server.app.listen(0, "127.0.0.1");
await once(http, "listening");
const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
after(async () => {
  http.close();
  await server.runtime.close();
});

function cli(args: string[]) {
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), ...args], { cwd: root, env: { ...process.env, ASSAY_LOG_LEVEL: "silent" } });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const done = once(child, "exit").then(([code]) => ({ code: code as number | null, stderr }));
  return { child, done, stderr: () => stderr };
}

test("submits, follows, writes the results in order and prints the summary with a histogram and pass@k", async () => {
  const input = join(dir, "grouped.jsonl");
  const out = join(dir, "grouped.out.jsonl");
  const lines = Array.from({ length: 60 }, (_, i) => JSON.stringify({ id: i, prompt: `p${i % 6}`, response: i % 4 ? "yes" : "no", reference: "yes" }));
  writeFileSync(input, lines.join("\n") + "\n");
  const r = await cli(["score", input, "--server", url, "-o", out, "--verifier", "exact", "--k", "1,2"]).done;
  assert.equal(r.code, 0, r.stderr);
  const results = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(results.map((x) => x.id), [...Array(60).keys()]);
  assert.match(r.stderr, /submitted job [0-9a-f-]{36}/);
  assert.match(r.stderr, /done, 60\/60 items: 60 ok, 0 error, 0 invalid/);
  assert.match(r.stderr, /mean reward 0\.7500/);
  assert.match(r.stderr, /0\.9-1\.0\]\s+45 █+/);
  assert.match(r.stderr, /6 groups by prompt .*pass@1 0\.7500 \(6 groups\), pass@2/);
  assert.ok(!existsSync(`${out}.assay-job`), "the job file goes once the job is done");
});

test("interrupted while following, the same command follows the same job; nothing is submitted twice", async () => {
  const input = join(dir, "slow.jsonl");
  const out = join(dir, "slow.out.jsonl");
  writeFileSync(input, Array.from({ length: 80 }, (_, i) => JSON.stringify({ id: i, verifier: "test-sleep", response: "", options: { ms: 30 } })).join("\n") + "\n");
  const before = (await request(server.app).get("/jobs").expect(200)).body.jobs.length;
  const first = cli(["score", input, "--server", url, "-o", out]);
  for (let t0 = Date.now(); !/submitted job/.test(first.stderr()); ) {
    assert.ok(Date.now() - t0 < 60_000, first.stderr());
    await new Promise((r) => setTimeout(r, 20));
  }
  first.child.kill("SIGKILL");
  await first.done;
  assert.ok(existsSync(`${out}.assay-job`));
  const id = JSON.parse(readFileSync(`${out}.assay-job`, "utf8")).id;
  const second = await cli(["score", input, "--server", url, "-o", out]).done;
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stderr, new RegExp(`following job ${id} again`));
  const jobs = (await request(server.app).get("/jobs").expect(200)).body.jobs;
  assert.equal(jobs.length, before + 1);
  assert.deepEqual(readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l).id), [...Array(80).keys()]);
});

test("a refused job says why and exits non-zero", async () => {
  const input = join(dir, "empty.jsonl");
  writeFileSync(input, "\n");
  const r = await cli(["score", input, "--server", url]).done;
  assert.equal(r.code, 1);
  assert.match(r.stderr, /refused the job \(HTTP 400\): the dataset has no items/);
});
