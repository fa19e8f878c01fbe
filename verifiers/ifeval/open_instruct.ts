/**
 * Tulu 3 RLVR-IFeval ground truth: `{"func_name": "...", ...kwargs}` (a JSON string or object).
 * Ported from allenai/open-instruct open_instruct/if_functions.py (IF_FUNCTIONS_MAP; the function
 * named beside each entry), as IFEvalVerifierOld in open_instruct/ground_truth_utils.py calls
 * them: kwargs that are null are dropped, the answer is the text after the last </think> with
 * <answer> tags removed and stripped. These are NOT IFEval's checkers: several count exactly
 * (== N) where IFEval says "at least", and they use their own splitters; each is kept as written.
 */
import { InvalidItemError } from "../../src/core/types.js";
import { isLanguage, knownLanguage } from "./language.js";
import { countPlaceholders, type Kwargs } from "./instructions.js";
import { codePointAt, codePointBefore, isPySpace, isPyWordChar, pyJsonValid, pyLen, pyRound, pySplitWs, pyStrip, wordRuns } from "./text.js";

export type SimpleCheck = (text: string) => boolean;

class Kw {
  readonly used = new Set<string>();
  constructor(readonly fn: string, readonly kw: Kwargs) {}
  private bad(name: string, want: string): never {
    throw new InvalidItemError(`func_name ${this.fn}: argument "${name}" must be ${want}, got ${JSON.stringify(this.kw[name]) ?? "nothing"}`);
  }
  /** An integer; Python's functions only compare it, so a negative one is kept (and never met). */
  int(name: string): number {
    this.used.add(name);
    const v = this.kw[name];
    if (typeof v !== "number" || !Number.isInteger(v)) this.bad(name, "an integer");
    return v;
  }
  str(name: string): string {
    this.used.add(name);
    const v = this.kw[name];
    if (typeof v !== "string" || v.length > 1_000_000) this.bad(name, "a string");
    return v;
  }
  strList(name: string): string[] {
    this.used.add(name);
    const v = this.kw[name];
    if (!Array.isArray(v) || v.length > 256 || !v.every((s) => typeof s === "string")) this.bad(name, "a list of strings");
    return v as string[];
  }
  /** Python's functions compare against "at least", "at most", "around" and return False for any other string. */
  quantifier(name: string): string {
    this.used.add(name);
    const v = this.kw[name];
    if (typeof v !== "string") this.bad(name, `"at least", "at most" or "around"`);
    return v;
  }
  noOthers(): void {
    for (const k of Object.keys(this.kw)) if (!this.used.has(k)) throw new InvalidItemError(`func_name ${this.fn}: unexpected argument "${k}"`);
  }
}

/** verify_sentence_constraint's re.split(r"(?<!\w\.\w.)(?<![A-Z][a-z]\.)(?<=\.|\?|!)\s", text): pieces. */
export function openInstructSentences(t: string): number {
  let n = 1;
  for (let i = 1; i < t.length; i++) {
    if (!isPySpace(t[i]) || !".?!".includes(t[i - 1])) continue;
    // (?<!\w\.\w.): the `.` before the [.?!] is one code point; \w may be a surrogate pair.
    const w2 = codePointBefore(t, i - 1);
    if (w2 !== undefined && isPyWordChar(w2)) {
      const dot = i - 1 - w2.length - 1;
      if (t[dot] === "." && isPyWordChar(codePointBefore(t, dot))) continue;
    }
    if (i >= 3 && /[A-Z]/.test(t[i - 3]) && /[a-z]/.test(t[i - 2]) && t[i - 1] === ".") continue;
    n++;
  }
  return n;
}

