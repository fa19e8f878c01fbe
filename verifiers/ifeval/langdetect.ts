/**
 * Python `langdetect.detect` (Mimino666/langdetect 1.0.9, commit 5071871742170034557c0e6ec8d6e410f3d9652f,
 * Apache-2.0; a port of Cybozu Labs' language-detection), which IFEval's language checks call,
 * ported with its data: the 55 profiles and messages.properties in ./langdetect/ (copied
 * unchanged, with their LICENSE and NOTICE).
 *
 * langdetect draws n-grams at random (Python's `random.Random`, a Mersenne Twister, seeded with
 * `DetectorFactory.seed`). IFEval leaves the seed unset (a fresh random seed per call, so short
 * texts can get different answers run to run); here it is 0, the value people pin
 * (`DetectorFactory.seed = 0`), and the generator is Python's own: MT19937 seeded by
 * init_by_array, `random()` as genrand_res53, `choice` by rejection over getrandbits, `gauss` by
 * Box-Muller with its cached second value. langdetect.test.ts compares with langdetect itself.
 *
 * Linear in the text: the URL and e-mail patterns match bounded runs, every later step looks at
 * the first 10,000 code points only (langdetect's max_text_length), and the trials are bounded
 * (7 trials of at most 1,001 draws).
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/core/contract.js";
import { pyIsUpper } from "./text.js";

/** The vendored data, beside this source (the compiled module runs from dist/, the data stays here). */
const DIR = join(packageRoot(), "verifiers", "ifeval", "langdetect");

// ---- Python's random.Random ---------------------------------------------------------------------

/** CPython's _randommodule.c: MT19937 with init_by_array, as `random.Random(seed)` builds it. */
export class PyRandom {
  private mt = new Uint32Array(624);
  private mti = 625;
  private gaussNext: number | null = null;

