/**
 * Sentence counting as IFEval's instructions_util.count_sentences does it: NLTK's Punkt sentence
 * tokenizer (Kiss & Strunk 2006), `len(tokenizer.tokenize(text))`.
 *
 * The algorithm is ported from nltk/tokenize/punkt.py (NLTK 3.10): PunktLanguageVars (the
 * word-tokenizer and period-context expressions, the boundary realignment), PunktToken (type,
 * initial, ellipsis, number), PunktBaseClass._first_pass_annotation,
 * PunktSentenceTokenizer._match_potential_end_contexts / _slices_from_text /
 * text_contains_sentbreak / _second_pass_annotation / _ortho_heuristic / _realign_boundaries.
 * Each regular expression is rewritten as a single forward scan, so the count is linear in the
 * text. punkt.test.ts checks the port against NLTK itself: with NLTK's trained English model
 * (sent_tokenize) when one is at hand, and with a full model trained on public-domain text
 * (punkt-pd/english) always.
 *
 * Parameters: NLTK's trained English model (punkt_tab/english) is not shipped (its licence is
 * unclarified upstream, see README). ASSAY_IFEVAL_PUNKT_DIR points at a copy of it (what
 * `nltk.download("punkt_tab")` fetches), and then the counts are NLTK's. Without it, ENGLISH below:
 * a model trained by NLTK's PunktTrainer on public-domain text (punkt-pd/english) with Assay's list
 * of abbreviations.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/core/contract.js";
import { isPySpace } from "./text.js";

// Orthographic context flags (punkt.py _ORTHO_*).
const BEG_UC = 1 << 1;
const MID_UC = 1 << 2;
const UNK_UC = 1 << 3;
const BEG_LC = 1 << 4;
const MID_LC = 1 << 5;
const UNK_LC = 1 << 6;
const ORTHO_UC = BEG_UC | MID_UC | UNK_UC;
const ORTHO_LC = BEG_LC | MID_LC | UNK_LC;

export interface PunktParams {
  abbrevTypes: Set<string>;
  /** "type1\ttype2" pairs. */
  collocations: Set<string>;
  sentStarters: Set<string>;
  orthoContext: Map<string, number>;
}

/**
 * Abbreviations (lower case, without the final period): Assay's own list of common English ones,
 * then pruned and extended by NLTK's answers on the probe texts of punkt-nltk-cases.json, where its
 * trained model splits after a word ("We met e.g. he left." is two sentences there: `e.g`, `i.e`,
 * `etc`, `mon`, `sat`, `sun`, `mass`, `miss`, `fig`, `vol`, `approx`, `cf`, `al` and `mt` are not
 * abbreviations to it) or does not (`ok`, `yr`, `p` before a page number, `c` in "Vitamin C. It
 * helps.", one sentence to NLTK). The list is Assay's, not NLTK's: the trained model's own is not copied.
 */
export const ENGLISH_ABBREVIATIONS = [
  "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "ft", "rev", "gen", "gov", "sen", "rep", "col", "lt", "sgt",
  "capt", "cmdr", "adm", "maj", "hon", "messrs", "mme", "mlle", "inc", "ltd", "co", "corp", "bros", "dept", "univ",
  "assn", "vs", "est", "figs", "vols", "ch", "p", "pp", "ed", "eds", "ok", "yr", "c",
  "u.s", "u.k", "u.n", "u.s.a", "d.c", "n.y", "l.a", "a.m", "p.m", "ph.d", "b.a", "m.a", "b.s", "m.s", "m.d",
  "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
  "tue", "tues", "wed", "thu", "thur", "thurs", "fri",
  "ave", "blvd", "rd", "ln", "hwy", "calif", "conn", "mich", "penn", "tenn", "wash", "ariz", "colo", "fla", "ill",
  "ind", "kan", "minn", "nev", "okla", "ore", "wis", "wyo",
];

/** The public-domain model punkt_train.py trains (punkt-pd/english: US presidents' addresses). */
export const PUBLIC_DOMAIN_MODEL_DIR = join(packageRoot(), "verifiers", "ifeval", "punkt-pd", "english");

