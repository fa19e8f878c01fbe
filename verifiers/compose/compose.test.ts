/** combine, calibrated and length: aggregations with mixed part outcomes, RLCR and DAPO against hand-computed values. */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { Type } from "@sinclair/typebox";
import { defineVerifier } from "../../src/core/verifier.js";
import { testRuntime, sleepVerifier, brokenVerifier, fastestCpu } from "../../tests/helpers.js";
import { aggregate } from "./combine.js";
import { rlcr, statedConfidence, DEFAULT_PATTERN } from "./calibrated.js";
import { dapoPenalty, countTokensUpTo, countChars } from "./length.js";

/** Rewards options.r, or fails as options.fail says: the parts' outcomes are chosen by the test. */
const constVerifier = defineVerifier({
  name: "test-const",
  description: "test only",
  reference: Type.Unknown(),
  options: Type.Object({ r: Type.Number({ default: 1 }), fail: Type.Optional(Type.Boolean()) }),
  async verify(item) {
    if (item.options.fail) return { reward: null, reason: "judge unreachable" };
    return { reward: item.options.r, reason: `const ${item.options.r}`, details: { ref: item.reference } };
  },
});

const rt = await testRuntime({ extra: [sleepVerifier, brokenVerifier, constVerifier] });
after(() => rt.close());
const score = (item: Record<string, unknown>) => rt.scorer.score({ response: "Paris", ...item });
const c = (r: number, extra: Record<string, unknown> = {}) => ({ verifier: "test-const", options: { r }, ...extra });
const failing = (extra: Record<string, unknown> = {}) => ({ verifier: "test-const", options: { fail: true }, ...extra });

/**
 * Like `code`: its own limits need 300 ms (budgetMs 1000), and it fits its work to the deadline
 * it is given (code shrinks its per-test limits), scoring 0 when that leaves too little.
 */
const budgeted = defineVerifier({
  name: "test-budgeted",
  description: "test only",
  reference: Type.Unknown(),
  options: Type.Object({}),
  budgetMs: () => 1000,
  async verify(_item, ctx) {
    if (ctx.deadline - Date.now() < 300) return { reward: 0, reason: "time limit (shrunk to the deadline)" };
    await new Promise((r) => setTimeout(r, 300));
    return { reward: 1, reason: "passed" };
  },
});

describe("parts get the deadline they would get alone", () => {
  test("a part whose own limits pass the server's default deadline scores in combine and calibrated as it does alone", async () => {
    // Before: a part got what was left of its parent's default (100 ms here), so it scored 0
    // inside combine and -1 inside calibrated where the same item alone scored 1.
    const short = await testRuntime({ env: { ASSAY_DEADLINE_MS: "100" }, extra: [budgeted, constVerifier] });
    try {
      const alone = await short.scorer.score({ verifier: "test-budgeted", response: "x" });
      assert.equal(alone.reward, 1, alone.reason);
      const combined = await short.scorer.score({ verifier: "combine", response: "x", reference: [{ verifier: "test-budgeted" }, c(1)] });
      assert.equal(combined.reward, 2, combined.reason);
      const gated = await short.scorer.score({ verifier: "combine", response: "x", reference: [{ verifier: "test-budgeted", gate: true }, c(1)], options: { aggregate: "gate" } });
      assert.equal(gated.reward, 1, gated.reason);
      const nested = await short.scorer.score({ verifier: "combine", response: "x", reference: [{ verifier: "combine", reference: [{ verifier: "test-budgeted" }] }] });
      assert.equal(nested.reward, 1, nested.reason);
      const cal = await short.scorer.score({ verifier: "calibrated", response: "x <confidence>1</confidence>", reference: { verifier: "test-budgeted" } });
      assert.equal(cal.reward, 1, cal.reason);
      // a deadline the caller asks for still bounds the parts
      const asked = await short.scorer.score({ verifier: "combine", response: "x", reference: [{ verifier: "test-budgeted" }], deadline_ms: 150 });
      assert.equal(asked.reward, 0, asked.reason);
    } finally {
      await short.close();
    }
  });
});

describe("combine: mean whose optional part failed", () => {
  test("the rest's weights summing to 0 is null (our failure), not invalid", async () => {
    const r = await score({ verifier: "combine", reference: [failing({ optional: true, weight: 1 }), c(1, { weight: 1 }), c(0, { weight: -1 })], options: { aggregate: "mean" } });
    assert.equal(r.status, "error", r.reason);
    assert.equal(r.reward, null);
    const own = await score({ verifier: "combine", reference: [c(1, { weight: 1 }), c(0, { weight: -1 })], options: { aggregate: "mean" } });
    assert.equal(own.status, "invalid", "with every part scored, it is the combination's mistake");
  });
});

