/**
 * Parses a normalised answer into a Value: the answer's shape (list, set, tuple, interval,
 * union, matrix, relation, text) is read here at the top level, bracket-aware; each scalar leaf
 * goes to compute-engine (LaTeX) or mathjs (plain ASCII) and becomes an Expr.
 */
import { ComputeEngine } from "@cortex-js/compute-engine";
// the number-only build loads in half the time of the full one; parsing needs nothing more
import {
  parse as mathjsParse, AccessorNode, ArrayNode, AssignmentNode, BlockNode, ConditionalNode, ConstantNode, FunctionAssignmentNode,
  FunctionNode, IndexNode, ObjectNode, OperatorNode, ParenthesisNode, RangeNode, RelationalNode,
} from "mathjs/number";
import { fromMathjs, type Expr } from "./expr.js";
import { dropTrailing } from "../../src/core/completion.js";

/** The last character that is not a comma, semicolon, full stop or space. */
const LAST_NOT_SEPARATOR = /[^,;.\s][,;.\s]*$/;

/**
 * mathjs (15.2.0) sets each of these node classes' `name` with `Object.defineProperty` (babel's
 * helper), which leaves the class constructor in dictionary mode; V8 (Node 20's 11.3, and 22 and
 * 24 alike) then aborts every optimising compile of code that constructs the class ("Bailed out
 * due to dependency change") and starts it again, for as long as the process parses: `new
 * ConstantNode(10)` in a loop, 1,200 aborted compiles in 3 s, ~0.3-7 ms of a compiler thread each,
 * and `parseNumber`, `parseParentheses` and their callers never optimised (bench/README.md, issue
 * 38 sixth pass). Declaring a subclass sets the class up as a prototype in fast mode, which ends
 * it; the classes themselves are unchanged. tests: verifiers/math/parse-fast.test.ts.
 */
export const MATHJS_NODE_CLASSES = [
  AccessorNode, ArrayNode, AssignmentNode, BlockNode, ConditionalNode, ConstantNode, FunctionAssignmentNode,
  FunctionNode, IndexNode, ObjectNode, OperatorNode, ParenthesisNode, RangeNode, RelationalNode,
] as unknown as (new (...args: never[]) => object)[];
for (const C of MATHJS_NODE_CLASSES) void class extends C {};

export type Value =
  /**
   * `unit`: the value was written with a degree or percent sign (`e` is the number as written).
   * `implicit`: a letter before a bracket was read as a product (`k(x+2)` is k·(x+2)), a reading
   * the writer may not have meant: no numeric disproof rests on it (see compareUnits).
   */
  | { t: "expr"; e: Expr; src: string; unit?: "deg" | "pct"; implicit?: string }
  | { t: "text"; s: string }
  /** `pm`: the two values of a `\pm`, spliced into a list around it. */
  | { t: "list"; kind: "bare" | "set" | "tuple" | "ratio"; items: Value[]; src: string; pm?: true }
  /** `exact ≈ approx` (exact null when only the decimal is written): a rounded value. */
  | { t: "approx"; exact: Value | null; approx: Value }
  | { t: "interval"; lo: Value; hi: Value; loOpen: boolean; hiOpen: boolean }
  | { t: "union"; items: Value[] }
  | { t: "matrix"; rows: Value[][] }
  | { t: "rel"; ops: RelOp[]; parts: Value[]; srcs: string[] };

export type RelOp = "=" | "<" | "<=" | ">" | ">=" | "!=";

/** Raised when an answer is past the caps: too long, too deep, exponents too large, too many bars or signs in a row. */
export class TooComplex extends Error {}

/**
 * `bars`: absolute-value and norm bars (`|`, `\|`, `\vert`, `\lvert`, …) in one answer.
 * compute-engine's parser tries every pairing of bars that open and close alike, and its time
 * grows exponentially with their number: `|` 32 times took 29 s, `\|` 20 times 9 s, past any
 * deadline (an item that ends as null, which a trainer masks). |x| + |y| + |z| + |w| has 8.
 */
export const LIMITS = { length: 2000, depth: 24, exponentDigits: 5, items: 200, bars: 10, signs: 16 };
/**
 * More than LIMITS.signs signs in a row (`--+-…`, spaces between them or not): compute-engine
 * reads a run of signs in quadratic time (2,000 of them ~0.8 s on an idle core); no answer
 * has more than a few.
 */
const SIGN_RUN = new RegExp(`(?:[-+\u2212]\\s*){${LIMITS.signs + 1}}`);
/** A bar compute-engine reads as a delimiter that may open or close. */
const BAR = /\\[lr]?[vV]ert(?![a-zA-Z])|\|/g;

