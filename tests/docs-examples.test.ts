/**
 * "The docs are the product": every request example in the README, docs/ and each verifier's
 * README is sent to a live server (src/server/start.ts, as `npm run serve` builds it, with the
 * fixture LLM judge on loopback) and its printed reply compared: every documented field with its
 * value (rewards exact), timings and generated ids aside (tests/docs-examples.ts says how an
 * example is written and read). Examples run in file order, so one may use what an earlier one in
 * the same file created (a rubric, a database). Examples marked `<!-- example: skip (why) -->` are
 * listed with their reason. Code examples need a sandbox: under CI=true a missing one fails.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, existsSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";
import { loadConfig } from "../src/core/config.js";
import { startServer, type Running } from "../src/server/start.js";
import { startJudgeFixture, type JudgeFixture } from "./fixtures/judge-server.js";
import { quiet } from "./helpers.js";
import { IN_CI } from "./sandboxes.js";
import { extractExamples, differences, curlRequest, shellCommands, type DocExample, type DocRequest } from "./docs-examples.js";

const ROOT = resolve(import.meta.dirname, "..");
/** A code item's reason when no sandbox can run it: a laptop skips those examples, CI fails them. */
const NO_SANDBOX = /run `npx assay sandbox build`|no sandbox here runs [^:]*/;

/** The documentation whose examples must run, in the order they run. */
export function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs")).filter((n) => n.endsWith(".md")).sort().map((n) => `docs/${n}`);
  const verifiers = readdirSync(join(ROOT, "verifiers")).sort().map((n) => `verifiers/${n}/README.md`).filter((p) => existsSync(join(ROOT, p)));
  return ["README.md", ...docs, ...verifiers, "src/judge/README.md", "sandbox/README.md", "clients/python/README.md", "ui/README.md"];
}

describe("reading examples out of Markdown", () => {
  test("a curl block and the json block after it are one example; curl's defaults are kept", () => {
    const md = [
      "```bash", "curl -s localhost:8787/reward -H 'content-type: application/json' -d '{", "  \"verifier\": \"exact\", \"response\": \"it'\\''s\"}'", "```",
      "```json", '{"reward":1}', "```",
      "```bash", "curl -X POST localhost:8787/reward -H 'Content-Type: application/json' -d @examples/x.json   # comment", "```",
    ].join("\n");
    const [a, b] = extractExamples("t.md", md);
    assert.equal(a.line, 1);
    assert.deepEqual(a.reply, { reward: 1 });
    assert.deepEqual(a.requests[0], {
      method: "POST", path: "/reward", headers: { "content-type": "application/json" },
      body: { text: '{\n  "verifier": "exact", "response": "it\'s"}' }, saveTo: undefined,
    });
    assert.deepEqual(b.requests[0].body, { file: "examples/x.json", stripNewlines: true });
    assert.equal(b.reply, undefined);
    // curl -d without a content type sends form-urlencoded: the example must say application/json.
    assert.throws(() => extractExamples("t.md", "```sh\ncurl localhost:8787/reward -d '{}'\n```\n"), /t\.md:1: curl -d without -H 'content-type: application\/json'/);
    // A curl in a block of another language would not run: refused, not ignored.
    assert.throws(() => extractExamples("t.md", "```console\n$ curl localhost:8787/healthz\n```\n"), /in a ```console block; write it in a ```bash block/);
  });

  test("item blocks, '→ reward' lines and text arrow pairs; a placeholder is an error, a skip needs a reason", () => {
    const items = extractExamples("t.md", '```json\n{"verifier": "exact", "response": "a",\n "reference": "a"}\n```\n→ reward 3/4 (prose)\n');
    assert.equal(items[0].reward, 0.75);
    assert.equal(extractExamples("t.md", '```json\n{"verifier": "x", "response": ""}\n```\n→ reward 0.9: prose\n')[0].reward, 0.9);
    assert.equal(items[0].requests.length, 1);
    const arrows = extractExamples("t.md", '```text\n{"verifier": "choice", "response": "B", "reference": "B"}\n→ {"reward":1}\n```\n');
    assert.deepEqual(arrows[0].reply, { reward: 1 });
    assert.throws(() => extractExamples("t.md", '\n\n```json\n{"verifier": "combine", "reference": {...}}\n```\n'), /t\.md:3: not valid JSON.*placeholder/);
    assert.throws(() => extractExamples("t.md", '```json\n{"verifier": "x", "response": ""}\n```\n→ 1 − 0.2\n'), /→ reward N/);
    const skipped = extractExamples("t.md", '<!-- example: skip (needs a real LLM endpoint) -->\n```json\n{"verifier": "x", "response": {...}}\n```\n');
    assert.equal(skipped[0].skip, "needs a real LLM endpoint");
    // Not examples: shell without curl, JSON without a verifier.
    assert.deepEqual(extractExamples("t.md", "```bash\nnpm ci\n```\n```json\n{\"reference\": 1}\n```\n"), []);
  });

  test("shell the runner cannot reproduce is refused, naming the place", () => {
    assert.throws(() => shellCommands("curl localhost:8787/x | jq .", "f:1"), /f:1: "\|"/);
    assert.throws(() => shellCommands("curl localhost:8787/$ID", "f:1"), /"\$"/);
    assert.throws(() => curlRequest(["curl", "--compressed", "localhost:8787/x"], "f:1"), /--compressed/);
    assert.throws(() => curlRequest(["curl", "example.com:8787/x"], "f:1"), /localhost:8787/);
    assert.deepEqual(shellCommands("curl a \\\n  b 'c d' \"e\\\"f\" > out.json\ncurl g", "f"), [["curl", "a", "b", "c d", 'e"f', ">", "out.json"], ["curl", "g"]]);
  });

  test("reply comparison: documented fields exact, timings and … free, extra fields allowed", () => {
    assert.deepEqual(differences({ reward: 1, elapsed_ms: 0.05, id: "…", reason: "chose …" }, { reward: 1, elapsed_ms: 3, id: "x7", reason: "chose B", extra: 1 }), []);
    assert.match(differences({ reward: 1 }, { reward: 0 }).join(), /\$\.reward: documented 1, got 0/);
    assert.match(differences({ reward: 0.5 }, { reward: 0.5000001 }).join(), /documented 0.5/);
    assert.match(differences({ details: { a: 1 } }, { details: {} }).join(), /\$\.details\.a: documented, missing/);
    assert.match(differences({ r: [1, 2] }, { r: [1] }).join(), /2 elements, got 1/);
    assert.match(differences({ reason: "chose …" }, { reason: "picked B" }).join(), /does not match/);
  });
});

