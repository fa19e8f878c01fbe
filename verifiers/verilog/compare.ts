/**
 * Reading a simulation's records and comparing two of them, on the host.
 *
 * A record is the line `<nonce> <k> <bits> <bits> ...` (one %b field per output, full width)
 * and the run ends with `<nonce> end`. Lines without the nonce (the module's own $display,
 * vvp's notes) are ignored; the nonce is random per run and appears only in the testbench.
 *
 * X/Z: a golden `x` bit is a don't-care; a golden `z` bit must be `z`; a golden 0/1 bit must
 * be the same 0/1 (a candidate `x` or `z` there is a mismatch).
 */

export interface Records {
  rows: string[][];
  ended: boolean;
  /** Why the record stream is unusable (out of order, malformed), or undefined. */
  problem?: string;
}

const BITS = /^[01xzXZ]+$/;

/** The records of `stdout` for `widths` outputs. Linear in stdout (bounded by the sandbox's cap). */
export function parseRecords(stdout: string, nonce: string, widths: number[]): Records {
  const rows: string[][] = [];
  const prefix = nonce + " ";
  let ended = false;
  let from = 0;
  for (;;) {
    const at = stdout.indexOf(prefix, from);
    if (at < 0) break;
    const eol = stdout.indexOf("\n", at);
    const line = stdout.slice(at + prefix.length, eol < 0 ? undefined : eol).trimEnd();
    from = eol < 0 ? stdout.length : eol + 1;
    if (ended) return { rows, ended, problem: "records after the end record" };
    if (line === "end") {
      ended = true;
      continue;
    }
    const f = line.split(" ");
    if (f[0] !== String(rows.length)) return { rows, ended, problem: `record ${f[0]} where ${rows.length} was due` };
    const vals = f.slice(1);
    if (vals.length !== widths.length || vals.some((v, i) => v.length !== widths[i] || !BITS.test(v))) {
      return { rows, ended, problem: `record ${rows.length} is malformed` };
    }
    rows.push(vals.map((v) => v.toLowerCase()));
  }
  return { rows, ended };
}

/** Whether `got` matches `want` bit by bit under the X/Z rules above. */
export function bitsMatch(want: string, got: string): boolean {
  if (want.length !== got.length) return false;
  for (let i = 0; i < want.length; i++) {
    const w = want[i];
    if (w === "x") continue;
    if (got[i] !== w) return false;
  }
  return true;
}

export interface Mismatch {
  /** Vector or cycle index. */
  index: number;
  output: string;
  expected: string;
  got: string;
}

/** Every row compared; the first mismatch and how many rows differ. */
export function compareRows(gold: string[][], cand: string[][], outputs: string[]): { first: Mismatch | null; mismatched: number } {
  let first: Mismatch | null = null;
  let mismatched = 0;
  for (let k = 0; k < gold.length; k++) {
    const g = gold[k];
    const c = cand[k];
    if (!c) break;
    let bad = -1;
    for (let o = 0; o < g.length; o++) {
      if (!bitsMatch(g[o], c[o])) {
        bad = o;
        break;
      }
    }
    if (bad >= 0) {
      mismatched++;
      first ??= { index: k, output: outputs[bad], expected: g[bad], got: c[bad] };
    }
  }
  return { first, mismatched };
}

/** A binary string as hex where it has no x/z (shorter to read), else as bits; clipped. */
export function showBits(bits: string, max = 80): string {
  let s: string;
  if (/^[01]+$/.test(bits) && bits.length > 4) {
    let hex = "";
    const pad = bits.padStart(Math.ceil(bits.length / 4) * 4, "0");
    for (let i = 0; i < pad.length; i += 4) hex += parseInt(pad.slice(i, i + 4), 2).toString(16);
    s = `${bits.length}'h${hex}`;
  } else s = `${bits.length}'b${bits}`;
  return s.length > max ? s.slice(0, max) + "…" : s;
}
