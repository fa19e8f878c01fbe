/**
 * code: runs the model's program against the reference's tests in a sandbox.
 *
 * The program is the completion's last fenced block of the language (configurable). Tests are
 * stdin/stdout pairs, function calls or assert scripts (see tests.ts). Expected outputs never
 * enter the sandbox for stdin/stdout and function-call tests: the server compares. Assert scripts
 * run in-process with the program under a harness that rewrites each assert (harness/asserts.py).
 * A sandbox failure is never the model's fault: the item is status "error", reward null.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Type, type Static } from "@sinclair/typebox";
import pLimit from "p-limit";
import { LRUCache } from "lru-cache";
import { InvalidItemError, MachineryError } from "../../src/core/types.js";
import { defineVerifier, type VerifyContext } from "../../src/core/verifier.js";
import { DEFAULT_LIMITS, type RunOutcome, type RunRequest, type Sandbox } from "../../sandbox/types.js";
import { LANGUAGES, canonicalLanguage, compileMsOf, fenceLanguage, isCompiled } from "../../sandbox/languages.js";
import { PACKAGE_ROOT } from "../../sandbox/paths.js";
import { ownTimeMs } from "../../sandbox/meter.js";
import { extractProgram } from "./extract.js";
import { exactJson, isSetResult, outputsMatch, shortDiff, stringifyExact, valuesMatch } from "./compare.js";
import { parseReference, type Suite } from "./suite.js";

const Options = Type.Object(
  {
    language: Type.Optional(Type.String({ description: "the program's language (default: the reference's `language`, else python)" })),
    extract: Type.Union([Type.Literal("last_block"), Type.Literal("first_block"), Type.Literal("full")], {
      default: "last_block",
      description: "which fenced block of the completion is the program",
    }),
    compare: Type.Union([Type.Literal("exact"), Type.Literal("lines"), Type.Literal("tokens"), Type.Literal("float")], {
      default: "lines",
      description: "how stdout is compared with the expected output",
    }),
    float_tolerance: Type.Number({ minimum: 0, maximum: 1, default: 1e-6 }),
    scoring: Type.Union([Type.Literal("fraction"), Type.Literal("all"), Type.Literal("first_failure")], { default: "fraction" }),
    time_limit_ms: Type.Integer({ minimum: 100, maximum: 60000, default: 4000, description: "CPU-time limit per test, ms (wall limit is twice that plus a second)" }),
    memory_mb: Type.Integer({ minimum: 32, maximum: 8192, default: 512 }),
    concurrency: Type.Integer({ minimum: 1, maximum: 64, default: 4, description: "tests run at once for one item (compiled languages run in order, to reuse the binary)" }),
    max_tests: Type.Integer({ minimum: 1, maximum: 10000, default: 1000 }),
    benchmark: Type.Optional(Type.Union([Type.Literal("humaneval"), Type.Literal("mbpp"), Type.Literal("humaneval-x")], {
      description: "score as the benchmark's own harness does: all-or-nothing, its time limit (sets scoring and time_limit_ms; see the README)",
    })),
    compile_time_limit_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120000, description: "time limit of the compile step, ms (CPU time, and its own time on the wall); default: the language's (10 s for C++, 20 s for Java, Go, C#; 30 s for Rust)" })),
  },
  { additionalProperties: false },
);
export type CodeOptions = Static<typeof Options>;

/**
 * What each benchmark's own harness does: one verdict per problem (all tests pass or none
 * count) and its time limit, as CPU time here. openai/human-eval's evaluate_functional_correctness
 * runs each check with timeout=3.0 s; MBPP ships no harness of its own, and the one people use
 * (bigcode-evaluation-harness's code_eval) also gives 3 s; CodeGeeX's evaluate_humaneval_x.sh
 * gives HumanEval-X's programs TIMEOUT=5 s.
 */
export const BENCHMARKS: Record<NonNullable<CodeOptions["benchmark"]>, Pick<CodeOptions, "scoring" | "time_limit_ms">> = {
  humaneval: { scoring: "all", time_limit_ms: 3000 },
  mbpp: { scoring: "all", time_limit_ms: 3000 },
  "humaneval-x": { scoring: "all", time_limit_ms: 5000 },
};

