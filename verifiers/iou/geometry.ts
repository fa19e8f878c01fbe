/**
 * Boxes and points read from a model's text, IoU, and optimal one-to-one matching.
 *
 * Boxes are [x1, y1, x2, y2] (top-left, bottom-right) in whatever coordinate system the
 * reference uses; a box with x2 < x1 or y2 < y1 is malformed and overlaps nothing.
 */
import { munkres } from "munkres";
import { extractJson, type JsonLimits } from "../json/parse.js";

export type Box = [number, number, number, number];
export type Point = [number, number];

/** Intersection over union of two boxes (continuous coordinates; 0 when the union is empty). */
export function iou(a: Box, b: Box): number {
  if (!validBox(a) || !validBox(b)) return 0;
  const iw = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const ih = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  const union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return union > 0 ? inter / union : 0;
}

export function validBox(b: Box): boolean {
  return b.every(Number.isFinite) && b[2] >= b[0] && b[3] >= b[1];
}

/** The point lies in the box, edges included. */
export function inBox(p: Point, b: Box): boolean {
  return validBox(b) && p[0] >= b[0] && p[0] <= b[2] && p[1] >= b[1] && p[1] <= b[3];
}

/**
 * The one-to-one pairing of rows and columns that maximises the total score (Hungarian
 * algorithm, npm `munkres`), as [row, col, score] for each pair with a positive score.
 */
export function bestPairs(scores: number[][]): [number, number, number][] {
  if (!scores.length || !scores[0].length) return [];
  return munkres(scores.map((row) => row.map((s) => 1 - s)))
    .map(([r, c]) => [r, c, scores[r][c]] as [number, number, number])
    .filter(([, , s]) => s > 0);
}

// ---------------------------------------------------------------------------------------------
// Reading coordinates

const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const KEYS_BOX = ["bbox_2d", "bbox", "box", "box_2d"];
const KEYS_POINT = ["point_2d", "point", "coordinate"];

/** Numeric tuples of length `k` in a parsed JSON value: [..k], [[..k], ...], {bbox_2d: [...]}, ... */
function tuplesFromJson(v: unknown, k: number, keys: string[], out: number[][], max: number): void {
  if (out.length > max) return;
  if (Array.isArray(v)) {
    if (v.length === k && v.every(isNum)) { out.push(v as number[]); return; }
    for (const x of v) tuplesFromJson(x, k, keys, out, max);
    return;
  }
  if (typeof v === "object" && v !== null) {
    const o = v as Record<string, unknown>;
    for (const key of keys) if (key in o) { tuplesFromJson(o[key], k, keys, out, max); return; }
  }
}

const isDigit = (c: number) => c >= 48 && c <= 57;
/** ASCII letters and `_`: what names are made of ("x1", "bbox_2d"). Other scripts are not: Chinese
 * text runs straight into numbers ("坐标为100,100,200,200"). */
const isWordChar = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
/** After these (or at the start) a "-" or "+" is a sign; elsewhere ("100-200") a separator. */
const isSignLead = (c: number) => c === 32 || c === 9 || c === 10 || c === 13 || c === 91 || c === 40 || c === 44 || c === 58 || c === 61 || c === 59;

/**
 * Numeric tuples of length `k` written as plain text: "[12, 30, 200, 310]", "(12,30),(5,6)", or
 * a bare run of numbers. A single left-to-right scan; at most `max` + 1 tuples are collected.
 *
 * Digits that are part of a word are not numbers: none starts right after an ASCII letter, `_`,
 * a digit or a "." ("x1=100" reads 100, "bbox_2d" and "Qwen2.5" nothing), and one directly
 * followed by a letter or `_` ("2D", "3rd", "1080p") is dropped, except the unit "px" ("12px").
 * A sign counts only at the start or after whitespace, `[`, `(`, `,`, `:`, `;` or `=`:
 * "100-200" is 100 and 200. Commas always separate numbers ("1,000" is 1 and 0): a thousands
 * separator cannot be told from a list ("1,000,2,3").
 */
export function tuplesFromText(text: string, k: number, max: number): number[][] {
  const groups: number[][] = [];
  let cur: number[] = [];
  const loose: number[] = [];
  let depth = 0;
  for (let i = 0; i < text.length && groups.length <= max; ) {
    const c = text[i];
    if (c === "[" || c === "(") { depth++; cur = []; i++; continue; }
    if (c === "]" || c === ")") {
      if (depth > 0 && cur.length === k) groups.push(cur);
      depth = Math.max(0, depth - 1);
      cur = [];
      i++;
      continue;
    }
    const prev = i > 0 ? text.charCodeAt(i - 1) : -1;
    // Inside a word or a number, or after a "." no number took ("Qwen2.5", "1.2.3"): no number starts.
    if (prev >= 0 && (isWordChar(prev) || isDigit(prev) || prev === 46)) { i++; continue; }
    // A number: optional sign, digits, optional fraction, optional exponent.
    let j = i;
    if ((text[j] === "-" || text[j] === "+") && (prev < 0 || isSignLead(prev))) j++;
    const digitsStart = j;
    while (j < text.length && isDigit(text.charCodeAt(j))) j++;
    if (text[j] === "." ) { j++; while (j < text.length && isDigit(text.charCodeAt(j))) j++; }
    if (j > digitsStart && !(j === digitsStart + 1 && text[digitsStart] === ".")) {
      if ((text[j] === "e" || text[j] === "E") && /[0-9+-]/.test(text[j + 1] ?? "")) {
        let e = j + 1;
        if (text[e] === "+" || text[e] === "-") e++;
        const es = e;
        while (e < text.length && isDigit(text.charCodeAt(e))) e++;
        if (e > es) j = e;
      }
      const px = text.startsWith("px", j) && !isWordChar(text.charCodeAt(j + 2)) && !isDigit(text.charCodeAt(j + 2));
      if (j < text.length && isWordChar(text.charCodeAt(j)) && !px) { i = j; continue; } // "2D", "3rd": part of a word
      const n = Number(text.slice(i, j));
      if (Number.isFinite(n)) {
        if (depth > 0) cur.push(n);
        if (loose.length <= max * k) loose.push(n);
      }
      i = px ? j + 2 : j;
      continue;
    }
    i++;
  }
  if (groups.length) return groups;
  if (loose.length && loose.length % k === 0) {
    const out: number[][] = [];
    for (let i = 0; i < loose.length && out.length <= max; i += k) out.push(loose.slice(i, i + k));
    return out;
  }
  return [];
}

/**
 * The tuples a completion gives: from its JSON (Qwen2.5-VL's [{"bbox_2d": [...]}], a bare
 * [x1, y1, x2, y2], a list of them) or from plain text, whichever reading finds more.
 * Returns at most `max + 1` tuples, so that a caller can tell "more than max".
 */
export function readTuples(text: string, k: 2 | 4, max: number, limits: JsonLimits): number[][] {
  const keys = k === 4 ? KEYS_BOX : KEYS_POINT;
  const parsed = extractJson(text, limits);
  const fromJson: number[][] = [];
  if (parsed.ok) tuplesFromJson(parsed.value, k, keys, fromJson, max);
  // Text may hold several JSON values ("[..] and [..]"); the reading that finds more wins.
  const fromText = tuplesFromText(text, k, max);
  return (fromJson.length >= fromText.length ? fromJson : fromText).slice(0, max + 1);
}
