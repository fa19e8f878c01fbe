/**
 * IFEvalG: the 29 instructions open-instruct added to IFEval's 25 (allenai/open-instruct
 * open_instruct/IFEvalG/instructions_registry.py INSTRUCTION_DICT, "New Constraints!", classes in
 * IFEvalG/instructions.py; ported at commit e6c3044aa6201c8bfa4573c1b03142af599e730d). Each entry
 * names its class; each check is its `check_following`, and a kwarg that `build_description`
 * would replace with a random draw (missing, or falsy where the class tests `if not x`) makes the
 * item invalid, as for IFEval's own ids. The 25 shared ids keep IFEval's checks (their
 * `check_following` bodies are the same in both).
 */
import { Args, keywordMatcher, re2, type Check } from "./instructions.js";
import { codePointAt, codePointBefore, isPySpace, isPyWordChar, nltkWordTokenize, PY_S, pyLen, pySplitWs, pyStrip, starParagraphs } from "./text.js";

// ---- instructions_util.split_into_sentences, its regular expressions in their order ---------------
const S = PY_S;
const ALPHA = "([A-Za-z])";
const PREFIXES = "(Mr|St|Mrs|Ms|Dr)[.]";
const SUFFIXES = "(Inc|Ltd|Jr|Sr|Co)";
const STARTERS = `(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He${S}|She${S}|It${S}|They${S}|Their${S}|Our${S}|We${S}|But${S}|However${S}|That${S}|This${S}|Wherever)`;
const ACRONYMS = "([A-Z][.][A-Z][.](?:[A-Z][.])?)";
const WEBSITES = "[.](com|net|org|io|gov|edu|me)";
const DIGITS = "([0-9])";
const g = (src: string) => new RegExp(src, "g");
const SENTENCE_SUBS: [RegExp, string | ((m: string) => string)][] = [
  [g(PREFIXES), "$1<prd>"],
  [g(WEBSITES), "<prd>$1"],
  [g(`${DIGITS}[.]${DIGITS}`), "$1<prd>$2"],
  [/\.{2,}/g, (m) => "<prd>".repeat(m.length) + "<stop>"],
];
const SENTENCE_SUBS_2: [RegExp, string][] = [
  [g(`${S}${ALPHA}[.] `), " $1<prd> "],
  [g(`${ACRONYMS} ${STARTERS}`), "$1<stop> $2"],
  [g(`${ALPHA}[.]${ALPHA}[.]${ALPHA}[.]`), "$1<prd>$2<prd>$3<prd>"],
  [g(`${ALPHA}[.]${ALPHA}[.]`), "$1<prd>$2<prd>"],
  [g(` ${SUFFIXES}[.] ${STARTERS}`), " $1<stop> $2"],
  [g(` ${SUFFIXES}[.]`), " $1<prd>"],
  [g(` ${ALPHA}[.]`), " $1<prd>"],
];

/** IFEvalG instructions_util.split_into_sentences (a rule-based splitter, not Punkt). Linear. */
export function splitIntoSentences(value: string): string[] {
  let text = ` ${value}  `.replaceAll("\n", " ");
  for (const [re, to] of SENTENCE_SUBS) text = text.replace(re, to as string);
  if (text.includes("Ph.D")) text = text.replaceAll("Ph.D.", "Ph<prd>D<prd>");
  for (const [re, to] of SENTENCE_SUBS_2) text = text.replace(re, to);
  if (text.includes("”")) text = text.replaceAll(".”", "”.");
  if (text.includes('"')) text = text.replaceAll('."', '".');
  if (text.includes("!")) text = text.replaceAll('!"', '"!');
  if (text.includes("?")) text = text.replaceAll('?"', '"?');
  text = text.replaceAll(".", ".<stop>").replaceAll("?", "?<stop>").replaceAll("!", "!<stop>").replaceAll("<prd>", ".");
  const sentences = text.split("<stop>").map(pyStrip);
  if (sentences.length && !sentences[sentences.length - 1]) sentences.pop();
  return sentences;
}

/** Python's `lst[k]`: negative k counts from the end; out of range is undefined (IndexError there). */
const pyIndex = <T>(a: T[], k: number): T | undefined => a.at(k);

