/**
 * IFEval's 25 instructions, ported from google-research/google-research
 * instruction_following_eval/instructions.py (the class named beside each entry, its
 * `check_following`) and instructions_registry.py (INSTRUCTION_DICT: the ids).
 *
 * Every scan over model text is linear: plain loops, or regexes whose every attempt stops at the
 * next delimiter, or re2js (RE2, automaton-based) where the pattern comes from the dataset
 * (keywords, section splitters, postscript markers).
 */
import { RE2JS } from "re2js";
import { InvalidItemError } from "../../src/core/types.js";
import { detectedLanguage, knownLanguage } from "./language.js";
import {
  countSentences,
  countWords,
  isPySpace,
  pyIsLower,
  pyIsUpper,
  pySplitWs,
  pyStrip,
  starParagraphs,
  pyStripChars,
  capitalTokensUpTo,
  pyReFold,
  pyWordBoundary,
  pyJsonValid,
} from "./text.js";

/** One response text, with the costly counts computed at most once. */
export class Facts {
  private _words?: number;
  /** Sentences counted so far, and whether that count is complete or stopped at a limit. */
  private _sentences?: { n: number; complete: boolean };
  private _capitals?: { limit: number; n: number };
  private _language?: string | null;
  constructor(readonly text: string) {}
  /** langdetect's answer for the text (null: no features), found once for all the item's language checks. */
  get language(): string | null {
    if (this._language === undefined) this._language = detectedLanguage(this.text);
    return this._language;
  }
  /** IFEval's `detect(text) == code`, with an undetectable text counting as followed. */
  inLanguage(code: string): boolean {
    const got = this.language;
    return got === null || got === code;
  }
  get words(): number {
    return (this._words ??= countWords(this.text));
  }
  /** min(sentences, limit): counting stops once `limit` sentences are certain. */
  sentencesUpTo(limit: number): number {
    const c = this._sentences;
    if (c && (c.complete || c.n >= limit)) return Math.min(c.n, limit);
    const n = countSentences(this.text, limit);
    this._sentences = { n, complete: n < limit };
    return n;
  }
  /** Below `limit` exactly when the number of all-capital word_tokenize tokens is. */
  capitalTokensUpTo(limit: number): number {
    const c = this._capitals;
    if (c && c.limit === limit) return c.n;
    const n = capitalTokensUpTo(this.text, limit);
    this._capitals = { limit, n };
    return n;
  }
}

export type Check = (f: Facts) => boolean;
export type Kwargs = Record<string, unknown>;

// ---- kwargs readers: a missing or malformed kwarg makes the item invalid (IFEval would draw a
// ---- random value in build_description, which is no ground truth).

export class Args {
  readonly used = new Set<string>();
  constructor(readonly id: string, readonly kw: Kwargs) {}
  private bad(name: string, want: string): never {
    throw new InvalidItemError(`instruction ${this.id}: kwarg "${name}" must be ${want}, got ${JSON.stringify(this.kw[name]) ?? "nothing"}`);
  }
  int(name: string, min = 0): number {
    this.used.add(name);
    const v = this.kw[name];
    if (typeof v !== "number" || !Number.isInteger(v) || v < min) this.bad(name, `an integer >= ${min}`);
    return v;
  }
  str(name: string, opts: { nonEmpty?: boolean; maxLength?: number } = {}): string {
    this.used.add(name);
    const v = this.kw[name];
    if (typeof v !== "string" || (opts.nonEmpty !== false && !pyStrip(v)) || v.length > (opts.maxLength ?? 10_000)) {
      this.bad(name, "a non-empty string");
    }
    return v;
  }
  optStr(name: string): string | undefined {
    return this.kw[name] === undefined ? undefined : this.str(name);
  }
  strList(name: string): string[] {
    this.used.add(name);
    const v = this.kw[name];
    if (!Array.isArray(v) || v.length === 0 || v.length > 256 || !v.every((s) => typeof s === "string" && s.length > 0 && s.length <= 256)) {
      this.bad(name, "a non-empty list (at most 256) of non-empty strings (at most 256 characters)");
    }
    return v as string[];
  }
  relation(name: string): "less than" | "at least" {
    this.used.add(name);
    const v = this.kw[name];
    if (v !== "less than" && v !== "at least") this.bad(name, `"less than" or "at least"`);
    return v;
  }
  /** Python's build_description(**kwargs) rejects a keyword it does not take. */
  noOthers(): void {
    for (const k of Object.keys(this.kw)) {
      if (!this.used.has(k)) throw new InvalidItemError(`instruction ${this.id}: unexpected kwarg "${k}"`);
    }
  }
}

