/**
 * The benchmarks' own harnesses against Assay (issue 37): given HumanEval and MBPP files a user
 * downloads, scores every canonical solution through the code verifier (on docker or bwrap) and
 * runs the benchmark's own harness bare on the same tasks (bench/harness/reference.py:
 * openai/human-eval's check_correctness, copied verbatim), then reports how often the two agree
 * and lists every task where they do not. HumanEval-X's own rules are replayed by
 * bench/humaneval-x.ts.
 *
 *   node --import tsx bench/harness-agreement.ts [--backend docker|bwrap] [--limit N] \
 *     [--humaneval HumanEval.jsonl.gz] [--mbpp mbpp.jsonl]
 *
 * HumanEval: https://github.com/openai/human-eval (data/HumanEval.jsonl.gz); MBPP:
 * https://github.com/google-research/google-research (mbpp/mbpp.jsonl), all 974 tasks shipped
 * in bench/data/mbpp.jsonl (CC BY 4.0, see bench/data/README.md).
 */
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { spawn } from "node:child_process";
import { join } from "node:path";
import pLimit from "p-limit";
import { code } from "../verifiers/code/index.js";
import { verifyDirect, testServices, fakeSandbox } from "../tests/helpers.js";
import type { Sandbox } from "../sandbox/types.js";
import { root } from "./lib.js";

export type Kind = "humaneval" | "mbpp";

type Row = Record<string, unknown> & { task_id: string | number };

export interface Agreement {
  kind: Kind;
  n: number;
  /** Tasks the benchmark's own harness passes. */
  harnessPassed: number;
  /** Tasks Assay scores 1. */
  assayOnes: number;
  /** Tasks where both say the same (harness passed and reward 1, or failed and reward 0). */
  agree: number;
  disagreements: { task_id: string; harness: string; reward: number | null; reason: string }[];
  seconds: { harness: number; assay: number };
}

export function readRows(file: string, limit = Infinity): Row[] {
  const raw = readFileSync(file);
  const text = file.endsWith(".gz") ? gunzipSync(raw).toString("utf8") : raw.toString("utf8");
  return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as Row).slice(0, limit);
}

/** The item Assay scores for one task's canonical solution, in the benchmark's shape. */
export function itemOf(kind: Kind, row: Row): { response: string; reference: Record<string, unknown>; options: Record<string, unknown> } {
  const options = { language: "python", extract: "full", benchmark: kind };
  if (kind === "humaneval") {
    return { response: String(row.prompt) + String(row.canonical_solution), reference: { test: row.test, entry_point: row.entry_point }, options };
  }
  return { response: String(row.code), reference: { test_list: row.test_list, test_setup_code: row.test_setup_code ?? "" }, options };
}

/** The benchmark's own harness, bare, on each row: task_id -> its result ("passed", "failed: ...", "timed out"). */
export function runHarness(kind: Kind, file: string, limit = Infinity): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    const args = [join(root, "bench", "harness", "reference.py"), kind, file, ...(Number.isFinite(limit) ? [String(limit)] : [])];
    const p = spawn("python3", args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("error", reject);
    p.on("close", (c) => {
      if (c !== 0) return reject(new Error(`the reference harness exited ${c}: ${err.slice(-500)}`));
      const m = new Map<string, string>();
      for (const line of out.split("\n").filter(Boolean)) {
        const r = JSON.parse(line) as { task_id: string | number; result: string };
        m.set(String(r.task_id), r.result);
      }
      resolve(m);
    });
  });
}

/** Scores every row's canonical solution through Assay and the benchmark's harness; how far they agree. */
export async function agreement(kind: Kind, file: string, sandbox: Sandbox, limit = Infinity, concurrency = 2): Promise<Agreement> {
  const rows = readRows(file, limit);
  let t0 = performance.now();
  const harness = await runHarness(kind, file, limit);
  const harnessS = (performance.now() - t0) / 1000;
  const services = testServices({ sandbox: fakeSandbox(sandbox) });
  const run = pLimit(concurrency);
  t0 = performance.now();
  const scored = await Promise.all(rows.map((row) => run(async () => {
    const it = itemOf(kind, row);
    try {
      const r = await verifyDirect(code, it, { services, deadline: Date.now() + 120_000 });
      return { id: String(row.task_id), reward: r.reward, reason: r.reason };
    } catch (e) {
      return { id: String(row.task_id), reward: null, reason: (e as Error).message };
    }
  })));
  const assayS = (performance.now() - t0) / 1000;
  const out: Agreement = { kind, n: rows.length, harnessPassed: 0, assayOnes: 0, agree: 0, disagreements: [], seconds: { harness: harnessS, assay: assayS } };
  for (const s of scored) {
    const h = harness.get(s.id) ?? "missing";
    const passed = h === "passed";
    out.harnessPassed += passed ? 1 : 0;
    out.assayOnes += s.reward === 1 ? 1 : 0;
    if ((passed && s.reward === 1) || (!passed && s.reward === 0)) out.agree++;
    else out.disagreements.push({ task_id: s.id, harness: h, reward: s.reward, reason: s.reason });
  }
  return out;
}

export function report(a: Agreement, backend: string): string {
  const lines = [
    `${a.kind} (${backend}): ${a.n} tasks; the benchmark's harness passes ${a.harnessPassed}, Assay scores ${a.assayOnes} of them 1; agreement ${a.agree}/${a.n}` +
      ` (harness ${a.seconds.harness.toFixed(1)} s bare, Assay ${a.seconds.assay.toFixed(1)} s)`,
  ];
  for (const d of a.disagreements) lines.push(`  ${d.task_id}: harness ${d.harness.slice(0, 120)}; Assay reward ${d.reward}: ${d.reason.slice(0, 240)}`);
  return lines.join("\n");
}

async function main() {
  const args = process.argv.slice(2);
  const opt = (name: string) => {
    const i = args.indexOf(name);
    return i < 0 ? undefined : args[i + 1];
  };
  const backend = opt("--backend") ?? "docker";
  const limit = Number(opt("--limit") ?? Infinity);
  const files: [Kind, string][] = [];
  for (const k of ["humaneval", "mbpp"] as const) if (opt(`--${k}`)) files.push([k, opt(`--${k}`)!]);
  if (!files.length) {
    console.error("usage: bench/harness-agreement.ts [--backend docker|bwrap] [--limit N] [--humaneval HumanEval.jsonl.gz] [--mbpp mbpp.jsonl]");
    process.exit(2);
  }
  const { openBackend } = await import("../tests/sandboxes.js");
  const sandbox = await openBackend(backend, 2);
  try {
    for (const [kind, file] of files) console.log(report(await agreement(kind, file, sandbox, limit), backend));
  } finally {
    await sandbox.close();
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
