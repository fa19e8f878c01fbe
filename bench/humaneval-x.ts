/**
 * HumanEval-X against CodeGeeX's own harness (issue 37): given the files a user downloads from
 * THUDM/CodeGeeX (codegeex/benchmark/humaneval-x/<lang>/data/humaneval_<lang>.jsonl.gz), scores
 * every canonical solution through the code verifier, building each item as CodeGeeX's own
 * harness builds its program (codegeex/benchmark/evaluate_humaneval_x.py,
 * process_humaneval_test), runs CodeGeeX's harness bare on the same tasks in the sandbox images'
 * toolchains without network (bench/harness/humaneval_x_reference.py), and reports per language
 * how often the two agree and every task where they do not.
 *
 *   node --import tsx bench/humaneval-x.ts --backend docker|bwrap [--every K] [--limit N] \
 *     [--go-evaluation DIR] FILE.jsonl.gz...
 *
 * --every K scores the documented sample of every K-th task (task index % K == 0);
 * --go-evaluation names the folder with CodeGeeX's go.mod and vendor.tar.gz
 * (codegeex/benchmark/humaneval-x/go/evaluation), which its Go harness runs in.
 */
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import pLimit from "p-limit";
import { code } from "../verifiers/code/index.js";
import { verifyDirect, testServices, fakeSandbox } from "../tests/helpers.js";
import { CompositeSandbox } from "../sandbox/index.js";
import { recipeFor, imageTag } from "../sandbox/images.js";
import type { Sandbox } from "../sandbox/types.js";
import { root } from "./lib.js";

// CodeGeeX's IMPORT_HELPER["cpp"] (codegeex/benchmark/utils.py), added where the prompt lacks them.
const CPP_HELPERS = ["#include<stdlib.h>", "#include<algorithm>", "#include<math.h>", "#include<stdio.h>", "#include<vector>", "#include<string>", "#include<climits>", "#include<cstring>", "#include<iostream>"];
const PY_HELPERS = ["import math", "import re", "import sys", "import copy", "import datetime", "import itertools", "import collections", "import heapq", "import statistics", "import functools", "import hashlib", "import numpy", "import numpy as np", "import string", "from typing import *", "from collections import *"];
const GO_HELPERS = ["math", "strings", "fmt", "strconv", "time", "bytes", "regexp", "sort", "math/rand", "crypto/md5"];

export type Row = { task_id: string; prompt: string; canonical_solution: string; test: string; declaration?: string; import?: string; test_setup?: string };

/** The item for one row, as process_humaneval_test puts the program together. */
export function itemOf(row: Row): { language: string; response: string; reference: Record<string, string> } {
  const lang = row.task_id.split("/")[0].toLowerCase();
  const code = row.canonical_solution;
  switch (lang) {
    case "cpp": {
      const setup = CPP_HELPERS.filter((s) => !row.prompt.includes(s)).join("\n");
      return { language: "cpp", response: setup + "\n" + row.prompt + code, reference: { test: row.test } };
    }
    case "java":
      return { language: "java", response: row.prompt + code, reference: { test: row.test } };
    case "javascript":
    case "js":
      return { language: "javascript", response: row.prompt + code, reference: { test: row.test } };
    case "go": {
      const prompt = row.prompt.replace(row.import ?? "", "");
      const others = GO_HELPERS.filter((p) => !(row.test_setup ?? "").includes(p) && code.includes(p.split("/").at(-1) + ".")).map((p) => `"${p}"`);
      const imports = others.length ? "import (\n" + others.map((p) => p + "\n").join("    ") + ")\n" : "";
      return { language: "go", response: imports + prompt + code, reference: { test: row.test, test_setup: row.test_setup ?? "" } };
    }
    case "python": {
      // process_humaneval_test keeps the solution's indented lines up to the first top-level one.
      const body: string[] = [];
      for (const line of code.split("\n")) {
        if (line.trim() && line[0] !== " " && line[0] !== "\t") break;
        body.push(line);
      }
      // The test ends with its own `check(<entry point>)` call: an assert suite with no entry point.
      return { language: "python-sci", response: PY_HELPERS.join("\n") + "\n" + row.prompt + body.join("\n"), reference: { test: row.test } };
    }
    case "rust":
      return { language: "rust", response: "\nfn main(){ \n } \n" + (row.declaration ?? "") + row.prompt + code, reference: { test: row.test } };
    default:
      throw new Error(`${row.task_id}: language ${lang} is not HumanEval-X's`);
  }
}

// The sandbox image whose toolchain CodeGeeX's harness runs in, per language of its files.
const IMAGE: Record<string, string> = { cpp: "cpp", java: "java", js: "typescript", javascript: "typescript", go: "go", python: "python-sci", rust: "rust" };

export interface Sample {
  /** Every K-th task (task index % K == 0) ... */
  every: number;
  /** ... then the first N of those. */
  limit: number;
  /** The folder with CodeGeeX's go.mod and vendor.tar.gz (its Go harness runs in that module). */
  goEvaluation?: string;
}

export function readRows(file: string, s: Sample): Row[] {
  const raw = readFileSync(file);
  const text = file.endsWith(".gz") ? gunzipSync(raw).toString("utf8") : raw.toString("utf8");
  return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as Row).filter((_, i) => i % s.every === 0).slice(0, s.limit);
}

export type BareResult = { passed: boolean | null; result: string };