  /** random.seed(n) for a non-negative integer below 2**32 (the key is n's 32-bit words). */
  seed(n: number): void {
    const key = [n >>> 0];
    const mt = this.mt;
    mt[0] = 19650218;
    for (let i = 1; i < 624; i++) mt[i] = (Math.imul(1812433253, mt[i - 1] ^ (mt[i - 1] >>> 30)) + i) >>> 0;
    let i = 1;
    let j = 0;
    for (let k = Math.max(624, key.length); k; k--) {
      mt[i] = ((mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= 624) {
        mt[0] = mt[623];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = 623; k; k--) {
      mt[i] = ((mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1566083941)) - i) >>> 0;
      i++;
      if (i >= 624) {
        mt[0] = mt[623];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
    this.mti = 624;
    this.gaussNext = null;
  }

  /** Take `other`'s state (its words, position and cached Gaussian). */
  copyFrom(other: PyRandom): void {
    this.mt.set(other.mt);
    this.mti = other.mti;
    this.gaussNext = other.gaussNext;
  }

  /** genrand_uint32. */
  uint32(): number {
    const mt = this.mt;
    if (this.mti >= 624) {
      let kk = 0;
      const mag = (y: number) => (y & 1 ? 0x9908b0df : 0);
      for (; kk < 624 - 397; kk++) {
        const y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7fffffff);
        mt[kk] = mt[kk + 397] ^ (y >>> 1) ^ mag(y);
      }
      for (; kk < 623; kk++) {
        const y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7fffffff);
        mt[kk] = mt[kk + (397 - 624)] ^ (y >>> 1) ^ mag(y);
      }
      const y = (mt[623] & 0x80000000) | (mt[0] & 0x7fffffff);
      mt[623] = mt[396] ^ (y >>> 1) ^ mag(y);
      this.mti = 0;
    }
    let y = mt[this.mti++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** random(): genrand_res53. */
  random(): number {
    const a = this.uint32() >>> 5;
    const b = this.uint32() >>> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
  }

  /** _randbelow_with_getrandbits(n), for 0 < n < 2**32. */
  randbelow(n: number): number {
    const k = 32 - Math.clz32(n); // n.bit_length()
    let r = this.uint32() >>> (32 - k);
    while (r >= n) r = this.uint32() >>> (32 - k);
    return r;
  }

  /** gauss(mu, sigma). */
  gauss(mu: number, sigma: number): number {
    let z = this.gaussNext;
    this.gaussNext = null;
    if (z === null) {
      const x2pi = this.random() * 2 * Math.PI;
      const g2rad = Math.sqrt(-2.0 * Math.log(1.0 - this.random()));
      z = Math.cos(x2pi) * g2rad;
      this.gaussNext = Math.sin(x2pi) * g2rad;
    }
    return mu + z * sigma;
  }
}

// ---- profiles and character tables, loaded once on first use -----------------------------------

interface Model {
  langs: string[];
  /** n-gram -> word id; [ends[id], ends[id + 1]) into langIdx/probs: its non-zero probabilities. */
  words: Map<string, number>;
  /**
   * The same n-grams by number, for the scan: chars[cp] is a code point's index among the
   * profiles' characters (0: in none, so in no n-gram); uni[i] the 1-gram's id (-1: none);
   * bi.get(i1 * K + i2) the 2-gram's; biPrefix.get(i1 * K + i2) the pair's number as the head
   * of 3-grams, and tri.get(prefix * K + i3) the 3-gram's id (-1: none).
   */
  chars: Int32Array;
  K: number;
  uni: Int32Array;
  bi: IntTable;
  biPrefix: IntTable;
  tri: IntTable;
  /** bi and biPrefix again, as arrays indexed i1 * DENSE + i2, for pairs of indices below DENSE. */
  biDense: Int32Array;
  biPrefixDense: Int32Array;
  ends: Uint32Array;
  langIdx: Uint8Array;
  probs: Float64Array;
  latin1Excluded: Set<number>;
  cjk: Map<number, number>;
  vi: { alphabet: string; marks: string; normalized: string[]; re: RegExp; hasMark: RegExp };
  /**
   * NGram.normalize and the scan's questions about its result, tabulated for every BMP code
   * unit c: normIdx[c] is chars[normalize(c)], and flags[c] has SPACE when normalize(c) is a
   * space and UPPER when it is upper-case (isUpperCp). The scan reads two arrays per character.
   */
  normIdx: Int32Array;
  flags: Uint8Array;
}

const SPACE_FLAG = 1;
const UPPER_FLAG = 2;

let model: Model | undefined;
/** Character indices below this (Latin's, numbered first) look pairs up in dense arrays. */
const DENSE = 512;

/**
 * A map from non-negative integers below 2^31 to non-negative integers, open addressing in typed
 * arrays (a Fibonacci hash, linear probing, at most half full): the n-gram scan looks up two or
 * three keys per character, and this is several times cheaper than a Map's get.
 */
export class IntTable {
  private keys: Int32Array;
  private vals: Int32Array;
  private shift: number;
  size = 0;
  constructor(capacity = 16) {
    let bits = 4;
    while (1 << bits < capacity * 2) bits++;
    this.keys = new Int32Array(1 << bits).fill(-1);
    this.vals = new Int32Array(1 << bits);
    this.shift = 32 - bits;
  }
  /** The value of `key`, or -1. */
  get(key: number): number {
    const mask = this.keys.length - 1;
    for (let i = Math.imul(key, 0x9e3779b1) >>> this.shift; ; i = (i + 1) & mask) {
      const k = this.keys[i];
      if (k === key) return this.vals[i];
      if (k === -1) return -1;
    }
  }
  set(key: number, value: number): void {
    if (!(key >= 0 && key < 2 ** 31 && value >= 0 && value < 2 ** 31)) throw new RangeError(`IntTable: ${key} -> ${value} is out of range`);
    if ((this.size + 1) * 2 > this.keys.length) this.grow();
    const mask = this.keys.length - 1;
    for (let i = Math.imul(key, 0x9e3779b1) >>> this.shift; ; i = (i + 1) & mask) {
      if (this.keys[i] === key) {
        this.vals[i] = value;
        return;
      }
      if (this.keys[i] === -1) {
        this.keys[i] = key;
        this.vals[i] = value;
        this.size++;
        return;
      }
    }
  }
  private grow(): void {
    const { keys, vals } = this;
    this.keys = new Int32Array(keys.length * 2).fill(-1);
    this.vals = new Int32Array(keys.length * 2);
    this.shift--;
    this.size = 0;
    for (let i = 0; i < keys.length; i++) if (keys[i] !== -1) this.set(keys[i], vals[i]);
  }
}

/** messages.properties as langdetect's Messages reads it (key=value, \uXXXX escapes). */
function readMessages(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(join(DIR, "messages.properties"), "utf8").split("\n")) {
    const l = line.trim();
    const eq = l.indexOf("=");
    const key = eq < 0 ? l : l.slice(0, eq);
    const value = eq < 0 ? "" : l.slice(eq + 1);
    out.set(key, value.replace(/\\u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))));
  }
  return out;
}