/** The item's options with its benchmark's settings applied. */
const withBenchmark = (o: CodeOptions): CodeOptions => (o.benchmark ? { ...o, ...BENCHMARKS[o.benchmark] } : o);

// Read from the package's sources (tsc does not copy .py files into dist/).
const HARNESS = {
  call: readFileSync(join(PACKAGE_ROOT, "verifiers/code/harness/fncall.py"), "utf8"),
  assert: readFileSync(join(PACKAGE_ROOT, "verifiers/code/harness/asserts.py"), "utf8"),
};

type TestStatus = "passed" | "failed" | "runtime_error" | "time_limit" | "memory_limit" | "output_limit" | "compile_error";

interface TestDetail {
  test: number;
  status: TestStatus;
  /** Wall time of the run, ms. */
  ms: number;
  /** CPU time of the run's whole process tree, ms (where the backend counts it). */
  cpu_ms?: number;
  /** Of `ms`, the time the program waited for a CPU (the host's load), ms (where measured). */
  wait_ms?: number;
  diff?: string;
  error?: string;
}

/** The run's times for a test's entry: wall (`ms`), CPU and wait for a CPU. */
function timesOf(r: RunOutcome): Pick<TestDetail, "ms" | "cpu_ms" | "wait_ms"> {
  const t: Pick<TestDetail, "ms" | "cpu_ms" | "wait_ms"> = { ms: r.wallMs };
  if (typeof r.cpuMs === "number") t.cpu_ms = Math.round(r.cpuMs * 10) / 10;
  if (typeof r.waitMs === "number") t.wait_ms = Math.round(r.waitMs * 10) / 10;
  return t;
}



const clip = (s: string, n = 300) => (s.length > n ? s.slice(0, n) + "…" : s);

function statusOf(o: RunOutcome): TestStatus | null {
  // A compile that ran out of time is a time limit (POST /run_code says TimeLimitExceeded), not
  // a compile error: the sandbox counts the compiler's CPU time and its own time on the wall, so
  // a busy host does not make it.
  if (o.status === "compile_error" && o.compile?.status === "time_limit") return "time_limit";
  switch (o.status) {
    case "finished":
      return null;
    case "sandbox_error":
    case "not_started": // never asked for here (no startBy), but not the program's doing either
      throw new MachineryError(`sandbox failed: ${o.message ?? "unknown"}`);
    default:
      return o.status;
  }
}

function lastRecord(stdout: string, marker: string): any | null {
  const at = stdout.lastIndexOf("\n" + marker);
  if (at < 0) return null;
  const end = stdout.indexOf("\n", at + 1 + marker.length);
  try {
    return exactJson(stdout.slice(at + 1 + marker.length, end < 0 ? undefined : end));
  } catch {
    return null;
  }
}

function records(stdout: string, marker: string): any[] {
  const out: any[] = [];
  for (const line of stdout.split("\n")) {
    if (!line.startsWith(marker)) continue;
    try {
      out.push(JSON.parse(line.slice(marker.length)));
    } catch {
      /* a torn or forged line counts as nothing */
    }
  }
  return out;
}

