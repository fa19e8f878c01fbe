/**
 * Every language of sandbox/languages.ts end to end: through POST /reward (the code verifier,
 * stdio tests) and POST /run_code (SandboxFusion's shape), a correct program scores 1, a wrong
 * one 0, one that does not compile 0 with the compiler's words, an infinite loop 0 with
 * time_limit, a memory bomb 0 with memory_limit. A language whose image is not built is skipped
 * with the command that builds it, except under CI=true, where it fails (CI builds them all:
 * scripts/setup-sandbox.sh).
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import type { Sandbox } from "../sandbox/types.js";
import { CompositeSandbox, selectSandbox } from "../sandbox/index.js";
import { loadConfig } from "../src/core/config.js";
import { openJs } from "../sandbox/js/index.js";
import { LANGUAGES, canonicalLanguage, imagesFor, languageNames, notBuiltReason, isCompiled, defaultImages } from "../sandbox/languages.js";
import { makeJob } from "../sandbox/job.js";
import { testApp, fakeSandbox, fastestCpu } from "./helpers.js";
import { IN_CI, openBwrapForTests, openDockerForTests } from "./sandboxes.js";
import { SAMPLES } from "./languages-samples.js";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";

describe("the languages table", () => {
  test("every SandboxFusion language name whose toolchain ships resolves, case as SandboxFusion writes it", () => {
    const sf = ["python", "cpp", "nodejs", "go", "java", "csharp", "typescript", "rust", "php", "bash", "lua", "R", "perl", "ruby", "verilog"];
    for (const n of sf) assert.ok(canonicalLanguage(n), n);
    assert.equal(canonicalLanguage("R"), "r");
    assert.equal(canonicalLanguage("nodejs"), "javascript");
    // Test-framework runners (a JUnit class has no main) and toolchains not shipped.
    for (const n of ["junit", "jest", "pytest", "scala", "kotlin_script", "swift", "julia", "cobol"]) assert.equal(canonicalLanguage(n), undefined, n);
    // Go's `testing` tests and Rust's #[test]: the whole-program tests of HumanEval-X.
    assert.equal(canonicalLanguage("go_test"), "go_test");
    assert.equal(canonicalLanguage("rust_test"), "rust_test");
    assert.deepEqual(languageNames().slice(0, 4), ["python", "python-sci", "cpp", "nodejs"]);
  });
  test("--lang maps languages to images; an unknown one is an error naming the known ones", () => {
    assert.deepEqual(imagesFor(["java", "golang"]), ["java", "go"]);
    assert.deepEqual(imagesFor(["ruby", "php", "lua", "perl"]), ["scripting"]);
    assert.deepEqual(imagesFor(["bash"]), ["python"]);
    assert.deepEqual(defaultImages(), ["python", "cpp"]);
    assert.throws(() => imagesFor(["java", "cobol"]), /unknown language "cobol"; known: all, python, python-sci, cpp, .*java/);
    assert.ok(imagesFor(["all"]).includes("python-sci"));
  });
  test("the job fills the heap flag from the memory limit and keys the compile cache by image, command and files", () => {
    const limits = { wallMs: 1000, cpuMs: 1000, memoryMb: 400, outputBytes: 1000, pids: 16 };
    const j = makeJob({ language: "java", code: "public class Foo { public static void main(String[] a) {} }" }, LANGUAGES.java, limits);
    assert.ok(j.argv.includes("-Xmx300m"));
    assert.equal(j.argv.at(-1), "Foo");
    assert.ok("Foo.java" in j.files);
    assert.equal(j.limits.addressSpaceMb, 0);
    const j2 = makeJob({ language: "java", code: "public class Foo { public static void main(String[] a) {} }", files: { "x.txt": "1" } }, LANGUAGES.java, limits);
    assert.notEqual(j.compile!.key, j2.compile!.key);
    const go = makeJob({ language: "go", code: "package main\nfunc main() {}" }, LANGUAGES.go, limits);
    assert.equal(go.limits.addressSpaceMb, 400 + 768);
    assert.equal(makeJob({ language: "python", code: "" }, LANGUAGES.python, limits).limits.addressSpaceMb, 400);
  });
  test("a Java class name in 1 MB of hostile source is found in linear time", async () => {
    const lim = { wallMs: 1, cpuMs: 1, memoryMb: 64, outputBytes: 1, pids: 1 };
    for (const code of [
      "public ".repeat(150_000) + "class " + " ".repeat(50_000),
      "class A ".repeat(60_000) + "static ".repeat(60_000) + "void ",
      "public\t".repeat(100_000) + "final ".repeat(40_000),
    ]) {
      const { out, ms } = await fastestCpu(() => makeJob({ language: "java", code }, LANGUAGES.java, lim), { under: 50 });
      assert.ok(ms < 50, `${ms} ms`);
      assert.ok(out.argv.length > 0);
    }
  });
});

test("`assay sandbox build --lang` with an unknown language fails listing the known ones", async () => {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const r = await promisify(execFile)(process.execPath, ["--import", "tsx", "src/cli/main.ts", "sandbox", "build", "--lang", "java,cobol"], { cwd: root }).then(
    () => assert.fail("it succeeded"),
    (e: { code: number; stderr: string }) => e,
  );
  assert.equal(r.code, 1);
  assert.match(r.stderr, /unknown language "cobol"; known: all, python, .*java, go, rust, typescript, csharp, ruby, php, lua, perl, r/);
});

describe("a language whose image is not built", () => {
  test("scores null (status error) with the command that builds it", async () => {
    const js = (await openJs()).sandbox;
    if (!js) return;
    const { app } = await testApp({}, [], { sandbox: fakeSandbox(new CompositeSandbox([js])) });
    const res = await request(app).post("/reward").send({
      verifier: "code", response: "```java\nclass Main {}\n```", reference: { inputs: [""], outputs: [""], language: "java" },
    }).expect(200);
    assert.equal(res.body.status, "error");
    assert.equal(res.body.reward, null);
    assert.match(res.body.reason, /npx assay sandbox build --lang java/);
    const rc = await request(app).post("/run_code").send({ code: "x", language: "java" }).expect(200);
    assert.equal(rc.body.status, "SandboxError");
    assert.match(rc.body.message, /sandbox build --lang java/);
    const bad = await request(app).post("/run_code").send({ code: "x", language: "cobol" }).expect(400);
    assert.match(bad.body.error ?? bad.body.message ?? JSON.stringify(bad.body), /bash, java, go, rust/);
  });
});

const REF = { inputs: ["2 3\n", "10 20\n"], outputs: ["5\n", "30\n"] };
const fence = (lang: string, code: string) => `Here it is:\n\`\`\`${lang}\n${code}\`\`\`\n`;
const sfName = (lang: string) => LANGUAGES[lang].aliases[0];

for (const [backend, open] of [["docker", () => openDockerForTests(2)], ["bwrap", openBwrapForTests]] as const) {
  const opened = await open();
  describe(`languages in the ${backend} sandbox`, { skip: opened.skip }, async () => {
    const sb = opened.sandbox as Sandbox;
    after(() => sb?.close());
    const { app } = await testApp({}, [], { sandbox: fakeSandbox(sb) });
    const reward = async (lang: string, code: string, opts: Record<string, unknown> = {}) => {
      const res = await request(app).post("/reward").send({
        verifier: "code", response: fence(sfName(lang), code), reference: REF,
        options: { language: lang, time_limit_ms: 1000, memory_mb: 256, ...opts },
      }).expect(200);
      return res.body;
    };
    const runCode = async (lang: string, code: string, runTimeout = 2) => {
      const res = await request(app).post("/run_code").send({ code, language: sfName(lang), stdin: "2 3\n", run_timeout: runTimeout, compile_timeout: 30, memory_limit_MB: 256 }).expect(200);
      return res.body;
    };

    for (const [lang, s] of Object.entries(SAMPLES)) {
      const missing = sb?.languages.includes(lang) ? false : notBuiltReason(lang);
      if (missing && IN_CI) {
        test(`${lang}: its image is built (CI builds every image)`, () => assert.fail(missing));
        continue;
      }
      describe(lang, { skip: missing ? `not built: ${missing}` : false }, () => {
        test("POST /reward: correct 1, wrong 0, broken 0 with the compiler's words, loop time_limit, bomb memory_limit", async () => {
          let b = await reward(lang, s.ok);
          assert.equal(b.reward, 1, JSON.stringify(b));
          assert.equal(b.details.extracted_via, "fenced block");
          b = await reward(lang, s.wrong);
          assert.equal(b.reward, 0, JSON.stringify(b));
          assert.equal(b.details.tests[0].status, "failed");
          b = await reward(lang, s.broken);
          assert.equal(b.reward, 0);
          if (isCompiled(lang)) {
            assert.equal(b.details.tests[0].status, "compile_error", JSON.stringify(b));
            assert.match(b.reason, s.brokenSays);
          } else {
            assert.equal(b.details.tests[0].status, "runtime_error", JSON.stringify(b));
          }
          b = await reward(lang, s.loop);
          assert.equal(b.reward, 0);
          assert.equal(b.details.tests[0].status, "time_limit", JSON.stringify(b));
          // Time limits count CPU over the whole tree, and some runtimes spend more than a second
          // of it reaching 256 MiB, so the bomb gets CPU to spare: what it must hit is the memory
          // limit. (bash's bomb reads /dev/zero into one line: its `x=$x$x` copied through word
          // expansion, 4-5 s of CPU on a loaded machine, and hit the time limit instead.)
          b = await reward(lang, s.bomb, { time_limit_ms: 5000 });
          assert.equal(b.reward, 0);
          assert.equal(b.details.tests[0].status, "memory_limit", JSON.stringify(b));
        });
        if (backend !== "docker") return; // the route is the same whichever backend runs it
        test("POST /run_code with SandboxFusion's language name", async () => {
          let b = await runCode(lang, s.ok);
          assert.equal(b.status, "Success", JSON.stringify(b));
          assert.equal(b.run_result.stdout.trim(), "5");
          assert.equal(b.compile_result === null, !isCompiled(lang));
          b = await runCode(lang, s.wrong);
          assert.equal(b.run_result.stdout.trim(), "6");
          b = await runCode(lang, s.broken);
          assert.equal(b.status, "Failed");
          assert.match(isCompiled(lang) ? b.compile_result.stderr : b.run_result.stderr, s.brokenSays);
          if (isCompiled(lang)) assert.equal(b.run_result, null);
          b = await runCode(lang, s.loop);
          assert.equal(b.status, "Failed");
          assert.equal(b.run_result.status, "TimeLimitExceeded");
          // CPU to spare, as for /reward above: bash took over 2 s of it to reach 256 MiB on a busy host
          b = await runCode(lang, s.bomb, 5);
          assert.equal(b.status, "Failed");
          assert.match(b.message, /memory limit/);
        });
      });
    }

    const sci = sb?.languages.includes("python-sci") ? false : notBuiltReason("python-sci");
    if (sci && IN_CI) test("python-sci: its image is built", () => assert.fail(sci));
    describe("python-sci", { skip: sci ? `not built: ${sci}` : false }, () => {
      const program = "import numpy as np, scipy, pandas, sympy, networkx, sortedcontainers\na, b = map(int, input().split())\nprint(int(np.array([a, b]).sum()))\n";
      test("a program importing NumPy scores 1 in python-sci and fails with ModuleNotFoundError in lean python", async () => {
        // Importing the whole scientific stack costs about 1.1 s of CPU by itself (measured in
        // the image), and limits count CPU now: the program gets room for its imports.
        const sci = await reward("python-sci", program, { time_limit_ms: 5000 });
        assert.equal(sci.reward, 1, JSON.stringify(sci));
        assert.equal(sci.details.extracted_via, "fenced block"); // a ```python block
        const lean = await reward("python", program);
        assert.equal(lean.reward, 0);
        assert.match(lean.reason, /ModuleNotFoundError: No module named 'numpy'/);
        if (backend !== "docker") return;
        const rc = await request(app).post("/run_code").send({ code: program, language: "python-sci", stdin: "2 3\n", run_timeout: 10 }).expect(200);
        assert.equal(rc.body.status, "Success", JSON.stringify(rc.body));
        assert.equal(rc.body.run_result.stdout, "5\n");
      });
      test("assert tests (HumanEval style) run in python-sci too", async () => {
        const res = await request(app).post("/reward").send({
          verifier: "code", response: fence("python", "import numpy as np\ndef f(x):\n    return int(np.square(x))\n"),
          reference: { test_list: ["assert f(3) == 9", "assert f(4) == 16"], language: "python-sci" },
        }).expect(200);
        assert.equal(res.body.reward, 1, JSON.stringify(res.body));
      });
    });
  });
}

describe("ASSAY_SANDBOX_PYTHON=python-sci: plain python programs get the scientific runtime", async () => {
  // verl compares against SandboxFusion, whose `python` imports NumPy; with the setting, the same
  // request (language "python") that fails in the lean image succeeds, and by no other change.
  const program = "import numpy as np\na, b = map(int, input().split())\nprint(int(np.array([a, b]).sum()))\n";
  const chosen = await Promise.all(["python", "python-sci"].map((python) =>
    selectSandbox(loadConfig({ ...process.env, ASSAY_SANDBOX: "docker", ASSAY_SANDBOX_POOL: "1", ASSAY_SANDBOX_PYTHON: python }).sandbox)));
  const [lean, sci] = chosen.map((c) => c.sandbox);
  after(() => Promise.all(chosen.map((c) => c.sandbox?.close())));
  const missing = !sci ? chosen[1].note : sci.languages.includes("python-sci") ? false : notBuiltReason("python-sci");
  if (missing && IN_CI) test("the docker sandbox with python-sci is here", () => assert.fail(String(missing)));
  test("/run_code with language python: ModuleNotFoundError in the lean default, the sum with python-sci", { skip: missing && !IN_CI ? `no docker python-sci: ${missing}` : false }, async () => {
    // /run_code's own default is python-sci now (as SandboxFusion's); ASSAY_RUN_CODE_PYTHON=python
    // makes its `python` follow ASSAY_SANDBOX_PYTHON, which is what this test compares.
    const send = async (sb: Sandbox) => {
      const { app } = await testApp({ ASSAY_RUN_CODE_PYTHON: "python" }, [], { sandbox: fakeSandbox(sb) });
      return (await request(app).post("/run_code").send({ code: program, language: "python", stdin: "2 3\n", run_timeout: 10 }).expect(200)).body;
    };
    const a = await send(lean!);
    assert.equal(a.status, "Failed", JSON.stringify(a));
    assert.match(a.run_result.stderr, /ModuleNotFoundError: No module named 'numpy'/);
    const b = await send(sci!);
    assert.equal(b.status, "Success", JSON.stringify(b));
    assert.equal(b.run_result.stdout, "5\n");
    assert.match(chosen[1].note, /plain python programs run in python-sci/);
  });
});