const reCache = new Map<string, RE2JS>();
/** Compile a dataset-supplied pattern with RE2 (linear matching); a bad pattern is a bad item. */
export function re2(pattern: string, flags: number, id: string): RE2JS {
  const key = `${flags}:${pattern}`;
  let re = reCache.get(key);
  if (!re) {
    try {
      re = RE2JS.compile(pattern, flags);
    } catch (e) {
      throw new InvalidItemError(`instruction ${id}: ${JSON.stringify(pattern)} is not a pattern RE2 accepts: ${(e as Error).message}`);
    }
    if (reCache.size >= 1024) reCache.delete(reCache.keys().next().value!);
    reCache.set(key, re);
  }
  return re;
}

/** Number of (non-overlapping, leftmost-first) matches, as Python's len(re.findall(...)). */
export function countMatches(re: RE2JS, text: string): number {
  const m = re.matcher(text);
  let n = 0;
  while (m.find()) n++;
  return n;
}

/** No regex metacharacter: the pattern matches itself literally (the common case in the data). */
const isLiteral = (p: string): boolean => !/[\\^$.|?*+()[\]{}]/.test(p);

/** A dataset keyword as Python's re.search/findall(keyword, text, re.IGNORECASE) sees it. */
export interface KeywordMatcher {
  found(text: string): boolean;
  count(text: string): number;
}

/** Literal keywords are searched in case-folded text (pyReFold: Python's IGNORECASE, no regex); others run on RE2. */
export function keywordMatcher(pattern: string, id: string): KeywordMatcher {
  if (isLiteral(pattern)) {
    const w = pyReFold(pattern);
    return {
      found: (t) => w.length === 0 || pyReFold(t).includes(w),
      count: (t) => {
        if (!w) return t.length + 1; // re.findall("", s) matches at every position
        const low = pyReFold(t);
        let n = 0;
        for (let i = low.indexOf(w); i >= 0; i = low.indexOf(w, i + w.length)) n++;
        return n;
      },
    };
  }
  const re = re2(pattern, RE2JS.CASE_INSENSITIVE, id);
  return { found: (t) => re.matcher(t).find(), count: (t) => countMatches(re, t) };
}

/**
 * ForbiddenWords' re.search(r"\b" + word + r"\b", text, re.IGNORECASE). For a literal word the
 * boundaries are checked with Python's Unicode notion of a word character (RE2's `\b` is ASCII).
 */
function wordBoundedFinder(word: string, id: string): (text: string) => boolean {
  if (!isLiteral(word)) {
    const re = re2(`\\b${word}\\b`, RE2JS.CASE_INSENSITIVE, id);
    return (t) => re.matcher(t).find();
  }
  const w = pyReFold(word);
  return (t) => {
    const low = pyReFold(t); // one code unit for one: indices in `low` are indices in `t`
    for (let i = low.indexOf(w); i >= 0; i = low.indexOf(w, i + 1)) {
      // boundaries on the text as written: the fold maps ι to U+0345, a combining mark that is no
      // word character, so on the folded text every iota made or hid a boundary
      if (pyWordBoundary(t, i) && pyWordBoundary(t, i + w.length)) return true;
    }
    return false;
  };
}

const ND = /^\p{Nd}/u;
/** The length in code units of the decimal digit (Python's `\d`: any Unicode Nd, `𝟏` included) at `k`; 0 when there is none. */
function digitAt(t: string, k: number): number {
  const c = t.codePointAt(k);
  if (c === undefined || !ND.test(String.fromCodePoint(c))) return 0;
  return c > 0xffff ? 2 : 1;
}

/** SectionChecker's matches of r"\s?" + spliter + r"\s?\d+\s?" for a literal spliter. */
export function countSections(t: string, spliter: string): number {
  let n = 0;
  for (let j = t.indexOf(spliter); j >= 0; ) {
    let k = j + spliter.length;
    if (isPySpace(t[k]) && digitAt(t, k + 1)) k++;
    if (digitAt(t, k)) {
      n++;
      for (let d = digitAt(t, k); d; d = digitAt(t, k)) k += d;
      j = t.indexOf(spliter, k);
    } else j = t.indexOf(spliter, j + 1);
  }
  return n;
}

/** Does `t` contain the literal `parts` in order, each pair joined by one optional whitespace (`\s?`)? */
function hasMarker(t: string, parts: string[]): boolean {
  for (let i = t.indexOf(parts[0]); i >= 0; i = t.indexOf(parts[0], i + 1)) {
    let k = i + parts[0].length;
    let ok = true;
    for (const piece of parts.slice(1)) {
      if (isPySpace(t[k]) && t.startsWith(piece, k + 1)) k += 1 + piece.length;
      else if (t.startsWith(piece, k)) k += piece.length;
      else {
        ok = false;
        break;
      }
    }
    if (ok) return true;
  }
  return false;
}

