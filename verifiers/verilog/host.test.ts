/**
 * The verilog verifier's host-side pieces (no sandbox): extraction, the lexical scan, interface
 * parsing and comparison, stimulus, testbench text, records and the X/Z comparison, and the
 * hostile-input timing.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { extractModule, scanVerilog, MAX_MODULE_CHARS } from "./source.js";
import { interfaceMismatch, parseInterface, type Interface } from "./iface.js";
import { combinationalStimulus, prng, sequentialStimulus, testbench } from "./tb.js";
import { bitsMatch, compareRows, parseRecords, showBits } from "./compare.js";
import { formalVerdict } from "./formal.js";
import { fastestCpu, fakeSandbox, testServices, verifyDirect } from "../../tests/helpers.js";
import type { Sandbox } from "../../sandbox/types.js";
import { verilog } from "./index.js";
import { ADDER_GOLDEN } from "./designs.js";

describe("extraction", () => {
  test("the last verilog/systemverilog/v/sv block after </think>, else untagged, else none", () => {
    const r = "<think>```verilog\nmodule a; endmodule\n```</think>\n```verilog\nmodule b; endmodule\n```\ntext\n```sv\nmodule c; endmodule\n```\n```python\nx\n```";
    assert.deepEqual(extractModule(r), { code: "module c; endmodule", via: "verilog block" });
    assert.equal(extractModule("```systemverilog\nmodule d; endmodule\n```").code, "module d; endmodule");
    assert.equal(extractModule("```\nmodule e; endmodule\n```").via, "untagged block");
    assert.equal(extractModule("module f; endmodule").via, "whole text");
    assert.equal(extractModule("no module here").via, "none");
  });
});

describe("lexical scan", () => {
  test("module names; comments and strings skipped; identifiers with $ are not system names", () => {
    const s = scanVerilog('// module fake\n/* $fopen */ module top(input a); wire a$fopen; initial $display("$fopen"); endmodule\nmodule automatic sub; endmodule');
    assert.deepEqual(s.modules, ["top", "sub"]);
    assert.deepEqual(s.forbidden, []);
  });
  test("file access, plusargs, $root, VPI and `include are refused; $clog2/$display/$finish are not", () => {
    const src = 'module m; integer f; initial begin f = $fopen("main.v", "r"); $readmemh("x", m); if ($test$plusargs("a")) $finish; end assign y = $root.t.x; `include "main.v"\nendmodule';
    assert.deepEqual(scanVerilog(src).forbidden, ["$fopen", "$readmemh", "$test$plusargs", "$root", "`include"]);
    assert.deepEqual(scanVerilog("module m; localparam W = $clog2(8); initial begin $display(\"hi\"); $finish; end endmodule").forbidden, []);
  });
  test("1 MB of adversarial text scans in linear time", async () => {
    const hostile = ["/*".repeat(200_000), '"'.repeat(500_000), "$".repeat(1_000_000), "`".repeat(1_000_000), "module ".repeat(150_000), "\\".repeat(1_000_000)];
    for (const h of hostile) {
      const { ms } = await fastestCpu(() => scanVerilog(h), { under: 50 });
      assert.ok(ms < 50, `${h.slice(0, 8)}… took ${ms} ms`);
    }
    const fences = "```verilog\n".repeat(90_000);
    const { ms } = await fastestCpu(() => extractModule(fences), { under: 50 });
    assert.ok(ms < 50, `unclosed fences took ${ms} ms`);
    assert.ok(MAX_MODULE_CHARS <= 200_000);
  });
});

// What yosys 0.23 prints for ADDER_GOLDEN / FSM_BINARY with interfaceScript (trimmed).
const YOSYS_ADDER = `{\n  "creator": "Yosys 0.23", "modules": {"adder": {"attributes": {"top": "00000000000000000000000000000001"},
  "ports": {"a": {"direction": "input", "bits": [2,3,4,5,6,7,8,9]}, "b": {"direction": "input", "bits": [10,11,12,13,14,15,16,17]},
  "cin": {"direction": "input", "bits": [18]}, "sum": {"direction": "output", "bits": [19,20,21,22,23,24,25,26]}, "cout": {"direction": "output", "bits": [27]}},
  "cells": {}, "netnames": {}}}}`;