function load(): Model {
  // DetectorFactory.load_profile takes os.listdir's order; the order only decides ties and the
  // rounding of a sum, and sorted names make it the same on every machine.
  const names = readdirSync(join(DIR, "profiles")).filter((n) => !n.startsWith(".")).sort();
  const profiles = names.map((file) => JSON.parse(readFileSync(join(DIR, "profiles", file), "utf8")) as { name: string; freq: Record<string, number>; n_words: number[] });
  const langs = profiles.map((p) => p.name);
  // Entries (word, language, probability) in flat arrays, then grouped by word (counting sort).
  let max = 0;
  for (const p of profiles) max += Object.keys(p.freq).length;
  const entWord = new Uint32Array(max);
  const entLang = new Uint8Array(max);
  const entProb = new Float64Array(max);
  const words = new Map<string, number>();
  let total = 0;
  profiles.forEach((p, index) => {
    for (const word in p.freq) {
      // add_profile: 1 <= len(word) <= 3 (code points; the profiles hold none beyond the BMP)
      const len = word.length;
      if (len < 1 || len > 3) continue;
      let id = words.get(word);
      if (id === undefined) words.set(word, (id = words.size));
      entWord[total] = id;
      entLang[total] = index;
      entProb[total++] = (1.0 * p.freq[word]) / p.n_words[len - 1];
    }
  });
  const ends = new Uint32Array(words.size + 1);
  for (let k = 0; k < total; k++) ends[entWord[k] + 1]++;
  for (let w = 0; w < words.size; w++) ends[w + 1] += ends[w];
  const fill = ends.slice(0, words.size);
  const langIdx = new Uint8Array(total);
  const probs = new Float64Array(total);
  for (let k = 0; k < total; k++) {
    const at = fill[entWord[k]]++;
    langIdx[at] = entLang[k];
    probs[at] = entProb[k];
  }
  // a word's entries in increasing language order (the profiles were added in order), as the
  // trials' one-pass update needs
  for (let w = 0; w < words.size; w++) {
    for (let k = ends[w] + 1; k < ends[w + 1]; k++) if (!(langIdx[k] > langIdx[k - 1])) throw new Error(`langdetect: word ${w}'s languages out of order`);
  }
  // Characters numbered from 1, those below U+0250 (Latin) first, so that pairs of them index the
  // dense tables biDense/biPrefixDense (DENSE x DENSE) and skip the hash
  const chars = new Int32Array(0x10000);
  let K = 1;
  for (const latin of [true, false]) {
    for (const word of words.keys()) {
      for (let i = 0; i < word.length; i++) {
        const c = word.charCodeAt(i);
        if (!chars[c] && c < 0x250 === latin) chars[c] = K++;
      }
    }
  }
  const uni = new Int32Array(K).fill(-1);
  const bi = new IntTable(1 << 16);
  const biPrefix = new IntTable(1 << 14);
  const tri = new IntTable(1 << 17);
  const biDense = new Int32Array(DENSE * DENSE).fill(-1);
  const biPrefixDense = new Int32Array(DENSE * DENSE).fill(-1);
  for (const [word, id] of words) {
    const c = [...word].map((ch) => chars[ch.charCodeAt(0)]);
    if (c.length === 1) uni[c[0]] = id;
    else if (c.length === 2) {
      bi.set(c[0] * K + c[1], id);
      if (c[0] < DENSE && c[1] < DENSE) biDense[c[0] * DENSE + c[1]] = id;
    } else {
      const key = c[0] * K + c[1];
      let pre = biPrefix.get(key);
      if (pre < 0) biPrefix.set(key, (pre = biPrefix.size));
      if (c[0] < DENSE && c[1] < DENSE) biPrefixDense[c[0] * DENSE + c[1]] = pre;
      tri.set(pre * K + c[2], id);
    }
  }
  const m = readMessages();
  const get = (key: string) => m.get(key) ?? `!${key}!`;
  const cjk = new Map<number, number>();
  for (const [key, chars] of m) {
    if (!key.startsWith("NGram.KANJI_")) continue;
    const rep = chars.codePointAt(0)!;
    for (const c of chars) cjk.set(c.codePointAt(0)!, rep);
  }
  const alphabet = get("TO_NORMALIZE_VI_CHARS");
  const marks = get("DMARK_CLASS");
  const esc = (s: string) => s.replace(/[\\\]^-]/g, "\\$&");
  const partial = { latin1Excluded: new Set([...get("NGram.LATIN1_EXCLUDE")].map((c) => c.codePointAt(0)!)), cjk };
  const normIdx = new Int32Array(0x10000);
  const flags = new Uint8Array(0x10000);
  for (let c = 0; c < 0x10000; c++) {
    const n = normalize(c, partial); // a BMP code unit normalises to one
    normIdx[c] = chars[n];
    flags[c] = (n === 0x20 ? SPACE_FLAG : 0) | (isUpperCp(n) ? UPPER_FLAG : 0);
  }
  return {
    langs,
    words,
    chars,
    K,
    uni,
    bi,
    biPrefix,
    tri,
    biDense,
    biPrefixDense,
    ends,
    langIdx,
    probs,
    ...partial,
    vi: {
      alphabet,
      marks,
      normalized: ["0300", "0301", "0303", "0309", "0323"].map((s) => get(`NORMALIZED_VI_CHARS_${s}`)),
      re: new RegExp(`([${esc(alphabet)}])([${esc(marks)}])`, "gu"),
      hasMark: new RegExp(`[${esc(marks)}]`, "u"),
    },
    normIdx,
    flags,
  };
}

