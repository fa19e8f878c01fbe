/**
 * The js backend: JavaScript in isolated-vm, one fresh V8 isolate per run with a heap limit and
 * a time limit. No Node API is reachable: the isolate holds only what the bootstrap below puts
 * there (Node's console, print, readline, process.stdout.write/exit, stdin as
 * require("fs").readFileSync(0), process.stdin's events or require("readline")'s, require("assert")), all written in plain JavaScript inside the isolate, with no reference back to the host.
 *
 * WebAssembly is removed from the isolate: a WebAssembly.Memory is allocated outside the
 * isolate's heap limit (a 4 GiB one landed in the server's memory). The result leaves as a
 * plain array copied by structured clone, never through the program's JSON or prototypes
 * (an Object.prototype.toJSON override once broke it), and is checked on this side. A run that
 * ignores termination (V8 cannot interrupt a builtin such as a typed-array sort) is reported as
 * a time limit at its wall limit plus a grace period, and its isolate is disposed when it stops.
 */
import type { RunOutcome, RunRequest, Sandbox } from "../types.js";
import { limitsOf, sandboxError } from "../job.js";
import { cpuTimeOf, disposeOf } from "../../src/core/isolate.js";

const BOOTSTRAP = `
(function () {
  const stringify = JSON.stringify, evaluate = eval, S = String;
  delete globalThis.WebAssembly;
  // A resizable ArrayBuffer's growth (and transfer's new length) is not counted against the
  // isolate's memory limit: no buffer grows after it is made.
  for (const k of ["resize", "transfer", "transferToFixedLength"]) delete ArrayBuffer.prototype[k];
  const stdin = globalThis.__stdin; delete globalThis.__stdin;
  const cap = globalThis.__cap; delete globalThis.__cap;
  let out = "", err = "", over = false;
  function write(toErr, s) {
    s = S(s);
    const cur = toErr ? err : out;
    if (cur.length + s.length > cap) {
      s = s.slice(0, Math.max(0, cap - cur.length));
      over = true;
    }
    if (toErr) err += s; else out += s;
    if (over) throw new Error("output limit reached");
  }
  class Exit { constructor(code) { this.code = code; } }
  // Node's console, written inside the isolate: util.inspect's rules for the values people
  // print (quoted strings inside containers, [Object] past depth 2, Map(n) {...}, class names),
  // printf-style %s %d %i %f %j %o %O %c, and assert, table, dir, group, count, time, trace.
  const isArr = Array.isArray, keysOf = Object.keys, protoOf = Object.getPrototypeOf, hasOwn = Object.prototype.hasOwnProperty;
  const fnToString = Function.prototype.toString, errToString = Error.prototype.toString;
  const MapP = Map.prototype, SetP = Set.prototype, mapEntries = MapP.entries, setValues = SetP.values;
  const mapSize = Object.getOwnPropertyDescriptor(MapP, "size").get, setSize = Object.getOwnPropertyDescriptor(SetP, "size").get;
  const isMap = (v) => { try { mapSize.call(v); return true; } catch (e) { return false; } };
  const isSet = (v) => { try { setSize.call(v); return true; } catch (e) { return false; } };
  const IDENT = /^[A-Za-z_$][\\w$]*$/;
  function quote(s) {
    const q = s.indexOf("'") < 0 ? "'" : s.indexOf('"') < 0 ? '"' : s.indexOf("\`") < 0 ? "\`" : "'";
    let o = q;
    for (let i = 0; i < s.length; i++) {
      const c = s[i], n = s.charCodeAt(i);
      if (c === q || c === "\\\\") o += "\\\\" + c;
      else if (c === "\\n") o += "\\\\n"; else if (c === "\\t") o += "\\\\t"; else if (c === "\\r") o += "\\\\r";
      else if (n < 32 || n === 127) o += "\\\\x" + (n < 16 ? "0" : "") + n.toString(16).toUpperCase();
      else o += c;
    }
    return o + q;
  }
  function ctorName(v) {
    try { const p = protoOf(v); if (p === null) return null; const c = p.constructor; return typeof c === "function" && typeof c.name === "string" ? c.name : ""; } catch (e) { return ""; }
  }
  function wrap(start, parts, end, indent, empty) {
    if (parts.length === 0) return empty;
    const one = start + " " + parts.join(", ") + " " + end;
    if (one.length + indent.length <= 72 && one.indexOf("\\n") < 0) return one;
    const pad = indent + "  ";
    return start + "\\n" + pad + parts.join(",\\n" + pad) + "\\n" + indent + end;
  }
  function inspect(v, depth, seen, indent, top) {
    const t = typeof v;
    if (t === "string") return top ? v : quote(v);
    if (t === "number") return v === 0 && 1 / v < 0 ? "-0" : S(v);
    if (t === "bigint") return S(v) + "n";
    if (t === "boolean" || v === undefined || v === null) return S(v);
    if (t === "symbol") return v.toString();
    if (t === "function") {
      let src = ""; try { src = fnToString.call(v); } catch (e) {}
      const name = v.name ? S(v.name) : "";
      if (/^class\\b/.test(src)) return "[class " + (name || "(anonymous)") + "]";
      return "[Function: " + (name || "(anonymous)") + "]";
    }
    if (seen.indexOf(v) >= 0) return "[Circular *1]";
    if (v instanceof Error) { try { return S(v.stack || errToString.call(v)); } catch (e) { return "[Error]"; } }
    const name = ctorName(v);
    if (depth > 2) return isArr(v) ? "[Array]" : "[" + (name || "Object") + "]";
    seen.push(v);
    const inner = indent + "  ";
    const show = (x) => inspect(x, depth + 1, seen, inner, false);
    const key = (k) => (typeof k === "symbol" ? "[" + k.toString() + "]" : IDENT.test(k) ? k : quote(k));
    let out;
    try {
      if (isArr(v)) {
        const parts = []; let holes = 0;
        const flush = () => { if (holes) { parts.push("<" + holes + " empty item" + (holes > 1 ? "s" : "") + ">"); holes = 0; } };
        const n = Math.min(v.length, 100);
        for (let i = 0; i < n; i++) { if (hasOwn.call(v, i)) { flush(); parts.push(show(v[i])); } else holes++; }
        flush();
        if (v.length > 100) parts.push("... " + (v.length - 100) + " more item" + (v.length - 100 > 1 ? "s" : ""));
        for (const k of keysOf(v)) if (!/^\\d+$/.test(k)) parts.push(key(k) + ": " + show(v[k]));
        out = wrap((name && name !== "Array" ? name + "(" + v.length + ") " : "") + "[", parts, "]", indent, (name && name !== "Array" ? name + "(0) " : "") + "[]");
      } else if (isMap(v)) {
        const parts = []; for (const [a, b] of mapEntries.call(v)) parts.push(show(a) + " => " + show(b));
        out = wrap((name || "Map") + "(" + mapSize.call(v) + ") {", parts, "}", indent, (name || "Map") + "(0) {}");
      } else if (isSet(v)) {
        const parts = []; for (const a of setValues.call(v)) parts.push(show(a));
        out = wrap((name || "Set") + "(" + setSize.call(v) + ") {", parts, "}", indent, (name || "Set") + "(0) {}");
      } else if (v instanceof Date) {
        out = isNaN(v.getTime()) ? "Invalid Date" : v.toISOString();
      } else if (v instanceof RegExp) {
        out = S(v);
      } else if (v instanceof Number || v instanceof String || v instanceof Boolean) {
        out = "[" + (name || "Object") + ": " + inspect(v.valueOf(), depth, seen, indent, false) + "]";
      } else if (ArrayBuffer.isView(v)) {
        const parts = []; for (let i = 0; i < Math.min(v.length, 100); i++) parts.push(show(v[i]));
        out = wrap(name + "(" + v.length + ") [", parts, "]", indent, name + "(0) []");
      } else {
        const parts = [];
        for (const k of keysOf(v)) parts.push(key(k) + ": " + show(v[k]));
        const prefix = name === "Object" ? "" : name === null ? "[Object: null prototype] " : name ? name + " " : "";
        out = wrap(prefix + "{", parts, "}", indent, prefix + "{}");
      }
    } finally {
      seen.pop();
    }
    return out;
  }
  const show = (x) => inspect(x, 0, [], "", true);
  function fmt(args) {
    let i = 0, first = "";
    if (typeof args[0] === "string" && args.length > 1) {
      i = 1;
      const f = args[0];
      for (let j = 0; j < f.length; j++) {
        const c = f[j];
        if (c !== "%" || j + 1 >= f.length) { first += c; continue; }
        const d = f[j + 1];
        if (d === "%") { first += "%"; j++; continue; }
        if ("sdifjoOc".indexOf(d) < 0) { first += c; continue; }
        j++;
        if (i >= args.length) { first += "%" + d; continue; }
        const a = args[i++];
        if (d === "s") first += typeof a === "string" ? a : typeof a === "bigint" ? S(a) + "n" : typeof a === "object" && a !== null ? inspect(a, 1, [], "", false) : inspect(a, 0, [], "", true);
        else if (d === "d" || d === "i") { if (typeof a === "bigint") first += S(a) + "n"; else if (typeof a === "symbol") first += "NaN"; else { const n = d === "i" ? parseInt(a) : Number(a); first += show(n); } }
        else if (d === "f") first += typeof a === "symbol" ? "NaN" : show(parseFloat(a));
        else if (d === "j") { try { first += stringify(a); } catch (e) { first += "[Circular]"; } }
        else if (d === "o" || d === "O") first += inspect(a, 0, [], "", false);
      }
    } else if (args.length) { first = show(args[0]); i = 1; }
    const rest = [];
    for (; i < args.length; i++) rest.push(show(args[i]));
    return (args.length ? [first].concat(rest) : []).join(" ");
  }
  let groupIndent = "";
  const line = (toErr, s) => write(toErr, (groupIndent ? groupIndent + S(s).split("\\n").join("\\n" + groupIndent) : s) + "\\n");
  const counts = new Map(), timers = new Map();
  function table(data, props) {
    if (data === null || typeof data !== "object") return line(false, fmt([data]));
    const rows = [], cols = [], hasValues = { v: false };
    const addCol = (k) => { if (cols.indexOf(k) < 0) cols.push(k); };
    const entries = isMap(data) ? [...mapEntries.call(data)] : isSet(data) ? [...setValues.call(data)].map((x, i) => [i, x]) : keysOf(data).map((k) => [k, data[k]]);
    for (const [k, v] of entries) {
      const r = { idx: typeof k === "string" ? k : inspect(k, 1, [], "", false), cells: {} };
      if (v !== null && typeof v === "object" && !(v instanceof Error)) {
        for (const c of props || keysOf(v)) { addCol(c); if (hasOwn.call(v, c)) r.cells[c] = inspect(v[c], 1, [], "", false); }
      } else { hasValues.v = true; r.value = inspect(v, 1, [], "", false); }
      rows.push(r);
    }
    const head = ["(index)"].concat(cols).concat(hasValues.v ? ["Values"] : []);
    const body = rows.map((r) => [r.idx].concat(cols.map((c) => (c in r.cells ? r.cells[c] : ""))).concat(hasValues.v ? [r.value === undefined ? "" : r.value] : []));
    const widths = head.map((h, j) => Math.max(h.length, ...body.map((b) => b[j].length)) + 2);
    const rule = (l, m, r) => l + widths.map((w) => "─".repeat(w)).join(m) + r;
    const row = (cells) => "│" + cells.map((c, j) => " " + c + " ".repeat(widths[j] - c.length - 1)).join("│") + "│";
    line(false, [rule("┌", "┬", "┐"), row(head), rule("├", "┼", "┤")].concat(body.map(row), [rule("└", "┴", "┘")]).join("\\n"));
  }
  const con = {
    log: (...a) => line(false, fmt(a)), info: (...a) => line(false, fmt(a)), debug: (...a) => line(false, fmt(a)),
    error: (...a) => line(true, fmt(a)), warn: (...a) => line(true, fmt(a)),
    trace: (...a) => { let st = ""; try { st = S(new Error().stack).split("\\n").slice(2).join("\\n"); } catch (e) {} line(true, "Trace" + (a.length ? ": " + fmt(a) : "") + (st ? "\\n" + st : "")); },
    // As Node's: a false assertion prints and goes on (it does not throw). The frame of the
    // failing call follows on its own line, so a reader (the code verifier) can name the line.
    assert: (ok, ...a) => {
      if (ok) return;
      let at = ""; try { at = S(new Error().stack).split("\\n")[2] || ""; } catch (e) {}
      line(true, "Assertion failed" + (a.length ? ": " + fmt(a) : "") + (at ? "\\n" + at : ""));
    },
    dir: (v) => line(false, inspect(v, 0, [], "", false)), dirxml: (...a) => line(false, fmt(a)),
    table: (d, p) => table(d, isArr(p) ? p : undefined),
    group: (...a) => { if (a.length) line(false, fmt(a)); groupIndent += "  "; },
    groupCollapsed: (...a) => { if (a.length) line(false, fmt(a)); groupIndent += "  "; },
    groupEnd: () => { groupIndent = groupIndent.slice(2); },
    count: (l) => { l = l === undefined ? "default" : S(l); const n = (counts.get(l) || 0) + 1; counts.set(l, n); line(false, l + ": " + n); },
    countReset: (l) => { counts.set(l === undefined ? "default" : S(l), 0); },
    time: (l) => { timers.set(l === undefined ? "default" : S(l), Date.now()); },
    timeLog: (l, ...a) => { l = l === undefined ? "default" : S(l); if (timers.has(l)) line(false, l + ": " + (Date.now() - timers.get(l)) + "ms" + (a.length ? " " + fmt(a) : "")); },
    timeEnd: (l) => { l = l === undefined ? "default" : S(l); if (timers.has(l)) { line(false, l + ": " + (Date.now() - timers.get(l)) + "ms"); timers.delete(l); } },
  };
  // Node's assert module (require("assert"), "node:assert", "assert/strict"): MultiPL-E's
  // JavaScript tests call assert.deepEqual; a failure throws an AssertionError, as Node's does.
  class AssertionError extends Error { constructor(message) { super(message); this.code = "ERR_ASSERTION"; } }
  Object.defineProperty(AssertionError.prototype, "name", { value: "AssertionError" });
  const same = Object.is, brief = (v) => inspect(v, 1, [], "", false).split("\\n").map((l) => l.trim()).join(" ");
  function deep(a, b, strict, depth) {
    if (strict ? same(a, b) : a == b || (a !== a && b !== b)) return true;
    if (a === null || b === null || typeof a !== "object" || typeof b !== "object" || depth > 1000) return false;
    if (strict && protoOf(a) !== protoOf(b)) return false;
    if (isArr(a) !== isArr(b)) return false;
    if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
    if (a instanceof RegExp || b instanceof RegExp) return S(a) === S(b);
    const am = isMap(a), bm = isMap(b), as = isSet(a), bs = isSet(b);
    if (am !== bm || as !== bs) return false;
    if (am) {
      if (mapSize.call(a) !== mapSize.call(b)) return false;
      for (const [k, v] of mapEntries.call(a)) { if (!MapP.has.call(b, k) || !deep(v, MapP.get.call(b, k), strict, depth + 1)) return false; }
      return true;
    }
    if (as) {
      if (setSize.call(a) !== setSize.call(b)) return false;
      const rest = [...setValues.call(b)];
      for (const v of setValues.call(a)) { const j = rest.findIndex((w) => deep(v, w, strict, depth + 1)); if (j < 0) return false; rest.splice(j, 1); }
      return true;
    }
    const ka = keysOf(a), kb = keysOf(b);
    if (ka.length !== kb.length) return false;
    for (const k of ka) { if (!hasOwn.call(b, k) || !deep(a[k], b[k], strict, depth + 1)) return false; }
    return true;
  }
  function fail(message, fallback) { throw message instanceof Error ? message : new AssertionError(message === undefined ? fallback : S(message)); }
  function check(ok, a, b, words, op, message) { if (!ok) fail(message, "Expected values to be " + words + ": " + brief(a) + " " + op + " " + brief(b)); }
  function makeAssert(strictMode) {
    const eq = (a, b) => (strictMode ? same(a, b) : a == b || (a !== a && b !== b));
    const A = (v, m) => { if (!v) fail(m, "The expression evaluated to a falsy value: " + brief(v)); };
    A.ok = A;
    A.equal = (a, b, m) => check(eq(a, b), a, b, strictMode ? "strictly equal" : "loosely equal", strictMode ? "!==" : "!=", m);
    A.notEqual = (a, b, m) => check(!eq(a, b), a, b, "not equal", strictMode ? "===" : "==", m);
    A.strictEqual = (a, b, m) => check(same(a, b), a, b, "strictly equal", "!==", m);
    A.notStrictEqual = (a, b, m) => check(!same(a, b), a, b, "not strictly equal", "===", m);
    A.deepEqual = (a, b, m) => check(deep(a, b, strictMode, 0), a, b, strictMode ? "strictly deep-equal" : "loosely deep-equal", "!=", m);
    A.deepStrictEqual = (a, b, m) => check(deep(a, b, true, 0), a, b, "strictly deep-equal", "!==", m);
    A.notDeepEqual = (a, b, m) => check(!deep(a, b, strictMode, 0), a, b, "not deep-equal", "==", m);
    A.notDeepStrictEqual = (a, b, m) => check(!deep(a, b, true, 0), a, b, "not strictly deep-equal", "===", m);
    A.fail = (m) => fail(m, "Failed");
    A.match = (s, re, m) => check(re.test(s), s, re, "matching", "!~", m);
    A.throws = (fn, _e, m) => { try { fn(); } catch (e) { return; } fail(typeof _e === "string" ? _e : m, "Missing expected exception."); };
    A.doesNotThrow = (fn, m) => { try { fn(); } catch (e) { fail(m, "Got unwanted exception: " + S(e && e.message)); } };
    A.AssertionError = AssertionError;
    return A;
  }
  const assertLoose = makeAssert(false), assertStrict = makeAssert(true);
  assertLoose.strict = assertStrict; assertStrict.strict = assertStrict;
  Object.freeze(assertLoose); Object.freeze(assertStrict);
  Object.freeze(con);
  // Fixed in place: a program cannot swap console.assert (or console) for one that stays quiet.
  Object.defineProperty(globalThis, "console", { value: con, writable: false, configurable: false, enumerable: false });
  globalThis.print = con.log;
  const lines = stdin.split("\\n"); let li = 0;
  globalThis.readline = () => (li < lines.length ? lines[li++] : undefined);
  // Node's event-driven stdin idioms: process.stdin.on("data" | "end") and readline's
  // createInterface({ input }).on("line" | "close"). The whole stdin is there from the start, so
  // once the program's own code has run, its listeners get it: the data in one chunk then "end";
  // each line (a CR before its LF dropped, a last line without a newline too) then "close".
  function emitter() {
    const on = {};
    const e = {
      on(ev, fn) { (on[ev] || (on[ev] = [])).push(fn); return e; },
      emit(ev, ...args) { const fs = on[ev] || []; for (let i = 0; i < fs.length; i++) fs[i].apply(e, args); return fs.length > 0; },
      listens(ev) { return !!(on[ev] && on[ev].length); },
      resume() { return e; }, pause() { return e; }, setEncoding() { return e; },
    };
    e.addListener = e.on; e.once = e.on;
    return e;
  }
  const stdinStream = emitter();
  const interfaces = [];
  const readlineModule = { createInterface() { const rl = emitter(); rl.close = () => {}; rl.setPrompt = () => {}; rl.prompt = () => {}; interfaces.push(rl); return rl; } };
  function feedListeners() {
    if (stdinStream.listens("data") || stdinStream.listens("end")) {
      if (stdin.length) stdinStream.emit("data", stdin);
      stdinStream.emit("end");
    }
    for (let k = 0; k < interfaces.length; k++) {
      const rl = interfaces[k];
      const ls = stdin.split("\\n");
      if (ls.length && ls[ls.length - 1] === "") ls.pop();
      for (let i = 0; i < ls.length; i++) rl.emit("line", ls[i].endsWith("\\r") ? ls[i].slice(0, -1) : ls[i]);
      rl.emit("close");
    }
  }
  globalThis.process = { argv: ["node", "main.js"], env: {}, platform: "sandbox", stdin: stdinStream,
    stdout: { write: (s) => { write(false, s); return true; } }, stderr: { write: (s) => { write(true, s); return true; } },
    exit: (c) => { throw new Exit(c === undefined ? 0 : c | 0); } };
  globalThis.require = (m) => {
    if (m === "assert" || m === "node:assert") return assertLoose;
    if (m === "assert/strict" || m === "node:assert/strict") return assertStrict;
    if (m === "fs" || m === "node:fs") return { readFileSync: (f) => { if (f === 0 || f === "/dev/stdin") return stdin; throw new Error("no file system in the sandbox"); } };
    if (m === "readline" || m === "node:readline") return readlineModule;
    throw new Error("module " + S(m) + " is not available in the sandbox");
  };
  return function run(src) {
    let code = 0;
    try { evaluate(src); feedListeners(); }
    catch (x) {
      if (x instanceof Exit) code = x.code;
      else { code = 1; try { err += S(x && x.stack || x).slice(0, 4000) + "\\n"; } catch (e) { err += "uncaught exception\\n"; } }
    }
    return [out, err, over, code];
  };
})()`;

