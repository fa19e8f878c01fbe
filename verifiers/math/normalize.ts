/**
 * Normalises an extracted answer into a canonical LaTeX-ish string before parsing: drops
 * styling, units, degrees, `\left`/`\right`, thousands separators and `%`; rewrites frac
 * variants, Unicode symbols and connector words. Plain answers also get decimal commas.
 */
import { dropTrailing } from "../../src/core/completion.js";
import { spellRaised } from "../../src/core/raised.js";

const UNICODE: [RegExp, string][] = [
  [/[−–—]/g, "-"], [/×/g, "\\times "], [/·/g, "\\cdot "], [/÷/g, "/"], [/≤/g, "\\le "], [/≥/g, "\\ge "],
  [/≠/g, "\\ne "], [/π/g, "\\pi "], [/∞/g, "\\infty "], [/√/g, "\\sqrt "], [/±/g, "\\pm "], [/∪/g, "\\cup "],
  [/∈/g, "\\in "], [/θ/g, "\\theta "], [/α/g, "\\alpha "], [/β/g, "\\beta "], [/°/g, "^\\circ "],
  [/²/g, "^2"], [/³/g, "^3"], [/½/g, "\\frac{1}{2}"], [/¼/g, "\\frac{1}{4}"], [/¾/g, "\\frac{3}{4}"],
  [/\u00a0/g, " "], [/⁄/g, "/"], [/∅/g, "\\emptyset "], [/⩽/g, "\\le "], [/⩾/g, "\\ge "], [/⟨/g, "\\langle "], [/⟩/g, "\\rangle "]
];

/** Unit words stripped after a number (kept short: a unit is never the answer). */
const UNITS = [
  "cm", "mm", "km", "m", "meters?", "metres?", "kilometers?", "centimeters?", "inches", "inch", "in", "feet", "foot", "ft",
  "miles?", "yards?", "units?", "square", "sq", "cubic", "seconds?", "sec", "s", "minutes?", "min", "hours?", "hrs?", "h",
  "days?", "weeks?", "months?", "years?", "dollars?", "cents?", "yuan", "euros?", "pounds?", "lbs?",
  "kg", "g", "grams?", "kilograms?", "liters?", "litres?", "l", "ml", "mph", "km/h", "people", "persons?", "students?",
  "ways", "times", "points?", "cups?", "pages?", "papers", "bins",
];
/**
 * Bare unit words after a number. One-letter units (m, s, h, g, l) are stripped only inside
 * \text{}: bare, they are variables as often as units (`\frac{1}{3}h` is not `\frac{1}{3}`).
 */
const BARE_UNITS = UNITS.filter((u) => !/^[a-z]$/.test(u));
const UNIT_RE = new RegExp(`(?<=[\\d}])\\s*(?:\\\\[,;! ]|~)?\\s*(?:${BARE_UNITS.join("|")})(?:\\^?\\{?[23]\\}?)?(?![a-zA-Z])`, "g");
const UNIT_TEXT_RE = new RegExp(`\\\\(?:text|textnormal|textrm|textit|mbox|mathrm|textbf|operatorname)\\s*\\{\\s*(?:(?:square|sq\\.?|cubic)\\s+)?(?:${UNITS.join("|")})(?:\\^?[23])?\\s*\\}(?:\\^\\{?[23]\\}?)?`, "gi");

/**
 * Words that change or qualify the value before them (`2 dozen`, `5 factorial`, `3 or more`),
 * name a function or constant, or say what kind of number it is: never dropped as a noun.
 */
