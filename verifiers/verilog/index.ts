/**
 * verilog: rewards a generated Verilog module by equivalence with a golden one, CodeV-R1 style
 * (a testbench generated from the interface; reward 1 only when every output agrees on every
 * vector or cycle).
 *
 * Steps: (1) the module is the completion's last ```verilog block, scanned on the host for
 * forbidden constructs; (2) Yosys reads both interfaces in the sandbox (the golden's once per
 * reference, cached) and they must agree port by port; (3) the stimulus is generated on the
 * host from the golden interface; (4) two separate simulations run in the sandbox, golden (once
 * per reference, cached) and candidate, each with a stimulus-only testbench that prints the
 * outputs under its own nonce; (5) the host compares. The candidate never shares a process with
 * the golden module or with an expected value. See README.md.
 */
import { createHash, randomBytes } from "node:crypto";
import { Type, type Static } from "@sinclair/typebox";
import { LRUCache } from "lru-cache";
import { InvalidItemError, MachineryError } from "../../src/core/types.js";
import { defineVerifier } from "../../src/core/verifier.js";
import type { RunOutcome, RunRequest, Sandbox } from "../../sandbox/types.js";
import { ownTimeMs } from "../../sandbox/meter.js";
import { MAX_MODULE_CHARS, SIMPLE_ID, extractModule, scanVerilog } from "./source.js";
import { interfaceMismatch, interfaceScript, parseInterface, unnameablePorts, type Interface, type Port } from "./iface.js";
import { combinationalStimulus, sequentialStimulus, testbench, type Clocking, type Stimulus } from "./tb.js";
import { compareRows, parseRecords, showBits } from "./compare.js";
import { formalScript, formalVerdict, type FormalVerdict } from "./formal.js";

const Reference = Type.Union([
  Type.String({ minLength: 1, maxLength: 1_000_000, description: "the golden module's source" }),
  Type.Object(
    {
      golden: Type.String({ minLength: 1, maxLength: 1_000_000, description: "the golden module's source" }),
      top: Type.Optional(Type.String({ pattern: SIMPLE_ID.source, description: "the module to compare (default: the golden source's top module)" })),
    },
    { additionalProperties: true },
  ),
]);

const Options = Type.Object(
  {
    vectors: Type.Integer({ minimum: 1, maximum: 5000, default: 200, description: "random vectors (combinational, after the corner vectors) or clock cycles after reset (sequential)" }),
    seed: Type.Integer({ minimum: 0, maximum: 0xffffffff, default: 1, description: "seed of the random stimulus" }),
    clock: Type.Optional(Type.String({ pattern: SIMPLE_ID.source, description: "the clock input (default: the input that clocks the golden module's flip-flops, else clk/clock)" })),
    reset: Type.Optional(Type.String({ maxLength: 128, description: "the reset input; \"\" for none (default: the golden's asynchronous reset, else rst/reset/rst_n/rstn/reset_n/resetn/areset/arst/aresetn)" })),
    reset_active: Type.Union([Type.Literal("auto"), Type.Literal("high"), Type.Literal("low")], { default: "auto", description: "reset polarity; auto: the golden's async-reset polarity, else low for names ending in n" }),
    reset_cycles: Type.Integer({ minimum: 0, maximum: 100, default: 2, description: "clock cycles the reset is held at the start (and mid-run)" }),
    mid_reset: Type.Boolean({ default: true, description: "hold the reset again before the middle cycle (sequential, with a reset, at least 8 cycles)" }),
    formal: Type.Boolean({ default: false, description: "also run Yosys equiv_make/equiv_simple/equiv_induct and report its verdict in details (the reward stays the simulation's)" }),
    time_limit_ms: Type.Integer({ minimum: 200, maximum: 60000, default: 4000, description: "CPU-time limit per sandbox run, ms (wall: twice that plus a second)" }),
    memory_mb: Type.Integer({ minimum: 64, maximum: 8192, default: 1024 }),
  },
  { additionalProperties: false },
);
type VerilogOptions = Static<typeof Options>;