function getModel(): Model {
  return (model ??= load());
}

/** langdetect's 55 language codes. */
export function langdetectLanguages(): string[] {
  return [...getModel().langs];
}

// ---- Detector ------------------------------------------------------------------------------------

const URL_RE = /https?:\/\/[-_.?&~;+=/#0-9A-Za-z]{1,2076}/g;
const MAIL_RE = /[-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}/g;
const MAX_TEXT = 10_000;
const ALPHA = 0.5;
const ALPHA_WIDTH = 0.05;
const ITERATION_LIMIT = 1000;
const PROB_THRESHOLD = 0.1;
const CONV_THRESHOLD = 0.99999;
const BASE_FREQ = 10000;
const N_TRIAL = 7;

/** NGram.normalize, on a code point (the scan reads it from Model.normIdx/flags for the BMP). */
function normalize(c: number, m: Pick<Model, "latin1Excluded" | "cjk">): number {
  if (c <= 0x7f) return c < 0x41 || (c > 0x5a && c < 0x61) || c > 0x7a ? 0x20 : c;
  if (c <= 0xff) return m.latin1Excluded.has(c) ? 0x20 : c;
  if (c >= 0x180 && c <= 0x24f) return c === 0x219 ? 0x15f : c === 0x21b ? 0x163 : c; // Romanian
  if (c >= 0x2000 && c <= 0x206f) return 0x20; // General Punctuation
  if (c >= 0x600 && c <= 0x6ff) return c === 0x6cc ? 0x64a : c; // Farsi yeh
  if (c >= 0x1e00 && c <= 0x1eff) return c >= 0x1ea0 ? 0x1ec3 : c;
  if (c >= 0x3040 && c <= 0x309f) return 0x3042;
  if (c >= 0x30a0 && c <= 0x30ff) return 0x30a2;
  if ((c >= 0x3100 && c <= 0x312f) || (c >= 0x31a0 && c <= 0x31bf)) return 0x3105;
  if (c >= 0x4e00 && c <= 0x9fff) return m.cjk.get(c) ?? c;
  if (c >= 0xac00 && c <= 0xd7af) return 0xac00;
  return c;
}

/** Work buffers of the scan, reused (langdetect runs to completion, never re-entered). */
const cpBuf = new Int32Array(MAX_TEXT);
const gramBuf = new Int32Array(3 * MAX_TEXT);

/**
 * Detector.append then Detector.cleaning_text: URLs and e-mails blanked, Vietnamese normalised,
 * runs of spaces collapsed, capped at MAX_TEXT code points; a text mostly in another script loses
 * its Latin letters. The code points land in cpBuf; returns how many.
 */
function appendAndClean(text: string, m: Model): number {
  // Each pattern matches bounded runs (at most 64 + 2 x 255 or 2083 characters from a start);
  // a text without "http" or "@" cannot match, and skips the scan.
  let t = text.includes("http") ? text.replace(URL_RE, " ") : text;
  if (t.includes("@")) t = t.replace(MAIL_RE, " ");
  // the Vietnamese pattern needs one of DMARK_CLASS's combining marks
  if (m.vi.hasMark.test(t)) t = t.replace(m.vi.re, (_, a: string, d: string) => [...m.vi.normalized[m.vi.marks.indexOf(d)]][[...m.vi.alphabet].indexOf(a)]);
  const out = cpBuf;
  let len = 0;
  let pre = -1;
  let n = 0;
  let latin = 0;
  let nonLatin = 0;
  for (let i = 0; i < t.length; i++) {
    if (n++ >= MAX_TEXT) break;
    let c = t.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < t.length) {
      const d = t.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c !== 0x20 || pre !== 0x20) {
      out[len++] = c;
      if (c >= 0x41 && c <= 0x7a) latin++;
      // upstream compares unicode_block()'s number with a block *name*, so every c >= U+0300 counts
      else if (c >= 0x300) nonLatin++;
    }
    pre = c;
  }
  if (latin * 2 >= nonLatin) return len;
  let kept = 0;
  for (let i = 0; i < len; i++) if (out[i] < 0x41 || out[i] > 0x7a) out[kept++] = out[i];
  return kept;
}