const NOT_NOUNS = new Set([
  "and", "or", "nor", "not", "none", "more", "less", "fewer", "than", "least", "most", "only", "are", "was", "were",
  "equal", "equals", "plus", "minus", "times", "over", "divided", "mod", "modulo", "choose", "squared", "cubed",
  "factorial", "root", "roots", "power", "powers", "dozen", "dozens", "score", "hundred", "hundreds", "thousand",
  "thousands", "million", "millions", "billion", "billions", "trillion", "trillions", "half", "halves", "third", "thirds",
  "quarter", "quarters", "percent", "sin", "cos", "tan", "cot", "sec", "csc", "log", "exp", "lim", "max", "min", "sqrt",
  "gcd", "lcm", "det", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "inf", "infty", "infinity", "undefined",
  "true", "false", "yes", "odd", "even", "real", "complex", "integer", "integers", "rational", "irrational", "prime",
  "primes", "repeating", "recurring", "approx", "approximately", "about", "exactly", "digit", "digits",
  "doubled", "tripled", "quadrupled", "halved", "negated", "inverted", "reversed", "reciprocal", "reciprocals",
  "inverse",
]);
/** A fraction's denominator as a word (`5 tenths`, `3 hundredths`): the value is not the number before it. */
const FRACTION_WORD = /^(?:four|fif|six|seven|eigh|nin|ten|eleven|twelf|twentie|hundred|thousand|million|billion|trillion)ths?$/i;
/** A word that changes or qualifies the number before it: never dropped as the thing counted. */
export const valueWord = (w: string): boolean => NOT_NOUNS.has(w.toLowerCase()) || FRACTION_WORD.test(w);
const SCALES: Record<string, number> = { thousand: 3, million: 6, billion: 9, trillion: 12 };
/** A whole answer `2.5 million`: a number, then one scale word. */
const SCALED = /^\s*(-?)(\d{1,15})(?:\.(\d{1,15}))?\s*(thousand|million|billion|trillion)s?\s*$/i;

/**
 * One to four words of three letters or more after a number, at the very end of the answer
 * (`7 \text{ marbles}`, `12 red apples`), once \text{} is unwrapped. Run on the answer's last
 * 96 characters: linear.
 */
const TRAILING_WORDS = /(?<=[\d}]|\\%)\s+((?:[A-Za-z]{3,}[ -]?){1,4})\s*$/;

/**
 * A noun after a number at the end of an answer is what is counted, not a factor: the
 * answer `7 marbles` is 7 (read as LaTeX it is 7 times m·a·r·b·l·e·s). Not a word of
 * NOT_NOUNS, and only after a space: `7abc` is a product.
 */
function dropTrailingNoun(s: string): string {
  const from = Math.max(0, s.length - 96);
  const m = TRAILING_WORDS.exec(s.slice(from));
  if (!m) return s;
  const words = m[1].split(/[ -]+/).filter(Boolean);
  if (!words.some(valueWord)) return s.slice(0, from + m.index);
  // `7 million dollars`: the noun after a scale word goes, the scale word stays (scaleWord)
  const scale = words[0].toLowerCase().replace(/s$/, "");
  if (words.length > 1 && scale in SCALES && !words.slice(1).some(valueWord)) return `${s.slice(0, from + m.index)} ${words[0]}`;
  return s;
}

/**
 * A whole answer `2.5 million` is the number it names, 2500000, written out exactly (the
 * decimal point moved, no floating point). Only a whole answer: in `4 million people per year`
 * the word is not the answer's last, and a number followed by other words is left as it is.
 */
function scaleWord(s: string): string {
  const m = SCALED.exec(s.length > 64 ? "" : s);
  if (!m) return s;
  const [, sign, whole, frac = "", word] = m;
  const shift = SCALES[word.toLowerCase()];
  const digits = (whole + frac.padEnd(shift, "0").slice(0, shift)).replace(/^0+(?=\d)/, "");
  const rest = frac.slice(shift).replace(/0+$/, "");
  return `${sign}${digits}${rest ? `.${rest}` : ""}`;
}

/** The last character that is not a comma, semicolon, colon, full stop or space. */
const LAST_NOT_PUNCTUATION = /[^,;.:\s][,;.:\s]*$/;

/**
 * Circled and other enclosed digits as a list (`①④` is 1, 4: a choice of statements), and
 * decimal digits of other scripts (Arabic-Indic, Devanagari, …) as ASCII digits. NFKC would make
 * `①④` the number 14 (and `10²` 102: spellRaised) and leaves most scripts' digits as they are.
 * Linear.
 */