const compare = (rel: "less than" | "at least", actual: number, threshold: number): boolean =>
  rel === "less than" ? actual < threshold : actual >= threshold;

/** `\[.*?\]` matches in order: from an unmatched `[` to the first `]` on the same line. */
export function countPlaceholders(text: string): number {
  let n = 0;
  let open = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) open = false;
    else if (c === 91 /* [ */) open = true;
    else if (c === 93 /* ] */ && open) {
      n++;
      open = false;
    }
  }
  return n;
}

/**
 * BulletListChecker's `^\s*\*[^\*].*$` and `^\s*-.*$` (MULTILINE): RE2 runs them in linear time,
 * with Python's Unicode `\s` spelled out (RE2's is ASCII: a bullet indented with U+3000 counts).
 */
const PY_S_RE2 = "[\\t\\n\\x{0b}\\f\\r \\x{1c}-\\x{1f}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}]";
const BULLET_STAR = RE2JS.compile(`^${PY_S_RE2}*\\*[^\\*].*$`, RE2JS.MULTILINE);
const BULLET_DASH = RE2JS.compile(`^${PY_S_RE2}*-.*$`, RE2JS.MULTILINE);
/** HighlightSectionChecker's patterns; each attempt stops at the next `*` or newline: linear. */
const HIGHLIGHT = /\*[^\n*]*\*/g;
const DOUBLE_HIGHLIGHT = /\*\*[^\n*]*\*\*/g;

/** TitleChecker: `<<[^\n]+>>` finds, per line, first `<<` to last `>>` (greedy); no regex needed. */
export function hasTitle(text: string): boolean {
  for (const line of text.split("\n")) {
    const p = line.indexOf("<<");
    if (p < 0) continue;
    const q = line.lastIndexOf(">>");
    if (q < p + 3) continue;
    const title = pyStrip(line.slice(p, q + 2).replace(/^<+/, "").replace(/>+$/, ""));
    if (title) return true;
  }
  return false;
}

const CONSTRAINED = ["My answer is yes.", "My answer is no.", "My answer is maybe."];

