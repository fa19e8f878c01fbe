/**
 * The code that runs first in each custom verifier's isolate (trusted; plain JavaScript as a
 * string). `prepare(compiled)` wraps the user's CommonJS body in a factory, removes what must not
 * be reachable, freezes every object reachable from the global object (and the anonymous
 * intrinsics), and returns `run(inputJson, many)`: each item evaluates the module body afresh
 * (new module state) and calls its `score`, giving a plain array the host checks (many: an
 * array of them):
 *   [1, reward, reason, detailsJson, tainted]  or  [0, message, tainted]
 * where `tainted` says the item changed RegExp or RegExp.prototype (left unfrozen for speed):
 * the host then retires the isolate, so the next item starts from a fresh one.
 */
export const BOOTSTRAP = String.raw`
"use strict";
(function () {
  const O = Object, S = String, J = JSON, A = Array;
  const { freeze, getOwnPropertyNames, getOwnPropertySymbols, getOwnPropertyDescriptor, getPrototypeOf, defineProperty } = O;
  const parse = J.parse, stringify = J.stringify, isFinite_ = Number.isFinite;
  const MAX_REASON = 2000, MAX_DETAILS = 16384;

  // No shared memory (Atomics.wait), no WebAssembly (its memory lives outside the heap limit),
  // no callbacks that run between items.
  for (const k of ["WebAssembly", "SharedArrayBuffer", "Atomics", "FinalizationRegistry", "WeakRef"]) delete globalThis[k];
  // No buffer that grows after it is made: a resizable ArrayBuffer's growth (and transfer's new
  // length) is not counted against the isolate's memory limit (600 MB was filled under 64 MiB).
  for (const k of ["resize", "transfer", "transferToFixedLength"]) delete ArrayBuffer.prototype[k];

  // A small standard library; pure functions over strings.
  function lastBetween(s, open, close) {
    s = S(s);
    const j = s.lastIndexOf(close);
    if (j < 0) return null;
    const i = s.lastIndexOf(open, j);
    return i < 0 ? null : s.slice(i + open.length, j);
  }
  const assay = {
    normalize: (s) => S(s).normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim(),
    words: (s) => { const t = S(s).trim(); return t ? t.split(/\s+/) : []; },
    lines: (s) => S(s).split(/\r?\n/),
    stripThink: (s) => { s = S(s); const i = s.lastIndexOf("</think>"); return i < 0 ? s : s.slice(i + 8); },
    answerTag: (s, tag) => lastBetween(s, "<" + (tag || "answer") + ">", "</" + (tag || "answer") + ">"),
    lastBoxed: (s) => {
      s = S(s);
      const i = s.lastIndexOf("\\boxed{");
      if (i < 0) return null;
      let depth = 0;
      for (let k = i + 6; k < s.length; k++) {
        const c = s[k];
        if (c === "{") depth++;
        else if (c === "}" && --depth === 0) return s.slice(i + 7, k);
      }
      return null;
    },
    lastNumber: (s) => { const m = S(s).match(/-?\d+(?:\.\d+)?(?:e[-+]?\d+)?/gi); return m ? Number(m[m.length - 1]) : null; },
    clamp: (x, lo, hi) => Math.min(hi, Math.max(lo, x)),
  };
  defineProperty(globalThis, "assay", { value: assay, enumerable: false });
  const requireStub = (m) => { throw new Error("require(" + S(m) + ") is not available: custom verifiers run with no modules, files or network"); };
  defineProperty(globalThis, "require", { value: requireStub, enumerable: false });

  // Assigning to an inherited frozen property throws in strict code (the "override mistake"):
  // these common ones become accessors that define an own property on the assigned object.
  const TAMED = ["constructor", "toString", "valueOf", "name", "message", "toJSON"];
  function tame(o) {
    for (const k of TAMED) {
      const d = getOwnPropertyDescriptor(o, k);
      if (!d || !("value" in d) || !d.writable || !d.configurable) continue;
      const value = d.value;
      defineProperty(o, k, {
        get() { return value; },
        set(v) {
          if (this === o) throw new TypeError("built-ins are frozen in a custom verifier");
          defineProperty(this, k, { value: v, writable: true, enumerable: true, configurable: true });
        },
        enumerable: d.enumerable, configurable: false,
      });
    }
  }

  // V8's fast regular-expression paths need RegExp and RegExp.prototype in their initial shape:
  // frozen, every str.replace(/re/) runs about 5x slower. They stay unfrozen and are checked
  // after every item instead (pristine() below); a change retires the isolate.
  const UNFROZEN = [RegExp, RegExp.prototype];
  const ownKeys = Reflect.ownKeys;
  function snapshot(o) {
    return { proto: getPrototypeOf(o), keys: ownKeys(o).map((k) => [k, getOwnPropertyDescriptor(o, k)]), ext: O.isExtensible(o) };
  }
  const SNAP = UNFROZEN.map(snapshot);
  function pristine() {
    for (let i = 0; i < UNFROZEN.length; i++) {
      const o = UNFROZEN[i], s = SNAP[i];
      if (getPrototypeOf(o) !== s.proto || O.isExtensible(o) !== s.ext) return false;
      const keys = ownKeys(o);
      if (keys.length !== s.keys.length) return false;
      for (let j = 0; j < s.keys.length; j++) {
        const [k, d] = s.keys[j], now = getOwnPropertyDescriptor(o, k);
        if (!now || now.value !== d.value || now.get !== d.get || now.set !== d.set || now.writable !== d.writable || now.enumerable !== d.enumerable || now.configurable !== d.configurable) return false;
      }
    }
    return true;
  }

  function harden(roots) {
    const seen = new Set(UNFROZEN), stack = roots.slice();
    for (const o of UNFROZEN) {
      // Walk what they hold (their functions are frozen), but leave them in their initial shape.
      for (const k of ownKeys(o)) {
        const d = getOwnPropertyDescriptor(o, k);
        if ("value" in d) stack.push(d.value); else { stack.push(d.get); stack.push(d.set); }
      }
      stack.push(getPrototypeOf(o));
    }
    while (stack.length) {
      const o = stack.pop();
      if ((typeof o !== "object" && typeof o !== "function") || o === null || seen.has(o)) continue;
      seen.add(o);
      stack.push(getPrototypeOf(o));
      const keys = [...getOwnPropertyNames(o), ...getOwnPropertySymbols(o)];
      const ctor = getOwnPropertyDescriptor(o, "constructor");
      if (ctor && typeof ctor.value === "function" && ctor.value.prototype === o) tame(o);
      else if (o === O.prototype || o === Function.prototype) tame(o);
      for (const k of keys) {
        let d;
        try { d = getOwnPropertyDescriptor(o, k); } catch (e) { continue; }
        if (!d) continue;
        if ("value" in d) stack.push(d.value); else { stack.push(d.get); stack.push(d.set); }
      }
      freeze(o);
    }
  }

  function message(e) {
    try {
      if (e && typeof e === "object" && typeof e.message === "string") return (S(e.name || "Error") + ": " + e.message).slice(0, MAX_REASON);
      return S(e).slice(0, MAX_REASON);
    } catch (x) { return "an exception that cannot be shown"; }
  }

  return function prepare(compiled) {
    const factory = (0, eval)("(function (exports, module, require) {" + compiled + "\n})");
    const intrinsics = [
      globalThis, factory,
      async function () {}, function* () {}, async function* () {},
      [][Symbol.iterator](), new Map()[Symbol.iterator](), new Set()[Symbol.iterator](), ""[Symbol.iterator](), /x/[Symbol.matchAll](""),
      Promise.resolve(), new Uint8Array(0),
    ];
    // Prototypes reachable only through an instance (Intl's Segments and their iterator): not
    // frozen, an item could leave state on them for the next.
    if (typeof Intl === "object" && typeof Intl.Segmenter === "function") {
      const segments = new Intl.Segmenter().segment("a");
      intrinsics.push(segments, segments[Symbol.iterator]());
    }
    harden(intrinsics);

    let retired = false;
    // One item, or (many) a JSON array of items scored one after another in this call: each gets
    // a fresh module evaluation and the RegExp check, exactly as when called one by one.
    function run(json, many) {
      let inputs;
      try { inputs = parse(json); } catch (e) { return many ? [] : [0, "input is not JSON", retired]; }
      if (!many) return one(inputs);
      const results = [];
      for (let i = 0; i < inputs.length; i++) results[i] = one(inputs[i]);
      return results;
    }
    function one(input) {
      // Calls queued behind one that changed RegExp never run here: the host retries them elsewhere.
      if (retired) return [2, true];
      const out = score1(input);
      if (!pristine()) retired = true;
      out[out.length] = retired;
      return out;
    }
    function score1(input) {
      let score;
      try {
        const module = { exports: {} };
        factory(module.exports, module, requireStub);
        const ex = module.exports;
        score = typeof ex === "function" ? ex : ex && (typeof ex.score === "function" ? ex.score : ex.default);
        if (score && typeof score === "object" && typeof score.score === "function") score = score.score;
      } catch (e) { return [0, "module threw while loading: " + message(e)]; }
      if (typeof score !== "function") return [0, "the module exports no score function (export function score(...) or export default)"];
      let out;
      try { out = score(input); } catch (e) { return [0, "score threw: " + message(e)]; }
      try {
        if (typeof out === "number") return isFinite_(out) ? [1, out, "", "{}"] : [0, "score returned " + S(out) + ", not a finite number"];
        if (!out || typeof out !== "object") return [0, "score returned " + (out === null ? "null" : typeof out) + ", not a number or {reward, reason, details}"];
        if (typeof out.then === "function") return [0, "score returned a promise: it must return its result synchronously"];
        const reward = out.reward;
        if (typeof reward !== "number" || !isFinite_(reward)) return [0, "score returned reward " + (typeof reward === "number" ? S(reward) : typeof reward) + ", not a finite number"];
        const reason = out.reason === undefined ? "" : S(out.reason).slice(0, MAX_REASON);
        let details = "{}";
        if (out.details !== undefined) {
          details = stringify(out.details);
          if (typeof details !== "string" || details[0] !== "{") return [0, "score returned details that are not a JSON object"];
          if (details.length > MAX_DETAILS) return [0, "score returned details of " + details.length + " characters, over " + MAX_DETAILS];
        }
        return [1, reward, reason, details];
      } catch (e) { return [0, "score's result could not be read: " + message(e)]; }
    }
    harden([run]);
    return run;
  };
})()`;
