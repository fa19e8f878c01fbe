/**
 * Python string semantics that IFEval's checkers lean on, written linear-time for JavaScript.
 * Each helper names the Python behaviour it reproduces.
 */
import { countPunktSentences, punktSpans } from "./punkt.js";

/** Python's str.isspace() set (what str.strip()/str.split() and `\s` in `re` treat as whitespace). */
const PY_SPACE = new Set(
  " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000",
);
export const isPySpace = (c: string | undefined): boolean => {
  if (c === undefined) return false;
  const k = c.charCodeAt(0);
  if (k > 32 && k < 127) return false; // printable ASCII: the common case, no set lookup
  return PY_SPACE.has(c);
};

/** Python str.strip() with no argument. */
export function pyStrip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && PY_SPACE.has(s[a])) a++;
  while (b > a && PY_SPACE.has(s[b - 1])) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

/** Python str.rstrip() with no argument. */
export function pyRstrip(s: string): string {
  let b = s.length;
  while (b > 0 && PY_SPACE.has(s[b - 1])) b--;
  return b === s.length ? s : s.slice(0, b);
}

/** Python str.strip(chars). */
export function pyStripChars(s: string, chars: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a])) a++;
  while (b > a && chars.includes(s[b - 1])) b--;
  return s.slice(a, b);
}

/** Python str.split() with no argument: runs of whitespace separate, no empty pieces. */
export function pySplitWs(s: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i < s.length; i++) {
    if (PY_SPACE.has(s[i])) {
      if (start >= 0) out.push(s.slice(start, i));
      start = -1;
    } else if (start < 0) start = i;
  }
  if (start >= 0) out.push(s.slice(start));
  return out;
}

/**
 * Python str.isupper(): no character with the Unicode Lowercase property (which includes
 * Other_Lowercase: `º`, `ª`, modifier letters) or title case, and at least one Uppercase one. So
 * `Nº` is not upper-case, although upper-casing leaves it unchanged.
 */
const PY_LOWER_OR_TITLE = /[\p{Lowercase}\p{Lt}]/u;
const PY_UPPER_OR_TITLE = /[\p{Uppercase}\p{Lt}]/u;
const PY_UPPER = /\p{Uppercase}/u;
const PY_LOWER = /\p{Lowercase}/u;
export const pyIsUpper = (s: string): boolean => !PY_LOWER_OR_TITLE.test(s) && PY_UPPER.test(s);
/** Python str.islower(): no Uppercase or title-case character, and at least one Lowercase one. */
export const pyIsLower = (s: string): boolean => !PY_UPPER_OR_TITLE.test(s) && PY_LOWER.test(s);

/** Python `re` `\w` on str patterns: letters, digits (any script) and underscore. */
const WORD_CHAR = /[\p{L}\p{N}_]/u;
export const isPyWordChar = (c: string | undefined): boolean => c !== undefined && WORD_CHAR.test(c);
const WORD_RUN = /[\p{L}\p{N}_]+/gu;