let engine: ComputeEngine | null = null;
/** Whether an item is being graded, and whether its scope has been pushed yet. */
let inItem = false, pushed = false;
function ce(): ComputeEngine {
  const e = (engine ??= new ComputeEngine());
  if (inItem && !pushed) { e.pushScope(undefined, "assay-item"); pushed = true; }
  return e;
}

/**
 * Runs `f` (one item's grading) in a scope of its own. compute-engine declares every symbol it
 * meets and infers its type from use (`c'(x)` makes `c` a function); in one long-lived scope
 * that made an item's reading depend on the items graded before it (`\frac{1+a+b+c}c` failed to
 * parse after `c'(x)`). Declarations and inferences made inside the scope are dropped with it,
 * so nothing an item meets outlives the item, and the engine's global scope stays as built.
 * The scope is pushed on the item's first use of the engine (most items never use it: the
 * mathjs fast path and exact arithmetic decide them); a push and pop cost ~30 µs, a fresh
 * engine per item ~200 ms.
 */
export function isolated<T>(f: () => T): T {
  if (inItem) return f();
  inItem = true;
  try {
    return f();
  } finally {
    if (pushed) engine!.popScope();
    inItem = false;
    pushed = false;
  }
}

/**
 * compute-engine ran out of a time, iteration or recursion budget. That says nothing about the
 * answer (the same item may finish on an idle machine): the item ends as a machinery outcome,
 * never as a 0.
 */
export class EngineBudget extends Error {}

/** Rethrows compute-engine's cancellations (identified by name, as the engine itself does). */
function rethrowCancellation(err: unknown): void {
  if (err instanceof EngineBudget) throw err;
  if (err instanceof Error && err.name === "CancellationError") {
    const cause = (err as { cause?: unknown }).cause;
    throw new EngineBudget(`compute-engine cancelled (${typeof cause === "string" ? cause : "budget exhausted"})`);
  }
}

/** Wall-clock guard around one symbolic call: far above its normal cost (1-40 ms). Tests lower it. */
export const ENGINE_BUDGET = { ms: 1500 };

/** Global definitions of the engine (tests: per-item scopes leave them as they are). */
export function engineGlobalNames(): number {
  const scope = (ce() as unknown as { context?: { lexicalScope?: { bindings?: Map<string, unknown> } } }).context?.lexicalScope;
  return scope?.bindings?.size ?? -1;
}