/**
 * The default parameters (no ASSAY_IFEVAL_PUNKT_DIR): the public-domain model's orthographic
 * context (16,004 types), sentence starters and collocation, trained by NLTK's PunktTrainer, with
 * ENGLISH_ABBREVIATIONS in place of its abbreviations (speeches have few, and some it learns are
 * words: `fox`, `pin`, `amen`). Read once, when this module loads (about 200 KB).
 */
export const ENGLISH: PunktParams = { ...loadPunktTab(PUBLIC_DOMAIN_MODEL_DIR), abbrevTypes: new Set(ENGLISH_ABBREVIATIONS) };

/**
 * Parameters in NLTK's punkt_tab format (nltk.tokenize.punkt.load_punkt_params): abbrev_types.txt and
 * sent_starters.txt one type a line, collocations.tab "type1<TAB>type2" lines, ortho_context.tab
 * "type<TAB>flags" lines. Like NLTK's PunktDecoder, only the line's final newline is removed.
 */
export function parsePunktTab(files: { abbrevTypes: string; collocations: string; sentStarters: string; orthoContext: string }): PunktParams {
  const lines = (s: string) => s.split("\n").filter((l, i, a) => l !== "" || i < a.length - 1);
  const orthoContext = new Map<string, number>();
  for (const l of lines(files.orthoContext)) {
    const tab = l.indexOf("\t");
    const v = Number(l.slice(tab + 1));
    if (tab < 0 || !Number.isInteger(v)) throw new Error(`ortho_context.tab: "${l}" is not "type<TAB>integer"`);
    orthoContext.set(l.slice(0, tab), v);
  }
  for (const l of lines(files.collocations)) if (!l.includes("\t")) throw new Error(`collocations.tab: "${l}" is not "type<TAB>type"`);
  return {
    abbrevTypes: new Set(lines(files.abbrevTypes)),
    collocations: new Set(lines(files.collocations)),
    sentStarters: new Set(lines(files.sentStarters)),
    orthoContext,
  };
}

/** The four punkt_tab files of a directory such as nltk_data/tokenizers/punkt_tab/english. */
export function loadPunktTab(dir: string): PunktParams {
  const read = (name: string) => readFileSync(join(dir, name), "utf8");
  return parsePunktTab({
    abbrevTypes: read("abbrev_types.txt"),
    collocations: read("collocations.tab"),
    sentStarters: read("sent_starters.txt"),
    orthoContext: read("ortho_context.tab"),
  });
}

let active: { dir: string; params: PunktParams } = { dir: "", params: ENGLISH };

/**
 * The parameters sentence counting uses from now on: a punkt_tab directory (read once, on the
 * first call that names it), or "" for ENGLISH. Called with the server's ASSAY_IFEVAL_PUNKT_DIR.
 */
export function useSentenceModel(dir: string): void {
  if (dir !== active.dir) active = { dir, params: dir ? loadPunktTab(dir) : ENGLISH };
}

/** The parameters in use: "nltk punkt_tab at DIR" or "assay english". */
export function sentenceModel(): string {
  return active.dir ? `punkt_tab at ${active.dir}` : "assay english";
}

// ---- PunktLanguageVars -------------------------------------------------------------------------

const isSentEnd = (c: string | undefined) => c === "." || c === "?" || c === "!";
/** _re_non_word_chars: ) " ; } ] * : @ ' ( { [ curly quotes, guillemets, ? ! */
const NON_WORD = new Set([...")\";}]*:@'({[\u2018\u2019\u201c\u201d\xab\xbb?!"]);
/** Characters _re_word_start excludes. */
const NOT_WORD_START = new Set([..."(\"`{[:;&#*@)}]-,"]);
/** re_boundary_realignment's closing characters. */
const CLOSING = new Set([..."\"')]}\u2018\u2019\u201c\u201d\xab\xbb"]);
/** string.whitespace (ASCII), used by _get_last_whitespace_index. */
const ASCII_SPACE = new Set([..." \t\n\r\x0b\x0c"]);

