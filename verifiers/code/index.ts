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
import { MachineryError, type Verifier, type VerifyContext } from "../../src/core/types.js";
import type { RunOutcome, RunRequest, Sandbox } from "../../sandbox/types.js";
import { canonicalLanguage } from "../../sandbox/languages.js";
import { PACKAGE_ROOT } from "../../sandbox/paths.js";
import { extractProgram, type ExtractMode } from "./extract.js";
import { outputsMatch, shortDiff, valuesMatch, type CompareMode } from "./compare.js";
import { parseReference, type Suite } from "./tests.js";

export interface CodeOptions {
  language?: string;
  extract?: ExtractMode;
  compare?: CompareMode;
  float_tolerance?: number;
  scoring?: "fraction" | "all" | "first_failure";
  /** CPU-time limit per test, ms (wall limit is twice that plus a second). */
  time_limit_ms?: number;
  memory_mb?: number;
  /** Tests run at once for one item (compiled languages run in order, to reuse the binary). */
  concurrency?: number;
  max_tests?: number;
}

// Read from the package's sources (tsc does not copy .py files into dist/).
const HARNESS = {
  call: readFileSync(join(PACKAGE_ROOT, "verifiers/code/harness/fncall.py"), "utf8"),
  assert: readFileSync(join(PACKAGE_ROOT, "verifiers/code/harness/asserts.py"), "utf8"),
};

type TestStatus = "passed" | "failed" | "runtime_error" | "time_limit" | "memory_limit" | "output_limit" | "compile_error";

interface TestDetail {
  test: number;
  status: TestStatus;
  ms: number;
  diff?: string;
  error?: string;
}

const clip = (s: string, n = 300) => (s.length > n ? s.slice(0, n) + "…" : s);

function statusOf(o: RunOutcome): TestStatus | null {
  switch (o.status) {
    case "finished":
      return null;
    case "sandbox_error":
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
    return JSON.parse(stdout.slice(at + 1 + marker.length, end < 0 ? undefined : end));
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

async function pool<T>(n: number, count: number, fn: (i: number) => Promise<T>, stop: () => boolean): Promise<(T | undefined)[]> {
  const results: (T | undefined)[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count && !stop()) {
      const i = next++;
      results[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, count) }, worker));
  return results;
}