export const code = defineVerifier({
  name: "code",
  description:
    "Runs the completion's program against unit tests in a sandbox: stdin/stdout pairs, function calls (fn_name, class Solution) or assert scripts (HumanEval/MBPP).",
  reference: Type.Union([Type.String({ minLength: 1 }), Type.Object({})]),
  options: Options,
  usesSandbox: true,
  budgetMs(item) {
    const o = withBenchmark(item.options);
    const ref = item.reference as { language?: unknown };
    const asked = o.language ?? (typeof ref?.language === "string" ? ref.language : "python");
    let suite: Suite;
    try {
      suite = suiteOf(item.reference, o.max_tests);
    } catch {
      return 0; // verify reports the malformed reference
    }
    const plan = planOf(suite, canonicalLanguage(asked) ?? asked, o);
    return plan.compileMs + plan.rounds * plan.wallMs + MARGIN_MS;
  },
  async verify(item, ctx) {
    const o = withBenchmark(item.options);
    const ref = item.reference as { language?: unknown };
    const asked = o.language ?? (typeof ref?.language === "string" ? ref.language : "python");
    const language = canonicalLanguage(asked) ?? asked;
    let suite = suiteOf(item.reference, o.max_tests);
    // A test whose expected output no run may print (past OUTPUT_MAX_BYTES) makes the reference
    // unusable: every program would end at the output cap, 0 for a right one.
    const big = suite.kind === "stdio" || suite.kind === "call" ? expectedBytesOf(suite).findIndex((n) => n > OUTPUT_MAX_BYTES) : -1;
    if (big >= 0) {
      throw new InvalidItemError(`test ${big}'s expected output is ${(expectedBytesOf(suite as CaseSuite)[big] / 2 ** 20).toFixed(1)} MiB; a run's output is captured up to ${OUTPUT_MAX_BYTES / 2 ** 20} MiB, so no program could pass it`);
    }
    // Python's runtimes (python, python-sci) run the call harness. A HumanEval-shaped `test` in
    // another language is that benchmark's whole-program test (HumanEval-X, MultiPL-E).
    if (suite.kind === "call" && fenceLanguage(language) !== "python") {
      return { reward: null, reason: `function-call tests run Python programs only (python or python-sci); this item's language is ${language}` };
    }
    if (suite.kind === "assert" && fenceLanguage(language) !== "python") suite = { kind: "program", test: suite.tests.join("\n"), prelude: suite.setup };
    // A whole-program test in Python (MultiPL-E's `tests`, a `test_program`) runs under the assert
    // harness, as HumanEval's `check` does: in the program's own process an always-equal
    // `__eq__` or a printed end marker would pass it. The prelude is the benchmark's: the tests
    // and the program both start with it.
    let prelude = "";
    if (suite.kind === "program" && fenceLanguage(language) === "python") {
      prelude = suite.prelude;
      suite = { kind: "assert", tests: [suite.test], setup: suite.prelude, entryPoint: null };
    }
    let sandbox: Sandbox;
    try {
      sandbox = await ctx.services.sandbox();
    } catch (e) {
      return { reward: null, reason: (e as Error).message };
    }
    // A language no backend here runs comes back from run() as a sandbox error saying what to install.
    const { code: extracted, via } = extractProgram(item.response, language, o.extract);
    const program = prelude.trim() && extracted.trim() ? `${prelude}\n${extracted}` : extracted;
    if (!program.trim()) return { reward: 0, reason: "the completion holds no program", details: { extracted_via: via } };
    // The per-test limits, shrunk when the item's deadline cannot hold every round of tests at
    // the asked limits (a deadline capped by ASSAY_MAX_DEADLINE_MS): a slow program then ends at
    // its time limit, reward 0, before the deadline could make the item null.
    const plan = planOf(suite, language, o);
    const room = ctx.deadline - Date.now() - plan.compileMs - MARGIN_MS;
    const wallMs = Math.max(200, Math.min(plan.wallMs, Math.floor(room / plan.rounds)));
    const limits = { cpuMs: Math.min(o.time_limit_ms, wallMs), wallMs, memoryMb: o.memory_mb };
    const scoring = o.scoring;
    // Waiting for a sandbox slot stops the item's clock: its deadline covers its own runs from
    // when each gets a slot, never its place in a queue shared with other items. Nor does the
    // run's wait for a CPU count: a run is charged its own time (wall less that wait) when it
    // ends; the sandbox bounds its plain wall time (sandbox/meter.ts), so the clock is not
    // stopped for ever.
    const queued = ctx.unclocked?.bind(ctx);
    const compileWallMs = o.compile_time_limit_ms;
    const run: Runner = (req, outputBytes) => {
      const going = sandbox.run({ ...req, limits: outputBytes ? { ...limits, outputBytes } : limits, signal: ctx.signal, queued, ...(compileWallMs ? { compileWallMs } : {}) });
      return ctx.unclocked ? ctx.unclocked(going, (r) => ownTimeMs(r, wallMs, plan.compileMs)) : going;
    };

    const details: TestDetail[] = suite.kind === "assert"
      ? await runAsserts(suite, program, language, run)
      : suite.kind === "program"
        ? await runProgram(suite, program, language, run)
        : await runCases(suite, program, language, run, o, ctx);

    const total = suite.kind === "assert" ? suite.tests.length : suite.kind === "program" ? 1 : suite.cases.length;
    const passed = details.filter((d) => d.status === "passed").length;
    const firstBad = details.find((d) => d.status !== "passed");
    const reward = scoring === "fraction" ? passed / total : passed === total ? 1 : 0;
    const reason =
      passed === total
        ? `passed all ${total} test(s)`
        : `passed ${passed} of ${total} test(s); test ${firstBad!.test}: ${firstBad!.status.replace("_", " ")}` +
          (firstBad!.diff ? ` (${firstBad!.diff})` : firstBad!.error ? ` (${clip(firstBad!.error, 160)})` : "");
    return { reward, reason, details: { language, format: suite.kind, extracted_via: via, passed, total, tests: details } };
  },
});