/** iverilog's compile step (sandbox/job.ts's default). */
const COMPILE_MS = 10_000;
const MARGIN_MS = 1500;
const DUT = "dut.v";
const BUILD_HINT = "run `npx assay sandbox build` (recipe sandbox/images/verilog/recipe.json: iverilog and yosys)";
const RESET_NAMES = ["rst", "reset", "rst_n", "rstn", "reset_n", "resetn", "areset", "arst", "arst_n", "aresetn", "areset_n", "rst_b", "reset_b"];
const CLOCK_NAMES = ["clk", "clock", "clk_i", "i_clk", "clk_in"];

const clip = (s: string, n = 400) => (s.length > n ? s.slice(0, n) + "…" : s);
const wallOf = (o: VerilogOptions) => o.time_limit_ms * 2 + 1000;

type Run = (req: Omit<RunRequest, "limits" | "signal">) => Promise<RunOutcome>;

/** The sandbox failed (not the module): the item is an error, never a score. */
function machinery(o: RunOutcome): never {
  throw new MachineryError(`sandbox failed: ${o.message ?? o.status}`);
}

/** The first ERROR line of a Yosys run, else its last lines. */
function yosysError(o: RunOutcome): string {
  const text = (o.stderr + "\n" + o.stdout).trim();
  const at = text.indexOf("ERROR:");
  return clip(at >= 0 ? text.slice(at).split("\n")[0] : text.split("\n").slice(-3).join(" | "), 300);
}

interface Golden {
  iface: Interface;
  inputs: Port[];
  outputs: Port[];
  clocking?: Clocking;
  stimulus: Stimulus;
  rows: string[][];
}

function referenceOf(ref: Static<typeof Reference>): { golden: string; top?: string } {
  if (typeof ref === "string") return { golden: ref };
  return { golden: ref.golden, top: ref.top };
}

/** Which inputs are the clock and reset (options first, then the netlist, then names). */
function clockingOf(iface: Interface, o: VerilogOptions): Clocking | undefined {
  const inputs = iface.ports.filter((p) => p.direction === "input");
  const has = (n: string) => inputs.some((p) => p.name === n);
  const byName = (names: string[]) => names.map((n) => inputs.find((p) => p.name.toLowerCase() === n)?.name).find(Boolean);
  if (o.clock !== undefined && !has(o.clock)) throw new InvalidItemError(`options.clock: the reference has no input \`${o.clock}\``, "options");
  if (!iface.sequential && o.clock === undefined) return undefined;
  const clock = o.clock ?? (iface.clocks.length === 1 ? iface.clocks[0] : iface.clocks.find((c) => CLOCK_NAMES.includes(c.toLowerCase())) ?? byName(CLOCK_NAMES));
  if (!clock) throw new InvalidItemError("the reference module stores state but no clock input was found; set options.clock", "options");
  let reset: string | undefined;
  if (o.reset !== undefined) {
    if (o.reset !== "" && !has(o.reset)) throw new InvalidItemError(`options.reset: the reference has no input \`${o.reset}\``, "options");
    reset = o.reset || undefined;
  } else {
    reset = iface.asyncResets.find((r) => r.name !== clock)?.name ?? byName(RESET_NAMES);
  }
  if (reset === clock) reset = undefined;
  const width = (n: string) => inputs.find((p) => p.name === n)!.width;
  if (width(clock) !== 1) throw new InvalidItemError(`the clock \`${clock}\` is ${width(clock)} bits wide`, "options");
  if (reset && width(reset) !== 1) throw new InvalidItemError(`the reset \`${reset}\` is ${width(reset)} bits wide`, "options");
  let activeLow = false;
  if (reset) {
    const async = iface.asyncResets.find((r) => r.name === reset);
    activeLow = o.reset_active !== "auto" ? o.reset_active === "low" : async ? async.activeLow : /n$|_b$/i.test(reset);
  }
  const midReset = reset && o.mid_reset && o.vectors >= 8 ? Math.floor(o.vectors / 2) : undefined;
  return { clock, reset: reset ? { name: reset, activeLow } : undefined, resetCycles: o.reset_cycles, midReset };
}