describe("combine: a gate part outside aggregate gate", () => {
  test("is invalid, naming the part, not summed as an ordinary part", async () => {
    // Before: `gate: true` was read only under aggregate "gate"; with the default "sum" this scored 1.
    const r = await score({ verifier: "combine", reference: [c(0, { gate: true }), c(1)] });
    assert.equal(r.status, "invalid", r.reason);
    assert.match(r.reason, /part 0 \(test-const\) has gate: true, but aggregate is "sum"/);
    const ok = await score({ verifier: "combine", reference: [c(0, { gate: true }), c(1)], options: { aggregate: "gate" } });
    assert.equal(ok.reward, 0);
  });
});

describe("combine: aggregations", () => {
  test("the aggregate function, by hand", () => {
    const xs = [{ reward: 1, weight: 2 }, { reward: 0.5, weight: 1 }, { reward: 0, weight: 1 }];
    assert.equal(aggregate("sum", xs), 2.5);
    assert.equal(aggregate("mean", xs), 2.5 / 4);
    assert.equal(aggregate("min", xs), 0);
    assert.equal(aggregate("max", xs), 1);
    assert.equal(aggregate("product", [{ reward: 0.5, weight: 1 }, { reward: 0.5, weight: 9 }]), 0.25);
  });

  for (const [how, want] of [["sum", 0.9 * 1 + 0.1 * 0.5], ["mean", (0.9 + 0.05) / 1.0], ["min", 0.5], ["max", 1], ["product", 0.5]] as const) {
    test(`${how} over real parts (exact + const), each part in details`, async () => {
      const r = await score({ verifier: "combine", reference: [{ verifier: "exact", reference: "paris", weight: 0.9 }, c(0.5, { weight: 0.1 })], options: { aggregate: how } });
      assert.equal(r.status, "ok", r.reason);
      assert.ok(Math.abs((r.reward as number) - want) < 1e-12, `${how}: ${r.reward} != ${want}`);
      const parts = (r.details as any).parts;
      assert.equal(parts.length, 2);
      assert.equal(parts[0].verifier, "exact");
      assert.equal(parts[0].reward, 1);
      assert.equal(parts[1].reward, 0.5);
    });
  }

  test("a wrong answer in one part lowers the sum; near miss scores less than the hit", async () => {
    const ref = (ans: string) => [{ verifier: "exact", reference: ans, weight: 1 }, c(0.5)];
    const hit = await score({ verifier: "combine", reference: ref("paris") });
    const miss = await score({ verifier: "combine", reference: ref("pariss") });
    assert.equal(hit.reward, 1.5);
    assert.equal(miss.reward, 0.5);
  });

  test("a failing non-optional part makes the whole error/null, naming the part", async () => {
    const r = await score({ verifier: "combine", reference: [c(1), failing({ name: "judge" })], options: { aggregate: "mean" } });
    assert.equal(r.status, "error");
    assert.equal(r.reward, null);
    assert.match(r.reason, /part 1 \(judge\) failed: judge unreachable/);
    assert.equal((r.details as any).parts[1].status, "error");
  });

  test("a thrown error in a part is an error too", async () => {
    const r = await score({ verifier: "combine", reference: [c(1), { verifier: "test-broken", options: { mode: "throw" } }] });
    assert.equal(r.status, "error");
    assert.match(r.reason, /part 1 \(test-broken\)/);
  });

  test("an optional part that fails is left out of every aggregate", async () => {
    for (const [how, want] of [["sum", 0.7], ["mean", 0.7], ["min", 0.7], ["max", 0.7], ["product", 0.7]] as const) {
      const r = await score({ verifier: "combine", reference: [c(0.7), failing({ optional: true })], options: { aggregate: how } });
      assert.equal(r.status, "ok", `${how}: ${r.reason}`);
      assert.equal(r.reward, want);
      assert.match(r.reason, /1 optional part failed and left out/);
    }
    const none = await score({ verifier: "combine", reference: [failing({ optional: true })] });
    assert.equal(none.status, "error", "nothing left to aggregate is not a score");
  });

  test("an invalid part makes the whole invalid, naming the part and field", async () => {
    const r = await score({ verifier: "combine", reference: [c(1), { verifier: "exact", reference: { not: "a string" } }] });
    assert.equal(r.status, "invalid");
    assert.match(r.reason, /part 1 \(exact\)\.reference/);
    const unknown = await score({ verifier: "combine", reference: [{ verifier: "no-such-thing" }] });
    assert.equal(unknown.status, "invalid");
    assert.match(unknown.reason, /part 0 \(no-such-thing\).*unknown verifier/);
    const badShape = await score({ verifier: "combine", reference: [{ verifier: "exact", wieght: 1 }] });
    assert.equal(badShape.status, "invalid");
  });

  test("gate: later parts count only when the gate passes; skipped parts are shown", async () => {
    const pass = await score({ verifier: "combine", reference: [{ verifier: "exact", reference: "paris", gate: true }, c(0.25), c(0.5)], options: { aggregate: "gate" } });
    assert.equal(pass.reward, 0.75);
    const fail = await score({ verifier: "combine", reference: [{ verifier: "exact", reference: "london", gate: true }, c(0.25), c(0.5)], options: { aggregate: "gate", gate_fail_reward: -1 } });
    assert.equal(fail.status, "ok");
    assert.equal(fail.reward, -1);
    assert.match(fail.reason, /part 0 \(exact\) did not pass/);
    assert.deepEqual((fail.details as any).parts.map((p: any) => p.status), ["ok", "skipped", "skipped"]);
    const firstIsGate = await score({ verifier: "combine", reference: [c(0.5), c(1)], options: { aggregate: "gate" } });
    assert.equal(firstIsGate.reward, 0, "with no part flagged, the first part is the gate (0.5 < 1)");
    const gateErr = await score({ verifier: "combine", reference: [failing({ gate: true }), c(1)], options: { aggregate: "gate" } });
    assert.equal(gateErr.status, "error");
  });

  test("gate: an optional gate that errors lets nothing through (null), unless another gate failed", async () => {
    // Before: the errored optional gate was skipped as if it had passed, and the others counted.
    const lone = await score({ verifier: "combine", reference: [failing({ gate: true, optional: true }), c(1)], options: { aggregate: "gate" } });
    assert.equal(lone.status, "error", lone.reason);
    assert.equal(lone.reward, null);
    assert.match(lone.reason, /part 0 \(test-const\) failed: judge unreachable/);
    assert.deepEqual((lone.details as any).parts.map((p: any) => p.status), ["error", "skipped"]);
    const withPassing = await score({ verifier: "combine", reference: [c(1, { gate: true }), failing({ gate: true, optional: true }), c(0.5)], options: { aggregate: "gate" } });
    assert.equal(withPassing.status, "error", "another gate passing does not stand in for one that was not scored");
    assert.equal(withPassing.reward, null);
    const withFailing = await score({ verifier: "combine", reference: [failing({ gate: true, optional: true }), c(0, { gate: true }), c(0.5)], options: { aggregate: "gate", gate_fail_reward: -1 } });
    assert.equal(withFailing.status, "ok", "a scored gate failed: the outcome does not depend on the unscored one");
    assert.equal(withFailing.reward, -1);
    assert.match(withFailing.reason, /1 optional gate part failed to score/);
    // An optional non-gate part is still left out as before.
    const rest = await score({ verifier: "combine", reference: [c(1, { gate: true }), c(0.5), failing({ optional: true })], options: { aggregate: "gate" } });
    assert.equal(rest.reward, 0.5);
  });

  test("a 1 MB response through a combination scores fast", async () => {
    const big = "Paris ".repeat(170_000);
    const item = { verifier: "combine", response: big, reference: [{ verifier: "exact", reference: "paris" }, { verifier: "length", options: { unit: "chars", max_length: 4096, cache_length: 512 } }] };
    await score(item); // warm (JIT): most of the time is exact's own normalisation of 1 MB
    // CPU time, not wall time: exact normalises a long text in slices, giving the event loop back
    // between them (so /healthz keeps answering), and on a shared machine the wall time of those
    // turns measures the other processes. The work itself must stay linear and small.
    // The least of three runs: the process's CPU includes V8's parallel GC threads, whose share
    // of one run swings with what the heap held before it.
    let ms = Infinity;
    for (let i = 0; i < 3; i++) {
      const c0 = process.cpuUsage();
      const r = await score(item);
      const c = process.cpuUsage(c0);
      ms = Math.min(ms, (c.user + c.system) / 1000);
      assert.equal(r.status, "ok", r.reason);
      assert.equal(r.reward, -1);
    }
    assert.ok(ms < 50, `${ms} ms of CPU`);
  });

  test("only namespace verifiers answer ns:rest names", async () => {
    const r = await score({ verifier: "exact:paris", reference: "paris" });
    assert.equal(r.status, "invalid");
    assert.match(r.reason, /unknown verifier "exact:paris"/);
  });

  test("shared reference reaches parts that give none", async () => {
    const r = await score({ verifier: "combine", reference: { reference: "paris", parts: [{ verifier: "exact" }, { verifier: "exact", reference: "rome" }] } });
    assert.equal(r.reward, 1);
  });

  test("parts run concurrently under the item's deadline", async () => {
    const t0 = Date.now();
    const r = await score({ verifier: "combine", reference: [{ verifier: "test-sleep", options: { ms: 150 } }, { verifier: "test-sleep", options: { ms: 150 } }, { verifier: "test-sleep", options: { ms: 150 } }], options: { aggregate: "mean" } });
    assert.equal(r.reward, 1);
    assert.ok(Date.now() - t0 < 400, "three 150 ms parts take about 150 ms, not 450");
    const late = await score({ verifier: "combine", deadline_ms: 100, reference: [{ verifier: "test-sleep", options: { ms: 5000 } }] });
    assert.equal(late.status, "error");
    assert.ok(late.elapsed_ms < 1000);
  });

  test("nesting is allowed up to ASSAY_COMPOSE_MAX_DEPTH (3), deeper is invalid", async () => {
    const nest = (d: number): unknown => (d === 0 ? c(0.5) : { verifier: "combine", reference: [nest(d - 1)] });
    const ok = await score(nest(3) as any);
    assert.equal(ok.status, "ok", ok.reason);
    assert.equal(ok.reward, 0.5);
    const deep = await score(nest(4) as any);
    assert.equal(deep.status, "invalid");
    assert.match(deep.reason, /deeper than 3/);
  });
});

