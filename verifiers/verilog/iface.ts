/**
 * A module's interface as Yosys reads it (in the sandbox): `read_verilog -sv; hierarchy; proc;
 * flatten`, every cell but the storage ones deleted, then `write_json` to stdout. Parameters take
 * their defaults, so `[WIDTH-1:0]` is a number here. The host only parses that JSON (bounded by
 * the sandbox's output cap) and compares two interfaces.
 */
import { SIMPLE_ID } from "./source.js";

export interface Port {
  name: string;
  direction: "input" | "output" | "inout";
  width: number;
  signed: boolean;
}

export interface Interface {
  top: string;
  ports: Port[];
  /** The module holds flip-flops, latches or memories (after flattening). */
  sequential: boolean;
  /** Input ports that clock a flip-flop or memory. */
  clocks: string[];
  /** Input ports wired to an asynchronous reset, with the level that resets. */
  asyncResets: { name: string; activeLow: boolean }[];
}

/** The Yosys script that prints the interface of `file`'s module `top` (or the auto-detected top). */
export function interfaceScript(file: string, top?: string): string {
  return [
    `read_verilog -sv ${file}`,
    top ? `hierarchy -check -top ${top}` : "hierarchy -check -auto-top",
    "proc",
    "flatten",
    // keep only what stores state: enough to tell sequential from combinational and find clocks
    "select -set keep t:$*dff* t:$*dffe* t:$*latch* t:$mem* t:$sr t:$_SR_* t:$_DFF* t:$_ALDFF* t:$_SDFF* t:$_DLATCH*",
    // (no opt_clean: with the logic gone, it would remove the now-unused flip-flops too)
    "delete c:* @keep %d",
    "write_json",
    "",
  ].join("\n");
}

/** How write_json's output begins. */
export const JSON_START = '{\n  "creator": "Yosys';

const STORAGE = /dff|latch|^\$mem|^\$sr$|^\$_SR_/i;

/** Parses write_json's output into the top module's interface; throws with a reason. */
export function parseInterface(stdout: string, top?: string): Interface {
  // The module's own $display output (Yosys runs initial blocks' system tasks while elaborating)
  // comes before write_json's, and cannot hold this newline-and-indent: the last one is Yosys's.
  const start = stdout.lastIndexOf(JSON_START);
  if (start < 0) throw new Error("yosys printed no design");
  let j: any;
  try {
    j = JSON.parse(stdout.slice(start));
  } catch {
    throw new Error("yosys's JSON could not be read");
  }
  const mods: Record<string, any> = j?.modules ?? {};
  let name = top;
  if (!name) name = Object.keys(mods).find((m) => String(mods[m]?.attributes?.top ?? "").replace(/^0+/, "") === "1");
  if (!name || !mods[name]) throw new Error(top ? `no module named ${top}` : "no top module found");
  const m = mods[name];
  const ports: Port[] = [];
  const bitOwner = new Map<number | string, string>();
  for (const [pn, p] of Object.entries<any>(m.ports ?? {})) {
    const bits: unknown[] = Array.isArray(p.bits) ? p.bits : [];
    ports.push({ name: pn, direction: p.direction, width: bits.length, signed: Number(p.signed ?? 0) === 1 });
    if (p.direction === "input") for (const b of bits) if (typeof b === "number") bitOwner.set(b, pn);
  }
  const clocks = new Set<string>();
  const resets = new Map<string, boolean>();
  let sequential = false;
  for (const c of Object.values<any>(m.cells ?? {})) {
    const type = String(c.type ?? "");
    if (!STORAGE.test(type)) continue;
    sequential = true;
    const conn = c.connections ?? {};
    for (const k of ["CLK", "C", "RD_CLK", "WR_CLK"]) {
      for (const b of conn[k] ?? []) {
        const owner = bitOwner.get(b);
        if (owner) clocks.add(owner);
      }
    }
    for (const b of conn.ARST ?? []) {
      const owner = bitOwner.get(b);
      // Yosys writes parameters as binary strings; ARST_POLARITY 1 resets on high.
      if (owner) resets.set(owner, !/1$/.test(String(c.parameters?.ARST_POLARITY ?? "1")));
    }
  }
  return { top: name, ports, sequential, clocks: [...clocks], asyncResets: [...resets].map(([n, activeLow]) => ({ name: n, activeLow })) };
}

/** Golden ports whose names the testbench cannot write plainly (escaped identifiers). */
export function unnameablePorts(i: Interface): string[] {
  return i.ports.filter((p) => !SIMPLE_ID.test(p.name)).map((p) => p.name);
}

/** Why the candidate's interface differs from the golden one, or null when the ports agree. */
export function interfaceMismatch(gold: Interface, cand: Interface): string | null {
  const byName = new Map(cand.ports.map((p) => [p.name, p]));
  for (const g of gold.ports) {
    const c = byName.get(g.name);
    if (!c) return `port \`${g.name}\` (${g.direction} [${g.width - 1}:0]) is missing`;
    if (c.direction !== g.direction) return `port \`${g.name}\` is an ${c.direction}; the reference's is an ${g.direction}`;
    if (c.width !== g.width) return `port \`${g.name}\` is ${c.width} bit(s) wide; the reference's is ${g.width}`;
  }
  const gold_names = new Set(gold.ports.map((p) => p.name));
  const extra = cand.ports.find((p) => !gold_names.has(p.name));
  if (extra) return `port \`${extra.name}\` (${extra.direction}) is not in the reference's interface`;
  return null;
}