/** Length of _re_multi_char_punct `(?:\-{2,}|\.{2,}|(?:\.\s){2,}\.)` matched at i, or 0. */
function multiCharAt(s: string, i: number): number {
  if (s[i] === "-" && s[i + 1] === "-") {
    let j = i;
    while (s[j] === "-") j++;
    return j - i;
  }
  if (s[i] === "." && s[i + 1] === ".") {
    let j = i;
    while (s[j] === ".") j++;
    return j - i;
  }
  if (s[i] === ".") {
    let pairs = 0;
    while (s[i + 2 * pairs] === "." && isPySpace(s[i + 2 * pairs + 1] ?? "")) pairs++;
    if (pairs >= 2 && s[i + 2 * pairs] === ".") return 2 * pairs + 1;
    if (pairs >= 3) return 2 * (pairs - 1) + 1; // backtrack one pair: its "." ends the match
  }
  return 0;
}

/** PunktLanguageVars.word_tokenize on one line (findall of _word_tokenize_fmt). */
function wordTokenize(line: string): string[] {
  const out: string[] = [];
  let p = 0;
  const n = line.length;
  while (p < n) {
    if (isPySpace(line[p])) {
      p++;
      continue;
    }
    const mc = multiCharAt(line, p);
    if (mc) {
      out.push(line.slice(p, p + mc));
      p += mc;
      continue;
    }
    if (!NOT_WORD_START.has(line[p])) {
      // (?=WordStart)\S+? up to the first position where a word may end.
      let q = p + 1;
      for (; q < n; q++) {
        const c = line[q];
        if (isPySpace(c) || NON_WORD.has(c) || multiCharAt(line, q)) break;
        if (c === ",") {
          const d = line[q + 1];
          if (d === undefined || isPySpace(d) || NON_WORD.has(d) || multiCharAt(line, q + 1)) break;
        }
      }
      out.push(line.slice(p, q));
      p = q;
      continue;
    }
    out.push(line[p]);
    p++;
  }
  return out;
}

// ---- PunktToken ---------------------------------------------------------------------------------

const NUMERIC = /^-?[.,]?\p{Nd}[\p{Nd},.-]*\.?$/u;
const INITIAL = /^[\p{L}\p{N}_]\.$/u;
const ND = /\p{Nd}/u;
// ASCII first (the common case), Unicode properties only beyond it.
const isDigitChar = (c: string) => {
  const k = c.charCodeAt(0);
  return k < 128 ? k >= 48 && k <= 57 : ND.test(c);
};
const mayBeNumber = (s: string) => isDigitChar(s[0] ?? "") || isDigitChar(s[1] ?? "") || isDigitChar(s[2] ?? "");
const pyUpper1 = (c: string) => {
  const k = c.charCodeAt(0);
  return k < 128 ? k >= 65 && k <= 90 : c !== c.toLowerCase() && c === c.toUpperCase();
};
const pyLower1 = (c: string) => {
  const k = c.charCodeAt(0);
  return k < 128 ? k >= 97 && k <= 122 : c !== c.toUpperCase() && c === c.toLowerCase();
};

class Tok {
  readonly type: string;
  readonly periodFinal: boolean;
  sentbreak = false;
  abbr = false;
  ellipsis = false;
  constructor(readonly tok: string) {
    const low = tok.toLowerCase();
    // RE_NUMERIC needs a digit within the first three characters: test that before the regex.
    this.type = mayBeNumber(low) && NUMERIC.test(low) ? "##number##" : low;
    this.periodFinal = tok.endsWith(".");
  }
  get typeNoPeriod(): string {
    return this.type.length > 1 && this.type.endsWith(".") ? this.type.slice(0, -1) : this.type;
  }
  get typeNoSentperiod(): string {
    return this.sentbreak ? this.typeNoPeriod : this.type;
  }
  get firstUpper(): boolean {
    return pyUpper1(this.tok[0]);
  }
  get firstLower(): boolean {
    return pyLower1(this.tok[0]);
  }
  get isInitial(): boolean {
    return this.tok.length <= 3 && INITIAL.test(this.tok) && !isDigitChar(this.tok[0]);
  }
}