/** A stimulus-only simulation of `module` under `stim`; its records, or why there are none. */
async function simulate(run: Run, module: string, g: Pick<Golden, "outputs" | "stimulus" | "clocking">, top: string) {
  const nonce = randomBytes(8).toString("hex");
  const tb = testbench({ top, outputs: g.outputs, stimulus: g.stimulus, clocking: g.clocking, nonce, dutFile: DUT });
  const r = await run({ language: "verilog", code: tb, files: { [DUT]: module } });
  if (r.status === "sandbox_error" || r.status === "not_started") machinery(r);
  const recs = parseRecords(r.stdout, nonce, g.outputs.map((p) => p.width));
  return { r, recs };
}

/** The golden side of a reference: interface, stimulus and outputs, computed once per reference and options. */
const goldens = new LRUCache<string, Promise<Golden>>({ max: 256 });

function goldenOf(run: Run, golden: string, top: string | undefined, o: VerilogOptions): Promise<Golden> {
  const key = createHash("sha256")
    .update(JSON.stringify([golden, top, o.vectors, o.seed, o.clock, o.reset, o.reset_active, o.reset_cycles, o.mid_reset]))
    .digest("hex");
  let p = goldens.get(key);
  if (!p) {
    p = computeGolden(run, golden, top, o);
    goldens.set(key, p);
    // A failed reference is not kept: a machinery failure must be retried, an invalid one is cheap to redo.
    p.catch(() => goldens.delete(key));
  }
  return p;
}

async function computeGolden(run: Run, golden: string, top: string | undefined, o: VerilogOptions): Promise<Golden> {
  const y = await run({ language: "yosys", code: interfaceScript("golden.v", top), files: { "golden.v": golden } });
  if (y.status === "sandbox_error" || y.status === "not_started") machinery(y);
  if (y.status !== "finished" || y.exitCode !== 0) throw new InvalidItemError(`the reference module could not be read by yosys (${y.status}): ${yosysError(y)}`, "reference");
  let iface: Interface;
  try {
    iface = parseInterface(y.stdout, top);
  } catch (e) {
    throw new InvalidItemError(`the reference module: ${(e as Error).message}`, "reference");
  }
  const odd = unnameablePorts(iface);
  if (odd.length) throw new InvalidItemError(`the reference has ports with escaped names (${odd.slice(0, 3).join(", ")}); not supported`, "reference");
  const inout = iface.ports.find((p) => p.direction === "inout");
  if (inout) throw new InvalidItemError(`the reference has an inout port (\`${inout.name}\`); inout ports are not supported`, "reference");
  const outputs = iface.ports.filter((p) => p.direction === "output");
  if (!outputs.length) throw new InvalidItemError("the reference module has no outputs", "reference");
  const clocking = clockingOf(iface, o);
  const driven = iface.ports.filter((p) => p.direction === "input" && p.name !== clocking?.clock && p.name !== clocking?.reset?.name);
  const stimulus = clocking ? sequentialStimulus(driven, o.vectors, o.seed) : combinationalStimulus(driven, o.vectors, o.seed);
  const g = { iface, inputs: driven, outputs, clocking, stimulus };
  const { r, recs } = await simulate(run, golden, g, iface.top);
  if (r.status !== "finished") {
    const why = r.status === "compile_error" ? clip(r.compile?.stderr || r.stderr) : r.status;
    throw new InvalidItemError(`the reference module's simulation failed: ${why}`, "reference");
  }
  if (recs.problem || !recs.ended || recs.rows.length !== stimulus.rows.length) {
    throw new InvalidItemError(`the reference module's simulation did not print every vector (${recs.problem ?? `${recs.rows.length} of ${stimulus.rows.length}`})`, "reference");
  }
  // A golden x bit is don't-care: an output that is x in every vector (a counter with no reset
  // or initial value) would pass any candidate at all
  const unknown = outputs.find((_, i) => recs.rows.every((row) => /^[xX]+$/.test(row[i])));
  if (unknown) throw new InvalidItemError(`the reference's output \`${unknown.name}\` is unknown (x) in every vector, so any module would match it: give the reference a reset or an initial value`, "reference");
  return { ...g, rows: recs.rows };
}