const isUpperCp = (c: number) => (c < 128 ? c >= 0x41 && c <= 0x5a : pyIsUpper(String.fromCodePoint(c)));

/**
 * Detector._extract_ngrams over cpBuf[0, len): the profile's n-grams of the text, in order, as
 * word ids in gramBuf; returns how many.
 */
function extractNgrams(len: number, m: Model): number {
  const cps = cpBuf;
  const out = gramBuf;
  let count = 0;
  const { chars, K, uni, bi, biPrefix, tri, biDense, biPrefixDense, normIdx, flags } = m;
  const SPACE = chars[0x20];
  // NGram.grams, as its last three characters' indices (i0 oldest; 0: in no profile) and its length.
  let i0 = 0;
  let i1 = 0;
  let i2 = SPACE;
  let gramLen = 1;
  let lastSpace = true; // the last normalised character was a space (NGram starts with one)
  let lastUpper = false;
  let capital = false;
  for (let k = 0; k < len; k++) {
    const raw = cps[k];
    // normalize(raw): tabulated for the BMP; beyond it normalize is the identity and no profile
    // holds the character
    let ci: number;
    let space: boolean;
    let upper: boolean;
    if (raw < 0x10000) {
      const f = flags[raw];
      ci = normIdx[raw];
      space = (f & SPACE_FLAG) !== 0;
      upper = (f & UPPER_FLAG) !== 0;
    } else {
      ci = 0;
      space = false;
      upper = isUpperCp(raw);
    }
    if (lastSpace) {
      capital = false;
      if (space) {
        i0 = 0;
        i1 = 0;
        i2 = SPACE;
        gramLen = 1;
        continue;
      }
      i0 = 0;
      i1 = SPACE;
      i2 = ci;
      gramLen = 2;
    } else {
      i0 = gramLen >= 2 ? i1 : 0;
      i1 = i2;
      i2 = ci;
      gramLen = gramLen < 3 ? gramLen + 1 : 3;
    }
    const wasUpper = lastUpper;
    lastSpace = space;
    lastUpper = upper;
    if (upper) {
      if (wasUpper) capital = true;
    } else capital = false;
    if (capital || ci === 0) continue; // every n-gram ends with this character
    // n = 1, 2, 3: grams[-n:], skipping a lone space
    if (!space && uni[ci] >= 0) out[count++] = uni[ci];
    if (gramLen < 2 || i1 === 0) continue;
    const id = i1 < DENSE && ci < DENSE ? biDense[i1 * DENSE + ci] : bi.get(i1 * K + ci);
    if (id >= 0) out[count++] = id;
    if (gramLen < 3 || i0 === 0) continue;
    const pre = i0 < DENSE && i1 < DENSE ? biPrefixDense[i0 * DENSE + i1] : biPrefix.get(i0 * K + i1);
    if (pre < 0) continue;
    const id3 = tri.get(pre * K + ci);
    if (id3 >= 0) out[count++] = id3;
  }
  return count;
}