/** Time kept back from the deadline for starting runs and comparing outputs. */
const MARGIN_MS = 1500;
/** How long the tests take at most at the asked limits: rounds of concurrent runs, each a wall limit. */
function planOf(suite: Suite, language: string, o: CodeOptions): { rounds: number; wallMs: number; compileMs: number } {
  const wallMs = o.time_limit_ms * 2 + 1000;
  const compiled = isCompiled(language);
  if (suite.kind === "assert") return { rounds: 1, wallMs, compileMs: 0 };
  if (suite.kind === "program") return { rounds: 1, wallMs, compileMs: o.compile_time_limit_ms ?? compileMsOf(programLanguage(language, suite.test)) };
  const n = o.scoring === "first_failure" || compiled ? 1 : o.concurrency;
  // The compile step's own wall limit (sandbox/languages.ts), once: later tests reuse the binary.
  return { rounds: Math.max(1, Math.ceil(suite.cases.length / n)), wallMs, compileMs: o.compile_time_limit_ms ?? compileMsOf(language) };
}

/**
 * The suite of a reference, parsed once (budgetMs and verify both need it, and a GRPO group
 * shares one reference): by object identity for objects, in a bounded LRU for strings (verl's
 * JSON-string tests). Each entry remembers the max_tests it was cut to.
 */
type Parsed = { maxTests: number; suite: Suite };
const byObject = new WeakMap<object, Parsed>();
const byString = new LRUCache<string, Parsed>({ max: 512, maxSize: 64 << 20, sizeCalculation: (_v, k) => Math.max(1, k.length) });
function suiteOf(reference: unknown, maxTests: number): Suite {
  const isObject = reference !== null && typeof reference === "object";
  if (!isObject && typeof reference !== "string") return parseReference(reference, maxTests);
  const hit = isObject ? byObject.get(reference as object) : byString.get(reference as string);
  if (hit && hit.maxTests === maxTests) return hit.suite;
  const parsed = { maxTests, suite: parseReference(reference, maxTests) };
  if (isObject) byObject.set(reference as object, parsed);
  else byString.set(reference as string, parsed);
  return parsed.suite;
}

type CaseSuite = Extract<Suite, { kind: "stdio" | "call" }>;

/**
 * The most output a run may print, per stream: the sandbox's cap, raised for a test whose
 * expected output needs more (outputLimitOf). A test expecting more than this is `invalid`.
 */
export const OUTPUT_MAX_BYTES = 16 << 20;
const sizes = new WeakMap<CaseSuite, number[]>();
/**
 * Each test's expected output in bytes, once per parsed suite: a stdio test's UTF-8 bytes; a
 * call test's result as the harness writes it (Python's json.dumps: ASCII, `\uXXXX` for the
 * rest), estimated from the compact JSON, each non-ASCII unit as 6 bytes.
 */