function tokenizeWords(text: string): Tok[] {
  const out: Tok[] = [];
  for (const line of text.includes("\n") ? text.split("\n") : [text]) for (const w of wordTokenize(line)) out.push(new Tok(w));
  return out;
}

function firstPass(t: Tok, p: PunktParams): void {
  const tok = t.tok;
  if (tok === "." || tok === "?" || tok === "!") t.sentbreak = true;
  else if (tok.startsWith("..") && /^\.\.+$/.test(tok)) t.ellipsis = true;
  else if (t.periodFinal && !tok.endsWith("..")) {
    const stem = tok.slice(0, -1).toLowerCase();
    const last = stem.includes("-") ? stem.slice(stem.lastIndexOf("-") + 1) : stem;
    if (p.abbrevTypes.has(stem) || p.abbrevTypes.has(last)) t.abbr = true;
    else t.sentbreak = true;
  }
}

function orthoHeuristic(t: Tok, p: PunktParams): boolean | "unknown" {
  if (";:,.!?".includes(t.tok) && t.tok.length === 1) return false;
  const ctx = p.orthoContext.get(t.typeNoSentperiod) ?? 0;
  if (t.firstUpper && ctx & ORTHO_LC && !(ctx & MID_UC)) return true;
  if (t.firstLower && (ctx & ORTHO_UC || !(ctx & BEG_LC))) return false;
  return "unknown";
}

function secondPass(t1: Tok, t2: Tok, p: PunktParams): void {
  if (!t1.periodFinal) return;
  const typ = t1.typeNoPeriod;
  const nextTyp = t2.typeNoSentperiod;
  const initial = t1.isInitial;
  if (p.collocations.has(`${typ}\t${nextTyp}`)) {
    t1.sentbreak = false;
    t1.abbr = true;
    return;
  }
  if ((t1.abbr || t1.ellipsis) && !initial) {
    const starter = orthoHeuristic(t2, p);
    if (starter === true) {
      t1.sentbreak = true;
      return;
    }
    if (t2.firstUpper && p.sentStarters.has(nextTyp)) {
      t1.sentbreak = true;
      return;
    }
  }
  if (initial || typ === "##number##") {
    const starter = orthoHeuristic(t2, p);
    if (starter === false) {
      t1.sentbreak = false;
      t1.abbr = true;
      return;
    }
    if (starter === "unknown" && initial && t2.firstUpper && !((p.orthoContext.get(nextTyp) ?? 0) & ORTHO_LC)) {
      t1.sentbreak = false;
      t1.abbr = true;
    }
  }
}

/** text_contains_sentbreak: some token, after both passes, is a break and is not the last. */
function containsSentbreak(context: string, p: PunktParams): boolean {
  const toks = tokenizeWords(context);
  for (const t of toks) firstPass(t, p);
  for (let i = 0; i + 1 < toks.length; i++) {
    secondPass(toks[i], toks[i + 1], p);
    if (toks[i].sentbreak) return true;
  }
  return false;
}

interface Candidate {
  /** Index of the . ? or ! */
  at: number;
  /** End of after_tok (the punctuation or the next token). */
  afterEnd: number;
  /** Start of next_tok, or -1 when after_tok is punctuation. */
  nextTok: number;
}

/** period_context_re().finditer(text). */
function* candidates(text: string): Generator<Candidate> {
  const n = text.length;
  for (let i = 0; i < n; i++) {
    if (!isSentEnd(text[i])) continue;
    const c = text[i + 1];
    if (c === undefined) continue;
    if (NON_WORD.has(c)) {
      yield { at: i, afterEnd: i + 2, nextTok: -1 };
    } else if (isPySpace(c)) {
      let j = i + 1;
      while (j < n && isPySpace(text[j])) j++;
      if (j === n) continue;
      let k = j;
      while (k < n && !isPySpace(text[k])) k++;
      yield { at: i, afterEnd: k, nextTok: j };
    }
  }
}