/**
 * A generator in the state `random.Random(seed)` starts in. Seeding (init_by_array, two passes
 * over 624 words) costs more than copying its result, so each seed's state is kept once made, and
 * one generator is reused (langdetect runs to completion, never re-entered).
 */
const seededStates = new Map<number, PyRandom>();
const generator = new PyRandom();
function seeded(seed: number): PyRandom {
  let start = seededStates.get(seed);
  if (!start) {
    start = new PyRandom();
    start.seed(seed);
    if (seededStates.size < 8) seededStates.set(seed, start);
  }
  generator.copyFrom(start);
  return generator;
}

/** Is langprob's leader over PROB_THRESHOLD and ahead of every other by more than `rest`? */
function settled(langprob: Float64Array, rest: number): boolean {
  let best = 0;
  for (let j = 1; j < langprob.length; j++) if (langprob[j] > langprob[best]) best = j;
  if (!(langprob[best] > PROB_THRESHOLD)) return false;
  const need = rest + 1e-9;
  for (let j = 0; j < langprob.length; j++) if (j !== best && langprob[best] - langprob[j] <= need) return false;
  return true;
}

/**
 * langdetect.detect(text) with DetectorFactory.seed = 0: the most probable language code, or
 * null where langdetect raises LangDetectException ("No features in text.").
 *
 * The answer is the language whose probability, summed over the 7 trials, is highest (and over
 * 0.1). Each trial adds at most 1/7 to a language (its probabilities are normalised, each <= 1), and
 * adding a non-negative number never lowers a float sum; so once the leader's sum is over 0.1 and
 * ahead of every other by more than what the remaining trials can add (with a margin far above the
 * rounding of 7 additions), the answer is settled and the remaining trials are skipped: the same
 * answer as running them all (checked on every text of langdetect.test.ts, both ways). A clear
 * text is settled after 4 of 7 trials. `stats.trials` reports how many ran; `stats.all` runs all 7.
 */
export function langdetect(text: string, seed = 0, stats?: { trials: number; all?: boolean }): string | null {
  const m = getModel();
  const nGrams = extractNgrams(appendAndClean(text, m), m);
  if (nGrams === 0) return null;
  const ngrams = gramBuf;
  const { ends, langIdx, probs } = m;
  const L = m.langs.length;
  const langprob = new Float64Array(L);
  const rnd = seeded(seed);
  const prob = new Float64Array(L);
  for (let t = 0; t < N_TRIAL; t++) {
    prob.fill(1.0 / L);
    const alpha = ALPHA + rnd.gauss(0.0, 1.0) * ALPHA_WIDTH;
    const weight = alpha / BASE_FREQ;
    for (let i = 0; ; i++) {
      // _update_lang_prob: prob[j] *= weight + p[j]; p[j] is 0 but for the word's few languages,
      // and weight + 0.0 is weight exactly, so the others are multiplied by weight, in one pass
      // (the word's languages are in increasing order, checked at load)
      const w = ngrams[rnd.randbelow(nGrams)];
      const b = ends[w + 1];
      let j = 0;
      for (let k = ends[w]; k < b; k++) {
        const lj = langIdx[k];
        for (; j < lj; j++) prob[j] *= weight;
        prob[j] *= weight + probs[k];
        j++;
      }
      for (; j < L; j++) prob[j] *= weight;
      if (i % 5 === 0) {
        // _normalize_prob: sum() left to right (CPython 3.11), then each divided
        let sum = 0.0;
        for (let j = 0; j < L; j++) sum += prob[j];
        let maxp = 0.0;
        for (let j = 0; j < L; j++) {
          const p = prob[j] / sum;
          if (maxp < p) maxp = p;
          prob[j] = p;
        }
        if (maxp > CONV_THRESHOLD || i >= ITERATION_LIMIT) break;
      }
    }
    for (let j = 0; j < L; j++) langprob[j] += prob[j] / N_TRIAL;
    if (stats) stats.trials = t + 1;
    if (t + 1 < N_TRIAL && !stats?.all && settled(langprob, (N_TRIAL - t - 1) / N_TRIAL)) break;
  }
  // _sort_probability: those over 0.1, highest first (a stable sort: ties keep profile order)
  let best = -1;
  for (let j = 0; j < L; j++) if (langprob[j] > PROB_THRESHOLD && (best < 0 || langprob[j] > langprob[best])) best = j;
  return best < 0 ? "unknown" : m.langs[best];
}