/** `\*(.*?)\*` / `<<(.*?)>>`-style lazy pairs on one line, counted left to right. */
function countPairs(text: string, open: string, close: string): number {
  let n = 0;
  let i = 0;
  let nl = -1; // the first newline at or after the current `open`, found lazily (keeps this linear)
  while (i < text.length) {
    const o = text.indexOf(open, i);
    if (o < 0) break;
    const c = text.indexOf(close, o + open.length);
    if (c < 0) break;
    if (nl < o) {
      nl = text.indexOf("\n", o);
      if (nl < 0) nl = text.length;
    }
    if (nl < c) {
      i = nl + 1;
      continue;
    }
    n++;
    i = c + close.length;
  }
  return n;
}

const quant = (q: string, actual: number, n: number, tol: number) =>
  q === "at least" ? actual >= n : q === "at most" ? actual <= n : q === "around" ? Math.abs(actual - n) <= tol : false;

export const IF_FUNCTIONS: Record<string, (k: Kw) => SimpleCheck> = {
  verify_keywords: (k) => {
    const words = k.strList("keyword_list").map((w) => w.toLowerCase());
    return (t) => {
      const low = t.toLowerCase();
      return words.every((w) => low.includes(w));
    };
  },
  verify_keyword_frequency: (k) => {
    const word = k.str("word").toLowerCase();
    const n = k.int("N");
    return (t) => wordRuns(t.toLowerCase()).filter((w) => w === word).length === n;
  },
  validate_forbidden_words: (k) => {
    const words = k.strList("forbidden_words").map((w) => w.toLowerCase());
    return (t) => {
      const low = t.toLowerCase();
      return !words.some((w) => low.includes(w));
    };
  },
  verify_letter_frequency: (k) => {
    const letter = k.str("letter");
    if (pyLen(letter) !== 1) throw new InvalidItemError(`func_name ${k.fn}: "letter" must be a single character`);
    const n = k.int("N");
    return (t) => t.split(letter).length - 1 === n;
  },
  validate_response_language: (k) => {
    const lang = k.str("language");
    if (!knownLanguage(lang)) throw new InvalidItemError(`func_name ${k.fn}: language "${lang}" is not one the detector knows`);
    // open-instruct lets langdetect's exception escape; here an undetectable text is not followed.
    return (t) => isLanguage(t, lang) === true;
  },
  verify_paragraph_count: (k) => {
    const n = k.int("N");
    return (t) => {
      const clean = pyStrip(t.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/).map(pyStrip).join("\n"));
      const parts = clean.split("* * *");
      if (parts.some((p) => !pyStrip(p))) return false;
      return parts.length === n;
    };
  },
  validate_word_constraint: (k) => {
    const n = k.int("N");
    const q = k.quantifier("quantifier");
    return (t) => quant(q, pySplitWs(t).length, n, Math.max(pyRound(n * 0.1), 1));
  },
  verify_sentence_constraint: (k) => {
    const n = k.int("N");
    const q = k.quantifier("quantifier");
    return (t) => quant(q, openInstructSentences(t), n, 1);
  },
  validate_paragraphs: (k) => {
    const n = k.int("N");
    const first = k.str("first_word");
    const i = k.int("i");
    // paragraphs[i - 1] with Python's indexing: i = 0 is the last paragraph; out of range raises.
    const at = i - 1 < 0 ? n + i - 1 : i - 1;
    if (n >= 1 && (at < 0 || at >= n)) throw new InvalidItemError(`func_name ${k.fn}: i ${i} is no paragraph of N ${n} (open-instruct would raise IndexError)`);
    return (t) => {
      const ps = t.split("\n\n");
      return ps.length === n && pyStrip(ps[at]).startsWith(first);
    };
  },
  verify_postscript: (k) => {
    const marker = k.str("postscript_marker");
    return (t) => {
      const at = t.indexOf(marker);
      return at >= 0 && pyLen(pyStrip(t.slice(at))) > pyLen(marker);
    };
  },
  validate_placeholders: (k) => {
    const n = k.int("N");
    return (t) => countPlaceholders(t) >= n;
  },
  verify_bullet_points: (k) => {
    const n = k.int("N");
    return (t) => t.split("\n").filter((l) => /^[*-]/.test(pyStrip(l))).length === n;
  },
  validate_title: () => (t) => countPairs(t, "<<", ">>") > 0,
  validate_choice: (k) => {
    const options = k.strList("options");
    return (t) => options.some((o) => t.includes(o));
  },
  validate_highlighted_sections: (k) => {
    const n = k.int("N");
    return (t) => countPairs(t, "*", "*") >= n;
  },
  // text.split(section_splitter); a leading "" piece dropped; exactly N pieces.
  validate_sections: (k) => {
    const n = k.int("N");
    const splitter = k.str("section_splitter");
    if (!splitter) throw new InvalidItemError(`func_name ${k.fn}: "section_splitter" must not be empty (Python's str.split raises on an empty separator)`);
    return (t) => {
      let pieces = 1;
      for (let j = t.indexOf(splitter); j >= 0; j = t.indexOf(splitter, j + splitter.length)) pieces++;
      if (t.startsWith(splitter) || t === "") pieces--;
      return pieces === n;
    };
  },
  // json.loads(text) raises no ValueError (NaN and Infinity are accepted, as Python does).
  validate_json_format: () => (t) => pyJsonValid(t),
  validate_repeat_prompt: (k) => {
    const p = k.str("original_prompt");
    return (t) => t.startsWith(p);
  },
  validate_two_responses: () => (t) => {
    const parts = t.split("******");
    return parts.length === 2 && pyStrip(parts[0]) !== pyStrip(parts[1]);
  },
  validate_uppercase: () => (t) => t === t.toUpperCase(),
  validate_lowercase: () => (t) => t === t.toLowerCase(),
  validate_frequency_capital_words: (k) => {
    const n = k.int("N");
    const q = k.quantifier("quantifier");
    return (t) => {
      // re.findall(r"\b[A-Z]+\b", text): maximal A-Z runs with no word character on either side.
      let count = 0;
      for (let i = 0; i < t.length; ) {
        const c = t.charCodeAt(i);
        if (c >= 65 && c <= 90) {
          let j = i;
          while (j < t.length && t.charCodeAt(j) >= 65 && t.charCodeAt(j) <= 90) j++;
          if (!isPyWordChar(codePointBefore(t, i)) && !isPyWordChar(codePointAt(t, j))) count++;
          i = j;
        } else i++;
      }
      return quant(q, count, n, Math.max(pyRound(n * 0.1), 1));
    };
  },
  validate_end: (k) => {
    const end = k.str("end_phrase");
    return (t) => t.endsWith(end);
  },
  validate_quotation: () => (t) => t.startsWith('"') && t.endsWith('"'),
  validate_no_commas: () => (t) => !t.includes(","),
};

export const FUNC_NAMES = Object.keys(IF_FUNCTIONS);

export function buildFunction(fn: string, kwargs: Kwargs): SimpleCheck {
  const make = Object.hasOwn(IF_FUNCTIONS, fn) ? IF_FUNCTIONS[fn] : undefined; // not `constructor`, `__proto__`
  if (!make) throw new InvalidItemError(`unknown func_name "${fn}" (known: ${FUNC_NAMES.join(", ")})`);
  const k = new Kw(fn, kwargs);
  const check = make(k);
  k.noOthers();
  return check;
}

/**
 * open-instruct's remove_thinking_section (ground_truth_utils.py), step by step: drop
 * `<|assistant|>`, strip, keep what follows the last `</think>` (unless `cutThink` is false),
 * drop `<answer>` tags, strip.
 */
export function openInstructAnswer(text: string, cutThink = true): string {
  let p = pyStrip(text.replaceAll("<|assistant|>", ""));
  if (cutThink) {
    const at = p.lastIndexOf("</think>");
    if (at >= 0) p = p.slice(at + "</think>".length);
  }
  return pyStrip(p.replaceAll("<answer>", "").replaceAll("</answer>", ""));
}
