/**
 * verilog verifier throughput against the bare simulation of the same files, in one run:
 *   (a) bare: `iverilog -g2012 -o sim main.v` then `vvp -n sim` on the candidate's testbench
 *       and module (the files the verifier simulates), spawned directly in the verilog image's
 *       root filesystem (chroot: no sandbox, no limits, no interface check, no golden run);
 *   (b) assay: the verilog verifier (docker sandbox, warm pool): Yosys reads the candidate's
 *       interface, iverilog+vvp simulate it, the host compares with the golden's cached records.
 * Two items: a ripple-carry adder against a behavioural one (combinational, corners + 200
 * random vectors) and a one-hot state machine against a binary one (sequential, 200 cycles).
 * Prints items/s and p50 per cell at 1 and 4 concurrent items, and (b)/(a).
 * Usage: npx tsx bench/verilog.ts [--quick]
 */
import { mkdtempSync, writeFileSync, rmSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { recipeFor, rootfsDir } from "../sandbox/images.js";
import { openDocker, dockerOptions } from "../sandbox/docker/index.js";
import { loadConfig } from "../src/core/config.js";
import { fakeSandbox, testServices, verifyDirect } from "../tests/helpers.js";
import { verilog } from "../verifiers/verilog/index.js";
import { ADDER_GOLDEN, ADDER_RIPPLE, FSM_BINARY, FSM_ONEHOT } from "../verifiers/verilog/designs.js";
import { interfaceScript, parseInterface } from "../verifiers/verilog/iface.js";
import { combinationalStimulus, sequentialStimulus, testbench } from "../verifiers/verilog/tb.js";
import { closedLoop as measure, spawnOut as sh } from "./lib.js";

const quick = process.argv.includes("--quick");
const TOTAL = quick ? 12 : 40;
const LEVELS = [1, 4];

async function main() {
  const config = loadConfig().sandbox;
  const recipe = recipeFor("verilog");
  if (!recipe) throw new Error("no verilog recipe");
  const rootfs = rootfsDir(recipe, config);
  const work = join(rootfs, "sandbox", "run");
  mkdirSync(work, { recursive: true });
  const dir = mkdtempSync(join(work, "bench-"));
  const inside = "/" + dir.slice(rootfs.length).replace(/^\/+/, "");
  const chroot = (argv: string[]) => sh(["chroot", rootfs, "sh", "-c", `cd ${inside} && ${argv.join(" ")}`]);

  const d = await openDocker({ ...dockerOptions(config), poolSize: 4 });
  if (!d.sandbox || !d.sandbox.languages.includes("verilog")) throw new Error(`no docker sandbox with the verilog image: ${d.note}`);
  const services = testServices({ sandbox: fakeSandbox(d.sandbox) });

  const items = [
    { name: "adder (comb)", golden: ADDER_GOLDEN, cand: ADDER_RIPPLE },
    { name: "fsm (seq)", golden: FSM_BINARY, cand: FSM_ONEHOT },
  ];
  const rows: string[] = [];
  try {
    for (const it of items) {
      // The candidate's testbench exactly as the verifier builds it (same interface and stimulus).
      const y = await d.sandbox.run({ language: "yosys", code: interfaceScript("g.v"), files: { "g.v": it.golden } });
      const iface = parseInterface(y.stdout);
      const ins = iface.ports.filter((p) => p.direction === "input" && !(iface.sequential && (p.name === "clk" || p.name === "rst")));
      const outputs = iface.ports.filter((p) => p.direction === "output");
      const stimulus = iface.sequential ? sequentialStimulus(ins, 200, 1) : combinationalStimulus(ins, 200, 1);
      const clocking = iface.sequential ? { clock: "clk", reset: { name: "rst", activeLow: false }, resetCycles: 2 } : undefined;
      writeFileSync(join(dir, "main.v"), testbench({ top: iface.top, outputs, stimulus, clocking, nonce: "0123456789abcdef", dutFile: "dut.v" }));
      writeFileSync(join(dir, "dut.v"), it.cand);
      let k = 0;
      const bare = async () => {
        const sim = `sim${k++}`;
        const out = await chroot(["iverilog", "-g2012", "-o", sim, "main.v", "&&", "vvp", "-n", sim, "&&", "rm", sim]);
        if (!out.includes("0123456789abcdef end")) throw new Error("bare simulation incomplete");
      };
      const assay = async () => {
        const r = await verifyDirect(verilog, { response: "```verilog\n" + it.cand + "\n```", reference: it.golden }, { services });
        if (r.reward !== 1) throw new Error(`verifier: ${r.reward} ${r.reason}`);
      };
      for (const c of LEVELS) {
        const a = await measure(bare, c, TOTAL);
        const b = await measure(assay, c, TOTAL);
        rows.push(`| ${it.name} | ${c} | ${a.rate.toFixed(1)} (p50 ${a.p50.toFixed(0)} ms) | ${b.rate.toFixed(1)} (p50 ${b.p50.toFixed(0)} ms) | ${(b.rate / a.rate).toFixed(2)} |`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await d.sandbox.close();
  }
  console.log(`verilog verifier vs bare iverilog+vvp, ${TOTAL} items per cell\n`);
  console.log("| item | concurrency | (a) bare iverilog+vvp, items/s | (b) assay verilog, items/s | (b)/(a) |");
  console.log("| --- | --- | --- | --- | --- |");
  for (const r of rows) console.log(r);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