function expectedBytesOf(suite: CaseSuite): number[] {
  let got = sizes.get(suite);
  if (!got) {
    got = suite.kind === "stdio"
      ? suite.cases.map((c) => Buffer.byteLength(c.output, "utf8"))
      : suite.cases.map((c) => {
        const j = stringifyExact(c.output);
        let n = j.length;
        for (let k = 0; k < j.length; k++) if (j.charCodeAt(k) > 127) n += 5;
        return n;
      });
    sizes.set(suite, got);
  }
  return got;
}

/**
 * A test's output cap: the sandbox's default (1 MiB) unless its expected output needs more,
 * then twice that plus 64 KiB (room for other whitespace, and for Python's `, ` and `1.0` in a
 * call's JSON), up to OUTPUT_MAX_BYTES. A correct program's output must fit, or it scores 0
 * at the cap.
 */
export function outputLimitOf(expectedBytes: number): number {
  return Math.min(OUTPUT_MAX_BYTES, Math.max(DEFAULT_LIMITS.outputBytes, 2 * expectedBytes + (64 << 10)));
}

/** Runs a request under the item's limits; `outputBytes` raises the output cap for this run. */
type Runner = (req: Omit<RunRequest, "limits" | "signal">, outputBytes?: number) => Promise<RunOutcome>;

async function runCases(
  suite: Extract<Suite, { kind: "stdio" | "call" }>,
  program: string,
  language: string,
  run: Runner,
  o: CodeOptions,
  ctx: VerifyContext,
): Promise<TestDetail[]> {
  const expected = expectedBytesOf(suite);
  const compiled = isCompiled(language);
  const limit = pLimit(o.scoring === "first_failure" || compiled ? 1 : o.concurrency);
  let failed = false;
  let compileError = false;
  let timedOut = false;
  // After a test hits the time limit the rest are not started: a program that loops on one
  // input would otherwise spend the item's whole deadline, and the item would end unscored.
  const stop = () => ctx.signal.aborted || compileError || timedOut || (o.scoring === "first_failure" && failed);
  const one = async (i: number): Promise<TestDetail | undefined> => {
    if (stop()) return undefined;
    const d = suite.kind === "stdio"
      ? await stdioCase(suite.cases[i], i, program, language, run, o, outputLimitOf(expected[i]))
      : await callCase(suite.fn, suite.cases[i], i, program, language, run, o, outputLimitOf(expected[i]), suite.wrapped);
    failed ||= d.status !== "passed";
    compileError ||= d.status === "compile_error";
    timedOut ||= d.status === "time_limit";
    return d;
  };
  const got = await Promise.all(suite.cases.map((_, i) => limit(() => one(i))));
  if (ctx.signal.aborted) throw new MachineryError("scoring was cut off (deadline or client gone)");
  // Tests never run (stopped early) count as failed with the reason that stopped them.
  return got.map((d, i): TestDetail =>
    d ?? (compileError
      ? { test: i, status: "compile_error", ms: 0, error: "not run: the program does not compile" }
      : timedOut
        ? { test: i, status: "time_limit", ms: 0, error: "not run: an earlier test hit the time limit" }
        : { test: i, status: "failed", ms: 0, error: "not run: stopped at the first failure" }));
}

/** JSON for details, with BigInts written as their digits. */
const show = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x)) ?? String(v);

const lastLine = (s: string) => s.trim().split("\n").slice(-1)[0] ?? "";

/** What a run that did not finish says: the compiler's time limit by the compiler's name, else its stderr. */
function failureText(r: RunOutcome, language: string): string {
  if (r.status === "compile_error" && r.compile?.status === "time_limit") {
    const compiler = LANGUAGES[canonicalLanguage(language) ?? language]?.compile?.argv[0] ?? "the compiler";
    return `the compiler (${compiler}) ran out of time after ${Math.round(r.compile.cpuMs ?? r.compile.wallMs)} ms; raise options.compile_time_limit_ms if the program is meant to compile that long`;
  }
  return r.compile?.stderr || r.stderr;
}

