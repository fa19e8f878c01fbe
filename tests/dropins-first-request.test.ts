/**
 * Issue 27: the first request after start must not come back null on a loaded machine (OpenRLHF
 * turns a null into 0). A real `assay serve` with the bwrap sandbox and two CPU hogs; the instant
 * /readyz says 200, OpenRLHF-style /get_reward items and a verl-style /run_code request are sent
 * at once, and every one must be scored right.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { listeningUrl } from "./helpers.js";

const root = new URL("..", import.meta.url).pathname;
const hasBwrap = spawnSync("bwrap", ["--version"]).status === 0;

test("first requests the instant /readyz is 200, with CPU hogs: /get_reward (math and code) and /run_code all score, none null", { skip: hasBwrap ? false : "bubblewrap is not installed" }, async () => {
  // Bounded hogs: they end by themselves after 120 s and are killed when the test ends.
  const hogs = Array.from({ length: 2 }, () => spawn(process.execPath, ["-e", "const t = Date.now(); while (Date.now() - t < 120000) {}"], { stdio: "ignore" }));
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), "serve", "--port", "0"], {
    cwd: root,
    env: { ...process.env, ASSAY_SANDBOX: "bwrap", ASSAY_DATA_DIR: ":memory:", ASSAY_LOG_LEVEL: "info", ASSAY_WORKERS: "2" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  try {
    const url = await listeningUrl(child, () => out);
    const t0 = Date.now();
    let ready = false;
    while (Date.now() - t0 < 200_000) {
      if ((await fetch(url + "/readyz")).status === 200) { ready = true; break; }
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(ready, `never ready: ${out.slice(-400)}`);
    const n = 16;
    const post = (path: string, body: unknown) => fetch(url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const [reward, run] = await Promise.all([
      post("/get_reward?verifier=math", {
        query: [...Array.from({ length: n }, (_, i) => `Q${i} so the answer is $\\boxed{\\frac{${i + 1}}{${2 * (i + 1)}}}$`), ...Array.from({ length: 4 }, (_, i) => `C${i} \`\`\`python\nprint(input()[::-1])\n\`\`\``)],
        prompts: [...Array.from({ length: n }, (_, i) => `Q${i} `), ...Array.from({ length: 4 }, (_, i) => `C${i} `)],
        labels: [...Array.from({ length: n }, () => "\\frac{1}{2}"), ...Array.from({ length: 4 }, () => JSON.stringify({ verifier: "code", reference: { inputs: ["hello\n"], outputs: ["olleh\n"] } }))],
      }),
      post("/run_code", { code: "print(6*7)", language: "python", compile_timeout: 10, run_timeout: 10, files: {}, fetch_files: [] }),
    ]);
    assert.equal(reward.status, 200, await reward.clone().text());
    const body = (await reward.json()) as { rewards: number[]; results: { reward: number | null; reason: string }[] };
    assert.deepEqual(body.results.filter((r) => r.reward === null), [], "no first item is null");
    assert.deepEqual(body.rewards, Array(n + 4).fill(1), JSON.stringify(body.results.filter((r) => r.reward !== 1)));
    assert.equal(run.status, 200, await run.clone().text());
    const r = (await run.json()) as { status: string; run_result: { stdout: string; status: string } };
    assert.equal(r.status, "Success", JSON.stringify(r));
    assert.equal(r.run_result.stdout.trim(), "42");
  } finally {
    child.kill("SIGTERM");
    for (const h of hogs) h.kill("SIGKILL");
  }
});