/** Reads an `@file` of an example: a file an earlier example saved, else one in the repository. */
function readDocFile(name: string, work: string): Buffer {
  for (const p of [join(work, name), join(ROOT, name)]) if (existsSync(p)) return readFileSync(p);
  throw new Error(`the example reads ${name}, which is neither in the repository nor saved by an earlier example`);
}

async function send(base: string, r: DocRequest, work: string): Promise<{ status: number; text: string }> {
  let body: string | FormData | undefined;
  if (r.body && "text" in r.body) body = r.body.text;
  else if (r.body && "file" in r.body) {
    const raw = readDocFile(r.body.file, work);
    // The example files are text; --data-binary sends them as they are, -d without newlines.
    body = r.body.stripNewlines ? raw.toString("utf8").replace(/[\r\n]/g, "") : raw.toString("utf8");
  } else if (r.body) {
    const fd = new FormData();
    for (const [k, v] of r.body.form) {
      if ("value" in v) fd.append(k, v.value);
      else fd.append(k, new Blob([new Uint8Array(readDocFile(v.file, work))]), v.file);
    }
    body = fd;
  }
  const res = await fetch(base + r.path, { method: r.method, headers: r.headers, body, signal: AbortSignal.timeout(120_000) });
  const text = await res.text();
  if (r.saveTo) writeFileSync(join(work, r.saveTo), text);
  return { status: res.status, text };
}