/** `re.findall(r"\b[a-z]+\b", t)` (or A-Z): maximal runs with no Unicode word character beside them. */
function countBoundedRuns(t: string, lo: number, hi: number): number {
  let n = 0;
  for (let i = 0; i < t.length; ) {
    const c = t.charCodeAt(i);
    if (c >= lo && c <= hi) {
      let j = i;
      while (j < t.length && t.charCodeAt(j) >= lo && t.charCodeAt(j) <= hi) j++;
      if (!isPyWordChar(codePointBefore(t, i)) && !isPyWordChar(codePointAt(t, j))) n++;
      i = j;
    } else i++;
  }
  return n;
}


/** A string kwarg, or the first element of a list (FirstWordSentChecker & co. accept both). */
function strOrFirst(a: Args, name: string): string {
  const v = a.kw[name];
  if (Array.isArray(v) && typeof v[0] === "string") {
    a.used.add(name);
    return v[0];
  }
  return a.str(name);
}

/** A kwarg `build_description` tests with `if not x:`: 0 would draw a random value there. */
const truthyInt = (a: Args, name: string): number => a.int(name, 1);

const equalFolded = (x: string, y: string) => pyStrip(x).toLowerCase() === pyStrip(y).toLowerCase();

export const IFEVALG_INSTRUCTIONS: Record<string, (a: Args, prompt?: string) => Check> = {
  // RepeatPhraseChecker: re.findall(rf"{first} .*? {last}", value): exactly small_n, each one word off the phrase.
  "copy:repeat_phrase": (a) => {
    const phrase = pyStrip(a.str("phrase"));
    const n = truthyInt(a, "small_n");
    const ref = pySplitWs(phrase);
    const re = re2(`${ref[0]} .*? ${ref[ref.length - 1]}`, 0, a.id);
    return (f) => {
      const found: string[] = [];
      const m = re.matcher(f.text);
      while (m.find()) {
        found.push(m.group(0) ?? "");
        if (found.length > n) return false;
      }
      if (found.length !== n) return false;
      let satisfied = 0;
      for (const p of found) {
        const words = pySplitWs(p);
        if (words.length !== ref.length) return false;
        let diff = 0;
        for (let i = 0; i < words.length; i++) if (words[i] !== ref[i] && ++diff > 1) return false;
        if (diff === 1) satisfied++;
      }
      return satisfied === n;
    };
  },
  // CopyChecker: value.strip().lower() == prompt_to_repeat.strip().lower().
  "copy:copy": (a) => {
    const p = a.str("prompt_to_repeat", { maxLength: 1_000_000 });
    return (f) => equalFolded(f.text, p);
  },
  // CopySpanIdxChecker: the response is prompt_to_repeat[n_start:n_end] (code points), stripped, any case.
  "new:copy_span_idx": (a) => {
    const p = [...a.str("prompt_to_repeat", { maxLength: 1_000_000 })];
    const start = truthyInt(a, "n_start");
    const end = truthyInt(a, "n_end");
    const span = p.slice(start, end).join("");
    return (f) => equalFolded(f.text, span);
  },
  // SentenceHyphenChecker: the pieces between hyphens are exactly the sentences, with no space around them.
  "detectable_format:sentence_hyphens": () => (f) => {
    const gold = splitIntoSentences(f.text.replaceAll("-", " "));
    const pieces = f.text.split("-");
    const n = Math.min(gold.length, pieces.length);
    for (let i = 0; i < n; i++) if (pyStrip(pieces[i]) !== pieces[i] || pieces[i] !== gold[i]) return false;
    return true;
  },
  // AdjacentLetterChecker: no two neighbouring words start with consecutive letters (ord + 1).
  "keywords:no_adjacent_consecutive": () => (f) => {
    const words = pySplitWs(f.text);
    for (let i = 0; i + 1 < words.length; i++) {
      const x = codePointAt(words[i], 0)!.toLowerCase();
      const y = codePointAt(words[i + 1], 0)!.toLowerCase();
      if (pyLen(x) !== 1 || pyLen(y) !== 1) return false;
      if (y.codePointAt(0)! - x.codePointAt(0)! === 1) return false;
    }
    return true;
  },
  // SquareBracketChecker: every whitespace-separated word starts with "[" and ends with "]".
  "detectable_format:square_brackets": () => (f) => pySplitWs(f.text).every((w) => w.startsWith("[") && w.endsWith("]")),
  // KeywordFrequencyOnceChecker: len(re.findall(keyword, value, re.IGNORECASE)) == 1.
  "keywords:word_once": (a) => {
    const m = keywordMatcher(pyStrip(a.str("keyword")), a.id);
    return (f) => m.count(f.text) === 1;
  },
  // KeywordFrequencyCheckerDifferent: findall(keyword, IGNORECASE) vs frequency, "less than" / "at least".
  "keywords:word_count_different_numbers": (a) => {
    const m = keywordMatcher(pyStrip(a.str("keyword")), a.id);
    const freq = a.int("frequency");
    const rel = a.relation("relation");
    return (f) => (rel === "less than" ? m.count(f.text) < freq : m.count(f.text) >= freq);
  },
  // ExcludeWordHarderChecker: " " + keyword + " " not in value.
  "keywords:exclude_word_harder": (a) => {
    const k = ` ${pyStrip(a.str("keyword"))} `;
    if (a.kw.instruction !== undefined) a.str("instruction", { maxLength: 1_000_000 }); // only drawn from when keyword is missing
    return (f) => !f.text.includes(k);
  },
  // ParagraphBasicChecker: exactly 2 paragraphs between `***` dividers.
  "paragraphs:paragraphs": () => (f) => starParagraphs(f.text).count === 2,
  // ParagraphBasicChecker2: exactly 2 paragraphs split on "\n\n" (empty ones only at the ends).
  "paragraphs:paragraphs2": () => (f) => {
    const ps = f.text.split("\n\n");
    let n = ps.length;
    for (let i = 0; i < ps.length; i++) {
      if (!pyStrip(ps[i])) {
        if (i === 0 || i === ps.length - 1) n--;
        else return false;
      }
    }
    return n === 2;
  },
  // FirstWordSentChecker: every sentence (split_into_sentences) starts with first_word, any case.
  "first_word:first_word_sent": (a) => {
    const want = pyStrip(strOrFirst(a, "first_word")).toLowerCase();
    return (f) => splitIntoSentences(f.text).every((s) => pyStrip(s) !== "" && pySplitWs(s)[0].toLowerCase() === want);
  },
  // FirstWordAnswerChecker: the response's first word is first_word, any case.
  "first_word:first_word_answer": (a) => {
    const want = pyStrip(a.str("first_word")).toLowerCase();
    return (f) => {
      const words = pySplitWs(f.text);
      return words.length > 0 && words[0].toLowerCase() === want;
    };
  },
  // LastWordSentChecker: every sentence's last word, punctuation removed (re.sub(r"[^\w\s]", "")), is last_word.
  "last_word:last_word_sent": (a) => {
    const want = pyStrip(strOrFirst(a, "last_word")).toLowerCase();
    return (f) =>
      splitIntoSentences(f.text).every((s) => {
        if (!pyStrip(s)) return false;
        const words = pySplitWs(s);
        return dropPunctuation(words[words.length - 1]).toLowerCase() === want;
      });
  },
  // LastWordAnswerChecker: the response's last word, punctuation removed, is last_word.
  "last_word:last_word_answer": (a) => {
    const want = pyStrip(a.str("last_word")).toLowerCase();
    return (f) => {
      const words = pySplitWs(f.text);
      // value.split()[-1] raises IndexError on a blank response; scoring never reaches one here.
      return words.length > 0 && dropPunctuation(words[words.length - 1]).toLowerCase() === want;
    };
  },
  // BiGramWrappingChecker: words 0-1, 2-3, ... as "<<first" ... "second>>".
  "detectable_format:bigram_wrapping": () => (f) => {
    const w = pySplitWs(f.text);
    for (let i = 0; i + 1 < w.length; i += 2) if (!(w[i].startsWith("<<") && w[i + 1].endsWith(">>"))) return false;
    return true;
  },
  // CopyingSimpleChecker: as CopyChecker.
  "copy:copying_simple": (a) => {
    const p = a.str("prompt_to_repeat", { maxLength: 1_000_000 });
    return (f) => equalFolded(f.text, p);
  },
  // CopyingMultipleChecker: N copies of the prompt separated by "******".
  "copy:copying_multiple": (a) => {
    const p = a.str("prompt_to_repeat", { maxLength: 1_000_000 });
    const n = truthyInt(a, "N");
    return (f) => {
      const parts = f.text.split("******");
      return parts.length === n && parts.every((x) => equalFolded(x, p));
    };
  },
  // PunctuationDotChecker / PunctuationExclamationChecker: no "." / no "!".
  "punctuation:punctuation_dot": () => (f) => !f.text.includes("."),
  "punctuation:punctuation_exclamation": () => (f) => !f.text.includes("!"),
  // LowercaseCountingChecker: len(re.findall(r"\b[a-z]+\b", value)) <= N.
  "count:lowercase_counting": (a) => {
    const n = truthyInt(a, "N");
    return (f) => countBoundedRuns(f.text, 97, 122) <= n;
  },
  // LetterCountingChecker: ASCII letters "less than" / "at least" N.
  "letters:letter_counting": (a) => {
    const n = truthyInt(a, "N");
    const rel = a.relation("relation");
    return (f) => {
      let k = 0;
      for (let i = 0; i < f.text.length; i++) {
        const c = f.text.charCodeAt(i) | 32;
        if (c >= 97 && c <= 122) k++;
      }
      return rel === "less than" ? k < n : k >= n;
    };
  },
  // CountingCompositionChecker: 3 `***` paragraphs of n_sent sentences of n_words word_tokenize tokens.
  "count:counting_composition": (a) => {
    const nSent = truthyInt(a, "n_sent");
    const nWords = truthyInt(a, "n_words");
    return (f) => {
      const { pieces } = starParagraphs(f.text);
      let count = pieces.length;
      for (let i = 0; i < pieces.length; i++) {
        if (!pyStrip(pieces[i])) {
          if (i === 0 || i === pieces.length - 1) count--;
          else return false;
        }
        // No `continue` upstream: an empty end piece is split too, has 0 sentences, and fails.
        const sentences = splitIntoSentences(pieces[i]);
        if (sentences.length !== nSent) return false;
        for (const s of sentences) if (nltkWordTokenize(s).length !== nWords) return false;
      }
      return count === 3;
    };
  },
  // CountUniqueChecker: no word_tokenize token repeated.
  "count:count_unique": () => (f) => {
    const words = nltkWordTokenize(f.text);
    return new Set(words).size === words.length;
  },
  // CountIncrementWordChecker: findall(keyword1, IGNORECASE) == 1 and findall(keyword2, IGNORECASE) == 2.
  "count:count_increment_word": (a) => {
    const m1 = keywordMatcher(pyStrip(a.str("keyword1")), a.id);
    const m2 = keywordMatcher(pyStrip(a.str("keyword2")), a.id);
    return (f) => m1.count(f.text) === 1 && m2.count(f.text) === 2;
  },
  // PalindromeBasicChecker: some whitespace-separated word equals its reverse (code points).
  "keywords:palindrome": () => (f) => pySplitWs(f.text).some((w) => w === [...w].reverse().join("")),
  // KeywordSpecificPositionChecker: the m-th word_tokenize token of the n-th sentence is keyword.
  "keywords:keyword_specific_position": (a) => {
    const keyword = pyStrip(strOrFirst(a, "keyword"));
    const n = truthyInt(a, "n");
    const m = truthyInt(a, "m");
    return (f) => {
      const sentences = splitIntoSentences(f.text);
      if (sentences.length < n) return false;
      const words = nltkWordTokenize(pyIndex(sentences, n - 1)!);
      if (words.length < m) return false;
      return words[m - 1] === keyword;
    };
  },
  // StartEndChecker: the first and last word_tokenize tokens are equal, any case (at least 2 tokens).
  "keywords:start_end": () => (f) => {
    const words = nltkWordTokenize(f.text);
    return words.length >= 2 && words[0].toLowerCase() === words[words.length - 1].toLowerCase();
  },
};

/** re.sub(r"[^\w\s]", "", word): keep Unicode word characters and whitespace. */
function dropPunctuation(word: string): string {
  let out = "";
  for (const c of word) if (isPyWordChar(c) || isPySpace(c)) out += c;
  return out;
}

/** letters:letter_counting2 is IFEval's LetterFrequencyChecker under another id. */
export const IFEVALG_ALIASES: Record<string, string> = { "letters:letter_counting2": "keywords:letter_frequency" };
