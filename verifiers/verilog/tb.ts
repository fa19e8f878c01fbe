/**
 * Stimulus and testbenches, generated on the host from the golden module's interface.
 *
 * One stimulus (seeded, deterministic) drives two separate simulations: the golden module's and
 * the candidate's. The testbench only applies inputs and prints the outputs, one record per
 * vector or cycle under a per-run nonce; it holds no expected value. Its module, signal and
 * instance names are random per run, so a candidate cannot name anything in it.
 *
 * Timing (documented in README.md): combinational: inputs are applied at 10·k ns and outputs
 * printed at 10·k + 5 ns. Sequential: the clock has a 10 ns period with rising edges at
 * 10·k + 5; during reset (reset_cycles cycles) data inputs are 0; after it, cycle k's inputs are
 * applied at the falling edge (10·k) and every output is printed at 10·k + 4, one time unit
 * before the rising edge: it shows the state after k rising edges past reset plus the
 * combinational response to cycle k's inputs. With mid_reset, reset is held again (data inputs
 * 0, no rows printed) before the middle cycle's row: a module that only initialises its state
 * and never resets it differs after that.
 */
import type { Port } from "./iface.js";

/** mulberry32: a small seeded 32-bit PRNG (deterministic stimulus for a seed). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** A value as a binary string of exactly `width` bits (MSB first). */
type Bits = string;

function randomBits(width: number, next: () => number): Bits {
  let s = "";
  while (s.length < width) s += next().toString(2).padStart(32, "0");
  return s.slice(0, width);
}

const ones = (w: number) => "1".repeat(w);
const zeros = (w: number) => "0".repeat(w);

export interface Stimulus {
  /** The driven inputs, in order (clock and reset excluded). */
  inputs: Port[];
  /** One row per vector/cycle: a binary string per input. */
  rows: Bits[][];
  /** Corner vectors at the start of `rows` (combinational only). */
  corners: number;
}

/** Most corner vectors generated (walking ones over wide inputs stop there). */
export const MAX_CORNERS = 512;

/**
 * Combinational: all-zeros, all-ones, each input at its min and max (the others 0), walking ones
 * over every input bit, then `random` seeded random vectors.
 */
export function combinationalStimulus(inputs: Port[], random: number, seed: number): Stimulus {
  const next = prng(seed);
  const rows: Bits[][] = [];
  const seen = new Set<string>();
  const add = (row: Bits[]) => {
    const key = row.join(",");
    if (seen.has(key) || rows.length >= MAX_CORNERS) return;
    seen.add(key);
    rows.push(row);
  };
  const base = () => inputs.map((p) => zeros(p.width));
  add(base());
  add(inputs.map((p) => ones(p.width)));
  inputs.forEach((p, i) => {
    const lo = base();
    const hi = base();
    lo[i] = p.signed ? "1" + zeros(p.width - 1) : zeros(p.width);
    hi[i] = p.signed ? "0" + ones(p.width - 1) : ones(p.width);
    add(lo);
    add(hi);
  });
  inputs.forEach((p, i) => {
    for (let b = 0; b < p.width; b++) {
      const r = base();
      r[i] = zeros(p.width - 1 - b) + "1" + zeros(b);
      add(r);
    }
  });
  const corners = rows.length;
  for (let k = 0; k < random; k++) rows.push(inputs.map((p) => randomBits(p.width, next)));
  return { inputs, rows, corners };
}

/** Sequential: `cycles` cycles of seeded random data inputs. */
export function sequentialStimulus(inputs: Port[], cycles: number, seed: number): Stimulus {
  const next = prng(seed);
  const rows: Bits[][] = [];
  for (let k = 0; k < cycles; k++) rows.push(inputs.map((p) => randomBits(p.width, next)));
  return { inputs, rows, corners: 0 };
}

export interface Clocking {
  clock: string;
  reset?: { name: string; activeLow: boolean };
  resetCycles: number;
  /** Before this cycle's row, reset is held again for resetCycles cycles (no rows printed meanwhile). */
  midReset?: number;
}