export function unicodeDigits(s: string): string {
  if (/^[\x00-\x7f]*$/.test(s)) return s;
  let enclosed = false;
  let out = s.replace(/[\u2460-\u249b\u24ea\u24f5-\u24fe\u2776-\u2793]/g, (c) => {
    enclosed = true;
    return ` ${enclosedValue(c.codePointAt(0)!)},`;
  });
  if (enclosed) out = out.replace(/,\s*(?=$|[^\s\d])/g, "");
  // superscripts, subscripts and vulgar fractions spelled out, then NFKC: it maps the
  // mathematical and full-width digits; the rest come in runs of ten
  return spellRaised(out, "math").normalize("NFKC").replace(/(?![0-9])\p{Nd}/gu, (c) => String(decimalValue(c.codePointAt(0)!)));
}

function enclosedValue(cp: number): number {
  if (cp >= 0x2460 && cp <= 0x2473) return cp - 0x2460 + 1; // ① … ⑳
  if (cp >= 0x2474 && cp <= 0x2487) return cp - 0x2474 + 1; // ⑴ …
  if (cp >= 0x2488 && cp <= 0x249b) return cp - 0x2488 + 1; // ⒈ …
  if (cp === 0x24ea) return 0; // ⓪
  if (cp >= 0x24f5 && cp <= 0x24fe) return cp - 0x24f5 + 1; // ⓵ …
  return ((cp - 0x2776) % 10) + 1; // ❶ ➀ ➊ …
}

/** The value of a decimal digit (Unicode Nd) other than the mathematical ones: runs of ten from 0. */
function decimalValue(cp: number): number {
  let k = 0;
  while (k < 9 && /\p{Nd}/u.test(String.fromCodePoint(cp - k - 1))) k++;
  return k;
}

const QUALIFIER = /\bfor\s+(?:all|every|any|each)\b|\\forall(?![a-zA-Z])|\bwhere\b|\bwhenever\b|\bwhen\b|\bprovided\b|\bsuch\s+that\b/i;
const PARAMETER_DOMAIN = /[,(]\s*[kmn]\s*(?:\\in\s*(?:Z|N)(?:\^\s*\+|_\s*\{?\s*\+\s*\}?)?|(?:is\s+an?\s+)?integers?)\s*\)?\s*$/;

/**
 * A qualifier after a complete answer is not part of it: `g(x) = 0 for every real x`,
 * `2k\pi, where k is an integer`, `\frac{\pi}{2} + k\pi, k \in \mathbb{Z}`. Only a trailing one
 * with no further list after it (`1 when x > 0, 0 otherwise` is left whole). Linear: no pattern
 * here begins with a repeated class that each start position would rescan.
 */
export function dropQualifier(s: string): string {
  const q = QUALIFIER.exec(s);
  if (q && !/[,;]/.test(s.slice(q.index + q[0].length))) {
    const head = s.slice(0, q.index).trimEnd().replace(/,$/, "");
    if (/[^\s,]/.test(head)) s = head;
  }
  const p = PARAMETER_DOMAIN.exec(s);
  if (p && p.index > 0) s = s.slice(0, p.index);
  return s;
}

/** Removes a `\cmd{…}` wrapper keeping its (balanced) argument. */
function unwrapCommand(s: string, cmd: RegExp): string {
  for (let guard = 0; guard < 200; guard++) {
    cmd.lastIndex = 0;
    const m = cmd.exec(s);
    if (!m) return s;
    const open = m.index + m[0].length;
    let depth = 1;
    let i = open;
    for (; i < s.length && depth; i++) {
      if (s[i] === "\\") { i++; continue; }
      if (s[i] === "{") depth++;
      else if (s[i] === "}") depth--;
    }
    if (depth) return s.slice(0, m.index) + s.slice(open); // unbalanced: drop the command
    s = s.slice(0, m.index) + s.slice(open, i - 1) + s.slice(i);
  }
  return s;
}

/** Marker of a degree sign after a value, read by the parser. */
export const DEG = "^\\circ ";
/** Marker of a percent sign after a value, read by the parser. */
export const PCT = "\\% ";

/** A plain integer or decimal, signed or not: every rule of normalizeByRules leaves it as it is. */
export const PLAIN_NUMBER = /^-?(?:\d+(?:\.\d+)?|\.\d+)$/;