/** The 25 ids of INSTRUCTION_DICT and how each builds its check from kwargs. */
export const INSTRUCTIONS: Record<string, (a: Args, prompt?: string) => Check> = {
  // KeywordChecker: every keyword (a Python regex) found, case-insensitive.
  "keywords:existence": (a) => {
    const ms = a.strList("keywords").map((k) => keywordMatcher(k, a.id));
    return (f) => ms.every((m) => m.found(f.text));
  },
  // KeywordFrequencyChecker: len(re.findall(keyword, value, IGNORECASE)) vs frequency.
  "keywords:frequency": (a) => {
    const m = keywordMatcher(pyStrip(a.str("keyword")), a.id);
    const freq = a.int("frequency");
    const rel = a.relation("relation");
    return (f) => compare(rel, m.count(f.text), freq);
  },
  // ForbiddenWords: no re.search(r"\b" + word + r"\b", value, IGNORECASE).
  "keywords:forbidden_words": (a) => {
    const finders = a.strList("forbidden_words").map((w) => wordBoundedFinder(w, a.id));
    return (f) => !finders.some((found) => found(f.text));
  },
  // LetterFrequencyChecker: collections.Counter(value.lower())[letter.lower()] vs let_frequency.
  "keywords:letter_frequency": (a) => {
    const letter = a.str("letter", { nonEmpty: false });
    // Upstream now rejects these too (instructions_test.py test_letter_frequency_checker_rejects_invalid_explicit_args).
    if ([...letter].length !== 1 || !pyStrip(letter)) {
      throw new InvalidItemError(`instruction ${a.id}: kwarg "letter" must be a single non-whitespace character`);
    }
    const l = pyStrip(letter).toLowerCase();
    const freq = a.int("let_frequency");
    const rel = a.relation("let_relation");
    // Counter counts characters: a letter whose lower case is two of them (`İ`) is never one
    const one = [...l].length === 1;
    return (f) => compare(rel, one ? f.text.toLowerCase().split(l).length - 1 : 0, freq);
  },
  // ResponseLanguageChecker: langdetect.detect(value) == language; undetectable counts as followed.
  "language:response_language": (a) => {
    const lang = a.str("language");
    if (!knownLanguage(lang)) throw new InvalidItemError(`instruction ${a.id}: language "${lang}" is not one the detector knows`);
    return (f) => f.inLanguage(lang);
  },
  // NumberOfSentences: instructions_util.count_sentences(value) vs num_sentences.
  "length_constraints:number_sentences": (a) => {
    const n = a.int("num_sentences");
    const rel = a.relation("relation");
    return (f) => compare(rel, f.sentencesUpTo(n), n);
  },
  // ParagraphChecker: re.split(r"\s?\*\*\*\s?", value); empty pieces only at the ends.
  "length_constraints:number_paragraphs": (a) => {
    const n = a.int("num_paragraphs");
    return (f) => starParagraphs(f.text).count === n;
  },
  // NumberOfWords: instructions_util.count_words(value) vs num_words.
  "length_constraints:number_words": (a) => {
    const n = a.int("num_words");
    const rel = a.relation("relation");
    return (f) => compare(rel, f.words, n);
  },
  // ParagraphFirstWordCheck: paragraphs split on "\n\n"; count and the nth's first word.
  "length_constraints:nth_paragraph_first_word": (a) => {
    const num = a.int("num_paragraphs", 1);
    const nth = a.int("nth_paragraph", 1);
    if (nth > num) throw new InvalidItemError(`instruction ${a.id}: nth_paragraph ${nth} > num_paragraphs ${num}`);
    const want = a.str("first_word").toLowerCase();
    return (f) => {
      const paragraphs = f.text.split("\n\n");
      let count = paragraphs.length;
      for (const p of paragraphs) if (!pyStrip(p)) count--;
      if (nth > count) return false;
      const paragraph = pyStrip(paragraphs[nth - 1]);
      if (!paragraph) return false;
      let word = pySplitWs(paragraph)[0];
      word = word.replace(/^'+/, "").replace(/^"+/, "");
      let first = "";
      for (const ch of word) {
        if (".,?!'\"".includes(ch)) break;
        first += ch.toLowerCase();
      }
      return count === num && first === want;
    };
  },
  // PlaceholderChecker: len(re.findall(r"\[.*?\]", value)) >= num_placeholders.
  "detectable_content:number_placeholders": (a) => {
    const n = a.int("num_placeholders");
    return (f) => countPlaceholders(f.text) >= n;
  },
  // PostscriptChecker: the marker's pattern found (MULTILINE) in value.lower().
  "detectable_content:postscript": (a) => {
    const marker = pyStrip(a.str("postscript_marker"));
    // The pattern starts with `\s*` and ends with `.*$` (MULTILINE): both always match, so only
    // the middle decides. P.P.S is r"p\.\s?p\.\s?s", P.S. is r"p\.\s?s\.", others the marker as a regex.
    if (marker === "P.P.S") return (f) => hasMarker(f.text.toLowerCase(), ["p.", "p.", "s"]);
    if (marker === "P.S.") return (f) => hasMarker(f.text.toLowerCase(), ["p.", "s."]);
    const re = re2(`\\s*${marker.toLowerCase()}.*$`, RE2JS.MULTILINE, a.id);
    return (f) => re.matcher(f.text.toLowerCase()).find();
  },
  // BulletListChecker: lines `* x` plus lines `- x`, exactly num_bullets.
  "detectable_format:number_bullet_lists": (a) => {
    const n = a.int("num_bullets");
    return (f) => countMatches(BULLET_STAR, f.text) + countMatches(BULLET_DASH, f.text) === n;
  },
  // ConstrainedResponseChecker: one of the three fixed answers appears in value.strip().
  "detectable_format:constrained_response": () => (f) => {
    const v = pyStrip(f.text);
    return CONSTRAINED.some((c) => v.includes(c));
  },
  // HighlightSectionChecker: *x* and **x** spans with non-blank content, at least num_highlights.
  "detectable_format:number_highlighted_sections": (a) => {
    const n = a.int("num_highlights");
    return (f) => {
      let count = 0;
      for (const m of f.text.matchAll(HIGHLIGHT)) if (pyStrip(pyStripChars(m[0], "*"))) count++;
      for (const m of f.text.matchAll(DOUBLE_HIGHLIGHT)) if (pyStrip(m[0].slice(2, -2))) count++;
      return count >= n;
    };
  },
  // SectionChecker: len(re.split(r"\s?" + spliter + r"\s?\d+\s?", value)) - 1 >= num_sections.
  "detectable_format:multiple_sections": (a) => {
    const spliter = pyStrip(a.str("section_spliter"));
    const n = a.int("num_sections");
    if (isLiteral(spliter)) return (f) => countSections(f.text, spliter) >= n;
    // Python's \s and \d around the data's pattern (RE2's are ASCII)
    const re = re2(`${PY_S_RE2}?${spliter}${PY_S_RE2}?\\p{Nd}+${PY_S_RE2}?`, 0, a.id);
    return (f) => countMatches(re, f.text) >= n;
  },
  // JsonFormat: strip, drop ```json / ``` fences, json.loads succeeds.
  "detectable_format:json_format": () => (f) => {
    let v = pyStrip(f.text);
    // str.removeprefix applied four times in a row, as written upstream.
    for (const p of ["```json", "```Json", "```JSON", "```"]) if (v.startsWith(p)) v = v.slice(p.length);
    if (v.endsWith("```")) v = v.slice(0, -3);
    return pyJsonValid(pyStrip(v)); // json.loads: NaN and Infinity are accepted
  },
  // TitleChecker: a <<title>> with non-blank content.
  "detectable_format:title": () => (f) => hasTitle(f.text),
  // TwoResponsesChecker: split on "******"; two non-blank, different responses, blanks only at the ends.
  "combination:two_responses": () => (f) => {
    const parts = f.text.split("******");
    const valid: string[] = [];
    for (let i = 0; i < parts.length; i++) {
      if (!pyStrip(parts[i])) {
        if (i !== 0 && i !== parts.length - 1) return false;
      } else valid.push(parts[i]);
    }
    return valid.length === 2 && pyStrip(valid[0]) !== pyStrip(valid[1]);
  },
  // RepeatPromptThenAnswer: value.strip().lower() starts with prompt_to_repeat.strip().lower().
  "combination:repeat_prompt": (a, prompt) => {
    const p = a.kw.prompt_to_repeat === undefined && prompt !== undefined ? prompt : a.str("prompt_to_repeat", { maxLength: 1_000_000 });
    a.used.add("prompt_to_repeat");
    const want = pyStrip(p).toLowerCase();
    if (!want) throw new InvalidItemError(`instruction ${a.id}: needs kwarg "prompt_to_repeat" or the item's prompt`);
    return (f) => pyStrip(f.text).toLowerCase().startsWith(want);
  },
  // EndChecker: value.strip().strip('"').lower() ends with end_phrase.strip().lower().
  "startend:end_checker": (a) => {
    const end = pyStrip(a.str("end_phrase")).toLowerCase();
    return (f) => pyStripChars(pyStrip(f.text), '"').toLowerCase().endsWith(end);
  },
  // QuotationChecker: value.strip() is longer than 1 and starts and ends with '"'.
  "startend:quotation": () => (f) => {
    const v = pyStrip(f.text);
    return v.length > 1 && v[0] === '"' && v[v.length - 1] === '"';
  },
  // CapitalWordFrequencyChecker: nltk.word_tokenize tokens that are isupper() vs capital_frequency.
  "change_case:capital_word_frequency": (a) => {
    const n = a.int("capital_frequency");
    const rel = a.relation("capital_relation");
    return (f) => compare(rel, f.capitalTokensUpTo(n), n);
  },
  // CapitalLettersEnglishChecker: value.isupper() and detected language is English.
  "change_case:english_capital": () => (f) => pyIsUpper(f.text) && f.inLanguage("en"),
  // LowercaseLettersEnglishChecker: value.islower() and detected language is English.
  "change_case:english_lowercase": () => (f) => pyIsLower(f.text) && f.inLanguage("en"),
  // CommaChecker: no "," anywhere.
  "punctuation:no_comma": () => (f) => !f.text.includes(","),
};

export const INSTRUCTION_IDS = Object.keys(INSTRUCTIONS);

/**
 * Build the check for one instruction id with its kwargs (nulls already dropped), from IFEval's
 * table or `extra` (IFEvalG's, in ifevalg.ts; `aliases` maps an extra id onto an IFEval one).
 */
export function buildInstruction(
  id: string,
  kwargs: Kwargs,
  prompt?: string,
  extra: Record<string, (a: Args, prompt?: string) => Check> = {},
  aliases: Record<string, string> = {},
): Check {
  const key = Object.hasOwn(aliases, id) ? aliases[id] : id;
  const make = Object.hasOwn(INSTRUCTIONS, key) ? INSTRUCTIONS[key] : Object.hasOwn(extra, id) ? extra[id] : undefined;
  if (!make) {
    throw new InvalidItemError(`unknown instruction id "${id}" (known: ${[...INSTRUCTION_IDS, ...Object.keys(extra), ...Object.keys(aliases)].join(", ")})`);
  }
  const a = new Args(id, kwargs);
  const check = make(a, prompt);
  a.noOthers();
  return check;
}