/** CodeGeeX's own harness, bare, on the sample: task_id -> its result (passed null where it cannot run). */
export function bare(file: string, s: Sample): { results: Map<string, BareResult>; seconds: number } {
  const t0 = performance.now();
  const lang = readRows(file, { every: 1, limit: 1 })[0].task_id.split("/")[0].toLowerCase();
  const image = imageTag(recipeFor(IMAGE[lang])!);
  const p = spawnSync("python3", [join(root, "bench", "harness", "humaneval_x_reference.py"), file, "--image", image, "--every", String(s.every),
    ...(Number.isFinite(s.limit) ? ["--limit", String(s.limit)] : []), ...(s.goEvaluation ? ["--go-evaluation", s.goEvaluation] : [])], { encoding: "utf8", maxBuffer: 1 << 28 });
  if (p.status !== 0) throw new Error(`CodeGeeX's harness exited ${p.status}: ${p.stderr.slice(-500)}`);
  const results = new Map<string, BareResult>();
  for (const line of p.stdout.split("\n").filter(Boolean)) {
    const r = JSON.parse(line) as BareResult & { task_id: string };
    results.set(r.task_id, { passed: r.passed, result: r.result });
  }
  return { results, seconds: (performance.now() - t0) / 1000 };
}

export interface LanguageAgreement {
  lang: string;
  n: number;
  /** Tasks CodeGeeX's harness could run bare here, and of those the ones it passes. */
  ran: number;
  harnessPassed: number;
  assayOnes: number;
  /** Tasks run bare where both say the same (passed and reward 1, or failed and reward 0). */
  agree: number;
  /** Every task where the two differ, or Assay's reward is not 1. */
  listed: { task_id: string; harness: string; reward: number | null; reason: string }[];
  seconds: { bare: number; assay: number; assayCpu: number };
}

/** One file's canonical solutions through Assay (on `sandbox`) and through CodeGeeX's harness bare. */
export async function agreement(file: string, sandbox: Sandbox, s: Sample, concurrency = 2): Promise<LanguageAgreement> {
  const rows = readRows(file, s);
  const lang = rows[0].task_id.split("/")[0].toLowerCase();
  const harness = bare(file, s);
  const services = testServices({ sandbox: fakeSandbox(sandbox) });
  const run = pLimit(concurrency);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const results = await Promise.all(rows.map((row) => run(async () => {
    const it = itemOf(row);
    try {
      // `full`: the response is the program itself (no fenced block to pick).
      const r = await verifyDirect(code, { response: it.response, reference: it.reference, options: { language: it.language, extract: "full", benchmark: "humaneval-x" } }, { services, deadline: Date.now() + 120_000 });
      return { id: row.task_id, reward: r.reward, reason: r.reason };
    } catch (e) {
      return { id: row.task_id, reward: null, reason: (e as Error).message };
    }
  })));
  const assay = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const out: LanguageAgreement = { lang, n: rows.length, ran: 0, harnessPassed: 0, assayOnes: 0, agree: 0, listed: [], seconds: { bare: harness.seconds, assay, assayCpu: (cpu.user + cpu.system) / 1e6 } };
  for (const r of results) {
    const h = harness.results.get(r.id);
    const ran = h !== undefined && h.passed !== null;
    out.ran += ran ? 1 : 0;
    out.harnessPassed += h?.passed ? 1 : 0;
    out.assayOnes += r.reward === 1 ? 1 : 0;
    const same = ran && (h!.passed ? r.reward === 1 : r.reward === 0);
    out.agree += same ? 1 : 0;
    if (!same || r.reward !== 1) out.listed.push({ task_id: r.id, harness: h?.result ?? "missing", reward: r.reward, reason: r.reason });
  }
  return out;
}

export function report(a: LanguageAgreement, backend: string, s: Sample): string {
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const lines = [
    `${a.lang} (${backend}): ${a.n} tasks${s.every > 1 ? ` (every ${s.every}th)` : ""}; CodeGeeX's harness ran ${a.ran} bare and passes ${a.harnessPassed}; ` +
      `Assay scores ${a.assayOnes} 1; agreement ${a.agree}/${a.ran} (bare ${a.seconds.bare.toFixed(1)} s, Assay ${a.seconds.assay.toFixed(1)} s wall, ` +
      `${a.seconds.assayCpu.toFixed(1)} s CPU in this process; load average ${load})`,
  ];
  for (const d of a.listed) lines.push(`  ${d.task_id}: harness ${d.harness.slice(0, 160).replace(/\n/g, " ")}; Assay reward ${d.reward}: ${d.reason.slice(0, 300).replace(/\n/g, " ")}`);
  return lines.join("\n");
}

async function main() {
  const args = process.argv.slice(2);
  const opt = (name: string) => { const i = args.indexOf(name); if (i < 0) return undefined; const v = args[i + 1]; args.splice(i, 2); return v; };
  const backend = opt("--backend") ?? "docker";
  const sample: Sample = { every: Number(opt("--every") ?? 1), limit: Number(opt("--limit") ?? Infinity), goEvaluation: opt("--go-evaluation") };
  if (!args.length) {
    console.error("usage: bench/humaneval-x.ts --backend docker|bwrap [--every K] [--limit N] [--go-evaluation DIR] humaneval_<lang>.jsonl.gz ...");
    process.exit(2);
  }
  const { openBackend } = await import("../tests/sandboxes.js");
  const { openJs } = await import("../sandbox/js/index.js");
  const opened = await openBackend(backend, 2);
  // JavaScript runs in isolated-vm beside the chosen backend, as the server composes them.
  const js = (await openJs()).sandbox;
  const sandbox = js ? new CompositeSandbox([opened, js]) : opened;
  try {
    for (const file of args) console.log(report(await agreement(file, sandbox, sample), backend, sample));
  } finally {
    await opened.close();
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