/** One stdin/stdout test: the program's stdout against the expected output, compared here. */
async function stdioCase(c: { input: string; output: string }, i: number, program: string, language: string, run: Runner, o: CodeOptions, outputBytes: number): Promise<TestDetail> {
  const r = await run({ language, code: program, stdin: c.input }, outputBytes);
  const s = statusOf(r);
  if (s) return { test: i, status: s, ...timesOf(r), error: clip(failureText(r, language)) };
  if (r.exitCode !== 0) return { test: i, status: "runtime_error", ...timesOf(r), error: clip(`exit code ${r.exitCode}: ${messageOf(r.stderr) || lastLine(r.stderr)}`) };
  if (outputsMatch(r.stdout, c.output, o.compare, o.float_tolerance)) return { test: i, status: "passed", ...timesOf(r) };
  return { test: i, status: "failed", ...timesOf(r), diff: shortDiff(r.stdout, c.output) };
}

/**
 * One function-call test: the harness calls the function and reports its return value as data.
 * `wrapped`: the reference is APPS's/TACO's shape, whose expected outputs come wrapped in a
 * one-element list; their checker also passes the list's element (Suite's `wrapped`).
 */
async function callCase(fn: string, c: { args: unknown[]; output: unknown }, i: number, program: string, language: string, run: Runner, o: CodeOptions, outputBytes: number, wrapped: boolean): Promise<TestDetail> {
  const nonce = randomBytes(12).toString("hex");
  const r = await run({ language, code: HARNESS.call, files: { "solution.py": program }, stdin: stringifyExact({ fn, args: c.args, nonce }) }, outputBytes);
  const s = statusOf(r);
  const rec = lastRecord(r.stdout, `\x1eASSAY:${nonce} `);
  if (s) return { test: i, status: s, ...timesOf(r), error: clip(r.stderr) };
  if (!rec) return { test: i, status: "runtime_error", ...timesOf(r), error: clip(`no result (exit code ${r.exitCode}) ${lastLine(r.stderr)}`) };
  if (!rec.ok) return { test: i, status: "runtime_error", ...timesOf(r), error: clip(String(rec.error)) };
  const want = c.output;
  const tol = o.float_tolerance;
  const ok = valuesMatch(rec.result, want, tol) || (wrapped && Array.isArray(want) && want.length === 1 && valuesMatch(rec.result, want[0], tol));
  if (ok) return { test: i, status: "passed", ...timesOf(r) };
  const set = isSetResult(rec.result) ? " (a set: Python's == never equals a set to a list)" : "";
  return { test: i, status: "failed", ...timesOf(r), diff: `got ${clip(show(rec.result), 120)}, expected ${clip(show(want), 120)}${set}` };
}

/**
 * The first stack frame outside System.* in mono's trace of a failed Debug.Assert (the test's
 * own method), or null. The indent is spaces and tabs only: `^\s*` under the m flag was retried
 * at every line start of a run of blank lines, each try scanning the rest of the run, quadratic
 * in the program's stderr on the event loop (32K newlines: ~1.8 s).
 */
export function debugAssertFrame(stderr: string): string | null {
  return /^[ \t]*at (?!System\.)(.+?)(?: \[0x[0-9a-f]+\])?(?: in .*)?$/m.exec(stderr)?.[1] ?? null;
}

/**
 * What a failed run's stderr says went wrong, in one line: the last line that names an error
 * (`TypeError: ...`, `AssertionError [ERR_ASSERTION]: ...`, `Exception in thread "main" ...`,
 * `Assertion failed`), with the lines of its message that follow when it ends in a colon (Node's
 * assert puts the values there); else the last line that is not a stack frame. A thrown error is
 * named, not where it was. The isolate's frames also give the program's line, added as "(line N)".
 */
