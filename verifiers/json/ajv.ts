/**
 * The json verifier's Ajv, in one place: the main thread and the validation worker
 * (validate-worker.ts) build the same one, so a schema means the same in both.
 */
import { RE2JS } from "re2js";
import { newAjv } from "../../src/core/schema.js";
import { Comparer, EXACT } from "./compare.js";

/** ECMAScript's `\s` (JSON Schema patterns are ECMA-262 regexes), in RE2's syntax. */
const ECMA_SPACE = "\\t\\n\\x{000b}\\f\\r \\x{00a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}";

/**
 * A JSON Schema pattern (ECMA-262) with the classes whose meaning differs in RE2 spelled out:
 * `\s` and `\S` (RE2's are ASCII: `^\S+$` passed "a\u00a0b") and `.` (RE2's excludes only
 * `\n`: `^.+$` passed "a\rb" and "a\u2028b"). `\S` inside a class is left as RE2 reads it. One
 * pass over the pattern.
 */
export function ecmaClasses(p: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === "\\" && i + 1 < p.length) {
      const n = p[++i];
      if (n === "s") out += inClass ? ECMA_SPACE : `[${ECMA_SPACE}]`;
      else if (n === "S" && !inClass) out += `[^${ECMA_SPACE}]`;
      else out += c + n;
    } else if (inClass) {
      if (c === "]") inClass = false;
      out += c;
    } else if (c === "[") {
      inClass = true;
      out += c;
      if (p[i + 1] === "^") out += p[++i];
    } else out += c === "." ? "[^\\n\\r\\x{2028}\\x{2029}]" : c;
  }
  return out;
}

/**
 * Schema `pattern`s run on model text, so they run on RE2 (linear time) instead of JavaScript's
 * backtracking RegExp: a pattern like ^(a+)+$ cannot stall the server.
 */
const re2Engine = Object.assign(
  (pattern: string) => {
    const re = RE2JS.compile(ecmaClasses(pattern));
    // Ajv caches compiled patterns under toString(): each must be distinct.
    return { test: (s: string) => re.matcher(s).find(), toString: () => `re2:${pattern}` };
  },
  { code: 'require("re2js")' },
);

/** No two items of `xs` are equal as JSON values: each item's exact key (the comparison's, keys sorted) in a Set. Linear in their size. */
export function allDistinct(xs: unknown[]): boolean {
  const exact = new Comparer(EXACT);
  const seen = new Set<string>();
  for (const x of xs) {
    const k = exact.key(x);
    if (k === null) continue; // not a JSON value (JSON.parse makes none): equal to nothing
    if (seen.has(k)) return false;
    seen.add(k);
  }
  return true;
}

/** A new Ajv configured as the json verifier's schemas need (RE2 patterns, one-pass uniqueItems). */
export function newJsonAjv() {
  const ajv = newAjv({ regExp: re2Engine });
  // Ajv checks `uniqueItems` on objects and arrays by comparing every pair (deep-equal): 60,000
  // small arrays took 17 s on the event loop. The same keyword, in one pass: each item's exact key
  // (keys sorted; JSON's equality, so 1 and 1.0 agree) in a Set.
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword({ keyword: "uniqueItems", type: "array", schemaType: "boolean", errors: false, validate: (unique: boolean, data: unknown[]) => !unique || allDistinct(data) });
  return ajv;
}

/**
 * Whether validating against `schema` can cost more than its size times the answer's: whether
 * a `$ref` can lead back to a schema it is under (a recursive schema, where `oneOf` node types
 * or two subschemas that both apply to a child multiply at every level of the answer: 2^depth).
 * A schema without such a cycle applies each of its subschemas at most once per node of the
 * answer. Conservative: a `$ref` that is not a local JSON pointer (an anchor, a relative or
 * remote URI), a `$dynamicRef`/`$recursiveRef`, or a nested `$id` (which changes what `#`
 * means below it) counts as recursive. One iterative pass over the schema (a DFS whose back
 * edges are the cycles).
 */
export function mayRecurse(schema: unknown): boolean {
  if (!schema || typeof schema !== "object") return false;
  const root = schema as object;
  const state = new Map<object, 1 | 2>(); // 1: on the DFS path, 2: done
  const stack: { node: object; edges: object[]; next: number }[] = [];
  const edgesOf = (node: object): object[] | null => {
    const out: object[] = [];
    if (Array.isArray(node)) {
      for (const v of node) if (v && typeof v === "object") out.push(v);
      return out;
    }
    const o = node as Record<string, unknown>;
    if (typeof o.$dynamicRef === "string" || typeof o.$recursiveRef === "string") return null;
    if (node !== root && typeof o.$id === "string") return null;
    if (typeof o.$ref === "string") {
      const target = resolvePointer(root, o.$ref);
      if (target === undefined) return null;
      if (target && typeof target === "object") out.push(target);
    }
    for (const k in o) {
      const v = o[k];
      if (v && typeof v === "object") out.push(v);
    }
    return out;
  };
  const enter = (node: object): boolean => {
    const edges = edgesOf(node);
    if (edges === null) return false;
    state.set(node, 1);
    stack.push({ node, edges, next: 0 });
    return true;
  };
  if (!enter(root)) return true;
  while (stack.length) {
    const top = stack[stack.length - 1];
    if (top.next === top.edges.length) {
      state.set(top.node, 2);
      stack.pop();
      continue;
    }
    const child = top.edges[top.next++];
    const s = state.get(child);
    if (s === 1) return true;
    if (s === 2) continue;
    if (!enter(child)) return true;
  }
  return false;
}

/** The node a local `$ref` ("#", "#/a/b~1c") names; undefined when it is not a local JSON pointer or names nothing. */
function resolvePointer(root: object, ref: string): unknown {
  if (ref === "#" || ref === "") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    } catch {
      return undefined;
    }
    if (!node || typeof node !== "object" || !Object.prototype.hasOwnProperty.call(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
