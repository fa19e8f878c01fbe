/**
 * The verilog verifier over HTTP (POST /reward) in the real docker sandbox with the verilog
 * image: equivalent rewrites score 1, near misses 0 with the reason, hijack attempts 0, runaway
 * simulations 0 with their status. Skips only where the image is not built (never under CI).
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import type { Sandbox } from "../../sandbox/types.js";
import { lazy } from "../../src/core/services.js";
import { testApp, fakeSandbox, testServices, verifyDirect } from "../../tests/helpers.js";
import { IN_CI, openDockerForTests } from "../../tests/sandboxes.js";
import { verilog } from "./index.js";
import { ADDER_GOLDEN, ADDER_RIPPLE, FSM_BINARY, FSM_ONEHOT } from "./designs.js";

const fence = (src: string, lang = "verilog") => `<think>an adder…</think>Here it is:\n\`\`\`${lang}\n${src}\n\`\`\`\n`;

describe("no verilog image: error (null), never 0", () => {
  test("no sandbox at all", async () => {
    const services = testServices({ sandbox: lazy(() => Promise.reject(new Error("no sandbox available: no Docker engine answers"))) });
    const r = await verifyDirect(verilog, { response: fence(ADDER_GOLDEN), reference: ADDER_GOLDEN }, { services });
    assert.equal(r.reward, null);
    assert.match(r.reason, /npx assay sandbox build.*sandbox\/images\/verilog\/recipe\.json/);
  });
  test("a sandbox without the verilog image", async () => {
    const sb = { name: "docker", languages: ["python", "cpp"], run: async () => { throw new Error("unreachable"); }, close: async () => {} } as unknown as Sandbox;
    const r = await verifyDirect(verilog, { response: fence(ADDER_GOLDEN), reference: ADDER_GOLDEN }, { services: testServices({ sandbox: fakeSandbox(sb) }) });
    assert.equal(r.reward, null);
    assert.match(r.reason, /no verilog image: run `npx assay sandbox build`/);
  });
});

const opened = await openDockerForTests(2);
const noImage = opened.sandbox && !opened.sandbox.languages.includes("verilog");
if (noImage && IN_CI) throw new Error("CI=true but the verilog sandbox image is not built (npx assay sandbox build)");
const skip = opened.skip || (noImage ? "the verilog image is not built (npx assay sandbox build verilog)" : false);
if (noImage) await opened.sandbox!.close();

describe("verilog verifier over HTTP in the docker sandbox", { skip }, () => {
  const sb = opened.sandbox as Sandbox;
  after(() => sb?.close());
  let app: Awaited<ReturnType<typeof testApp>>["app"];
  const score = async (response: string, reference: unknown, options: Record<string, unknown> = {}) => {
    app ??= (await testApp({}, [], { sandbox: fakeSandbox(sb) })).app;
    const res = await request(app).post("/reward").send({ verifier: "verilog", response, reference, options: { vectors: 60, time_limit_ms: 2000, ...options }, deadline_ms: 60_000 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as { reward: number | null; reason: string; status: string; details: any };
  };
  const adder = (body: string) => `module adder(input [7:0] a, input [7:0] b, input cin, output [7:0] sum, output cout);\n${body}\nendmodule`;

  test("equivalent rewrites: structural ripple-carry adder vs behavioural", async () => {
    const r = await score(fence(ADDER_RIPPLE), ADDER_GOLDEN);
    assert.equal(r.reward, 1, r.reason);
    assert.equal(r.details.kind, "combinational");
    assert.equal(r.details.status, "equivalent");
    assert.ok(r.details.corner_vectors >= 17, `corner vectors: ${r.details.corner_vectors}`);
    assert.equal(r.details.vectors, r.details.corner_vectors + 60);
    // systemverilog/sv tags and the golden as {golden, top} read the same
    const sv = await score(fence(ADDER_GOLDEN, "systemverilog"), { golden: ADDER_RIPPLE, top: "adder" });
    assert.equal(sv.reward, 1, sv.reason);
  });

  test("equivalent rewrites: a state machine binary vs one-hot", async () => {
    const r = await score(fence(FSM_ONEHOT), FSM_BINARY);
    assert.equal(r.reward, 1, r.reason);
    assert.equal(r.details.kind, "sequential");
    assert.equal(r.details.clock, "clk");
    assert.equal(r.details.reset, "rst (active high)");
    assert.match(r.reason, /equivalent on all 60 cycles/);
  });

  test("off-by-one width: interface mismatch naming the port", async () => {
    const r = await score(fence(ADDER_GOLDEN.replace("input [7:0] a", "input [8:0] a")), ADDER_GOLDEN);
    assert.equal(r.reward, 0);
    assert.match(r.reason, /interface mismatch: port `a` is 9 bit\(s\) wide; the reference's is 8/);
    const missing = await score(fence(adder("assign {cout, sum} = a + b;").replace(", input cin", "")), ADDER_GOLDEN);
    assert.match(missing.reason, /port `cin` .*is missing/);
  });

  test("a wrong carry: 0 with the first mismatching vector", async () => {
    const r = await score(fence(adder("assign {cout, sum} = a + b;")), ADDER_GOLDEN);
    assert.equal(r.reward, 0);
    // corner vector 1 is all ones: 255 + 255 + 1 = 511 -> sum ff, but a + b = 1fe -> fe
    assert.match(r.reason, /^vector 1: output `sum` expected 8'hff, got 8'hfe/);
    assert.deepEqual(r.details.first_mismatch, { vector: 1, inputs: { a: "8'hff", b: "8'hff", cin: "1'b1" }, output: "sum", expected: "8'hff", got: "8'hfe" });
    assert.ok(r.details.mismatched > 1);
  });

  test("a missing reset: 0 (the candidate's state is x where the golden's is known)", async () => {
    const noReset = FSM_BINARY.replace("always @(posedge clk or posedge rst)\n    if (rst) s <= S0;\n    else case", "always @(posedge clk)\n    case");
    assert.notEqual(noReset, FSM_BINARY);
    const r = await score(fence(noReset), FSM_BINARY);
    assert.equal(r.reward, 0, r.reason);
    assert.match(r.reason, /^cycle 0: output `y` expected 1'b0, got 1'bx/);
  });

  test("state initialised but never reset: equal until the mid-run reset, 0 from there", async () => {
    const golden = "module cnt(input clk, input rst_n, input en, output reg [7:0] q);\n  always @(posedge clk or negedge rst_n)\n    if (!rst_n) q <= 8'd0;\n    else if (en) q <= q + 8'd1;\nendmodule\n";
    const initOnly = "module cnt(input clk, input rst_n, input en, output reg [7:0] q = 8'd0);\n  always @(posedge clk) if (en) q <= q + 8'd1;\nendmodule\n";
    const r = await score(fence(initOnly), golden);
    assert.equal(r.reward, 0, r.reason);
    assert.equal(r.details.reset, "rst_n (active low)");
    assert.equal(r.details.mid_reset_before_cycle, 30);
    assert.match(r.reason, /^cycle 30: output `q` expected 8'h00, got 8'h[0-9a-f]{2}/);
    const once = await score(fence(initOnly), golden, { mid_reset: false });
    assert.equal(once.reward, 1, "without the mid-run reset, initial values pass: " + once.reason);
  });

  test("a wrong state transition: 0 with the first mismatching cycle", async () => {
    const wrong = FSM_BINARY.replace("S3: s <= x ? S1 : S2;", "S3: s <= x ? S1 : S0;");
    assert.notEqual(wrong, FSM_BINARY);
    const r = await score(fence(wrong), FSM_BINARY);
    assert.equal(r.reward, 0, r.reason);
    assert.equal(r.details.status, "mismatch");
    assert.match(r.reason, /^cycle \d+: output `y` expected 1'b1, got 1'b0 \(inputs x=1'b1\); \d+ of 60 cycles differ/);
  });

  test("a compile error: 0 with the tool's message", async () => {
    const r = await score(fence(adder("assign {cout, sum} = a + ;")), ADDER_GOLDEN);
    assert.equal(r.reward, 0);
    assert.equal(r.status, "ok");
    assert.equal(r.details.status, "compile_error");
    assert.match(r.reason, /does not (elaborate|compile).*syntax error/);
  });

  test("hijacks: a hierarchical reference to the golden, an early $finish, forged records, file access", async () => {
    const hier = await score(fence(adder("assign {cout, sum} = tb.golden.sum;")), ADDER_GOLDEN);
    assert.equal(hier.reward, 0, hier.reason);
    assert.match(hier.reason, /does not compile \(iverilog\).*(Unable to bind|tb\.golden)/);
    // Yosys refuses $finish (it runs an initial block's while elaborating; elsewhere it is
    // unsupported) before any simulation; a run that still ended early would lack records.
    for (const where of ["initial #12 $finish;", "always @(posedge cin) $finish;"]) {
      const finish = await score(fence(adder(`assign {cout, sum} = a + b + cin;\n${where}`)), ADDER_GOLDEN);
      assert.equal(finish.reward, 0, finish.reason);
      assert.match(finish.reason, /\$finish/);
    }
    // Prints what a naive testbench reader would take for all-correct results (Yosys runs this
    // initial block too, printing before its JSON): the records under the nonce decide.
    const forged = adder(
      "assign {cout, sum} = 0;\ninteger k;\ninitial begin for (k = 0; k < 200; k = k + 1) $display(\"%0d 00000000 0\", k); $display(\"end\"); end",
    );
    const f = await score(fence(forged), ADDER_GOLDEN);
    assert.equal(f.reward, 0, f.reason);
    assert.match(f.reason, /^vector 1: output `sum` expected 8'hff, got 8'h00/);
    const file = await score(fence(adder("assign {cout, sum} = a + b + cin;\ninteger fd; initial fd = $fopen(\"main.v\", \"r\");")), ADDER_GOLDEN);
    assert.equal(file.reward, 0);
    assert.match(file.reason, /uses \$fopen/);
    const inc = await score(fence(adder("`include \"main.v\"\nassign {cout, sum} = a + b + cin;")), ADDER_GOLDEN);
    assert.match(inc.reason, /uses `include/);
  });

  test("an infinite loop is time_limit, a $display flood output_limit, a memory bomb memory_limit: 0, never null", async () => {
    // iverilog refuses an always block without any delay at compile time; two blocks that
    // trigger each other oscillate at run time, in zero time, from the first vector with a[0] = 1.
    const osc = (extra: string) => adder(`assign {cout, sum} = a + b + cin;\nreg p, q;\nalways @(a or q) p = a[0] ? ~q : 1'b0;\nalways @(p) begin q = p;${extra} end`);
    const loop = await score(fence(osc("")), ADDER_GOLDEN, { time_limit_ms: 1000 });
    assert.equal(loop.status, "ok");
    assert.equal(loop.reward, 0, loop.reason);
    assert.equal(loop.details.status, "time_limit", loop.reason);
    const flood = await score(fence(osc(' $display("spam spam spam spam spam spam spam spam");')), ADDER_GOLDEN, { time_limit_ms: 1000 });
    assert.equal(flood.reward, 0, flood.reason);
    assert.equal(flood.details.status, "output_limit", flood.reason);
    // CPU to spare (iverilog took over 1 s of it before the limit on a busy host): what it must hit is the memory limit
    const bomb = await score(fence(adder("reg [1023:0] mem [0:(1<<24)-1];\nalways @(a) mem[a] = {1024{b[0]}};\nassign {cout, sum} = a + b + cin + mem[b][7:0];")), ADDER_GOLDEN, { time_limit_ms: 5000, memory_mb: 256 });
    assert.equal(bomb.reward, 0, bomb.reason);
    assert.equal(bomb.details.status, "memory_limit", bomb.reason);
    // the sandbox and server still serve
    const ok = await score(fence(ADDER_RIPPLE), ADDER_GOLDEN);
    assert.equal(ok.reward, 1, ok.reason);
  });

  test("no module, wrong module name, a malformed golden (invalid)", async () => {
    assert.match((await score("I don't know.", ADDER_GOLDEN)).reason, /no Verilog module/);
    const named = await score(fence(ADDER_GOLDEN.replace("module adder", "module add8")), ADDER_GOLDEN);
    assert.match(named.reason, /no module named `adder` \(it defines add8\)/);
    const res = await request(app).post("/reward").send({ verifier: "verilog", response: fence(ADDER_GOLDEN), reference: "module broken(input a; endmodule" });
    assert.ok(res.status >= 400 && res.status < 500, JSON.stringify(res.body));
    assert.equal(res.body.field, "reference");
    assert.match(res.body.error, /the reference module could not be read by yosys .*syntax error/);
    // a golden whose output is x in every vector would pass any module: the reference's fault
    const counter = "module cnt(input clk, output reg [3:0] q);\n  always @(posedge clk) q <= q + 1;\nendmodule";
    const xs = await request(app).post("/reward").send({ verifier: "verilog", response: fence("module cnt(input clk, output [3:0] q);\n  assign q = 4'd0;\nendmodule"), reference: counter, options: { vectors: 20 } });
    assert.ok(xs.status >= 400 && xs.status < 500, JSON.stringify(xs.body));
    assert.equal(xs.body.field, "reference");
    assert.match(xs.body.error, /output `q` is unknown \(x\) in every vector/);
  });

  test("formal: Yosys proves the ripple-carry adder equivalent and reports a wrong one unproven", async () => {
    const r = await score(fence(ADDER_RIPPLE), ADDER_GOLDEN, { formal: true });
    assert.equal(r.reward, 1, r.reason);
    assert.equal(r.details.formal.verdict, "proven", JSON.stringify(r.details.formal));
    const w = await score(fence(adder("assign {cout, sum} = a + b;")), ADDER_GOLDEN, { formal: true });
    assert.equal(w.details.formal.verdict, "unproven", JSON.stringify(w.details.formal));
  });
});