export interface TestbenchSpec {
  top: string;
  outputs: Port[];
  stimulus: Stimulus;
  clocking?: Clocking;
  /** Random hex: names the testbench's module, signals and instance, and prefixes each record. */
  nonce: string;
  /** The file holding the module(s) under test, included after the testbench. */
  dutFile: string;
}

const lit = (bits: Bits) => `${bits.length}'b${bits}`;
const decl = (kind: "reg" | "wire", w: number, name: string) => `  ${kind} ${w > 1 ? `[${w - 1}:0] ` : ""}${name};`;

/**
 * The testbench source. The module under test comes last, through `include, so nothing it
 * writes (an unclosed comment, a `define) can reach the testbench's text.
 */
export function testbench(s: TestbenchSpec): string {
  const n = s.nonce;
  const ins = s.stimulus.inputs;
  const inName = (i: number) => `i${n}_${i}`;
  const outName = (i: number) => `o${n}_${i}`;
  const clk = `c${n}`;
  const rst = `r${n}`;
  const L: string[] = ["`timescale 1ns/1ps", `module t${n};`];
  ins.forEach((p, i) => L.push(decl("reg", p.width, inName(i))));
  s.outputs.forEach((p, i) => L.push(decl("wire", p.width, outName(i))));
  const conns = [...ins.map((p, i) => `.${p.name}(${inName(i)})`), ...s.outputs.map((p, i) => `.${p.name}(${outName(i)})`)];
  const ck = s.clocking;
  if (ck) {
    L.push(`  reg ${clk};`);
    conns.push(`.${ck.clock}(${clk})`);
    if (ck.reset) {
      L.push(`  reg ${rst};`);
      conns.push(`.${ck.reset.name}(${rst})`);
    }
  }
  L.push(`  ${s.top} u${n} (${conns.join(", ")});`);
  const fmt = s.outputs.map(() => "%b").join(" ");
  const args = s.outputs.map((_, i) => `, ${outName(i)}`).join("");
  const record = (k: number) => `$display("${n} ${k}${fmt ? " " + fmt : ""}"${args});`;
  const apply = (row: Bits[]) => row.map((v, i) => `${inName(i)} = ${lit(v)};`).join(" ");
  L.push("  initial begin");
  if (ck) {
    const r = ck.reset;
    // reset_cycles 0: the reset is never asserted (held from t=0 with nothing to release it,
    // every row would be sampled in reset, where a constant module matches the golden)
    const held = ck.resetCycles > 0;
    L.push(`    ${clk} = 1'b0;${r ? ` ${rst} = 1'b${held !== r.activeLow ? 1 : 0};` : ""} ${apply(ins.map((p) => zeros(p.width)))}`);
    const holdReset = () => {
      if (!r || ck.resetCycles <= 0) return;
      L.push(`    repeat (${ck.resetCycles}) begin #5 ${clk} = 1'b1; #5 ${clk} = 1'b0; end`);
      L.push(`    ${rst} = 1'b${r.activeLow ? 1 : 0};`);
    };
    holdReset();
    s.stimulus.rows.forEach((row, k) => {
      if (r && k === ck.midReset && ck.resetCycles > 0) {
        L.push(`    ${rst} = 1'b${r.activeLow ? 0 : 1}; ${apply(ins.map((p) => zeros(p.width)))}`);
        holdReset();
      }
      L.push(`    ${apply(row)} #4 ${record(k)} #1 ${clk} = 1'b1; #5 ${clk} = 1'b0;`);
    });
  } else {
    s.stimulus.rows.forEach((row, k) => L.push(`    ${apply(row)} #5 ${record(k)} #5;`));
  }
  L.push(`    $display("${n} end");`, "    $finish;", "  end", "endmodule", `\`include "${s.dutFile}"`, "");
  return L.join("\n");
}