describe("every documented request example against a live server", () => {
  let judge: JudgeFixture;
  let server: Running;
  let work: string;
  const counts = { run: 0, skipped: [] as string[] };

  before(async () => {
    judge = await startJudgeFixture();
    work = mkdtempSync(join(tmpdir(), "assay-docs-"));
    const env = {
      ...process.env,
      ASSAY_HOST: "127.0.0.1", ASSAY_PORT: "0", ASSAY_DATA_DIR: ":memory:", ASSAY_LOG_LEVEL: "silent",
      ASSAY_SQL_DIR: join(work, "sql"), ASSAY_API_KEYS: "",
      ASSAY_JUDGE_BASE_URL: judge.url, ASSAY_JUDGE_MODEL: "fx", ASSAY_JUDGE_PRICE_INPUT: "0.15", ASSAY_JUDGE_PRICE_OUTPUT: "0.6",
      // A cold sandbox or worker pool on a loaded machine must not turn an example into a timeout.
      ASSAY_DEADLINE_MS: "120000",
    };
    server = await startServer(loadConfig(env), quiet);
    // Until the server says when it is ready, wait for the math pool to answer: its start-up on
    // a loaded machine is not what these examples check.
    const until = Date.now() + 180_000;
    for (;;) {
      const r = await fetch(`${server.url}/reward`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ verifier: "math", response: "1", reference: "1" }) });
      const body = await r.json();
      if (body.status === "ok" || Date.now() > until) break;
    }
  });

  after(async () => {
    await server?.close();
    await judge?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  for (const file of docFiles()) {
    let examples: DocExample[] = [];
    let unreadable: Error | undefined;
    try {
      examples = extractExamples(file, readFileSync(join(ROOT, file), "utf8"));
    } catch (err) {
      unreadable = err as Error;
    }
    if (unreadable) {
      test(`${file}: every example can be read`, () => { throw unreadable; });
      continue;
    }
    for (const ex of examples) {
      const name = `${ex.file}:${ex.line} (${ex.kind === "curl" ? ex.requests.map((r) => `${r.method} ${r.path}`).join(", ") || "curl" : "item"})`;
      if (ex.skip) {
        counts.skipped.push(`${ex.file}:${ex.line}: ${ex.skip}`);
        test(name, { skip: ex.skip }, () => {});
        continue;
      }
      test(name, async (t) => {
        let last: { status: number; text: string } | undefined;
        for (const [i, r] of ex.requests.entries()) {
          last = await send(server.url, r, work);
          const isLast = i === ex.requests.length - 1;
          const documentsError = isLast && ex.reply && typeof ex.reply === "object" && "error" in ex.reply;
          const ok = documentsError ? last.status >= 400 && last.status < 500 : last.status >= 200 && last.status < 300;
          assert.ok(ok, `${r.method} ${r.path} answered ${last.status}: ${last.text.slice(0, 600)}`);
          if (ex.kind === "item") {
            const body = JSON.parse(last.text);
            assert.equal(body.status, "ok", `the documented item did not score: ${last.text.slice(0, 600)}`);
          }
        }
        assert.ok(last, "an example without a request");
        let actual: any;
        try {
          actual = JSON.parse(last.text);
        } catch {
          // Not JSON (an export saved to a file, JSONL results): only a documented reply must parse.
          assert.equal(ex.reply ?? ex.reward, undefined, `the reply is not JSON: ${last.text.slice(0, 600)}`);
        }
        const noSandbox = NO_SANDBOX.exec(`${actual?.reason ?? ""} ${actual?.message ?? ""}`);
        if (noSandbox && !IN_CI) {
          counts.skipped.push(`${ex.file}:${ex.line}: no sandbox here (${noSandbox[0]})`);
          return t.skip(`no sandbox image here; CI builds them (${noSandbox[0]})`);
        }
        counts.run++;
        if (ex.reply !== undefined) {
          const diff = differences(ex.reply, actual);
          assert.deepEqual(diff, [], `the reply differs from the documented one:\n  ${diff.join("\n  ")}\nfull reply: ${last.text.slice(0, 2000)}`);
        }
        if (ex.reward !== undefined) assert.equal(actual.reward, ex.reward, `documented "→ reward ${ex.reward}", got ${last.text.slice(0, 600)}`);
      });
    }
  }

  test("the count: examples run and those marked skip, each with its reason", (t) => {
    t.diagnostic(`${counts.run} examples run; ${counts.skipped.length} skipped`);
    for (const s of counts.skipped) t.diagnostic(`skipped ${s}`);
    // The README, the docs and the verifiers hold dozens: a reader that finds few has broken.
    assert.ok(counts.run >= 30, `only ${counts.run} examples ran`);
  });
});