type Ivm = typeof import("isolated-vm");

/** How long past its time limit a run that ignores termination is waited for. */
const GRACE_MS = 1000;

class IgnoredTermination extends Error {
  constructor(ms: number) {
    super(`timed out: the program ignored termination for ${ms} ms`);
  }
}

/** Rejects after `ms` unless cancelled: the cancel clears the timer once the run has answered. */
function ignoredTermination(ms: number): { promise: Promise<never>; cancel: () => void } {
  let timer!: NodeJS.Timeout;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new IgnoredTermination(ms)), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/** The bootstrap's [out, err, over, code], checked: anything else means the program tampered. */
function resultOf(raw: unknown): { out: string; err: string; over: boolean; code: number } | null {
  if (!Array.isArray(raw) || raw.length !== 4) return null;
  const [out, err, over, code] = raw;
  if (typeof out !== "string" || typeof err !== "string" || typeof over !== "boolean" || typeof code !== "number") return null;
  return { out, err, over, code };
}

export class JsSandbox implements Sandbox {
  readonly name = "js";
  readonly languages = ["javascript"] as const;
  constructor(
    private readonly ivm: Ivm,
    private readonly onCatastrophicError?: (message: string) => void,
  ) {}

  async run(req: RunRequest): Promise<RunOutcome> {
    const limits = limitsOf(req);
    const t0 = performance.now();
    const isolate = new this.ivm.Isolate({ memoryLimit: Math.max(8, Math.min(limits.memoryMb, 4096)), ...(this.onCatastrophicError && { onCatastrophicError: this.onCatastrophicError }) });
    const base = { exitCode: null, signal: null, stdout: "", stderr: "", truncated: false };
    try {
      const context = await isolate.createContext();
      const g = context.global;
      await g.set("__stdin", req.stdin ?? "");
      await g.set("__cap", limits.outputBytes);
      const run = (await context.eval(BOOTSTRAP, { reference: true, timeout: 1000 })) as import("isolated-vm").Reference<(src: string) => unknown>;
      const timeout = Math.min(limits.wallMs, limits.cpuMs);
      let raw: unknown;
      try {
        const applied = run.apply(undefined, [req.code], { timeout, arguments: { copy: true }, result: { copy: true } });
        applied.catch(() => {});
        const guard = ignoredTermination(timeout + GRACE_MS);
        try {
          raw = await Promise.race([applied, guard.promise]);
        } finally {
          guard.cancel();
        }
      } catch (e) {
        const msg = (e as Error).message ?? String(e);
        const wallMs = performance.now() - t0;
        if (/timed out/i.test(msg)) return { ...base, status: "time_limit", wallMs, cpuMs: null, message: msg };
        if (/memory limit|disposed/i.test(msg)) return { ...base, status: "memory_limit", wallMs, cpuMs: null, message: msg };
        return { ...base, status: "runtime_error", stderr: msg, wallMs, cpuMs: null };
      }
      const r = resultOf(raw);
      const wallMs = performance.now() - t0;
      if (!r) return { ...base, status: "runtime_error", stderr: "the program's result could not be read (it tampered with the runtime)", wallMs, cpuMs: null };
      const cpu = cpuTimeOf(isolate);
      const cpuMs = cpu === undefined ? null : Number(cpu) / 1e6;
      return {
        status: r.over ? "output_limit" : "finished",
        exitCode: r.code,
        signal: null,
        stdout: r.out,
        stderr: r.err,
        truncated: r.over,
        wallMs,
        cpuMs,
      };
    } catch (e) {
      const msg = (e as Error).message ?? String(e);
      if (/memory limit|disposed/i.test(msg)) return { ...base, status: "memory_limit", wallMs: performance.now() - t0, cpuMs: null, message: msg };
      return sandboxError(`isolated-vm failed: ${msg}`, performance.now() - t0);
    } finally {
      disposeOf(isolate);
    }
  }

  async close(): Promise<void> {}
}

/**
 * isolated-vm's isolates in this process. The server runs them in a process of their own
 * (process.ts, `openJsProcess`), since V8 can abort the process an isolate lives in; this one is
 * that process's, and the tests'.
 */
export async function openJs(o: { onCatastrophicError?: (message: string) => void } = {}): Promise<{ sandbox: JsSandbox | null; note: string }> {
  try {
    const mod = (await import("isolated-vm")) as unknown as { default?: Ivm } & Ivm;
    const ivm = (mod.default ?? mod) as Ivm;
    return { sandbox: new JsSandbox(ivm, o.onCatastrophicError), note: "js: isolated-vm isolates for JavaScript" };
  } catch (e) {
    return { sandbox: null, note: `js: isolated-vm is not available (${(e as Error).message.split("\n")[0]}); JavaScript cannot run` };
  }
}
