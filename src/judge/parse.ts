/**
 * Reading a judge's reply as a verdict object, from the judge's own words only.
 *
 * A judge that "thinks out loud" may quote the material it grades, and the response in it may
 * hold its own `{"satisfied": true}` or unbalanced JSON. So:
 *
 * 1. Only the text after the last `</think>` counts, and only its last MAX_REPLY_CHARS (the
 *    verdict comes last); nothing counts in a reply whose `<think>` never closes (cut off while
 *    it reasoned: a `{"satisfied": true}` there is a draft, or a quote).
 * 2. A reply that is one JSON object as a whole (what json_schema and tool calls give) is that
 *    object.
 * 3. Otherwise, when the question's markers are known (its nonce), only the text after the last
 *    closing marker `<<<END-NAME-nonce>>>` is read. A reply whose last marker is an opening one
 *    ends inside quoted material: it has no verdict (the client retries it, then gives up: null).
 * 4. In what is left, the candidates are the objects that start at each of the last MAX_STARTS
 *    `{`, each running to its balanced `}` (braces inside strings skipped) or, unbalanced, to the
 *    end. They are tried latest-ending first (an enclosing object before what it encloses), each
 *    with JSON.parse, then through jsonrepair (trailing commas, single quotes, unquoted keys, a
 *    missing closing brace). jsonrepair is not given an object that opens with an escaped quote
 *    (`{\"`): that is a quotation inside a string, which jsonrepair would unescape.
 *
 * The caller takes the first candidate that passes the verdict's schema: the last well-formed
 * verdict. Only a plain object is a candidate: jsonrepair turns any prose into *something*, so
 * prose is never read whole. Work is linear in the capped text times MAX_STARTS.
 */
import { jsonrepair } from "jsonrepair";
import { afterThink } from "../core/completion.js";

/** Only this much of a reply (its end) is read; the rest is never parsed. */
export const MAX_REPLY_CHARS = 64 * 1024;
/** How many of the last `{` in a reply may start a verdict. */
export const MAX_STARTS = 32;
/** How many candidates may go through jsonrepair (the costlier reading). */
const MAX_REPAIRS = 4;

type Obj = Record<string, unknown>;

/** The candidate verdict objects of a reply, most likely first; see the file's comment. Lazy. */
export function* verdictCandidates(text: string, nonce?: string): Generator<Obj> {
  const answer = afterThink(text);
  const t = (answer.length > MAX_REPLY_CHARS ? answer.slice(answer.length - MAX_REPLY_CHARS) : answer).trim();
  if (t.startsWith("{")) {
    const whole = strict(t);
    if (whole) yield whole;
  }
  const region = nonce === undefined ? t : afterMaterial(t, nonce);
  if (region === undefined) return;
  let repairs = 0;
  for (const c of objectSpans(region)) {
    const v = strict(c);
    if (v) yield v;
    else if (repairs < MAX_REPAIRS && !/^\{\s*\\/.test(c)) {
      repairs++;
      const r = repaired(c);
      if (r) yield r;
    }
  }
}

/** The first candidate verdict of a reply (no schema, no markers): tolerant JSON reading. */
export function parseJsonReply(text: string, nonce?: string): Obj | undefined {
  for (const v of verdictCandidates(text, nonce)) return v;
  return undefined;
}

/**
 * The text after the last closing marker of this nonce; the whole text when no marker occurs;
 * undefined when the last marker opens a block (the reply ends inside quoted material).
 */
export function afterMaterial(t: string, nonce: string): string | undefined {
  const tail = `-${nonce}>>>`;
  const at = t.lastIndexOf(tail);
  if (at < 0) return t;
  const start = t.lastIndexOf("<<<", at);
  if (start < 0 || !/^<<<END-[A-Za-z_]+$/.test(t.slice(start, at))) return undefined;
  return t.slice(at + tail.length);
}

const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function strict(s: string): Obj | undefined {
  try {
    const v = JSON.parse(s);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function repaired(s: string): Obj | undefined {
  try {
    const v = JSON.parse(jsonrepair(s));
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The objects starting at the last MAX_STARTS `{` of t: balanced ones by their end, latest first
 * (for one end, the outermost first), then unbalanced ones (running to the end), latest start first.
 */
export function objectSpans(t: string): string[] {
  const starts: number[] = [];
  for (let i = t.lastIndexOf("{"); i >= 0 && starts.length < MAX_STARTS; i = i > 0 ? t.lastIndexOf("{", i - 1) : -1) starts.push(i);
  const balanced: [number, number][] = [];
  const open: number[] = [];
  for (const s of starts) {
    const e = balancedEnd(t, s);
    if (e < 0) open.push(s);
    else balanced.push([s, e]);
  }
  balanced.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return [...balanced.map(([s, e]) => t.slice(s, e + 1)), ...open.map((s) => t.slice(s))];
}

/** The index of the `}` that closes the `{` at start, skipping braces inside strings; -1 when none. One pass. */
function balancedEnd(t: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < t.length; i++) {
    const ch = t.charCodeAt(i);
    if (inString) {
      if (ch === 92 /* \ */) i++;
      else if (ch === 34 /* " */) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 123 /* { */) depth++;
    else if (ch === 125 /* } */ && --depth === 0) return i;
  }
  return -1;
}
