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
import pLimit from "p-limit";
import { code } from "../verifiers/code/index.js";
import { verifyDirect, testServices, fakeSandbox } from "../tests/helpers.js";
import { openBwrapForTests, openDockerForTests } from "../tests/sandboxes.js";
import { CompositeSandbox } from "../sandbox/index.js";
import { openJs } from "../sandbox/js/index.js";
import { recipeFor, imageTag } from "../sandbox/images.js";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { root } from "./lib.js";

const args = process.argv.slice(2);
const opt = (name: string) => { const i = args.indexOf(name); if (i < 0) return undefined; const v = args[i + 1]; args.splice(i, 2); return v; };
const backend = opt("--backend") ?? "docker";
const limit = Number(opt("--limit") ?? Infinity);
const every = Number(opt("--every") ?? 1);
const goEvaluation = opt("--go-evaluation") ?? "";
if (!args.length) {
  console.error("usage: bench/humaneval-x.ts --backend docker|bwrap [--limit N] humaneval_<lang>.jsonl.gz ...");
  process.exit(2);
}

// CodeGeeX's IMPORT_HELPER["cpp"] (codegeex/benchmark/utils.py), added where the prompt lacks them.
const CPP_HELPERS = ["#include<stdlib.h>", "#include<algorithm>", "#include<math.h>", "#include<stdio.h>", "#include<vector>", "#include<string>", "#include<climits>", "#include<cstring>", "#include<iostream>"];
const PY_HELPERS = ["import math", "import re", "import sys", "import copy", "import datetime", "import itertools", "import collections", "import heapq", "import statistics", "import functools", "import hashlib", "import numpy", "import numpy as np", "import string", "from typing import *", "from collections import *"];
const GO_HELPERS = ["math", "strings", "fmt", "strconv", "time", "bytes", "regexp", "sort", "math/rand", "crypto/md5"];

type Row = { task_id: string; prompt: string; canonical_solution: string; test: string; declaration?: string; import?: string; test_setup?: string };

/** The item for one row, as process_humaneval_test puts the program together. */
function itemOf(row: Row): { language: string; response: string; reference: Record<string, string> } {
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

const opened = backend === "bwrap" ? await openBwrapForTests(2) : await openDockerForTests(2);
if (!opened.sandbox) throw new Error(`${backend}: ${opened.skip}`);
// JavaScript runs in isolated-vm beside the chosen backend, as the server composes them.
const js = (await openJs()).sandbox;
const services = testServices({ sandbox: fakeSandbox(js ? new CompositeSandbox([opened.sandbox, js]) : opened.sandbox) });
const run = pLimit(2);

// The sandbox image whose toolchain CodeGeeX's harness runs in, per language of its files.
const IMAGE: Record<string, string> = { cpp: "cpp", java: "java", js: "typescript", javascript: "typescript", go: "go", python: "python-sci", rust: "rust" };

/** CodeGeeX's own harness, bare, on the sample: task_id -> its result ("passed", "failed: ..."; null passed where it cannot run). */
function bare(file: string, lang: string): { results: Map<string, { passed: boolean | null; result: string }>; seconds: number } {
  const t0 = performance.now();
  const image = imageTag(recipeFor(IMAGE[lang])!);
  const p = spawnSync("python3", [join(root, "bench", "harness", "humaneval_x_reference.py"), file, "--image", image, "--every", String(every),
    ...(Number.isFinite(limit) ? ["--limit", String(limit)] : []), ...(goEvaluation ? ["--go-evaluation", goEvaluation] : [])], { encoding: "utf8", maxBuffer: 1 << 28 });
  if (p.status !== 0) throw new Error(`CodeGeeX's harness exited ${p.status}: ${p.stderr.slice(-500)}`);
  const results = new Map<string, { passed: boolean | null; result: string }>();
  for (const line of p.stdout.split("\n").filter(Boolean)) {
    const r = JSON.parse(line) as { task_id: string; passed: boolean | null; result: string };
    results.set(r.task_id, r);
  }
  return { results, seconds: (performance.now() - t0) / 1000 };
}

try {
  for (const file of args) {
    const rows: Row[] = gunzipSync(readFileSync(file)).toString("utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l))
      .filter((_: Row, i: number) => i % every === 0).slice(0, limit);
    const lang = rows[0].task_id.split("/")[0].toLowerCase();
    const harness = bare(file, lang);
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
    const assayS = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const ones = results.filter((r) => r.reward === 1).length;
    const ran = results.filter((r) => harness.results.get(r.id)?.passed != null);
    const passed = ran.filter((r) => harness.results.get(r.id)!.passed);
    const agree = ran.filter((r) => (harness.results.get(r.id)!.passed ? r.reward === 1 : r.reward === 0));
    console.log(`${lang} (${backend}): ${rows.length} tasks (every ${every}th); CodeGeeX's harness ran ${ran.length} bare and passes ${passed.length}; ` +
      `Assay scores ${ones} 1; agreement ${agree.length}/${ran.length} (bare ${harness.seconds.toFixed(1)} s, Assay ${assayS.toFixed(1)} s wall, ` +
      `${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU in this process; load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")})`);
    for (const r of results) {
      const h = harness.results.get(r.id);
      const same = h?.passed != null && (h.passed ? r.reward === 1 : r.reward === 0);
      if (!same || r.reward !== 1) console.log(`  ${r.id}: harness ${h ? h.result.slice(0, 160).replace(/\n/g, " ") : "missing"}; Assay reward ${r.reward}: ${r.reason.slice(0, 300).replace(/\n/g, " ")}`);
    }
  }
} finally {
  await opened.sandbox.close();
}