/** _match_potential_end_contexts: candidates whose preceding word does not overlap the last one's. */
function* endContexts(text: string): Generator<[Candidate, string]> {
  let prevStart = 0;
  let prevStop = 0;
  let prev: Candidate | null = null;
  // text[previous_slice] + match + after_tok: the word slice ends where the match starts, so one slice.
  const context = (m: Candidate, s: number, e: number) => text.slice(s, e === m.at ? m.afterEnd : e) + (e === m.at ? "" : text.slice(m.at, m.afterEnd));
  for (const m of candidates(text)) {
    let idx = 0;
    for (let i = m.at - 1; i > prevStop; i--) {
      // _get_last_whitespace_index(text[prevStop:m.at]); index 0 counts as "none", as upstream.
      if (ASCII_SPACE.has(text[i])) {
        idx = i - prevStop;
        break;
      }
    }
    const wordStart = idx ? idx + prevStop + 1 : prevStart;
    if (prev && prevStop <= wordStart) yield [prev, context(prev, prevStart, prevStop)];
    prev = m;
    prevStart = wordStart;
    prevStop = m.at;
  }
  if (prev) yield [prev, context(prev, prevStart, prevStop)];
}

/** re_boundary_realignment.match(text[start:stop]): end offset of the match, or -1. */
function realignmentAt(text: string, start: number, stop: number): number {
  let q = start;
  while (q < stop && CLOSING.has(text[q])) q++;
  if (q === start) return -1;
  if (q === stop || text[q] === "\n") return q;
  if (isPySpace(text[q])) {
    while (q < stop && isPySpace(text[q])) q++;
    return q;
  }
  if (text[q] === "-" && text[q + 1] === "-" && q + 1 < stop) return q;
  return -1;
}

/** _slices_from_text: the sentence slices before realignment; null once `limit` breaks are found. */
function slicesFromText(text: string, p: PunktParams, limit: number): [number, number][] | null {
  const slices: [number, number][] = [];
  let lastBreak = 0;
  // The decision depends on the context string alone: repeated contexts are decided once.
  const seen = new Map<string, boolean>();
  for (const [m, ctx] of endContexts(text)) {
    let brk = seen.get(ctx);
    if (brk === undefined) {
      brk = containsSentbreak(ctx, p);
      if (seen.size < 4096 && ctx.length <= 256) seen.set(ctx, brk);
    }
    if (brk) {
      slices.push([lastBreak, m.at + 1]);
      if (slices.length >= limit) return null;
      lastBreak = m.nextTok >= 0 ? m.nextTok : m.at + 1;
    }
  }
  let end = text.length;
  while (end > 0 && isPySpace(text[end - 1])) end--;
  slices.push([lastBreak, end]);
  return slices;
}

/** _realign_boundaries: closing quotes and brackets after a break join the sentence before it. */
function realign(text: string, slices: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let shift = 0;
  for (let i = 0; i < slices.length; i++) {
    const s1start = slices[i][0] + shift;
    const s1stop = slices[i][1];
    if (i === slices.length - 1) {
      if (s1start < s1stop) out.push([s1start, s1stop]);
      continue;
    }
    const [s2start, s2stop] = slices[i + 1];
    const m = realignmentAt(text, s2start, s2stop);
    if (m >= 0) {
      let e = m;
      while (e > s2start && isPySpace(text[e - 1])) e--; // len(m.group(0).rstrip())
      out.push([s1start, e]);
      shift = m - s2start;
    } else {
      shift = 0;
      if (s1start < s1stop) out.push([s1start, s1stop]);
    }
  }
  return out;
}

/** PunktSentenceTokenizer(params).tokenize(text), as [start, end) offsets. */
export function punktSpans(text: string, p: PunktParams = active.params): [number, number][] {
  return realign(text, slicesFromText(text, p, Infinity)!);
}

/**
 * len(PunktSentenceTokenizer(params).tokenize(text)), or `limit` as soon as that many sentences
 * are certain (every slice before a break holds its end mark, so each break is one sentence).
 */
export function countPunktSentences(text: string, p: PunktParams = active.params, limit = Infinity): number {
  const slices = slicesFromText(text, p, limit);
  return slices === null ? limit : realign(text, slices).length;
}