export function checkCaps(s: string): void {
  if (s.length > LIMITS.length) throw new TooComplex(`answer longer than ${LIMITS.length} characters`);
  let depth = 0, max = 0;
  for (const c of s) {
    if (c === "{" || c === "(" || c === "[") { depth++; if (depth > max) max = depth; } else if (c === "}" || c === ")" || c === "]") depth--;
  }
  if (max > LIMITS.depth) throw new TooComplex(`answer nested deeper than ${LIMITS.depth}`);
  if (SIGN_RUN.test(s)) throw new TooComplex(`more than ${LIMITS.signs} signs in a row`);
  let bars = 0;
  for (BAR.lastIndex = 0; BAR.exec(s) !== null;) if (++bars > LIMITS.bars) throw new TooComplex(`more than ${LIMITS.bars} absolute-value or norm bars`);
  const big = new RegExp(`\\^\\s*\\{?\\s*-?\\d{${LIMITS.exponentDigits + 1},}|\\d{${LIMITS.exponentDigits + 1},}\\s*!`);
  if (big.test(s)) throw new TooComplex(`exponent or factorial argument longer than ${LIMITS.exponentDigits} digits`);
  // towers: more than 3 stacked exponents
  if (/(\^\s*\{?[^^]{0,12}){4,}/.test(s) && (s.match(/\^/g)?.length ?? 0) >= 4 && /\^\s*\{[^{}]*\^\s*\{[^{}]*\^\s*\{[^{}]*\^/.test(s)) throw new TooComplex("exponent tower deeper than 3");
}

const OPEN = "([{";
const CLOSE = ")]}";

/** Splits at `sep` (a string or regex source) at bracket depth 0. */
function splitTop(s: string, sep: RegExp): string[] {
  const out: string[] = [];
  let depth = 0, last = 0;
  const re = new RegExp(sep.source, "y");
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "\\") {
      if (s.startsWith("\\begin", i)) depth++;
      else if (s.startsWith("\\end", i)) depth--;
      else if (s[i + 1] === "{" || s[i + 1] === "}") { depth += s[i + 1] === "{" ? 1 : -1; i++; continue; }
      else if (depth === 0) { re.lastIndex = i; const m = re.exec(s); if (m) { out.push(s.slice(last, i)); last = i + m[0].length; i = last - 1; continue; } }
      if (/[a-zA-Z]/.test(s[i + 1] ?? "")) { while (/[a-zA-Z]/.test(s[i + 1] ?? "")) i++; } else i++;
      continue;
    }
    if (OPEN.includes(c)) depth++;
    else if (CLOSE.includes(c)) depth--;
    else if (depth === 0) {
      re.lastIndex = i;
      const m = re.exec(s);
      if (m && m[0].length) { out.push(s.slice(last, i)); last = i + m[0].length; i = last - 1; }
    }
  }
  out.push(s.slice(last));
  return out;
}

/** Index of the bracket that closes the one opening at 0, or -1. */
function matchingClose(s: string): number {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    if (s.startsWith("\\{", i) || s.startsWith("\\langle", i)) { depth++; i += s[i + 1] === "{" ? 1 : 6; continue; }
    if (s.startsWith("\\}", i) || s.startsWith("\\rangle", i)) { depth--; if (depth === 0) return i; i += s[i + 1] === "}" ? 1 : 6; continue; }
    if (s[i] === "\\") { i++; continue; }
    if (OPEN.includes(s[i])) depth++;
    else if (CLOSE.includes(s[i])) { depth--; if (depth === 0) return i; }
  }
  return -1;
}

const REL = /\\leq?(?![a-zA-Z])|\\geq?(?![a-zA-Z])|\\neq?(?![a-zA-Z])|\\lt(?![a-zA-Z])|\\gt(?![a-zA-Z])|<=|>=|!=|=|<|>|\\approx(?![a-zA-Z])/;
function relOf(tok: string): RelOp | "~" {
  const t = tok.trim();
  if (t === "=") return "=";
  if (t === "<" || t === "\\lt") return "<";
  if (t === ">" || t === "\\gt") return ">";
  if (t === "<=" || t.startsWith("\\le")) return "<=";
  if (t === ">=" || t.startsWith("\\ge")) return ">=";
  if (t === "!=" || t.startsWith("\\ne")) return "!=";
  return "~";
}

/** Splits at top-level relation symbols, keeping the symbols. */
function splitRelations(s: string): { parts: string[]; ops: string[] } {
  const parts: string[] = [];
  const ops: string[] = [];
  let depth = 0, last = 0;
  const re = new RegExp(REL.source, "y");
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (depth === 0) {
      re.lastIndex = i;
      const m = re.exec(s);
      if (m) { parts.push(s.slice(last, i)); ops.push(m[0]); last = i + m[0].length; i = last - 1; continue; }
    }
    if (c === "\\") {
      if (s.startsWith("\\begin", i)) depth++;
      else if (s.startsWith("\\end", i)) depth--;
      else if (s[i + 1] === "{") depth++;
      else if (s[i + 1] === "}") depth--;
      if (/[a-zA-Z]/.test(s[i + 1] ?? "")) { while (/[a-zA-Z]/.test(s[i + 1] ?? "")) i++; } else i++;
      continue;
    }
    if (OPEN.includes(c)) depth++;
    else if (CLOSE.includes(c)) depth--;
  }
  parts.push(s.slice(last));
  return { parts, ops };
}

const WORD_FUNCS = /^(?:sin|cos|tan|sec|csc|cot|log|ln|exp|sqrt|arcsin|arccos|arctan|sinh|cosh|tanh|pi|infty|inf|infinity)$/i;

export interface ParseOptions {
  plain: boolean;
  /**
   * Single letters read as functions before a bracket (`f(x+1)`): f, g, h, and any letter the
   * item defines as one (`p(x) = …` on either side; see functionNames). Every other letter
   * before a bracket multiplies it: `a(b+c)` is ab + ac.
   */
  functions?: string;
}

/** Letters conventionally naming functions: `f(x+1)` is f applied to x+1. */
export const KNOWN_FUNCTIONS = "fgh";

/**
 * The letters an answer or reference defines as functions, `p(x) = …`, `q(t,s) =` (a letter
 * applied to bare variables and then equated); linear in the text.
 */
export function functionNames(...texts: string[]): string {
  let out = KNOWN_FUNCTIONS;
  for (const t of texts) {
    for (const m of t.matchAll(/(?<![\\a-zA-Z])([a-zA-Z])\s*\(\s*[a-zA-Z](?:\s*,\s*[a-zA-Z])*\s*\)\s*=/g)) if (!out.includes(m[1])) out += m[1];
  }
  return out;
}

/**
 * A run of letters directly before a bracket, not a command's name (`\sin(`) nor a known
 * function word of plain text (`sqrt(`), whose last letter is no function: the bracket is a
 * factor. Returns the text with an explicit product and the first letter so read, or null.
 */