/** Python's round(): halves go to the even neighbour. */
export function pyRound(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * instructions_util.count_words: nltk RegexpTokenizer(r"\w+") — the number of `\w+` runs.
 * (A single global regex with a one-class `+`: linear.)
 */
export function countWords(text: string): number {
  let n = 0;
  WORD_RUN.lastIndex = 0;
  while (WORD_RUN.exec(text) !== null) n++;
  return n;
}

/** The `\w+` runs themselves (open-instruct's `re.findall(r"\b\w+\b", text)` is the same set). */
export function wordRuns(text: string): string[] {
  return text.match(WORD_RUN) ?? [];
}

/**
 * instructions_util.count_sentences: len(Punkt English tokenizer.tokenize(text)). The Punkt
 * algorithm is ported in punkt.ts; its parameters approximate NLTK's trained English model.
 */
export function countSentences(text: string, limit = Infinity): number {
  return countPunktSentences(text, undefined, limit);
}

// ---- nltk.word_tokenize, as CapitalWordFrequencyChecker uses it --------------------------------
// word_tokenize(text) = [NLTKWordTokenizer().tokenize(s) for s in sent_tokenize(text)] (NLTK 3.10,
// nltk/tokenize/destructive.py). The substitutions below are NLTKWordTokenizer's, in its order,
// with Python's Unicode `\s`/`\w`/`\d` spelled out. Instead of running them once per sentence,
// the sentences (from the Punkt port) are joined around a separator, and the rules that look at
// the start or end of a sentence (`^`, `$`) look at the separator as well: one pass per rule.

const SEP = "\u0000";
/** Python's `\\s` as a regular-expression class (JavaScript's also holds U+FEFF). */
export const PY_S = "[ \\t\\n\\r\\x0b\\x0c\\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const WS = PY_S;
const W = "[\\p{L}\\p{N}_]";
const END = `(?=${SEP}|$)`;
const rx = (src: string, flags = "gu") => new RegExp(src, flags);
/**
 * Each rule with a cheap test that any match needs (a character or string it cannot match
 * without), tried first on the text as it stands before the rule: a rule whose test fails would
 * leave the text as it is, and is skipped. Prose has no quotes, brackets or contractions, so most
 * of the 30 rules are skipped there.
 */
const NLTK_RULES: [RegExp, string, RegExp?][] = [
  // STARTING_QUOTES
  [rx("([«“‘„]|`+)"), " $1 ", /[«“‘„`]/],
  [rx(`(^|${SEP} )"`), "$1``", /"/],
  [rx("(``)"), " $1 ", /``/],
  [rx("([ \\(\\[{<])(\"|'{2})"), "$1 `` ", /"|''/],
  [rx(`(?<!${W})(')(?!(?:re|ve|ll|m|t|s|d|n)(?!${W}))(?=${W})`, "giu"), "$1 ", /'/],
  // PUNCTUATION
  // the run of closers is taken whole (a lookahead, then its text): a space is both a closer
  // and whitespace, and V8 would otherwise try every split of a run of spaces between the two,
  // quadratic in the run (`A.`, 64 K spaces, `x`: 8 s). The greedy run is the one a match
  // takes first in either form, so the result is the same.
  [rx(`([^.${SEP}])(\\.)(?=([\\]\\)}>"'»”’ ]*))\\3${WS}*${END}`), "$1 $2 $3 ", /\./],
  [rx("([:,])([^\\p{Nd}])"), " $1 $2", /[:,]/],
  [rx(`([:,])(?=\\n?(?: ${SEP}|$))`), " $1 ", /[:,]/],
  [rx("\\.{2,}"), " $& ", /\.\./],
  [rx("[;@#$%&]"), " $& ", /[;@#$%&]/],
  [rx("[\\u2012-\\u2015]"), " $& ", /[\u2012-\u2015]/],
  [rx(`([^.${SEP}])(\\.)([\\]\\)}>"']*)${WS}*${END}`), "$1 $2$3 ", /\./],
  [rx("[?!]"), " $& ", /[?!]/],
  [rx("([^'])' "), "$1 ' ", /' /],
  [rx("[*]"), " $& ", /\*/],
  // PARENS_BRACKETS, DOUBLE_DASHES
  [rx("[\\][(){}<>]"), " $& ", /[\][(){}<>]/],
  [rx("--"), " -- ", /--/],
];
/** What the contractions below need: one of their words (case-insensitive, as the rules match). */
const CONTRACTION = /cannot|d'ye|gimme|gonna|gotta|lemme|more'n|wanna|'t(?:is|was)/iu;
const NLTK_ENDING: [RegExp, string, RegExp?][] = [
  // ENDING_QUOTES (after padding the text with spaces)
  [rx("([»”’])"), " $1 ", /[»”’]/],
  [rx("''"), " '' ", /''/],
  [rx('"'), " '' ", /"/],
  [rx(`${WS}+`), " "],
  [rx("([^' ])('[sS]|'[mM]|'[dD]|') "), "$1 $2 ", /'/],
  [rx("([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), "$1 $2 ", /'/],
];
/**
 * Each of these needs one of CONTRACTION's words: where the text has none, the first leaves it as
 * it is, and so does every next one; one test before them decides for all.
 */
const NLTK_CONTRACTIONS: [RegExp, string][] = [
  // CONTRACTIONS2 and CONTRACTIONS3 (MacIntyreContractions), `\b` as Python's Unicode boundary
  ...(
    [["can", "not"], ["d", "'ye"], ["gim", "me"], ["gon", "na"], ["got", "ta"], ["lem", "me"], ["more", "'n"]] as const
  ).map(([a, b]) => [rx(`(?<!${W})(${a})(${b})(?!${W})`, "giu"), " $1 $2 "] as [RegExp, string]),
  [rx(`(?<!${W})(wan)(na)(?=${WS})`, "giu"), " $1 $2 "],
  [rx(` ('t)(is)(?!${W})`, "giu"), " $1 $2 "],
  [rx(` ('t)(was)(?!${W})`, "giu"), " $1 $2 "],
];

/**
 * Where a sentence ends decides only whether its final period is split off, which changes the
 * tokens only after a clitic (`DON'T.` -> `DO` `N'T` `.`) or `wanna`. Without one of those, the
 * whole text can go through the rules as a single sentence, without running Punkt.
 */
const SENTENCE_END_MATTERS = /(?:'[smd]|'ll|'re|'ve|n't)[.]|wanna[.]/i;

/** NLTKWordTokenizer.tokenize on sentences joined around SEP. */
function tokenizeJoined(joined: string): string[] {
  let t = joined;
  for (const [re, to, needs] of NLTK_RULES) if (!needs || needs.test(t)) t = t.replace(re, to);
  t = ` ${t} `;
  for (const [re, to, needs] of NLTK_ENDING) if (!needs || needs.test(t)) t = t.replace(re, to);
  if (CONTRACTION.test(t)) for (const [re, to] of NLTK_CONTRACTIONS) t = t.replace(re, to);
  return pySplitWs(t).filter((w) => w !== SEP);
}

/** Sentences per pass when they must be kept apart: batches let a count stop early. */
const BATCH = 256;

/**
 * The tokens of nltk.word_tokenize(text), handed to `take` a batch at a time; `take` returns true
 * to stop. The rules never reach across SEP, so batches of sentences tokenize as the whole would.
 */
function eachWordBatch(text: string, take: (tokens: string[]) => boolean): void {
  if (!SENTENCE_END_MATTERS.test(text)) {
    take(tokenizeJoined(pyRstrip(text))); // Punkt's last sentence ends at text.rstrip()
    return;
  }
  const spans = punktSpans(text);
  for (let i = 0; i < spans.length; i += BATCH) {
    const joined = spans
      .slice(i, i + BATCH)
      .map(([a, b]) => text.slice(a, b))
      .join(` ${SEP} `);
    if (take(tokenizeJoined(joined))) return;
  }
}

/** nltk.word_tokenize(text): Punkt sentences, then NLTKWordTokenizer's substitutions, then split(). */
export function nltkWordTokenize(text: string): string[] {
  const out: string[] = [];
  eachWordBatch(text, (tokens) => {
    for (const t of tokens) out.push(t); // not push(...tokens): a long text has more tokens than the stack has room for
    return false;
  });
  return out;
}

/**
 * CapitalWordFrequencyChecker's count of all-capital word_tokenize tokens, as far as comparing it
 * with `limit` needs: the result is below `limit` exactly when the count is. Every such token
 * holds an upper-case letter, so with fewer of those than `limit` nothing is tokenized.
 */
export function capitalTokensUpTo(text: string, limit: number): number {
  let upper = 0;
  for (let i = 0; i < text.length && upper < limit; i++) {
    const k = text.charCodeAt(i);
    if (k < 128) {
      if (k >= 65 && k <= 90) upper++;
    } else if (k >= 0xd800 && k <= 0xdbff && i + 1 < text.length) {
      // a capital beyond the BMP (𝐀) is a surrogate pair: one half alone is never upper-case
      if (pyIsUpper(text.slice(i, i + 2))) upper++;
      i++;
    } else if (pyIsUpper(text[i])) upper++;
  }
  if (upper < limit) return upper;
  let n = 0;
  eachWordBatch(text, (tokens) => {
    for (const w of tokens) if (pyIsUpper(w)) n++;
    return n >= limit;
  });
  return n;
}

// ---- Python `re` with IGNORECASE on a literal pattern -------------------------------------------

/**
 * CPython's re/_casefix.py `_EXTRA_CASES` (3.11): lower-case characters that also match each other
 * under IGNORECASE although their lower-case forms differ (i and dotless ı, s and long ſ, σ and
 * final ς, ...). Each class is folded to its smallest member.
 */
const EXTRA_CASES: number[][] = [
  [0x69, 0x131], [0x73, 0x17f], [0xb5, 0x3bc], [0x345, 0x3b9, 0x1fbe], [0x390, 0x1fd3], [0x3b0, 0x1fe3],
  [0x3b2, 0x3d0], [0x3b5, 0x3f5], [0x3b8, 0x3d1], [0x3ba, 0x3f0], [0x3c0, 0x3d6], [0x3c1, 0x3f1], [0x3c2, 0x3c3],
  [0x3c6, 0x3d5], [0x432, 0x1c80], [0x434, 0x1c81], [0x43e, 0x1c82], [0x441, 0x1c83], [0x442, 0x1c84, 0x1c85],
  [0x44a, 0x1c86], [0x463, 0x1c87], [0x1c88, 0xa64b], [0x1e61, 0x1e9b], [0xfb05, 0xfb06],
];
const FOLD_TO = new Map<string, string>();
for (const cls of EXTRA_CASES) for (const c of cls.slice(1)) FOLD_TO.set(String.fromCodePoint(c), String.fromCodePoint(cls[0]));
const FOLD_CHARS = new RegExp(`[${[...FOLD_TO.keys()].join("")}]`, "gu");

/**
 * Text folded so that a literal pattern matches it case-insensitively exactly where Python's
 * `re.search(pattern, text, re.IGNORECASE)` does: each code point becomes its simple lower-case
 * form (sre's `tolower`; JavaScript's toLowerCase differs only for U+0130 `İ`, whose full form is
 * two code points and whose simple form is `i`, and for a final sigma, which the classes above
 * fold back), then the representative of its `_EXTRA_CASES` class. Code points map one to one, so
 * counts of non-overlapping matches carry over. Linear.
 */
export function pyReFold(s: string): string {
  // Every keyword of an item folds the same response: the last text's fold is kept, so 256
  // keywords fold a response once, not 256 times (Greek folds at ~250 ns a character: 256
  // forbidden words on 64 KiB of `Σ` held the event loop 3.3 s).
  if (s === lastFolded.text) return lastFolded.fold;
  let low = (s.includes("\u0130") ? s.replaceAll("\u0130", "i") : s).toLowerCase();
  if (/[^\x00-\x7f]/.test(low)) low = low.replace(FOLD_CHARS, (c) => FOLD_TO.get(c)!);
  lastFolded = { text: s, fold: low };
  return low;
}
let lastFolded = { text: "", fold: "" };

/** The code point that ends just before index `i` (a surrogate pair counts as one). */
export function codePointBefore(t: string, i: number): string | undefined {
  if (i <= 0) return undefined;
  const lo = t.charCodeAt(i - 1);
  if (lo >= 0xdc00 && lo <= 0xdfff && i >= 2) {
    const hi = t.charCodeAt(i - 2);
    if (hi >= 0xd800 && hi <= 0xdbff) return t.slice(i - 2, i);
  }
  return t[i - 1];
}

/** The code point that starts at index `i`. */
export function codePointAt(t: string, i: number): string | undefined {
  if (i >= t.length) return undefined;
  const hi = t.charCodeAt(i);
  if (hi >= 0xd800 && hi <= 0xdbff && i + 1 < t.length) {
    const lo = t.charCodeAt(i + 1);
    if (lo >= 0xdc00 && lo <= 0xdfff) return t.slice(i, i + 2);
  }
  return t[i];
}

/** Python's `\b` at index `i` of `t` (Unicode `\w` on both sides, surrogate pairs whole). */
export const pyWordBoundary = (t: string, i: number): boolean => isPyWordChar(codePointBefore(t, i)) !== isPyWordChar(codePointAt(t, i));

/** Python len(): code points, not UTF-16 units. */
export function pyLen(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/**
 * Does Python's `json.loads(s)` accept `s` (no exception)? It differs from JSON.parse only in
 * also taking the constants `NaN`, `Infinity` and `-Infinity` where a value may stand: those are
 * rewritten to `null` outside strings (in one pass that tracks strings and escapes), then
 * JSON.parse decides. A `-` before `NaN` stays invalid, as in Python.
 */
export function pyJsonValid(s: string): boolean {
  let t = s;
  if (s.includes("NaN") || s.includes("Infinity")) {
    const out: string[] = [];
    let from = 0;
    let inString = false;
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (inString) {
        if (c === "\\") i++;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === "N" && s.startsWith("NaN", i)) {
        out.push(s.slice(from, i), "null");
        from = i + 3;
        i += 2;
      } else if (c === "I" && s.startsWith("Infinity", i)) {
        out.push(s.slice(from, i), "null");
        from = i + 8;
        i += 7;
      } else if (c === "-" && s.startsWith("-Infinity", i)) {
        out.push(s.slice(from, i), "null");
        from = i + 9;
        i += 8;
      }
    }
    out.push(s.slice(from));
    t = out.join("");
  }
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

const STARS = new RegExp(`${PY_S}?\\*\\*\\*${PY_S}?`);
/**
 * ParagraphChecker's `re.split(r"\s?\*\*\*\s?", value)` (IFEval and IFEvalG): the pieces, and
 * their count once empty pieces at the ends are dropped; null when an empty one sits inside.
 */
export function starParagraphs(value: string): { pieces: string[]; count: number | null } {
  const pieces = value.split(STARS);
  let count = pieces.length;
  for (let i = 0; i < pieces.length; i++) {
    if (!pyStrip(pieces[i])) {
      if (i === 0 || i === pieces.length - 1) count--;
      else return { pieces, count: null };
    }
  }
  return { pieces, count };
}