export function messageOf(stderr: string): string {
  const lines = stderr.slice(-20_000).split("\n").map((l) => l.trimEnd());
  const frame = /^\s+(at\s|File\s|\.\.\.|\^)|^\s{2,}\S|^Traceback \(|^Node\.js v\d/;
  const header = /^(Uncaught\s+)?[\w$.]*(Error|Exception)\b|^Exception in thread|^Assertion failed|panicked at|^error(\[\w+\])?: /;
  let i = lines.length - 1;
  // rustc ends with "error: aborting due to ..." after the error that matters.
  while (i >= 0 && (!header.test(lines[i]) || /^error: aborting due to/.test(lines[i]))) i--;
  if (i < 0) for (i = lines.length - 1; i >= 0 && (!lines[i].trim() || frame.test(lines[i])); i--);
  if (i < 0) return "";
  let text = lines[i].trim();
  let j = i + 1;
  if (text.endsWith(":")) {
    for (let n = 0; j < lines.length && n < 8 && !/^\s+at\s/.test(lines[j]); j++) {
      if (lines[j].trim()) { text += " " + lines[j].trim(); n++; }
    }
  }
  // The isolate's frames name the program's line: the first frame in the program's code.
  for (let k = j; k < lines.length && k < j + 12 && /^\s+at\s/.test(lines[k]); k++) {
    const at = /<anonymous>:(\d+):\d+\)?$/.exec(lines[k]);
    if (at) return `${text} (line ${at[1]})`;
  }
  return text;
}

/**
 * Whole-program tests run in the test flavour of the language where the benchmark's test needs
 * one: Go's `func TestX(t *testing.T)` through `go test`, Rust's `#[test]` through `rustc --test`.
 */
