/**
 * /run_code under verl's budget, replayed from verl's own client
 * (volcengine/verl, verl/utils/reward_score/sandbox_fusion/utils.py):
 * - call_sandbox_api: `request_timeout = compile_timeout + run_timeout + API_TIMEOUT` (10 s),
 *   and only HTTP 504 is retried (MAX_RETRIES = 3, sleeping INITIAL_RETRY_DELAY * (attempt + 1)
 *   between tries); any other error, a client timeout included, ends in result -1.
 * - _process_single_case: how a reply becomes True / False / -1 / -2 / -3 / -4 (`verlVerdict`).
 * - check_correctness passes `compile_timeout=timeout, run_timeout=timeout`, and verl's
 *   sandbox_fusion config sends up to max_concurrent (64) such requests at once.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import type { RunOutcome, RunRequest, Sandbox } from "../sandbox/types.js";
import { runCodeStartBy, toSandboxFusion } from "../src/server/routes/sandboxfusion.js";
import { testApp, fakeSandbox } from "./helpers.js";
import { openDockerForTests, openBwrapForTests } from "./sandboxes.js";
import { verlVerdict } from "./verl.js";

const API_TIMEOUT = 10;


const base: Omit<RunOutcome, "status"> = { exitCode: null, signal: null, stdout: "", stderr: "", truncated: false, wallMs: 12, cpuMs: null };

describe("a killed program is Finished with a negative return code, as SandboxFusion reports it", () => {
  test("signal, memory cap and output cap: Finished, -signal (SIGKILL -9 for our caps); verl reads -2", () => {
    const seg = toSandboxFusion({ ...base, status: "runtime_error", signal: "SIGSEGV" });
    assert.deepEqual([seg.status, seg.run_result?.status, seg.run_result?.return_code], ["Failed", "Finished", -11]);
    const oom = toSandboxFusion({ ...base, status: "memory_limit", signal: "SIGKILL" });
    assert.deepEqual([oom.run_result?.status, oom.run_result?.return_code], ["Finished", -9]);
    const oomNoSignal = toSandboxFusion({ ...base, status: "memory_limit", exitCode: 1 });
    assert.deepEqual([oomNoSignal.run_result?.status, oomNoSignal.run_result?.return_code], ["Finished", -9]);
    const out = toSandboxFusion({ ...base, status: "output_limit" });
    assert.deepEqual([out.run_result?.status, out.run_result?.return_code], ["Finished", -9]);
    for (const b of [seg, oom, oomNoSignal, out]) assert.equal(verlVerdict(b, ""), -2);
    // Unchanged: a clean exit, a non-zero exit, a time limit, a machinery failure.
    assert.equal(toSandboxFusion({ ...base, status: "finished", exitCode: 0, stdout: "1\n" }).status, "Success");
    assert.equal(toSandboxFusion({ ...base, status: "finished", exitCode: 3 }).run_result?.return_code, 3);
    assert.equal(toSandboxFusion({ ...base, status: "time_limit", signal: "SIGKILL" }).run_result?.status, "TimeLimitExceeded");
    assert.equal(toSandboxFusion({ ...base, status: "sandbox_error" }).status, "SandboxError");
  });
});

describe("queueing knows the caller's budget", () => {
  test("startBy: arrival + compile_timeout + run_timeout + the caller's slack, less what the run may take (its compile limit only where it compiles)", () => {
    assert.equal(runCodeStartBy(1_000, { language: "python", compile_timeout: 10, run_timeout: 10 }, 8_000), 1_000 + 18_000);
    assert.equal(runCodeStartBy(1_000, { language: "cpp", compile_timeout: 10, run_timeout: 10 }, 8_000), 1_000 + 8_000);
    assert.equal(runCodeStartBy(0, { language: "python", compile_timeout: 3, run_timeout: 3 }, 8_000), 11_000);
  });

  test("a run that cannot start in time is a 504 (verl retries it), after waiting as long as the caller's budget allows", async () => {
    const seen: RunRequest[] = [];
    const fake: Sandbox = {
      name: "fake", languages: ["python", "python-sci"],
      run: async (req) => {
        seen.push(req);
        return { ...base, status: "not_started", message: "no slot" };
      },
      close: async () => {},
    };
    const { app } = await testApp({ ASSAY_RUN_CODE_CALLER_SLACK_MS: "1234" }, [], { sandbox: fakeSandbox(fake) });
    const t0 = Date.now();
    const res = await request(app).post("/run_code").send({ code: "print(1)", language: "python", compile_timeout: 10, run_timeout: 10 }).expect(504);
    assert.match(res.body.error, /retry/);
    assert.ok(seen[0]!.startBy! >= t0 + 11_234 && seen[0]!.startBy! <= Date.now() + 11_234, "startBy is the arrival plus compile_timeout plus the slack");
  });

  test("a run still going at the caller's deadline is answered 504 there (verl retries it), not when the sandbox lets go", async () => {
    let ended = 0;
    const fake: Sandbox = {
      name: "fake", languages: ["python", "python-sci"],
      // Own-time limits on a loaded host: the run outlasts the caller's clock, and its kill is slow.
      run: (req) => new Promise((resolve) => {
        req.signal?.addEventListener("abort", () => setTimeout(() => (ended = Date.now(), resolve({ ...base, status: "sandbox_error", message: "aborted" })), 1500), { once: true });
      }),
      close: async () => {},
    };
    const { app } = await testApp({ ASSAY_RUN_CODE_CALLER_SLACK_MS: "300" }, [], { sandbox: fakeSandbox(fake) });
    const t0 = Date.now();
    const res = await request(app).post("/run_code").send({ code: "print(1)", language: "python", compile_timeout: 0.2, run_timeout: 0.2 }).expect(504);
    const ms = Date.now() - t0;
    assert.match(res.body.error, /still running/);
    assert.ok(ms >= 650 && ms < 1400, `answered after ${ms} ms: the caller's budget here is 0.2 + 0.2 s + 0.3 s`);
    assert.equal(ended, 0, "answered before the run wound down");
  });

  test("the backlog's estimate alone never turns a request away: it waits in the queue for its slot", async () => {
    // A ledger that says an hour of work is queued; today's main answered 504 at once.
    const seen: RunRequest[] = [];
    const fake: Sandbox = {
      name: "fake", languages: ["python", "python-sci"],
      load: () => ({ slots: 4, running: 4, queued: 400, waitMs: 3_600_000, typicalMs: 10_000 }),
      run: async (req) => {
        seen.push(req);
        return { ...base, status: "finished", exitCode: 0, stdout: "2\n" };
      },
      close: async () => {},
    };
    const { app } = await testApp({}, [], { sandbox: fakeSandbox(fake) });
    const res = await request(app).post("/run_code").send({ code: "print(1+1)", language: "python", compile_timeout: 10, run_timeout: 10 }).expect(200);
    assert.equal(res.body.status, "Success");
    assert.equal(seen.length, 1);
  });

  test("python runs in the scientific image by default (SandboxFusion's has NumPy); ASSAY_RUN_CODE_PYTHON=python keeps the lean one", async () => {
    const langs: string[] = [];
    const fake: Sandbox = {
      name: "fake", languages: ["python", "python-sci", "cpp"],
      run: async (req) => {
        langs.push(req.language);
        return { ...base, status: "finished", exitCode: 0 };
      },
      close: async () => {},
    };
    const dflt = await testApp({}, [], { sandbox: fakeSandbox(fake) });
    await request(dflt.app).post("/run_code").send({ code: "import numpy", language: "python" }).expect(200);
    await request(dflt.app).post("/run_code").send({ code: "int main(){}", language: "cpp" }).expect(200);
    const lean = await testApp({ ASSAY_RUN_CODE_PYTHON: "python" }, [], { sandbox: fakeSandbox(fake) });
    await request(lean.app).post("/run_code").send({ code: "print(1)", language: "python" }).expect(200);
    await request(lean.app).post("/run_code").send({ code: "import numpy", language: "python-sci" }).expect(200);
    assert.deepEqual(langs, ["python-sci", "cpp", "python", "python-sci"]);
  });
});

describe("files: text files reach the program as sent; what the sandbox cannot write is the caller's 400", () => {
  test("base64 UTF-8 text is written as is; a bad path, a non-base64 value or binary bytes are 400s naming files (not a SandboxError, which verl scores as our failure)", async () => {
    const seen: Record<string, string>[] = [];
    const fake: Sandbox = {
      name: "fake", languages: ["python"],
      run: async (req) => {
        seen.push({ ...(req.files ?? {}) });
        return { ...base, status: "finished", exitCode: 0 };
      },
      close: async () => {},
    };
    const { app } = await testApp({ ASSAY_RUN_CODE_PYTHON: "python" }, [], { sandbox: fakeSandbox(fake) });
    const b64 = (x: string | Buffer) => Buffer.from(x).toString("base64");
    await request(app).post("/run_code").send({ code: "print(1)", language: "python", files: { "data/in.txt": b64("héllo\n"), "skip.txt": null } }).expect(200);
    assert.equal(seen.at(-1)?.["data/in.txt"], "héllo\n");
    assert.equal("skip.txt" in seen.at(-1)!, false);
    const refused: [Record<string, string>, RegExp][] = [
      [{ "../../../tmp/evil.txt": b64("x") }, /leaves the program's directory/],
      [{ "/tmp/abs.txt": b64("x") }, /is absolute/],
      [{ "": b64("x") }, /is empty/],
      [{ ".": b64("x") }, /empty or '.' segment/],
      [{ a: b64("1"), "a/b": b64("2") }, /inside another file's path/],
      [{ "x.txt": "!!!not base64###" }, /is not base64/],
      [{ "b.bin": b64(Buffer.from([0xff, 0x00, 0x01, 0x80, 0x61])) }, /not UTF-8 text; binary files are not supported/],
    ];
    for (const [files, why] of refused) {
      const res = await request(app).post("/run_code").send({ code: "print(1)", language: "python", files }).expect(400);
      assert.equal(res.body.field, "files");
      assert.match(res.body.error, why);
    }
    assert.equal(seen.length, 1, "no refused request reached the sandbox");
    // linear on a long hostile value
    const t0 = performance.now();
    await request(app).post("/run_code").send({ code: "print(1)", language: "python", files: { "x.txt": " ".repeat(1_000_000) + "!" } }).expect(400);
    assert.ok(performance.now() - t0 < 2000);
  });
});

const opened = await openDockerForTests(4);
describe("64 concurrent verl requests, 16 of them looping, on the real docker sandbox", { skip: opened.skip }, async () => {
  const sb = opened.sandbox!;
  after(() => sb.close());

  test("the docker pool gives up waiting at startBy and says so distinctly (not a sandbox failure)", async () => {
    // Every container warm first: a loop still waiting for one would be served after the run
    // with a startBy (earliest deadline first, sandbox/waiters.ts), which would then start.
    const pool = sb as unknown as { warm(language: string): void; stats(): { idle: number }[] };
    pool.warm("python");
    for (const t = Date.now(); !((pool.stats()[0]?.idle ?? 0) >= 4); await new Promise((r) => setTimeout(r, 50))) {
      assert.ok(Date.now() - t < 60_000, `the pool's 4 containers did not start: ${JSON.stringify(pool.stats())}`);
    }
    const loops = [0, 1, 2, 3].map(() => sb.run({ language: "python", code: "while True: pass", limits: { wallMs: 2500, cpuMs: 2500 } }));
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    const late = await sb.run({ language: "python", code: "print(1)", startBy: t0 + 400 });
    assert.equal(late.status, "not_started", JSON.stringify(late));
    assert.ok(Date.now() - t0 < 1500, "gave up at startBy, not when a slot freed");
    await Promise.all(loops);
  });

  test("every correct program is answered correctly within verl's budget, or with a 504; never a late 0", async () => {
    const timeout = 3; // verl's sandbox_fusion timeout for compile and run (its default is 10; smaller keeps the test short)
    const budgetMs = (timeout + timeout + API_TIMEOUT) * 1000;
    const { app } = await testApp({}, [], { sandbox: fakeSandbox(sb) });
    const server = app.listen(0, "127.0.0.1");
    after(() => server.close());
    await new Promise((r) => server.once("listening", r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/run_code`;

    /** One call_sandbox_api attempt: the verl payload, the client's timeout. */
    async function attempt(code: string, stdin: string) {
      const t0 = performance.now();
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), budgetMs);
      try {
        const res = await fetch(url, {
          method: "POST", signal: ac.signal,
          headers: { "Content-Type": "application/json", Accept: "application/json" },
          body: JSON.stringify({ compile_timeout: timeout, run_timeout: timeout, code, stdin, language: "python", files: {}, fetch_files: [] }),
        });
        return { status: res.status, body: res.status === 200 ? await res.json() : await res.text(), ms: performance.now() - t0 };
      } catch (e) {
        return { status: 0, body: String(e), ms: performance.now() - t0 };
      } finally {
        clearTimeout(timer);
      }
    }

    const jobs = Array.from({ length: 64 }, (_, i) => {
      const loops = i % 4 === 0; // 16 of 64
      const code = loops ? "while True: pass" : "a, b = map(int, input().split())\nprint(a + b)";
      return { i, loops, code, stdin: `${i} 1`, expected: String(i + 1) };
    });
    const t0 = performance.now();
    const answers = await Promise.all(jobs.map(async (j) => ({ j, first: await attempt(j.code, j.stdin) })));
    const wall = performance.now() - t0;

    let correct = 0, fiveOhFour = 0;
    for (const { j, first } of answers) {
      assert.ok(first.ms < budgetMs, `request ${j.i} answered after verl's ${budgetMs} ms budget (${Math.round(first.ms)} ms)`);
      assert.ok(first.status === 200 || first.status === 504, `request ${j.i}: HTTP ${first.status} ${String(first.body).slice(0, 200)}`);
      if (first.status === 504) {
        fiveOhFour++;
        continue;
      }
      const v = verlVerdict(first.body, j.expected);
      if (j.loops) assert.equal(v, -3, `looping request ${j.i}: ${JSON.stringify(first.body).slice(0, 300)}`);
      else {
        assert.equal(v, true, `correct request ${j.i} scored ${v}: ${JSON.stringify(first.body).slice(0, 300)}`);
        correct++;
      }
    }
    assert.ok(correct > 0, "some correct programs ran");
    // verl retries each 504 after 1 s then 2 s: replay that for the correct ones turned away.
    const retried = answers.filter((a) => a.first.status === 504 && !a.j.loops);
    for (let k = 0; k < 2 && retried.length; k++) {
      await new Promise((r) => setTimeout(r, 1000 * (k + 1)));
      const again = await Promise.all(retried.map(async (a) => ({ a, r: await attempt(a.j.code, a.j.stdin) })));
      retried.length = 0;
      for (const { a, r } of again) {
        assert.ok(r.ms < budgetMs && (r.status === 200 || r.status === 504), `retry of ${a.j.i}: HTTP ${r.status} after ${Math.round(r.ms)} ms`);
        if (r.status === 504) retried.push(a);
        else assert.equal(verlVerdict(r.body, a.j.expected), true, `retry of ${a.j.i}`);
      }
    }
    console.log(`# 64 requests (16 loop) in ${Math.round(wall)} ms: ${correct} correct at once, ${fiveOhFour} answered 504, ${retried.length} still 504 after verl's retries`);
  });
});

const bw = await openBwrapForTests();
describe("the bwrap backend honours startBy too", { skip: bw.skip }, async () => {
  const sb = bw.sandbox!;
  after(() => sb.close());
  test("with every slot busy, a run gives up at startBy with status not_started", async () => {
    const slots = (sb as unknown as { opts: { slots: number } }).opts.slots;
    const loops = Array.from({ length: slots }, () => sb.run({ language: "python", code: "while True: pass", limits: { wallMs: 2500, cpuMs: 2500 } }));
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    const late = await sb.run({ language: "python", code: "print(1)", startBy: t0 + 400 });
    assert.equal(late.status, "not_started", JSON.stringify(late));
    assert.ok(Date.now() - t0 < 1500);
    await Promise.all(loops);
    const now = await sb.run({ language: "python", code: "print(1)", startBy: Date.now() + 5000 });
    assert.equal(now.stdout.trim(), "1", "a free slot starts at once");
  });
});