describe("calibrated (RLCR)", () => {
  test("the formula, by hand", () => {
    const r = rlcr(1, 0.8);
    assert.ok(Math.abs(r.reward - 0.96) < 1e-12 && Math.abs(r.brier - 0.04) < 1e-12);
    assert.equal(rlcr(0, 0.8).reward, -(0.8 ** 2));
    assert.equal(rlcr(0, 0).reward, 0);
    assert.equal(rlcr(1, 1).reward, 1);
    assert.deepEqual(rlcr(1, null), { reward: 0, brier: 1 });
    assert.deepEqual(rlcr(0, null), { reward: -1, brier: 1 });
  });

  test("reads the last stated confidence; rejects out-of-range", () => {
    assert.equal(statedConfidence("a <confidence>0.2</confidence> b <confidence> 0.9 </confidence>", DEFAULT_PATTERN, 1).q, 0.9);
    assert.equal(statedConfidence("<confidence>85</confidence>", DEFAULT_PATTERN, 100).q, 0.85);
    assert.equal(statedConfidence("<confidence>1.5</confidence>", DEFAULT_PATTERN, 1).q, null);
    assert.equal(statedConfidence("confidence: 0.7", DEFAULT_PATTERN, 1).q, null);
    // every match is read, the last wins (a cap of 10,000 matches kept an earlier one)
    assert.equal(statedConfidence("c=0 ".repeat(12_000) + "c=1", "c=([01])", 1).q, 1);
    // an empty capture or a number not written in decimal is no confidence, not 0 or 16
    assert.equal(statedConfidence("confidence: ", "confidence:\\s*([0-9.x]*)", 1).q, null);
    assert.equal(statedConfidence("<confidence>0x1</confidence>", "<confidence>([^<]*)</confidence>", 1).q, null);
    assert.equal(statedConfidence("Confidence: 70%", "confidence:\\s*(\\d+)%", 100).q, 0.7);
  });

  const cal = (response: string, ans: string, options: Record<string, unknown> = {}) =>
    rt.scorer.score({ verifier: "calibrated", response, reference: { verifier: "exact", reference: ans, options: { extract: "answer_tag" } }, options });

  test("end to end: correct and confident, wrong and confident, missing confidence", async () => {
    let r = await cal("<answer>Paris</answer><confidence>0.8</confidence>", "paris");
    assert.equal(r.status, "ok", r.reason);
    assert.ok(Math.abs((r.reward as number) - 0.96) < 1e-12);
    assert.ok(Math.abs((r.details as any).brier - 0.04) < 1e-12);
    r = await cal("<answer>Lyon</answer><confidence>0.8</confidence>", "paris");
    assert.ok(Math.abs((r.reward as number) + 0.64) < 1e-12);
    r = await cal("<answer>Lyon</answer><confidence>0.1</confidence>", "paris");
    assert.ok(Math.abs((r.reward as number) + 0.01) < 1e-12, "an honest low confidence on a wrong answer costs little");
    r = await cal("<answer>Paris</answer>", "paris");
    assert.equal(r.reward, 0);
    assert.match(r.reason, /format failure: no stated confidence/);
    assert.equal((r.details as any).format_ok, false);
  });

  test("inner invalid is invalid, inner error is error, a bad pattern is invalid", async () => {
    let r = await rt.scorer.score({ verifier: "calibrated", response: "x", reference: { verifier: "exact", reference: { bad: true } } });
    assert.equal(r.status, "invalid");
    r = await rt.scorer.score({ verifier: "calibrated", response: "x", reference: { verifier: "test-const", options: { fail: true } } });
    assert.equal(r.status, "error");
    r = await cal("x", "paris", { pattern: "(a" });
    assert.equal(r.status, "invalid");
    r = await cal("x", "paris", { pattern: "nogroup" });
    assert.equal(r.status, "invalid");
  });

  test("1 MB of hostile confidence-like text scores fast", async () => {
    const big = "<confidence>0.".repeat(70_000) + "<confidence>0.5</confidence>";
    // CPU time (the least of rounds of runs): wall time on a loaded machine measures the others.
    const { out: r, ms } = await fastestCpu(() => cal(big, "paris"), { under: 200 });
    assert.equal(r.status, "ok");
    assert.ok(ms < 200, `${ms} ms of CPU`);
  });
});