/** The candidate's inputs at row k, for details. */
function inputsAt(g: Golden, k: number): Record<string, string> {
  const out: Record<string, string> = {};
  g.stimulus.inputs.forEach((p, i) => (out[p.name] = showBits(g.stimulus.rows[k][i])));
  return out;
}

export const verilog = defineVerifier({
  name: "verilog",
  description:
    "Verilog module equivalence (CodeV-R1 style): the completion's last ```verilog module against a golden module, simulated separately on generated corner/random vectors or clocked sequences with Icarus Verilog; Yosys reads the interfaces.",
  reference: Reference,
  options: Options,
  usesSandbox: true,
  budgetMs(item) {
    // golden: interface + compile + run; candidate: the same; formal: one more run.
    const runs = 4 + (item.options.formal ? 1 : 0);
    return runs * wallOf(item.options) + 2 * COMPILE_MS + MARGIN_MS;
  },
  async verify(item, ctx) {
    const o = item.options;
    const ref = referenceOf(item.reference);
    let sandbox: Sandbox;
    try {
      sandbox = await ctx.services.sandbox();
    } catch (e) {
      return { reward: null, reason: `${(e as Error).message}; the verilog verifier needs a sandbox with the verilog image: ${BUILD_HINT}` };
    }
    if (!sandbox.languages.includes("verilog") || !sandbox.languages.includes("yosys")) {
      return { reward: null, reason: `the ${sandbox.name} sandbox has no verilog image: ${BUILD_HINT}` };
    }

    const { code: module, via } = extractModule(item.response);
    const details: Record<string, unknown> = { extracted_via: via };
    if (!module.trim()) return { reward: 0, reason: "the completion holds no Verilog module (no ```verilog block)", details };
    if (module.length > MAX_MODULE_CHARS) return { reward: 0, reason: `the module is ${module.length} characters; at most ${MAX_MODULE_CHARS} are scored`, details };
    const scan = scanVerilog(module);
    if (scan.forbidden.length) {
      return { reward: 0, reason: `the module uses ${scan.forbidden.join(", ")}, which a module under test may not (file access, plusargs, $root, \`include)`, details: { ...details, forbidden: scan.forbidden } };
    }

    // Limits: each run gets the asked limits, shrunk so that every remaining run fits the deadline.
    const runsLeft = 4 + (o.formal ? 1 : 0);
    const room = ctx.deadline - Date.now() - 2 * COMPILE_MS - MARGIN_MS;
    const wallMs = Math.max(500, Math.min(wallOf(o), Math.floor(room / runsLeft)));
    const limits = { cpuMs: Math.min(o.time_limit_ms, wallMs), wallMs, memoryMb: o.memory_mb };
    // Waiting for a sandbox slot stops the item's clock (sandbox/README.md#admission), and so
    // does a run's wait for a CPU: each run is charged its own time (sandbox/README.md#time-limits).
    const queued = ctx.unclocked?.bind(ctx);
    const run: Run = (req) => {
      const going = sandbox.run({ ...req, limits, signal: ctx.signal, queued });
      return ctx.unclocked ? ctx.unclocked(going, (r) => ownTimeMs(r, wallMs, COMPILE_MS)) : going;
    };

    const t0 = Date.now();
    const g = await goldenOf(run, ref.golden, ref.top, o);
    const top = g.iface.top;
    Object.assign(details, {
      top,
      kind: g.clocking ? "sequential" : "combinational",
      ...(g.clocking ? { clock: g.clocking.clock, reset: g.clocking.reset ? `${g.clocking.reset.name} (active ${g.clocking.reset.activeLow ? "low" : "high"})` : null } : {}),
      ...(g.clocking?.midReset !== undefined ? { mid_reset_before_cycle: g.clocking.midReset } : {}),
      vectors: g.stimulus.rows.length,
      ...(g.clocking ? {} : { corner_vectors: g.stimulus.corners }),
    });
    if (!scan.modules.includes(top)) {
      return { reward: 0, reason: `the completion defines no module named \`${top}\`${scan.modules.length ? ` (it defines ${scan.modules.slice(0, 4).join(", ")})` : ""}`, details };
    }

    // The candidate's interface, read by Yosys alone (no golden in that run).
    const y = await run({ language: "yosys", code: interfaceScript(DUT, top), files: { [DUT]: module } });
    if (y.status === "sandbox_error" || y.status === "not_started") machinery(y);
    if (y.status !== "finished") return { reward: 0, reason: `reading the module's interface ended with ${y.status}`, details: { ...details, status: y.status } };
    if (y.exitCode !== 0) return { reward: 0, reason: `the module does not elaborate (yosys): ${yosysError(y)}`, details: { ...details, status: "compile_error", error: yosysError(y) } };
    let cand: Interface;
    try {
      cand = parseInterface(y.stdout, top);
    } catch (e) {
      return { reward: 0, reason: `the module's interface could not be read: ${(e as Error).message}`, details: { ...details, status: "compile_error" } };
    }
    const why = interfaceMismatch(g.iface, cand);
    if (why) return { reward: 0, reason: `interface mismatch: ${why}`, details: { ...details, status: "interface_mismatch", mismatch: why } };

    // The candidate's own simulation: stimulus only, its own nonce.
    const { r, recs } = await simulate(run, module, g, top);
    details.sim_ms = Date.now() - t0;
    if (r.status === "compile_error") {
      const msg = clip((r.compile?.stderr || r.stderr).trim());
      return { reward: 0, reason: `the module does not compile (iverilog): ${msg}`, details: { ...details, status: "compile_error", error: msg } };
    }
    if (r.status !== "finished") {
      return { reward: 0, reason: `the simulation ended with ${r.status}${r.status === "time_limit" ? " (a zero-delay loop, or a simulation that never ends?)" : ""}`, details: { ...details, status: r.status } };
    }
    const total = g.rows.length;
    const unit = g.clocking ? "cycle" : "vector";
    if (recs.problem) return { reward: 0, reason: `the simulation's records are unusable: ${recs.problem}`, details: { ...details, status: "bad_records" } };
    const cmp = compareRows(g.rows, recs.rows, g.outputs.map((p) => p.name));
    const missing = total - recs.rows.length;
    details.mismatched = cmp.mismatched;
    details.compared = Math.min(total, recs.rows.length);

    let formal: FormalVerdict | undefined;
    if (o.formal) {
      const f = await run({ language: "yosys", code: formalScript(top), files: { "gold.v": ref.golden, "gate.v": module } });
      if (f.status === "sandbox_error" || f.status === "not_started") machinery(f);
      formal = formalVerdict(f);
      details.formal = formal;
    }

    if (cmp.first) {
      const m = cmp.first;
      details.status = "mismatch";
      details.first_mismatch = { [unit]: m.index, inputs: inputsAt(g, m.index), output: m.output, expected: showBits(m.expected), got: showBits(m.got) };
      const ins = Object.entries(inputsAt(g, m.index)).map(([k, v]) => `${k}=${v}`).join(" ");
      return {
        reward: 0,
        reason: `${unit} ${m.index}: output \`${m.output}\` expected ${showBits(m.expected, 40)}, got ${showBits(m.got, 40)}${ins ? ` (inputs ${clip(ins, 120)})` : ""}; ${cmp.mismatched} of ${total} ${unit}s differ`,
        details,
      };
    }
    if (missing > 0 || !recs.ended) {
      details.status = "incomplete";
      return { reward: 0, reason: `the simulation stopped after ${recs.rows.length} of ${total} ${unit}s (does the module call $finish or $stop?)`, details };
    }
    details.status = "equivalent";
    return { reward: 1, reason: `equivalent on all ${total} ${unit}s${formal ? `; formal: ${formal.verdict}` : ""}`, details };
  },
});

export default verilog;