/**
 * `plain`: the answer came from plain text. `decimalComma`: a lone plain number with one comma
 * (`1,22`, `0,111`) is a decimal (off by default: `5,1` is the list 5, 1).
 */
export function normalizeLatex(input: string, plain: boolean, decimalComma = false): string {
  // the commonest answer, a plain number, is one that no rule changes: ~40 regular expressions
  // over it cost ~6 µs a call, several calls an item (normalize.test.ts holds the two ways to
  // the same result)
  if (PLAIN_NUMBER.test(input)) return input;
  return normalizeByRules(input, plain, decimalComma);
}

/** normalizeLatex without its shortcut for plain numbers (exported for the test that checks the shortcut). */
export function normalizeByRules(input: string, plain: boolean, decimalComma = false): string {
  // ℝ first: NFKC would turn it into a plain R, a variable
  let s = unicodeDigits(input.replace(/ℝ/g, "\\mathbb{R}"));
  for (const [re, to] of UNICODE) s = s.replace(re, to);
  s = s.replace(/\\\$|\$|[€£¥₹]|\\(?:euro|pounds|yen)(?![a-zA-Z])/g, " "); // currency signs, as the dollar
  // display wrappers and styling
  s = unwrapCommand(s, /\\(?:boxed|fbox)\s*\{/g);
  s = s.replace(/\\(?:left|right|big|Big|bigg|Bigg|bigl|bigr|Bigl|Bigr)(?![a-zA-Z])\s*(\\\{|\\\}|\\\||[()[\]|.]|\\langle|\\rangle)?/g, (_m, d) => (d === "." || !d ? "" : d));
  s = s.replace(/\\(?:displaystyle|textstyle|scriptstyle|limits|nolimits|mathstrut)(?![a-zA-Z])/g, "");
  s = s.replace(/\\[dtc]frac(?![a-zA-Z])/g, "\\frac");
  // \cos\frac{3}{4}\pi is the cosine of 3π/4, as it is read aloud
  s = s.replace(/(\\(?:sin|cos|tan|sec|csc|cot))\s*\\frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}\s*\\pi(?![a-zA-Z])/g, "$1(\\frac{$2\\pi}{$3})");
  // thousands written 14{,}916 or 11,\! 111
  s = s.replace(/(\d)\s*(?:\{\s*,\s*\}|,\s*\\!)\s*(?=\d{3}(?!\d))/g, "$1");
  s = s.replace(/(?<!\\)\\(?:q?quad|[,;:! ]|enspace|thinspace)/g, " ").replace(/~/g, " ");
  // degrees: one marker, `^\circ`, that the parser reads (120^\circ is 2π/3 against radians)
  s = s.replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\degree(?![a-zA-Z])/g, DEG).replace(/(?<!\^)\\circ(?![a-zA-Z])/g, "");
  s = s.replace(/\\(?:text|mathrm|textnormal|textrm|mbox)\s*\{\s*(?:degrees?|deg)\s*\}/gi, DEG);
  s = s.replace(/(?<=[\d}])\s*(?:degrees?|deg)(?![a-zA-Z])/gi, DEG);
  // ordinals after a number: 12^{\text{th}}, 15th, 2^{nd}, 2\text{nd}
  s = s.replace(/(\d)\s*(?:\^\s*)?(?:\{\s*(?:\\(?:text|textrm|textnormal|mathrm)\s*\{\s*)?(?:st|nd|rd|th)\s*\}?\s*\}|\\(?:text|textrm|textnormal|mathrm)\s*\{\s*(?:st|nd|rd|th)\s*\}|(?:st|nd|rd|th)(?![a-zA-Z]))/g, "$1");
  // \leqslant, \geqslant, \leqq, \geqq are \le, \ge; ⟨…⟩ vectors are tuples
  s = s.replace(/\\leq(?:slant|q)(?![a-zA-Z])/g, "\\le ").replace(/\\geq(?:slant|q)(?![a-zA-Z])/g, "\\ge ");
  s = s.replace(/\\langle(?![a-zA-Z])/g, "(").replace(/\\rangle(?![a-zA-Z])/g, ")");
  s = s.replace(UNIT_TEXT_RE, "");
  // the empty set, and the whole real line as an interval (not ℝ^n or ℝ_+)
  s = s.replace(/\\(?:emptyset|varnothing)(?![a-zA-Z])/g, "\\{\\}");
  s = s.replace(/\\mathbb\s*\{\s*R\s*\}(?!\s*[\^_])/g, "(-\\infty,\\infty)");
  s = unwrapCommand(s, /\\(?:text|textnormal|textrm|textit|textbf|textsf|mbox|mathrm|mathbf|mathit|mathsf|mathbb|mathcal|boldsymbol|bm|operatorname|hbox)\s*\{/g);
  s = dropQualifier(s);
  // percent: one marker, `\%`, that the parser reads (25\% is 25 and 0.25)
  // (?<!\s): a match begins where a run of spaces begins, never inside one: `\s*` tried from
  // every space of a long run, each try scanning the rest of it, was quadratic (4,000 `~` or `$`,
  // spaces by then, took ~70 ms on the event loop's quick path)
  s = s.replace(/\\?%/g, PCT).replace(/(?<!\s)\s*\b(?:percent(?:age)?|pct)\b/gi, PCT);
  // a mixed number written with a slash, `1 1/2` (a proper fraction after a whole number), is
  // 1\frac{1}{2}, which the parser reads as 1 + 1/2; read as LaTeX, the space vanishes (11/2).
  // With an improper fraction (`1 3/2`) it is two numbers, not 13/2
  s = s.replace(/(?<![\d.,}^_])(\d{1,9})\s+(\d{1,9})\s*\/\s*(\d{1,9})(?![\d.])/g, (_m, a: string, b: string, c: string) => (+b < +c ? `${a}\\frac{${b}}{${c}}` : `${a}, ${b}/${c}`));
  // thousands separators: 14{,}916, 11,\!111, 1\,000 (a comma followed by no space and 3 digits)
  s = s.replace(/\{\s*,\s*\}/g, ",");
  s = s.replace(/(?<![\d.([,]\s*)(\d{1,3})((?:,\d{3})+)(?![\d])(?!\s*[)\]])/g, (m, a: string, rest: string) => (a === "0" ? m : a + rest.replace(/,/g, "")));
  s = s.replace(/(?<![\d.])(\d{1,3})((?: \d{3})+)(?![\d])/g, (_m, a: string, rest: string) => a + rest.replace(/ /g, ""));
  // Digits that whitespace still separates are two numbers, never one: `3 \text{ times } 4` (a
  // unit word dropped), `1 \quad 2` and `3 4` were read as 34 and 12 (the parser glues them).
  // Not a command's or a script's argument: `\frac 1 2`, `\log_2 8`, `x^2 3`.
  s = s.replace(/(?<![\d.a-zA-Z_^}]\s*)(\d+)\s+(?=\d)/g, "$1, ");
  // a comma is a decimal comma only when asked for (Math-Verify reads one so); by default `5,1`
  // is the list 5, 1, and a comma separates thousands only in groups of three digits
  if (plain && decimalComma) {
    const t = s.trim();
    if (/^-?\d+,\d+$/.test(t)) s = t.replace(",", ".");
  }
  // connectors between answers
  s = s.replace(/(?<!\s)\s*\b(?:and|or)\b\s*/gi, ",");
  s = s.replace(/\)\s*(?:and|or)\s*\(/gi, "),(");
  // units after numbers
  s = s.replace(UNIT_RE, "");
  s = scaleWord(dropTrailingNoun(s));
  s = s.replace(/\\approx/g, "\\approx ");
  s = s.replace(/\s+/g, " ").trim();
  s = dropTrailing(s.replace(/^(?:[,;:\s]|\.(?!\d))+/, ""), LAST_NOT_PUNCTUATION);
  // a matrix wrapped in brackets: [\begin{array}…\end{array}]
  s = s.replace(/^[([]\s*(\\begin\{(\w+)\}[\s\S]*\\end\{\2\})\s*[)\]]$/, "$1");
  // `x \in S`
  s = s.replace(/^[a-zA-Z](?:_\{?\w+\}?)?\s*\\in(?![a-zA-Z])\s*/, "");
  return s;
}