export function programLanguage(language: string, test: string): string {
  const c = canonicalLanguage(language) ?? language;
  if (c === "go" && /\*testing\.T\b/.test(test)) return "go_test";
  if (c === "rust" && /#\[test\]/.test(test)) return "rust_test";
  if (c === "csharp" && /\bDebug\.Assert\s*\(/.test(test)) return "csharp_test";
  return c;
}

/**
 * The end marker: a line printed after the benchmark's test code has run to its end, with a
 * per-run nonce. A program that exits early with status 0 (process.exit(0), sys.exit(0),
 * System.exit(0) inside the solution) never prints it, so it fails, where the benchmark's own
 * harness would pass it. Interpreted languages print it from a statement after the test code;
 * Java from a main class of ours that calls the test's; Go's test binary runs with
 * -test.paniconexit0 (os.Exit(0) in a test panics) and Rust's must print libtest's summary.
 * C, C++ and C# have the benchmark's verdict only: the exit status (see the README's limits).
 */
function assemble(lang: string, prelude: string, program: string, test: string, marker: string): { code: string; ends: (stdout: string) => boolean } {
  const join = (...parts: string[]) => parts.filter((x) => x.trim() !== "").join("\n");
  const printed = (stdout: string) => stdout.endsWith("\n" + marker + "\n");
  const line = JSON.stringify("\n" + marker + "\n");
  switch (lang) {
    case "javascript":
    case "typescript":
      return { code: join(prelude, program, test, `;process.stdout.write(${line});`), ends: printed };
    case "python":
    case "python-sci":
      return { code: join(prelude, program, test, `print(${JSON.stringify("\n" + marker)}, flush=True)`), ends: printed };
    case "java": {
      const main = LANGUAGES.java.main!(test);
      const own = `AssayMain${marker.slice(-8)}`;
      // The test's main class stops being public (one public class a file): ours is, and runs it.
      const demoted = test.replace(new RegExp(`\\bpublic\\s+((?:final\\s+)?class\\s+${main}\\b)`), "$1");
      const wrapper = `public class ${own} { public static void main(String[] a) throws Throwable { ${main}.main(a); System.out.flush(); System.out.print(${line}); System.out.flush(); } }`;
      return { code: join(prelude, program, demoted, wrapper), ends: printed };
    }
    case "rust_test":
      return { code: join(prelude, program, test), ends: (out) => /^test result: ok\. \d+ passed; 0 failed/m.test(out) };
    default:
      return { code: join(prelude, program, test), ends: () => true };
  }
}

/**
 * A whole-program test (HumanEval-X, MultiPL-E): the prelude, the solution and the benchmark's
 * test code, compiled and run as one program. It passes when it ends with exit status 0 (and,
 * in JavaScript, no console.assert failed, which Node prints without changing the status) having
 * run to the end of the test code; what it prints is free.
 */
async function runProgram(suite: Extract<Suite, { kind: "program" }>, program: string, language: string, run: Runner): Promise<TestDetail[]> {
  const lang = programLanguage(language, suite.test);
  const marker = `ASSAY-END:${randomBytes(12).toString("hex")}`;
  const { code, ends } = assemble(lang, suite.prelude, program, suite.test, marker);
  const r = await run({ language: lang, code });
  const s = statusOf(r);
  if (s) {
    if (s === "time_limit" && r.status === "compile_error") return [{ test: 0, status: s, ...timesOf(r), error: clip(failureText(r, lang)) }];
    const said = s === "compile_error" ? r.compile?.stderr ?? r.stderr : r.stderr;
    return [{ test: 0, status: s, ...timesOf(r), error: clip(messageOf(said) || r.message || said) }];
  }
  const asserted = lang === "javascript" ? /^Assertion failed.*(?:\n.*)?/m.exec(r.stderr) : null;
  if (asserted) return [{ test: 0, status: "failed", ...timesOf(r), error: clip(messageOf(asserted[0])) }];
  // C#: a failed Debug.Assert is printed (MONO_TRACE_LISTENER) and mono goes on to exit 0.
  // (MultiPL-E's eval_cs.py reads the same frame: "System.Diagnostics.DefaultTraceListener.Fail".)
  if (lang === "csharp_test" && /System\.Diagnostics\.DefaultTraceListener\.Fail\b/.test(r.stderr)) {
    const at = debugAssertFrame(r.stderr);
    return [{ test: 0, status: "failed", ...timesOf(r), error: clip(`Debug.Assert failed${at ? ` at ${at}` : ""}`) }];
  }
  if (r.exitCode !== 0) {
    const said = messageOf(r.stderr) || messageOf(r.stdout);
    return [{ test: 0, status: "failed", ...timesOf(r), error: clip(`exit code ${r.exitCode}${said ? `: ${said}` : ""}`) }];
  }
  if (!ends(r.stdout)) {
    return [{ test: 0, status: "failed", ...timesOf(r), error: "the program ended before the tests ran to their end (an early exit with status 0)" }];
  }
  return [{ test: 0, status: "passed", ...timesOf(r) }];
}

const LIMIT_STATUSES = new Set(["time_limit", "memory_limit"]);

/**
 * Assert suites run under harness/asserts.py: the tests and their expected values stay in a
 * trusted process, the program runs in another that only receives call arguments and returns
 * plain data, and results come back under a per-run nonce the program never sees.
 */
async function runAsserts(suite: Extract<Suite, { kind: "assert" }>, program: string, language: string, run: Runner): Promise<TestDetail[]> {
  const nonce = randomBytes(12).toString("hex");
  const r = await run({
    language,
    code: HARNESS.assert,
    files: { "solution.py": program },
    stdin: JSON.stringify({ tests: suite.tests, setup: suite.setup, entry_point: suite.entryPoint, nonce }),
  });
  const s = statusOf(r);
  const recs = records(r.stdout, `\x1eASSAY:${nonce} `);
  const early = recs.find((x) => x.t === -1 && x.error);
  return suite.tests.map((_, t) => {
    const mine = recs.filter((x) => x.t === t);
    const err = mine.find((x) => x.error);
    const ended = mine.some((x) => x.end === true);
    if (early) return { test: t, status: "runtime_error", ...timesOf(r), error: clip(String(early.error)) };
    // The harness names a limit that ended the program's process (time_limit, memory_limit).
    const limit = err && LIMIT_STATUSES.has(err.status) ? (err.status as TestStatus) : null;
    if (err) return { test: t, status: limit ?? (/^AssertionError/.test(err.error) ? "failed" : "runtime_error"), ...timesOf(r), error: clip(String(err.error)) };
    // The harness writes a test's end record only after every assert of it ran true: it cannot
    // be forged without the nonce, so a test that ended passed even if a later one crashed.
    if (ended) return { test: t, status: "passed", ...timesOf(r) };
    return { test: t, status: s ?? "runtime_error", ...timesOf(r), error: clip(s ? r.stderr : `the tests did not run to their end (exit code ${r.exitCode}) ${r.stderr.trim().split("\n").slice(-1)[0] ?? ""}`) };
  });
}

export default code;
