/** The `assay score` command: order, bad lines, resume, summary. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { tempDir } from "./scratch.js";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const cli = (args: string[]) =>
  run(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), ...args], { cwd: root, env: { ...process.env, ASSAY_LOG_LEVEL: "silent" } });

test("score writes one result per line, in input order, and never loses a bad line", async () => {
  const dir = tempDir("assay-cli-");
  const input = join(dir, "in.jsonl");
  const lines: string[] = [];
  for (let i = 0; i < 300; i++) {
    if (i === 7) lines.push("{not json");
    else if (i === 8) lines.push("[1,2,3]");
    else if (i === 9) lines.push(JSON.stringify({ id: i, verifier: "nope", response: "x" }));
    else lines.push(JSON.stringify({ id: i, response: String(i % 3), reference: "0" }));
  }
  writeFileSync(input, lines.join("\n") + "\n");
  const out = join(dir, "out.jsonl");
  const { stderr } = await cli(["score", input, "-o", out, "--verifier", "exact", "-c", "16"]);
  const results = readFileSync(out, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(results.length, 300);
  for (let i = 0; i < 300; i++) {
    const r = results[i];
    if (i === 7 || i === 8) {
      assert.equal(r.status, "invalid");
      assert.equal(r.details.line, i + 1);
      assert.match(r.reason, new RegExp(`line ${i + 1}`));
    } else if (i === 9) {
      assert.equal(r.status, "invalid");
      assert.equal(r.id, 9);
    } else {
      assert.equal(r.id, i, "input order");
      assert.equal(r.reward, i % 3 === 0 ? 1 : 0);
    }
  }
  assert.match(stderr, /scored 300 lines .*3 invalid/);
});

test("--resume keeps finished lines and continues after them", async () => {
  const dir = tempDir("assay-cli-");
  const input = join(dir, "in.jsonl");
  writeFileSync(input, Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: i, verifier: "exact", response: "a", reference: "a" })).join("\n"));
  const out = join(dir, "out.jsonl");
  // A previous run wrote 20 whole lines and half of the 21st before it died.
  const first = Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: i, verifier: "exact", reward: 1, status: "ok", reason: "earlier run", details: {}, elapsed_ms: 0 }));
  writeFileSync(out, first.join("\n") + '\n{"id": 20, "verif');
  const { stderr } = await cli(["score", input, "-o", out, "--resume"]);
  const results = readFileSync(out, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(results.length, 50);
  assert.deepEqual(results.map((r) => r.id), Array.from({ length: 50 }, (_, i) => i));
  assert.equal(results[19].reason, "earlier run");
  assert.equal(results[20].reason, "matches the reference");
  assert.match(stderr, /resumed after 20/);
});

test("bad arguments say what to change", async () => {
  await assert.rejects(cli(["score", "missing.jsonl"]), /needs -o FILE/);
  await assert.rejects(cli(["score", "x", "-o", "y", "-c", "0"]), /positive integer/);
});

test("serve: the 'listening' line reaches a pipe at once, and --port is passed as configuration", async () => {
  const { spawn } = await import("node:child_process");
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), "serve", "--port", "0"], {
    cwd: root,
    env: { ...process.env, ASSAY_SANDBOX: "none", ASSAY_LOG_LEVEL: "info", ASSAY_PORT: "9" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  try {
    // Nothing else is logged while the server idles: a line held in a buffer would never come.
    const line = await new Promise<string>((resolve, reject) => {
      let buf = "";
      const t = setTimeout(() => reject(new Error(`no 'listening' line within 20 s; got: ${buf.slice(0, 300)}`)), 20_000);
      child.stdout!.on("data", (d: Buffer) => {
        buf += d.toString("utf8");
        const l = buf.split("\n").find((x) => x.includes("assay listening on"));
        if (l) {
          clearTimeout(t);
          resolve(l);
        }
      });
      child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${buf.slice(0, 300)}`)));
    });
    const url = JSON.parse(line).url as string;
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(url, "http://127.0.0.1:9", "--port 0 wins over ASSAY_PORT");
    assert.equal((await fetch(url + "/healthz")).status, 200);
  } finally {
    child.kill("SIGTERM");
  }
});

test("a bad setting stops the server at start-up, naming the variable", async () => {
  await assert.rejects(
    run(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), "serve"], { cwd: root, env: { ...process.env, ASSAY_SANDBOX_POOL: "lots" } }),
    (e: { stderr?: string }) => /ASSAY_SANDBOX_POOL="lots" is not an integer/.test(e.stderr ?? ""),
  );
});

test("score says how many items of a file have an empty gold result (sql), and what closes the hole", async () => {
  const dir = tempDir("assay-cli-sql-");
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(join(dir, "tiny.sqlite"));
  db.exec("CREATE TABLE t (name TEXT, country TEXT); INSERT INTO t VALUES ('a', 'France'), ('b', 'Peru');");
  db.close();
  const input = join(dir, "in.jsonl");
  const item = (response: string, reference: string) => JSON.stringify({ verifier: "sql", response, reference, options: { database: "tiny" } });
  writeFileSync(
    input,
    [
      item("SELECT name FROM t WHERE country = 'terminal'", "SELECT name FROM t WHERE country = 'Atlantis'"),
      item("SELECT name FROM t WHERE country = 'x'", 'SELECT name FROM t WHERE country = "Mars"'),
      item("SELECT name FROM t", "SELECT name FROM t"),
    ].join("\n") + "\n",
  );
  const out = join(dir, "out.jsonl");
  const { stderr } = await run(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), "score", input, "-o", out], {
    cwd: root,
    env: { ...process.env, ASSAY_LOG_LEVEL: "silent", ASSAY_SQL_DIR: dir, ASSAY_SQL_WORKERS: "1" },
  });
  const results = readFileSync(out, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(results.map((r) => [r.reward, r.details.gold_empty]), [[1, true], [1, true], [1, false]]);
  assert.match(stderr, /2 items have an empty gold result .*empty_gold to "zero" or "invalid"/);
});

test("score reads lines as POST /jobs does: BOM, CRLF, a lone \\r inside a line, a raw NUL", async () => {
  const dir = tempDir("assay-cli-bom-");
  const input = join(dir, "in.jsonl");
  const item = (id: number, response: string, reference: string) => JSON.stringify({ id, verifier: "exact", response, reference });
  writeFileSync(
    input,
    "\uFEFF" + item(1, "a", "a") + "\r\n" +
      item(2, "b", "a") + "\r\n" +
      '{"id":3,\r"verifier":"exact","response":"a","reference":"a"}\r\n' + // a lone \r is JSON whitespace, no line break
      '{"id":4,"verifier":"exact","response":"x\0y","reference":"x\\ufffdy"}\r\n' + // the server reads a raw NUL as U+FFFD
      item(5, "a", "a"),
  );
  const out = join(dir, "out.jsonl");
  const { stderr } = await cli(["score", input, "-o", out]);
  const results = readFileSync(out, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(results.length, 5, "one result per line");
  assert.deepEqual(results.map((r) => r.id), [1, 2, 3, 4, 5]);
  assert.deepEqual(results.map((r) => r.status), ["ok", "ok", "ok", "ok", "ok"]);
  assert.deepEqual(results.map((r) => r.reward), [1, 0, 1, 1, 1]);
  assert.match(stderr, /scored 5 lines/);
});

test("score: a line nested past ASSAY_MAX_DEPTH is an invalid result naming the depth, and the rest is scored", async () => {
  const dir = tempDir("assay-cli-deep-");
  const input = join(dir, "in.jsonl");
  const deep = '{"verifier":"json","response":"[]","reference":' + "[".repeat(2000) + "]".repeat(2000) + "}";
  writeFileSync(input, deep + "\n" + JSON.stringify({ id: 2, verifier: "exact", response: "a", reference: "a" }) + "\n");
  const out = join(dir, "out.jsonl");
  await cli(["score", input, "-o", out]);
  const results = readFileSync(out, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(results.length, 2);
  assert.equal(results[0].status, "invalid");
  assert.equal(results[0].details.line, 1);
  assert.match(results[0].reason, /line 1 is nested deeper than 64 levels/);
  assert.equal(results[1].id, 2);
  assert.equal(results[1].reward, 1);
});

test("countLines streams bytes: \\n only, CRLF, no trailing newline, many chunks", async () => {
  const { countLines } = await import("../src/cli/score.js");
  const dir = tempDir("assay-cli-count-");
  const file = (name: string, text: string | Buffer) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  assert.deepEqual(await countLines(join(dir, "missing")), { newlines: 0, lines: 0, wholeBytes: 0, size: 0 });
  assert.deepEqual(await countLines(file("empty", "")), { newlines: 0, lines: 0, wholeBytes: 0, size: 0 });
  assert.deepEqual(await countLines(file("crlf", "a\r\nb\r\nc")), { newlines: 2, lines: 3, wholeBytes: 6, size: 7 });
  assert.deepEqual(await countLines(file("lone-cr", "a\rb\r\n")), { newlines: 1, lines: 1, wholeBytes: 5, size: 5 });
  // Past one read chunk (64 KiB), the last line cut off.
  const big = "x\r\n".repeat(100_000) + "tail";
  assert.deepEqual(await countLines(file("big", big)), { newlines: 100_000, lines: 100_001, wholeBytes: 300_000, size: 300_004 });
});