describe("length (DAPO, band)", () => {
  test("DAPO soft overlong punishment, by hand (L_max 20480, L_cache 4096, as in the paper)", () => {
    assert.equal(dapoPenalty(16384, 20480, 4096), 0);
    assert.equal(dapoPenalty(16385, 20480, 4096), -1 / 4096);
    assert.equal(dapoPenalty(18432, 20480, 4096), -0.5);
    assert.equal(dapoPenalty(20480, 20480, 4096), -1);
    assert.equal(dapoPenalty(30000, 20480, 4096), -1);
    assert.equal(dapoPenalty(18432, 20480, 4096, 2), -1, "verl's penalty_factor scales it");
  });

  const len = (response: string, options: Record<string, unknown>) => rt.scorer.score({ verifier: "length", response, options });

  test("chars: code points, DAPO and band", async () => {
    let r = await len("x".repeat(15), { unit: "chars", max_length: 20, cache_length: 10 });
    assert.equal(r.reward, -0.5);
    r = await len("😀".repeat(10), { unit: "chars", max_length: 20, cache_length: 10 });
    assert.equal(r.reward, 0, "an emoji is one character, not two UTF-16 units");
    r = await len("abc", { mode: "band", unit: "chars", min: 2, max: 3 });
    assert.equal(r.reward, 1);
    r = await len("abcd", { mode: "band", unit: "chars", min: 2, max: 3 });
    assert.equal(r.reward, 0);
    r = await len("a", { mode: "band", unit: "chars", min: 2, max: 3 });
    assert.equal(r.reward, 0);
  });

  test("tokens: o200k counts as gpt-tokenizer does; think stripping", async () => {
    let r = await len("hello world", { mode: "band", max: 2 });
    assert.equal((r.details as any).length, 2);
    assert.equal(r.reward, 1);
    r = await len("hello world again", { mode: "band", max: 2 });
    assert.equal(r.reward, 0);
    r = await len("<think>" + "long ".repeat(100) + "</think>ok", { mode: "band", max: 2, strip_think: true });
    assert.equal(r.reward, 1);
  });

  test("chunked counting equals whole-text counting on ordinary text", async () => {
    const { countTokens } = await import("gpt-tokenizer/encoding/o200k_base");
    const text = "The quick brown fox, jumping over 12 lazy dogs.\n\n".repeat(200) + "déjà vu 😀 ".repeat(50);
    assert.deepEqual(await countTokensUpTo(countTokens, text, 1e9), { n: countTokens(text), exact: true });
    assert.deepEqual(countChars("ab😀", 10), { n: 3, exact: true });
  });

  test("special-token text (<|endoftext|>, <|im_start|>) is counted as ordinary text, never an error", async () => {
    // gpt-tokenizer's default throws "Disallowed special token found": the part was null, and an
    // optional length part was left out of a combine, so the DAPO penalty could be dodged.
    for (const tok of ["<|endoftext|>", "<|im_start|>", "<|endofprompt|>", "<|im_end|>"]) {
      const r = await len(`hello ${tok} world`, { mode: "band", max: 100 });
      assert.equal(r.status, "ok", `${tok}: ${r.reason}`);
      assert.ok((r.details as any).length > 3, `${tok} is several ordinary tokens, not one special one`);
    }
    for (const tok of ["<|endoftext|>", "<|im_start|>"]) {
      for (const tokenizer of ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"]) {
        const r = await len(tok.repeat(50), { tokenizer, max_length: 50, cache_length: 10 });
        assert.equal(r.status, "ok", `${tokenizer}: ${r.reason}`);
        assert.equal(r.reward, -1, tokenizer);
      }
    }
    const parts = [{ verifier: "exact", options: { extract: "answer_tag" } }, { verifier: "length", options: { mode: "dapo", max_length: 50, cache_length: 10 }, optional: true }];
    const filler = " lorem ipsum".repeat(60);
    for (const prefix of ["", "<|endoftext|>", "<|im_start|>assistant\n"]) {
      const r = await score({ verifier: "combine", response: `${prefix}<answer>paris</answer>${filler}`, reference: { reference: "paris", parts } });
      assert.equal(r.status, "ok", r.reason);
      assert.equal(r.reward, 0, `${JSON.stringify(prefix)}: the overlong penalty still applies (${r.reason})`);
    }
  });

  test("options that do not make sense are invalid", async () => {
    assert.equal((await len("x", { unit: "chars" })).status, "invalid");
    assert.equal((await len("x", { max_length: 10, cache_length: 20 })).status, "invalid");
    assert.equal((await len("x", { mode: "band", min: 5, max: 2 })).status, "invalid");
  });

  test("counting a megabyte of tokens up to a high limit lets the event loop run, and stops at the deadline", async () => {
    // Before: counting ran in one synchronous stretch: 1,048,000 CJK characters held the loop
    // 3.4 s (a concurrent /healthz waited 2.6 s).
    const { watchLoop } = await import("../../tests/loop-watch.js");
    // 300,000 CJK characters in a fixed pseudo-random order: repeated text would hit the tokenizer's cache
    let seed = 1;
    const cjk = () => Array.from({ length: 300_000 }, () => String.fromCharCode(0x4e00 + ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % 20000))).join("");
    const big = cjk();
    await len("warm", { mode: "band", unit: "tokens", min: 0, max: 10 }); // the tokenizer's ranks load once
    const watch = watchLoop();
    const r = await len(big, { mode: "band", unit: "tokens", min: 0, max: 1_000_000 });
    await new Promise((r) => setTimeout(r, 20)); // the watch's timer fires once more: the last stretch is measured
    const gaps = watch.stop();
    assert.equal(r.status, "ok", r.reason);
    assert.ok(gaps.maxCpuMs < 100, `the loop was held ${gaps.maxCpuMs.toFixed(0)} ms of CPU at a stretch`);
    const short = await score({ verifier: "length", response: cjk(), options: { mode: "band", unit: "tokens", min: 0, max: 1_000_000 }, deadline_ms: 50 });
    assert.equal(short.status, "error", "past its deadline the count stops (null), not a reward from a partial count");
  });

  test("1 MB hostile text (one long run, no whitespace; spaced letters) in tokens stays fast", async () => {
    const { countTokens } = await import("gpt-tokenizer/encoding/o200k_base");
    await countTokensUpTo(countTokens, "warm up".repeat(100), 1e9);
    // The cost follows the tokens counted (up to the limit), not the input: about 1-10 us a token
    // for Latin text, up to 20 us for rare scripts (CJK), so the bound here is per the limit.
    for (const [big, ms_] of [["q".repeat(1_000_000), 50], ["x ".repeat(500_000), 50], ["\u4e00".repeat(1_000_000), 250]] as const) {
      const { out: n, ms } = await fastestCpu(() => countTokensUpTo(countTokens, big, 4096), { under: ms_ });
      assert.ok(n.n > 4096 && !n.exact);
      assert.ok(ms < ms_, `${ms} ms of CPU`);
      const r = await len(big, { max_length: 4096, cache_length: 512 });
      assert.equal(r.reward, -1);
    }
  });
});
