/**
 * Python literals as `ast.literal_eval` reads them, without evaluating anything: open-instruct's
 * IFEvalVerifier stores its ground truth as `str([{...}])`, i.e. with single quotes, `None`,
 * `True`, `False` (open_instruct/ground_truth_utils.py, `ast.literal_eval(label)`).
 *
 * Covered: str (single, double and triple quotes; r/u prefixes; adjacent literals concatenated;
 * escapes \\ \' \" \a \b \f \n \r \t \v \ooo \xhh \uhhhh \Uhhhhhhhh and backslash-newline), int
 * (decimal, 0x/0o/0b, underscores), float (with exponent, inf/nan are not literals in Python
 * either), unary + and -, True/False/None, list, tuple, dict. A set, bytes, complex numbers or
 * \N{...} escapes are refused with a message naming them. One pass over the text with a depth
 * cap: linear time.
 */

export class PyLiteralError extends Error {}

const MAX_DEPTH = 64;
const SIMPLE_ESCAPES: Record<string, string> = { "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };

export function parsePyLiteral(src: string): unknown {
  let i = 0;
  const fail = (what: string): never => {
    throw new PyLiteralError(`not a Python literal at character ${i}: ${what}`);
  };
  const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f";
  const skip = () => {
    while (i < src.length) {
      const c = src[i];
      if (c === "\\" && (src[i + 1] === "\n" || src[i + 1] === "\r")) i += 2; // explicit line joining
      else if (c === "#") while (i < src.length && src[i] !== "\n") i++;
      else if (isSpace(c)) i++;
      else break;
    }
  };

  const readString = (raw: boolean): string => {
    const q = src[i];
    const triple = src.startsWith(q.repeat(3), i);
    const close = triple ? q.repeat(3) : q;
    i += close.length;
    let out = "";
    for (;;) {
      if (i >= src.length) fail("unterminated string");
      if (src.startsWith(close, i)) {
        i += close.length;
        return out;
      }
      const c = src[i];
      if (!triple && (c === "\n" || c === "\r")) fail("newline inside a one-line string");
      if (c !== "\\") {
        out += c;
        i++;
        continue;
      }
      const e = src[i + 1];
      if (e === undefined) fail("unterminated string");
      if (raw) {
        out += c + e; // a raw string keeps the backslash; it still cannot end on an escaped quote
        i += 2;
        continue;
      }
      if (e === "\n") {
        i += 2;
        continue;
      }
      if (e in SIMPLE_ESCAPES) {
        out += SIMPLE_ESCAPES[e];
        i += 2;
        continue;
      }
      if (e >= "0" && e <= "7") {
        let j = i + 1;
        while (j < i + 4 && src[j] >= "0" && src[j] <= "7") j++;
        out += String.fromCodePoint(parseInt(src.slice(i + 1, j), 8));
        i = j;
        continue;
      }
      const hex = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
      if (hex) {
        const h = src.slice(i + 2, i + 2 + hex);
        if (h.length !== hex || !/^[0-9a-fA-F]+$/.test(h)) fail(`truncated \\${e} escape`);
        const cp = parseInt(h, 16);
        if (cp > 0x10ffff) fail("escape beyond U+10FFFF");
        out += String.fromCodePoint(cp);
        i += 2 + hex;
        continue;
      }
      if (e === "N") fail("\\N{...} escapes are not supported; write the character itself");
      out += c + e; // Python keeps an unknown escape as written
      i += 2;
    }
  };

  const strings = (): string => {
    let out = "";
    let any = false;
    for (;;) {
      skip();
      let raw = false;
      let j = i;
      while (j < i + 2 && /[rRuUbBfF]/.test(src[j] ?? "")) j++;
      if (src[j] !== "'" && src[j] !== '"') break;
      const prefix = src.slice(i, j).toLowerCase();
      if (prefix.includes("b")) fail("bytes literals are not supported");
      if (prefix.includes("f")) fail("f-strings are not literals");
      if (prefix.length > 1) fail(`string prefix ${prefix}`);
      raw = prefix.includes("r");
      i = j;
      out += readString(raw);
      any = true;
    }
    if (!any) fail("expected a string");
    return out;
  };

  const number = (): number => {
    const m = /^(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|(?:\d(?:_?\d)*)?(?:\.(?:\d(?:_?\d)*)?)?(?:[eE][+-]?\d(?:_?\d)*)?)/.exec(src.slice(i, i + 400));
    const text = m?.[0] ?? "";
    if (!text || text === "." || /^\.?[eE]/.test(text)) fail("expected a value");
    if (/[jJ]/.test(src[i + text.length] ?? "")) fail("complex numbers are not supported");
    i += text.length;
    const t = text.replaceAll("_", "");
    if (/^0[xXoObB]/.test(t)) return Number(t.toLowerCase());
    if (/^0\d*$/.test(t) && /[1-9]/.test(t)) fail("leading zeros in a decimal integer");
    return Number(t);
  };

  const value = (depth: number): unknown => {
    if (depth > MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH}`);
    skip();
    const c = src[i];
    if (c === undefined) fail("unexpected end");
    if (c === "[" || c === "(") {
      const close = c === "[" ? "]" : ")";
      i++;
      const out: unknown[] = [];
      let sawComma = false;
      for (;;) {
        skip();
        if (src[i] === close) {
          i++;
          // (x) is x, not a tuple; (x,) and () are tuples
          if (c === "(" && out.length === 1 && !sawComma) return out[0];
          return out;
        }
        if (out.length > 0) {
          if (src[i] !== ",") fail(`expected , or ${close}`);
          i++;
          sawComma = true;
          skip();
          if (src[i] === close) continue;
        }
        out.push(value(depth + 1));
      }
    }
    if (c === "{") {
      i++;
      const out: Record<string, unknown> = {};
      let n = 0;
      for (;;) {
        skip();
        if (src[i] === "}") {
          i++;
          return out;
        }
        if (n > 0) {
          if (src[i] !== ",") fail("expected , or }");
          i++;
          skip();
          if (src[i] === "}") continue;
        }
        const key = value(depth + 1);
        skip();
        if (src[i] !== ":") fail(n === 0 ? "sets are not supported (expected : after a dict key)" : "expected :");
        i++;
        if (typeof key !== "string") fail("only string keys are supported in a dict");
        Object.defineProperty(out, key as string, { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
        n++;
      }
    }
    if (/^[rRuUbBfF]{0,2}['"]/.test(src.slice(i, i + 3))) {
      return strings();
    }
    if (c === "-" || c === "+") {
      i++;
      skip();
      const v = value(depth + 1);
      if (typeof v !== "number") fail(`unary ${c} on a non-number`);
      return c === "-" ? -(v as number) : v;
    }
    for (const [word, v] of [["None", null], ["True", true], ["False", false]] as const) {
      if (src.startsWith(word, i) && !/[\p{L}\p{N}_]/u.test(src[i + word.length] ?? "")) {
        i += word.length;
        return v;
      }
    }
    if (/[0-9.]/.test(c)) return number();
    const name = /^[\p{L}_][\p{L}\p{N}_]*/u.exec(src.slice(i, i + 64))?.[0];
    return fail(name ? `the name ${name} is not a literal (only None, True, False)` : `unexpected ${JSON.stringify(c)}`);
  };

  const v = value(0);
  skip();
  if (i < src.length) fail("text after the literal");
  return v;
}