function implicitProducts(s: string, o: ParseOptions): { s: string; letter: string } | null {
  if (!s.includes("(")) return null;
  const fns = o.functions ?? KNOWN_FUNCTIONS;
  let letter: string | null = null;
  const out = s.replace(/(?<![\\a-zA-Z])([a-zA-Z]+)(\s*)(?=\()/g, (m, w: string) => {
    if (WORD_FUNCS.test(w) || ASCII_FUNCS.has(w.toLowerCase()) || fns.includes(w[w.length - 1])) return m;
    letter ??= w[w.length - 1];
    return `${w}${o.plain ? "*" : "\\cdot "}`;
  });
  return letter === null ? null : { s: out, letter };
}

type Reader = (s: string, o: ParseOptions, depth: number) => Value | null;

/**
 * Reads an answer into a Value: the readers below are tried in order of how loosely their
 * notation binds (lists, unions, relations, labels, ratios, ±, matrices, brackets, words and
 * units), and what none of them claims is an expression (`leaf`).
 */
export function parseValue(s: string, o: ParseOptions, depth = 0): Value {
  if (depth > 12) throw new TooComplex("answer structure nested too deeply");
  s = dropTrailing(s.trim().replace(/^(?:[,;\s]|\.(?!\d))+/, ""), LAST_NOT_SEPARATOR);
  if (!s) return { t: "text", s: "" };
  const early = readList(s, o, depth) ?? readUnion(s, o, depth);
  if (early) return early;
  const rel = readRelation(s, o, depth);
  if (typeof rel !== "string") return rel;
  s = rel;
  for (const read of READERS) {
    const v = read(s, o, depth);
    if (v) return v;
  }
  return leaf(s, o);
}

/** Lists: `;` binds looser than `,`. */
const readList: Reader = (s, o, depth) => {
  for (const sep of [/;/, /,/]) {
    const parts = splitTop(s, sep).map((p) => p.trim()).filter((p) => p !== "");
    if (parts.length > 1) {
      if (parts.length > LIMITS.items) throw new TooComplex(`more than ${LIMITS.items} items`);
      return { t: "list", kind: "bare", items: spliceSigns(parts.map((p) => parseValue(p, o, depth + 1))), src: s };
    }
  }
  return null;
};

/** Unions: `A \cup B`. */
const readUnion: Reader = (s, o, depth) => {
  const cup = splitTop(s, /\\cup(?![a-zA-Z])|∪/);
  if (cup.length > 1) return { t: "union", items: cup.map((p) => parseValue(p, o, depth + 1)) };
  return null;
};

/**
 * Relations; `\approx` makes a rounded value: `\sqrt2 \approx 1.414`, `x = \sqrt 2 \approx 1.41`,
 * `\approx 1.4`. Returns the Value, or the text to read on when the relation signs only
 * decorate it.
 */
function readRelation(s: string, o: ParseOptions, depth: number): Value | string {
  const rel = splitRelations(s);
  if (rel.ops.length) {
    let { parts, ops } = rel;
    const ax = ops.findIndex((x) => relOf(x) === "~");
    if (ax >= 0 && ax === ops.length - 1 && ops.slice(0, ax).every((x) => relOf(x) === "=") && parts[ax + 1].trim()) {
      const approx = parseValue(parts[ax + 1], o, depth + 1);
      // the exact part: the last of `x = e`, unless it only names the answer (`x \approx 11`)
      const before = parts.slice(0, ax + 1).map((p) => p.trim()).filter((p) => p !== "");
      let exact: Value | null = null;
      if (before.length) {
        const last = before[before.length - 1];
        const v = parseValue(last, o, depth + 1);
        exact = before.length === 1 && /^[a-zA-Z](?:_\{?\w+\}?)?$/.test(last.replace(/\s+/g, "")) ? null : v;
      }
      return { t: "approx", exact, approx };
    }
    if (ax >= 0) {
      if (ops.slice(0, ax).some((x) => relOf(x) === "=")) { parts = parts.slice(0, ax + 1); ops = ops.slice(0, ax); }
      ops = ops.map((x) => (relOf(x) === "~" ? "=" : x));
    }
    if (ops.length) {
      const trimmed = parts.map((p) => p.trim());
      if (trimmed.every((p) => p !== "")) {
        return { t: "rel", ops: ops.map((x) => relOf(x) as RelOp), parts: trimmed.map((p) => parseValue(p, o, depth + 1)), srcs: trimmed };
      }
      // A side missing from an inequality (`\ne 2`, `< 2`, `2 <`) states no value: "not 2" is
      // not 2. Kept as written, so it equals only itself. (`= 2` is still 2.)
      if (ops.some((x) => relOf(x) !== "=")) return s;
    }
    return parts.filter((p) => p.trim()).join(" ");
  }
  return s;
}

/** Words of three letters or fewer that are answers, not products of variables. */
const SHORT_WORDS = /^(?:yes|no|odd)$/i;

/** A word label: `Minimum: 1`, `\text{Area: } 12` (three letters or more: `a:b` is a ratio). */
const readLabel: Reader = (s, o, depth) => {
  const label = /^([a-zA-Z][a-zA-Z ]{1,30}[a-zA-Z])\s*:\s*(\S[\s\S]*)$/.exec(s);
  if (label && !WORD_FUNCS.test(label[1].trim())) {
    const name = label[1].trim().toLowerCase().replace(/\s+/g, " ");
    return { t: "rel", ops: ["="], parts: [{ t: "text", s: name }, parseValue(label[2], o, depth + 1)], srcs: [name, label[2].trim()] };
  }
  return null;
};

/** A ratio `a:b`. */
const readRatio: Reader = (s, o, depth) => {
  const colon = splitTop(s, /:(?!=)/);
  if (colon.length > 1 && colon.every((p) => p.trim())) {
    return { t: "list", kind: "ratio", items: colon.map((p) => parseValue(p, o, depth + 1)), src: s };
  }
  return null;
};

/**
 * `\pm`: two values (a set of several values holding a `\pm` is read by the set rule, member by
 * member).
 */
const readPm: Reader = (s, o, depth) => {
  const pm = s.search(/\\pm(?![a-zA-Z])|\\mp(?![a-zA-Z])/);
  if (pm >= 0 && !bracketedList(s)) {
    const head = s.slice(0, pm), tail = s.slice(pm + 3);
    const a = parseValue(`${head}+${tail}`, o, depth + 1);
    const b = parseValue(`${head}-${tail}`, o, depth + 1);
    return { t: "list", kind: "set", items: [a, b], src: s, pm: true };
  }
  return null;
};

/** Matrices. */
const readMatrix: Reader = (s, o, depth) => {
  const env = /^\\begin\{([pbvBV]?matrix|array|smallmatrix)\}(?:\{[^{}]*\})?([\s\S]*)\\end\{\1\}$/.exec(s);
  if (env && !env[2].includes("\\end{")) {
    const rows = env[2].split(/\\\\/).map((r) => r.trim()).filter((r) => r !== "");
    return { t: "matrix", rows: rows.map((r) => r.split("&").map((c) => parseValue(c, o, depth + 1))) };
  }
  return null;
};

/** Bracketed: sets (and set-builder notation), tuples, intervals, vectors. */
const readBracketed: Reader = (s, o, depth) => {
  const first = s[0];
  const setOpen = s.startsWith("\\{");
  const angle = s.startsWith("\\langle");
  if (first === "(" || first === "[" || setOpen || angle || first === "{") {
    const close = matchingClose(s);
    const closeLen = s.startsWith("\\}", close) ? 2 : s.startsWith("\\rangle", close) ? 7 : 1;
    if (close > 0 && close + closeLen === s.length) {
      const inner = s.slice(setOpen ? 2 : angle ? 7 : 1, close);
      const items = splitTop(inner, /,/).map((p) => p.trim());
      const last = s[close];
      if (setOpen) {
        const built = setBuilder(inner, o, depth);
        if (built) return built;
        return { t: "list", kind: "set", items: inner.trim() ? spliceSigns(items.map((p) => parseValue(p, o, depth + 1))) : [], src: s };
      }
      if (first === "{") return parseValue(inner, o, depth + 1);
      if (items.length === 1) {
        if (first === "(" && last === ")") return parseValue(inner, o, depth + 1);
      } else if (items.length === 2 && !angle && (first === "[" || last === "]")) {
        return { t: "interval", lo: parseValue(items[0], o, depth + 1), hi: parseValue(items[1], o, depth + 1), loOpen: first === "(", hiOpen: last === ")" };
      } else if (items.length >= 2) {
        return { t: "list", kind: "tuple", items: items.map((p) => parseValue(p, o, depth + 1)), src: s };
      }
    }
  }
  return null;
};

/** Prose and words, and a number marked with a degree or percent sign. */
const readWords: Reader = (s, o) => {
  const bare = s.replace(/\\text\{|\}/g, "").trim();
  if (/^[a-zA-Z][a-zA-Z\s'-]*[a-zA-Z]$/.test(bare) && !WORD_FUNCS.test(bare) && isWords(bare)) {
    return { t: "text", s: bare.toLowerCase().replace(/\s+/g, " ") };
  }
  // a degree or percent sign after a number (the markers normalizeLatex writes): the number as
  // written, marked. After anything else a percent sign is dropped, and a degree sign is left to
  // compute-engine, which reads it as π/180 (`\sin 30^\circ` is 1/2).
  const unit = /^([\s\S]*?)\s*(\^\\circ|\\%)$/.exec(s);
  if (unit && unit[1].trim() && !/(?:\^\\circ|\\%)/.test(unit[1])) {
    const pct = unit[2] === "\\%";
    if (MARKED_NUMBER.test(unit[1].trim())) {
      const v = leaf(unit[1], o);
      if (v.t === "expr") return { ...v, unit: pct ? "pct" : "deg" };
    }
    if (pct) return leaf(unit[1], o);
  }
  return null;
};

/**
 * Whether a run of letters, spaces and hyphens is words rather than algebra. Words need a real
 * word: one token of four letters or more ("Evelyn"), or several tokens of two letters or more
 * each ("regular hexagon", "no solution"). A single letter among them, or a hyphen with a space
 * beside it, is algebra: `x - y`, `a-b`, `x y`, `a b c` (and `abc`, a product). A hyphen
 * joining tokens makes a word only when one of them has four letters ("well-defined").
 */
export function isWords(bare: string): boolean {
  if (/\s-|-\s/.test(bare)) return false;
  const words = bare.split(/\s+/);
  const tokens = bare.split(/[\s-]+/).map((t) => t.replace(/'/g, ""));
  if (bare.includes("-")) return tokens.every((t) => t.length >= 2) && tokens.some((t) => t.length >= 4);
  // Three letters or fewer is a product (`abc`), but for the answer words of yes/no and parity
  // questions: `Yes` against `yes` differed "at a sample point" as Y·e·s, and `sey` equalled it.
  if (words.length === 1) return bare.length > 3 || SHORT_WORDS.test(bare);
  // an article is the one single letter a phrase may hold ("a right triangle")
  if (tokens.some((t) => t.length < 2)) return tokens.every((t) => t.length >= 2 || /^(?:a|A|I)$/.test(t)) && tokens.some((t) => t.length >= 4);
  return true;
}

const READERS: Reader[] = [readLabel, readRatio, readPm, readMatrix, readBracketed, readWords];

/** `\{…, …\}`: set braces around the whole of a comma list (`(\pm 1, 2)` stays two points). */
function bracketedList(s: string): boolean {
  if (!s.startsWith("\\{")) return false;
  const close = matchingClose(s);
  return close > 0 && close + 2 === s.length && splitTop(s.slice(2, close), /,/).length > 1;
}

/** The values of a `\pm` inside a list or set are members of it: `0, \pm 2` is {-2, 0, 2}. */
function spliceSigns(items: Value[]): Value[] {
  if (!items.some((v) => v.t === "list" && v.pm)) return items;
  return items.flatMap((v) => (v.t === "list" && v.pm ? v.items : [v]));
}

/**
 * Set-builder notation over one variable, `\{x \mid 0 < x < 2\}` or `\{x : x \ge 1\}`, as the
 * interval (or union of intervals, for "or") it names; null when it is not one.
 */
function setBuilder(inner: string, o: ParseOptions, depth: number): Value | null {
  const m = /^\s*([a-zA-Z])(?:\s*\\in\s*\\mathbb\s*\{?\s*R\s*\}?)?\s*(?:\\mid|\||:|\\colon)\s*([\s\S]+)$/.exec(inner);
  if (!m) return null;
  const cond = parseValue(m[2], o, depth + 1);
  return setOfCondition(cond, m[1]);
}

/** The interval(s) where a condition on `x` holds: `a < x < b`, `x \ge a`, and "or" lists of them. */
export function setOfCondition(cond: Value, x: string): Value | null {
  if (cond.t === "list" && cond.kind === "bare") {
    const parts = cond.items.map((c) => setOfCondition(c, x) ?? pointOf(c, x));
    if (parts.some((p) => p === null || (p.t !== "interval" && p.t !== "list")) || !parts.some((p) => p!.t === "interval")) return null;
    return { t: "union", items: parts as Value[] };
  }
  if (cond.t !== "rel") return null;
  return relationInterval(cond, x);
}

/** `x = 3` in an "or" of conditions: the point {3} (`x < 1 \text{ or } x = 3`). */
function pointOf(c: Value, x: string): Value | null {
  if (c.t !== "rel" || c.ops.length !== 1 || c.ops[0] !== "=" || c.parts.length !== 2) return null;
  const [l, r] = c.parts;
  if (isVar(l, x) && isConst(r)) return { t: "list", kind: "set", items: [r], src: "" };
  if (isVar(r, x) && isConst(l)) return { t: "list", kind: "set", items: [l], src: "" };
  return null;
}

const INF = (sign: 1 | -1): Value => ({ t: "expr", e: sign > 0 ? "PositiveInfinity" : "NegativeInfinity", src: sign > 0 ? "\\infty" : "-\\infty" });

function isVar(v: Value, x?: string): boolean {
  return v.t === "expr" && typeof v.e === "string" && /^[a-zA-Z](?:_\w+)?$/.test(v.e) && (x === undefined || v.e === x);
}
function isConst(v: Value): boolean {
  return v.t === "expr" && !hasSymbol(v.e);
}
function hasSymbol(e: Expr): boolean {
  if (typeof e === "string") return !["Pi", "ExponentialE", "PositiveInfinity", "NegativeInfinity"].includes(e);
  return Array.isArray(e) && e.slice(1).some(hasSymbol);
}

/**
 * `a < x < b`, `a \le x`, `x > a`, `-2 > x` as an interval, the bound on either side of the
 * variable (of `x` when given, else of the one variable the relation names); null otherwise.
 */
export function relationInterval(v: Extract<Value, { t: "rel" }>, x?: string): Extract<Value, { t: "interval" }> | null {
  const { parts, ops } = v;
  const lt = (op: RelOp) => op === "<" || op === "<=";
  const gt = (op: RelOp) => op === ">" || op === ">=";
  if (parts.length === 3 && isVar(parts[1], x) && isConst(parts[0]) && isConst(parts[2])) {
    const [a, b] = ops;
    if (lt(a) && lt(b)) return { t: "interval", lo: parts[0], hi: parts[2], loOpen: a === "<", hiOpen: b === "<" };
    if (gt(a) && gt(b)) return { t: "interval", lo: parts[2], hi: parts[0], loOpen: b === ">", hiOpen: a === ">" };
    return null;
  }
  if (parts.length !== 2) return null;
  let [l, r] = parts, op = ops[0];
  if (isVar(r, x) && isConst(l)) {
    [l, r] = [r, l];
    op = op === "<" ? ">" : op === "<=" ? ">=" : op === ">" ? "<" : op === ">=" ? "<=" : op;
  }
  if (!isVar(l, x) || !isConst(r)) return null;
  if (lt(op)) return { t: "interval", lo: INF(-1), hi: r, loOpen: true, hiOpen: op === "<" };
  if (gt(op)) return { t: "interval", lo: r, hi: INF(1), loOpen: op === ">", hiOpen: true };
  return null;
}

const NUM = /^[+-]?(?:\d+\.?\d*|\.\d+)$/;
/** What a degree or percent marker may follow: a number, a fraction or mixed number of digits. */
const MARKED_NUMBER = /^[+-]?\s*(?:\d+(?:\.\d+)?|\.\d+|(?:\d+\s*)?\\frac\s*\{?\s*\d+\s*\}?\s*\{?\s*\d+\s*\}?)$/;

const ASCII_FUNCS = new Set(["sin", "cos", "tan", "sec", "csc", "cot", "ln", "log", "log10", "sqrt", "exp", "arcsin", "arccos", "arctan", "abs"]);

/**
 * The common subset of LaTeX (numbers, one-letter variables, + - * / ^, \frac, \sqrt, \pi,
 * \cdot, functions with parentheses) rewritten to ASCII for mathjs, whose parser is ~50x
 * faster than compute-engine's. Anything outside the subset returns null and goes to
 * compute-engine, as do forms whose meaning differs between the two (`x(x+1)`, `ab`, `\sin^2`).
 */
export function simpleAscii(s: string, plain: boolean): string | null {
  let t = plain ? s.replace(/\*\*/g, "^") : s;
  // a "plain" answer may still be written in LaTeX (a reference such as \tan^2 y + 1)
  if (!plain || t.includes("\\")) {
    // mixed numbers: 2\frac{1}{2} is 2 + 1/2
    t = t.replace(/(?<![\d.}^_])(\d+)\s*\\frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}/g, "($1+$2/$3)");
    // \sin^2(x) is sin(x)^2
    t = t.replace(/\\(sin|cos|tan|sec|csc|cot)\s*\^\s*\{?\s*(\d)\s*\}?\s*\(([^()]*)\)/g, "(\\$1($3))^$2");
    for (let i = 0; i < 12; i++) {
      let next = t
        .replace(/\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, "(($1)/($2))")
        .replace(/\\sqrt\s*\{([^{}]*)\}/g, "sqrt($1)")
        .replace(/\^\s*\{([^{}]*)\}/g, "^($1)");
      // bare groups only once no command is left to claim its braces
      if (next === t && !/\\(?:frac|sqrt)/.test(t)) next = t.replace(/\{([^{}]*)\}/g, "($1)");
      if (next === t) break;
      t = next;
    }
    // \ln x, \sin 2: a function applied to one token
    t = t.replace(/\\(sin|cos|tan|sec|csc|cot|ln|log|exp)\s+([a-zA-Z]|\d+)(?![\w.(^_{])/g, "\\$1($2)");
    // \log is base 10, as compute-engine reads it (mathjs's log is natural)
    t = t.replace(/\\log(?=\s*\()/g, "\\log10");
    t = t.replace(/\\(?:cdot|times)(?![a-zA-Z])/g, "*").replace(/\\pi(?![a-zA-Z])/g, " pi ").replace(/\\(sin|cos|tan|sec|csc|cot|ln|log10|exp|arcsin|arccos|arctan)(?=\s*\()/g, " $1");
  }
  if (!/^[0-9a-zA-Z+\-*/^().\s]*$/.test(t)) return null;
  if (/\d{16,}/.test(t) || /\.\s*\(|\d\.\d*\./.test(t)) return null;
  // `1/2x`: mathjs reads (1/2)x, compute-engine 1/(2x); leave the ambiguity to one reader
  if (/\/\s*\d+(?:\.\d+)?\s*[a-zA-Z(]/.test(t)) return null;
  for (const m of t.matchAll(/[a-zA-Z]+/g)) {
    const w = m[0];
    const next = t.slice(m.index! + w.length).trimStart()[0];
    if (w.length === 1) { if (next === "(") return null; continue; }
    if (w === "pi") continue;
    if (!ASCII_FUNCS.has(w) || next !== "(") return null;
  }
  return t;
}

function leaf(s: string, o: ParseOptions): Value {
  const t = s.replace(/\s+/g, "");
  if (NUM.test(t)) return { t: "expr", e: { num: t.replace(/^\+/, "") }, src: t };
  const products = implicitProducts(s, o);
  if (products) {
    const v = leafOf(products.s, t, o);
    return v.t === "expr" ? { ...v, implicit: products.letter } : v;
  }
  return leafOf(s, t, o);
}

function leafOf(s: string, t: string, o: ParseOptions): Value {
  const ascii = simpleAscii(o.plain ? s.replace(/√\s*(\w+)/g, "sqrt($1)") : s, o.plain);
  if (ascii !== null) {
    try {
      return { t: "expr", e: fromMathjs(mathjsParse(ascii)), src: t };
    } catch { /* fall through to compute-engine */ }
  }
  let json: unknown;
  try {
    json = ce().parse(s).json;
  } catch (err) {
    rethrowCancellation(err);
    return { t: "text", s: t };
  }
  if (containsError(json)) return { t: "text", s: t };
  if (s.includes("\\begin")) {
    // matrix arithmetic (a sum or product of matrices): let compute-engine evaluate it
    const m = matrixOf(json);
    if (m) return m;
  }
  return { t: "expr", e: json as Expr, src: t };
}

function matrixOf(json: unknown): Value | null {
  let v: unknown;
  try {
    v = ce().withTimeLimit(ENGINE_BUDGET.ms, () => ce().box(json as any).evaluate().json);
  } catch (err) {
    rethrowCancellation(err);
    return null;
  }
  if (Array.isArray(v) && v[0] === "Matrix") v = v[1];
  if (!Array.isArray(v) || v[0] !== "List" || v.length < 2) return null;
  const rows = v.slice(1).map((r) => (Array.isArray(r) && r[0] === "List" ? r.slice(1) : [r]));
  return { t: "matrix", rows: rows.map((r) => r.map((c) => ({ t: "expr", e: c as Expr, src: JSON.stringify(c) }) as Value)) };
}

function containsError(j: unknown): boolean {
  if (Array.isArray(j)) return j[0] === "Error" || j.some(containsError);
  return false;
}

/** compute-engine's canonical form of two trees, for a structural (symbolic) comparison. */
export function canonicalSame(a: Expr, b: Expr): boolean {
  try {
    return ce().withTimeLimit(ENGINE_BUDGET.ms, () => ce().box(a as any).isSame(ce().box(b as any)));
  } catch (err) {
    rethrowCancellation(err);
    return false;
  }
}

/** Asks compute-engine whether a - b simplifies to 0: true, false (a non-zero number) or null. */
export function symbolicZero(a: Expr, b: Expr): boolean | null {
  try {
    const d = ce().withTimeLimit(ENGINE_BUDGET.ms, () => ce().box(["Subtract", a, b] as any).simplify());
    if (d.isSame(ce().Zero)) return true;
    return null;
  } catch (err) {
    rethrowCancellation(err);
    return null;
  }
}