const YOSYS_FSM = `{\n  "creator": "Yosys 0.23", "modules": {"det": {"attributes": {"top": "00000000000000000000000000000001"},
  "ports": {"clk": {"direction": "input", "bits": [2]}, "rst": {"direction": "input", "bits": [3]}, "x": {"direction": "input", "bits": [4]}, "y": {"direction": "output", "bits": [5]}},
  "cells": {"$procdff$1": {"type": "$adff", "parameters": {"ARST_POLARITY": "00000000000000000000000000000001", "WIDTH": "00000000000000000000000000000010"},
    "connections": {"ARST": [3], "CLK": [2], "D": [6, 7], "Q": [8, 9]}}}}}}`;

describe("interfaces", () => {
  test("yosys JSON: ports, widths, top, sequential with clock and async reset", () => {
    const a = parseInterface(YOSYS_ADDER);
    assert.equal(a.top, "adder");
    assert.deepEqual(a.ports.map((p) => [p.name, p.direction, p.width]), [["a", "input", 8], ["b", "input", 8], ["cin", "input", 1], ["sum", "output", 8], ["cout", "output", 1]]);
    assert.equal(a.sequential, false);
    const f = parseInterface(YOSYS_FSM, "det");
    assert.equal(f.sequential, true);
    assert.deepEqual(f.clocks, ["clk"]);
    assert.deepEqual(f.asyncResets, [{ name: "rst", activeLow: false }]);
    assert.throws(() => parseInterface(YOSYS_ADDER, "nope"), /no module named nope/);
    assert.throws(() => parseInterface("ERROR: syntax error"), /no design/);
    // what the module printed while Yosys elaborated it comes first and is not read
    assert.equal(parseInterface(`{\n  "creator": "Yosys fake", "modules": {"adder": {"ports": {}}}}\n` + YOSYS_ADDER).ports.length, 5);
  });
  test("mismatches name the port: missing, width, direction, extra", () => {
    const gold = parseInterface(YOSYS_ADDER);
    const edit = (f: (i: Interface) => void) => {
      const c: Interface = structuredClone(gold);
      f(c);
      return interfaceMismatch(gold, c);
    };
    assert.equal(edit(() => {}), null);
    assert.match(edit((c) => (c.ports = c.ports.filter((p) => p.name !== "cin")))!, /port `cin` .* is missing/);
    assert.match(edit((c) => (c.ports[0].width = 9))!, /port `a` is 9 bit\(s\) wide; the reference's is 8/);
    assert.match(edit((c) => (c.ports[4].direction = "input"))!, /port `cout` is an input; the reference's is an output/);
    assert.match(edit((c) => c.ports.push({ name: "dbg", direction: "output", width: 1, signed: false }))!, /port `dbg` \(output\) is not in the reference/);
  });
});

describe("stimulus and testbench", () => {
  const gold = parseInterface(YOSYS_ADDER);
  const ins = gold.ports.filter((p) => p.direction === "input");
  test("corner vectors: zeros, ones, min/max per input, walking ones; then seeded random", () => {
    const s = combinationalStimulus(ins, 10, 7);
    assert.deepEqual(s.rows[0], ["00000000", "00000000", "0"]);
    assert.deepEqual(s.rows[1], ["11111111", "11111111", "1"]);
    assert.ok(s.rows.some((r) => r[0] === "00000100" && r[1] === "00000000" && r[2] === "0"));
    // duplicates dropped: 2 + (2 per input, minus repeats) + walking ones (17 bits) less repeats
    assert.equal(s.corners, s.rows.length - 10);
    assert.deepEqual(combinationalStimulus(ins, 10, 7).rows, s.rows, "same seed, same stimulus");
    assert.notDeepEqual(combinationalStimulus(ins, 10, 8).rows, s.rows);
    const signed = combinationalStimulus([{ name: "v", direction: "input", width: 4, signed: true }], 0, 1);
    assert.ok(signed.rows.some((r) => r[0] === "1000") && signed.rows.some((r) => r[0] === "0111"));
    assert.equal(sequentialStimulus(ins, 25, 1).rows.length, 25);
    const r = prng(1);
    assert.notEqual(r(), r());
  });
  test("the testbench names nothing guessable, holds no expected value and includes the module last", () => {
    const stim = combinationalStimulus(ins, 2, 1);
    const nonce = "0123456789abcdef";
    const tb = testbench({ top: "adder", outputs: gold.ports.filter((p) => p.direction === "output"), stimulus: stim, nonce, dutFile: "dut.v" });
    assert.match(tb, /^`timescale 1ns\/1ps\nmodule t0123456789abcdef;/);
    assert.match(tb, /adder u0123456789abcdef \(\.a\(i0123456789abcdef_0\), \.b\(i0123456789abcdef_1\), \.cin\(i0123456789abcdef_2\), \.sum\(o0123456789abcdef_0\), \.cout\(o0123456789abcdef_1\)\);/);
    assert.match(tb, /\$display\("0123456789abcdef 0 %b %b", o0123456789abcdef_0, o0123456789abcdef_1\);/);
    assert.ok(tb.trimEnd().endsWith('`include "dut.v"'));
    const seq = testbench({
      top: "det", outputs: [{ name: "y", direction: "output", width: 1, signed: false }], stimulus: sequentialStimulus([{ name: "x", direction: "input", width: 1, signed: false }], 3, 1),
      clocking: { clock: "clk", reset: { name: "rst_n", activeLow: true }, resetCycles: 2 }, nonce, dutFile: "dut.v",
    });
    assert.match(seq, /repeat \(2\) begin #5 c0123456789abcdef = 1'b1; #5 c0123456789abcdef = 1'b0; end\n    r0123456789abcdef = 1'b1;/);
    assert.match(seq, /#4 \$display\("0123456789abcdef 2 %b", o0123456789abcdef_0\); #1 c0123456789abcdef = 1'b1; #5 c0123456789abcdef = 1'b0;/);
    assert.equal(seq.split("repeat (2)").length, 2, "no mid-run reset unless asked");
    const mid = testbench({
      top: "det", outputs: [{ name: "y", direction: "output", width: 1, signed: false }], stimulus: sequentialStimulus([{ name: "x", direction: "input", width: 1, signed: false }], 4, 1),
      clocking: { clock: "clk", reset: { name: "rst", activeLow: false }, resetCycles: 2, midReset: 2 }, nonce, dutFile: "dut.v",
    });
    // reset_cycles 0: the reset starts released and is never asserted, mid-run neither
    for (const activeLow of [false, true]) {
      const none = testbench({
        top: "det", outputs: [{ name: "y", direction: "output", width: 1, signed: false }], stimulus: sequentialStimulus([{ name: "x", direction: "input", width: 1, signed: false }], 4, 1),
        clocking: { clock: "clk", reset: { name: "rst", activeLow }, resetCycles: 0, midReset: 2 }, nonce, dutFile: "dut.v",
      });
      const writes = [...none.matchAll(/r0123456789abcdef = 1'b([01]);/g)].map((m) => m[1]);
      assert.deepEqual(writes, [activeLow ? "1" : "0"], `activeLow ${activeLow}: ${writes}`);
    }
    assert.match(mid, /%b", o0123456789abcdef_0\); #1 c0123456789abcdef = 1'b1; #5 c0123456789abcdef = 1'b0;\n    r0123456789abcdef = 1'b1; i0123456789abcdef_0 = 1'b0;\n    repeat \(2\)[^\n]*\n    r0123456789abcdef = 1'b0;\n    i0123456789abcdef_0 = 1'b[01]; #4 \$display\("0123456789abcdef 2 /);
  });
});

describe("records and X/Z", () => {
  const N = "feedbeef";
  test("records under the nonce, in order, to the end record; other lines ignored", () => {
    const out = `hello\n${N} 0 0101 1\nmodule says ${N}x\n${N} 1 1111 0\n${N} end\ndut.v:3: $finish called\n`;
    assert.deepEqual(parseRecords(out, N, [4, 1]), { rows: [["0101", "1"], ["1111", "0"]], ended: true });
    assert.match(parseRecords(`${N} 1 0101 1\n`, N, [4, 1]).problem!, /record 1 where 0 was due/);
    assert.match(parseRecords(`${N} 0 0101 1\n${N} 0 0101 1\n`, N, [4, 1]).problem!, /record 0 where 1 was due/);
    assert.match(parseRecords(`${N} 0 010 1\n`, N, [4, 1]).problem!, /malformed/);
    assert.match(parseRecords(`${N} end\n${N} 0 0101 1\n`, N, [4, 1]).problem!, /after the end/);
    assert.deepEqual(parseRecords("1 0 0101 1\n", N, [4, 1]), { rows: [], ended: false }, "forged lines without the nonce count as nothing");
  });
  test("golden x is don't-care, golden z must be z, golden 0/1 must match exactly", () => {
    assert.ok(bitsMatch("0x1", "011"));
    assert.ok(bitsMatch("0x1", "0z1"));
    assert.ok(!bitsMatch("001", "0x1"));
    assert.ok(!bitsMatch("001", "0z1"));
    assert.ok(bitsMatch("z1", "z1"));
    assert.ok(!bitsMatch("z1", "01"));
    const c = compareRows([["01", "1"], ["10", "0"], ["11", "x"]], [["01", "1"], ["11", "0"], ["11", "1"]], ["q", "v"]);
    assert.deepEqual(c, { first: { index: 1, output: "q", expected: "10", got: "11" }, mismatched: 1 });
    assert.equal(showBits("000100101"), "9'h025");
    assert.equal(showBits("01x"), "3'b01x");
  });
  test("formal verdicts", () => {
    const base = { exitCode: 0, signal: null, stdout: "", stderr: "", truncated: false, wallMs: 1, cpuMs: 1 } as const;
    assert.equal(formalVerdict({ ...base, status: "finished" }).verdict, "proven");
    assert.equal(formalVerdict({ ...base, status: "finished", exitCode: 1, stderr: "ERROR: Found 2 unproven $equiv cells in 'equiv_status -assert'." }).verdict, "unproven");
    assert.equal(formalVerdict({ ...base, status: "finished", exitCode: 1, stderr: "ERROR: Module `\\gate' not found" }).verdict, "error");
  });
});

describe("hostile completions end on the host, before any sandbox run", () => {
  let runs = 0;
  const sb = { name: "stub", languages: ["verilog", "yosys"], run: async () => { runs++; throw new Error("no run expected"); }, close: async () => {} } as unknown as Sandbox;
  const services = testServices({ sandbox: fakeSandbox(sb) });
  test("1 MB adversarial responses score 0 in well under 50 ms each", async () => {
    const cases: [string, RegExp][] = [
      ["```verilog\n".repeat(90_000), /no Verilog module/],
      ["```verilog\n" + "module adder; ".repeat(80_000) + "\n```", /at most 200000 are scored/],
      ["```verilog\n" + "$fopen(".repeat(24_000) + "\n```", /uses \$fopen/],
      // "/*/*" closes and reopens comments: the `include after them is code
      ["```verilog\nmodule adder;" + "/*".repeat(90_000) + "\n`include x\n```", /uses `include/],
      ["<think>" + "x".repeat(1_000_000) + "</think>", /no Verilog module/],
    ];
    for (const [response, want] of cases) {
      const { out, ms } = await fastestCpu(() => verifyDirect(verilog, { response, reference: ADDER_GOLDEN }, { services }), { under: 50 });
      assert.equal(out.reward, 0, out.reason);
      assert.match(out.reason, want);
      assert.ok(ms < 50, `${response.slice(0, 20)}… took ${ms} ms`);
    }
    assert.equal(runs, 0);
  });
});
