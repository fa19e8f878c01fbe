/**
 * Host-side reading of Verilog text: which block of the completion is the module, and a linear
 * lexical scan of it (comments and strings skipped) for the constructs a module under test may
 * not use. Everything here runs on the event loop over model text: one pass, capped input.
 */
import { afterThink } from "../../src/core/completion.js";
import { fencedBlocks } from "../code/extract.js";

/** Longest module source scored (characters); longer is reward 0 before any work. */
export const MAX_MODULE_CHARS = 200_000;

const TAGS = new Set(["verilog", "systemverilog", "v", "sv"]);

export interface ExtractedModule {
  code: string;
  via: "verilog block" | "untagged block" | "whole text" | "none";
}

/** The last ```verilog / ```systemverilog / ```v / ```sv block after the reasoning, else the last untagged block, else the whole text if it holds a module. */
export function extractModule(response: string): ExtractedModule {
  const text = afterThink(response);
  const blocks = fencedBlocks(text);
  for (let i = blocks.length - 1; i >= 0; i--) if (TAGS.has(blocks[i].lang)) return { code: blocks[i].body, via: "verilog block" };
  for (let i = blocks.length - 1; i >= 0; i--) if (!blocks[i].lang) return { code: blocks[i].body, via: "untagged block" };
  if (!blocks.length && text.includes("endmodule")) return { code: text, via: "whole text" };
  return { code: "", via: "none" };
}

/**
 * System tasks and functions a module under test may use: the pure ones (math, conversions,
 * sizes) and the ones that only print or end the simulation, which earn nothing (the host reads
 * only records under a per-run nonce, and a run that ends early lacks records). Everything else
 * (file I/O, $readmem*, plusargs, $dump*, $root, VPI extensions) could read the testbench or
 * the file system and is refused before anything runs.
 */
export const ALLOWED_SYSTEM = new Set([
  "$clog2", "$signed", "$unsigned", "$bits", "$size", "$left", "$right", "$low", "$high", "$increment", "$dimensions",
  "$unpacked_dimensions", "$countones", "$countbits", "$onehot", "$onehot0", "$isunknown", "$cast",
  "$rtoi", "$itor", "$realtobits", "$bitstoreal", "$shortrealtobits", "$bitstoshortreal",
  "$ln", "$log10", "$exp", "$sqrt", "$pow", "$floor", "$ceil", "$sin", "$cos", "$tan", "$asin", "$acos", "$atan",
  "$atan2", "$hypot", "$sinh", "$cosh", "$tanh", "$asinh", "$acosh", "$atanh",
  "$display", "$displayb", "$displayh", "$displayo", "$write", "$writeb", "$writeh", "$writeo",
  "$strobe", "$strobeb", "$strobeh", "$strobeo", "$monitor", "$monitorb", "$monitorh", "$monitoro", "$monitoron", "$monitoroff",
  "$time", "$stime", "$realtime", "$random", "$urandom", "$urandom_range", "$info", "$warning", "$error", "$fatal",
  "$finish", "$stop", "$sformatf", "$sformat", "$psprintf",
]);

/** Compiler directives a module may not use: `include would read a file (the testbench's, say). */
const FORBIDDEN_DIRECTIVES = new Set(["`include"]);

export interface Scan {
  /** Module names in declaration order. */
  modules: string[];
  /** Forbidden system names and directives, each once, in order of first use. */
  forbidden: string[];
}

const isIdStart = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
const isIdChar = (c: number) => isIdStart(c) || (c >= 48 && c <= 57) || c === 36;
const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13 || c === 12;

/** One linear pass over the source. */
export function scanVerilog(src: string): Scan {
  const modules: string[] = [];
  const forbidden: string[] = [];
  const seen = new Set<string>();
  let wantModuleName = false;
  const n = src.length;
  let i = 0;
  while (i < n) {
    const c = src.charCodeAt(i);
    if (c === 47 /* / */ && src.charCodeAt(i + 1) === 47) {
      const e = src.indexOf("\n", i + 2);
      i = e < 0 ? n : e + 1;
    } else if (c === 47 && src.charCodeAt(i + 1) === 42 /* * */) {
      const e = src.indexOf("*/", i + 2);
      i = e < 0 ? n : e + 2;
    } else if (c === 34 /* " */) {
      i++;
      while (i < n) {
        const d = src.charCodeAt(i);
        if (d === 92) i += 2;
        else if (d === 34 || d === 10) {
          i++;
          break;
        } else i++;
      }
    } else if (c === 36 /* $ */ || c === 96 /* ` */) {
      let j = i + 1;
      while (j < n && isIdChar(src.charCodeAt(j))) j++;
      // A lone $ or ` names nothing: no slice, no lookup (a 1 MB run of them stays a plain scan).
      const name = j > i + 1 ? src.slice(i, j) : "";
      const bad = name !== "" && (c === 36 ? !ALLOWED_SYSTEM.has(name) : FORBIDDEN_DIRECTIVES.has(name));
      if (bad && !seen.has(name)) {
        seen.add(name);
        if (forbidden.length < 16) forbidden.push(name);
      }
      i = Math.max(j, i + 1);
    } else if (c === 92 /* \ escaped identifier */) {
      let j = i + 1;
      while (j < n && !isSpace(src.charCodeAt(j))) j++;
      if (wantModuleName) {
        modules.push(src.slice(i + 1, j));
        wantModuleName = false;
      }
      i = j;
    } else if (isIdStart(c)) {
      let j = i + 1;
      while (j < n && isIdChar(src.charCodeAt(j))) j++;
      const word = src.slice(i, j);
      if (wantModuleName) {
        if (word !== "automatic" && word !== "static") {
          modules.push(word);
          wantModuleName = false;
        }
      } else if (word === "module" || word === "macromodule") wantModuleName = true;
      i = j;
    } else if (c >= 48 && c <= 57) {
      // a number, possibly sized/based (8'hFF): digits, letters and ' run together
      let j = i + 1;
      while (j < n && (isIdChar(src.charCodeAt(j)) || src.charCodeAt(j) === 39)) j++;
      i = j;
    } else {
      if (!isSpace(c) && wantModuleName) wantModuleName = false;
      i++;
    }
  }
  return { modules, forbidden };
}

/** A Verilog simple identifier (what the testbench can name without escaping). */
export const SIMPLE_ID = /^[A-Za-z_][A-Za-z0-9_$]{0,127}$/;