export const code: Verifier<unknown, CodeOptions> = {
  name: "code",
  description:
    "Runs the completion's program against unit tests in a sandbox: stdin/stdout pairs, function calls (fn_name, class Solution) or assert scripts (HumanEval/MBPP).",
  referenceSchema: {
    oneOf: [
      { type: "string", minLength: 1 },
      { type: "object" },
    ],
  },
  optionsSchema: {
    additionalProperties: false,
    properties: {
      language: { type: "string", default: "python" },
      extract: { enum: ["last_block", "first_block", "full"], default: "last_block" },
      compare: { enum: ["exact", "lines", "tokens", "float"], default: "lines" },
      float_tolerance: { type: "number", minimum: 0, maximum: 1, default: 1e-6 },
      scoring: { enum: ["fraction", "all", "first_failure"], default: "fraction" },
      time_limit_ms: { type: "integer", minimum: 100, maximum: 60000, default: 4000 },
      memory_mb: { type: "integer", minimum: 32, maximum: 8192, default: 512 },
      concurrency: { type: "integer", minimum: 1, maximum: 64, default: 4 },
      max_tests: { type: "integer", minimum: 1, maximum: 10000, default: 1000 },
    },
  },
  async verify(item, ctx) {
    const o = item.options ?? {};
    const ref = item.reference as any;
    const language = canonicalLanguage(o.language ?? (typeof ref?.language === "string" ? ref.language : "python")) ?? o.language ?? "python";
    const suite = parseReference(item.reference, o.max_tests ?? 1000);
    if (suite.kind !== "stdio" && language !== "python") {
      return { reward: null, reason: `${suite.kind === "call" ? "function-call" : "assert"} tests run Python programs only; this item's language is ${language}` };
    }
    let sandbox: Sandbox;
    try {
      sandbox = await ctx.services.sandbox();
    } catch (e) {
      return { reward: null, reason: (e as Error).message };
    }
    // A language no backend here runs comes back from run() as a sandbox error saying what to install.
    const { code: program, via } = extractProgram(item.response, language, o.extract ?? "last_block");
    if (!program.trim()) return { reward: 0, reason: "the completion holds no program", details: { extracted_via: via } };
    const cpu = o.time_limit_ms ?? 4000;
    const limits = { cpuMs: cpu, wallMs: cpu * 2 + 1000, memoryMb: o.memory_mb ?? 512 };
    const scoring = o.scoring ?? "fraction";
    const run = (req: Omit<RunRequest, "limits" | "signal">) => sandbox.run({ ...req, limits, signal: ctx.signal });

    const details: TestDetail[] = suite.kind === "assert"
      ? await runAsserts(suite, program, run)
      : await runCases(suite, program, language, run, o, scoring, ctx);

    const total = suite.kind === "assert" ? suite.tests.length : suite.cases.length;
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
};

type Runner = (req: Omit<RunRequest, "limits" | "signal">) => Promise<RunOutcome>;

async function runCases(
  suite: Extract<Suite, { kind: "stdio" | "call" }>,
  program: string,
  language: string,
  run: Runner,
  o: CodeOptions,
  scoring: string,
  ctx: VerifyContext,
): Promise<TestDetail[]> {
  const compiled = language === "cpp";
  const n = scoring === "first_failure" || compiled ? 1 : o.concurrency ?? 4;
  let failed = false;
  let compileError: TestDetail | null = null;
  let timedOut = false;
  const tol = o.float_tolerance ?? 1e-6;
  const one = async (i: number): Promise<TestDetail> => {
    let d: TestDetail;
    if (suite.kind === "stdio") {
      const c = suite.cases[i];
      const r = await run({ language, code: program, stdin: c.input });
      const s = statusOf(r);
      if (s) d = { test: i, status: s, ms: r.wallMs, error: clip(r.compile?.stderr || r.stderr) };
      else if (r.exitCode !== 0) d = { test: i, status: "runtime_error", ms: r.wallMs, error: clip(`exit code ${r.exitCode}: ${r.stderr.trim().split("\n").slice(-1)[0] ?? ""}`) };
      else if (outputsMatch(r.stdout, c.output, o.compare ?? "lines", tol)) d = { test: i, status: "passed", ms: r.wallMs };
      else d = { test: i, status: "failed", ms: r.wallMs, diff: shortDiff(r.stdout, c.output) };
    } else {
      const c = suite.cases[i];
      const nonce = randomBytes(12).toString("hex");
      const r = await run({
        language: "python",
        code: HARNESS.call,
        files: { "solution.py": program },
        stdin: JSON.stringify({ fn: suite.fn, args: c.args, nonce }),
      });
      const s = statusOf(r);
      const rec = lastRecord(r.stdout, `\x1eASSAY:${nonce} `);
      if (s) d = { test: i, status: s, ms: r.wallMs, error: clip(r.stderr) };
      else if (!rec) d = { test: i, status: "runtime_error", ms: r.wallMs, error: clip(`no result (exit code ${r.exitCode}) ${r.stderr.trim().split("\n").slice(-1)[0] ?? ""}`) };
      else if (!rec.ok) d = { test: i, status: "runtime_error", ms: r.wallMs, error: clip(String(rec.error)) };
      else {
        const want = c.output;
        // APPS/TACO wrap call-based outputs in a one-element list.
        const ok = valuesMatch(rec.result, want, tol) || (Array.isArray(want) && want.length === 1 && valuesMatch(rec.result, want[0], tol));
        d = ok ? { test: i, status: "passed", ms: r.wallMs } : { test: i, status: "failed", ms: r.wallMs, diff: `got ${clip(JSON.stringify(rec.result), 120)}, expected ${clip(JSON.stringify(want), 120)}` };
      }
    }
    if (d.status !== "passed") failed = true;
    if (d.status === "compile_error") compileError = d;
    if (d.status === "time_limit") timedOut = true;
    return d;
  };
  // After a test hits the time limit the rest are not started: a program that loops on one
  // input would otherwise spend the item's whole deadline, and the item would end unscored.
  const stop = () => ctx.signal.aborted || compileError !== null || timedOut || (scoring === "first_failure" && failed);
  const got = await pool(n, suite.cases.length, one, stop);
  if (ctx.signal.aborted) throw new MachineryError("scoring was cut off (deadline or client gone)");
  // Tests never run (stopped early) count as failed with the reason that stopped them.
  return Array.from(got, (d, i): TestDetail =>
    d ?? (compileError
      ? { test: i, status: "compile_error", ms: 0, error: "not run: the program does not compile" }
      : timedOut
        ? { test: i, status: "time_limit", ms: 0, error: "not run: an earlier test hit the time limit" }
        : { test: i, status: "failed", ms: 0, error: "not run: stopped at the first failure" }));
}

async function runAsserts(suite: Extract<Suite, { kind: "assert" }>, program: string, run: Runner): Promise<TestDetail[]> {
  const nonce = randomBytes(12).toString("hex");
  const r = await run({
    language: "python",
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
    const bad = mine.find((x) => x.k !== undefined && x.ok !== true);
    const ended = mine.some((x) => x.end === true);
    if (early) return { test: t, status: "runtime_error", ms: r.wallMs, error: clip(String(early.error)) };
    if (err) return { test: t, status: /^AssertionError/.test(err.error) ? "failed" : "runtime_error", ms: r.wallMs, error: clip(String(err.error)) };
    if (bad) return { test: t, status: "failed", ms: r.wallMs, diff: clip(String(bad.why ?? "assertion is false"), 200) };
    // The harness writes a test's end record only after every assert of it ran true: it cannot
    // be forged without the nonce, so a test that ended passed even if a later one crashed.
    if (ended) return { test: t, status: "passed", ms: r.wallMs };
    return { test: t, status: s ?? "runtime_error", ms: r.wallMs, error: clip(s ? r.stderr : `the tests did not run to their end (exit code ${r.exitCode}) ${r.stderr.trim().split("\n").slice(-1)[0] ?? ""}`) };
  });
}

export default code;
