/**
 * Scoring one chunk of a job: the stored lines become items (a line that is not a JSON object
 * becomes an `invalid` result, never a lost line), the job's default verifier and deadline are
 * applied, and the scorer does the rest. Shared by the in-process runner and `assay worker`.
 */
import type { Scorer } from "../core/scorer.js";
import type { RewardResult } from "../core/types.js";
import { OPENAPI } from "../core/contract.js";
import { jsonDepth } from "../core/json-depth.js";
import type { JobOptions } from "./summary.js";

export interface ChunkItem {
  idx: number;
  item: string;
}

export interface IndexedResult {
  idx: number;
  result: RewardResult;
}

/** The fields an item may carry (openapi.yaml RewardItem); a group field outside them is the job's, not the verifier's. */
const ITEM_FIELDS = new Set(Object.keys((OPENAPI.components.schemas.RewardItem as { properties: object }).properties));

function invalid(idx: number, reason: string): RewardResult {
  return { id: null, verifier: "", reward: null, status: "invalid", reason, details: { index: idx }, elapsed_ms: 0 };
}

/**
 * A JSONL line as a job reads it (POST /jobs and `assay score` alike): a trailing `\r` (CRLF)
 * dropped, and a raw NUL (never valid in JSON text, and not storable in PostgreSQL's text) read
 * as U+FFFD, as an invalid UTF-8 byte is: the same item on every store.
 */
export function lineText(line: string): string {
  const text = line.endsWith("\r") ? line.slice(0, -1) : line;
  return text.includes("\0") ? text.replaceAll("\0", "\uFFFD") : text;
}

/** True when the JSON text nests deeper than `maxDepth` (ASSAY_MAX_DEPTH, as for request bodies); one linear pass. */
export function tooDeep(text: string, maxDepth: number): boolean {
  return jsonDepth(text, maxDepth) > maxDepth;
}

/** A stored line as the item to score, or the invalid result it is. */
export function itemOf(c: ChunkItem, o: JobOptions, maxDepth: number): { item: Record<string, unknown> } | { result: RewardResult } {
  if (!c.item.trim()) return { result: invalid(c.idx, `item ${c.idx + 1} is a blank line; remove it (one JSON item per line)`) };
  if (tooDeep(c.item, maxDepth)) return { result: invalid(c.idx, `item ${c.idx + 1} is nested deeper than ${maxDepth} levels; flatten it (or raise ASSAY_MAX_DEPTH)`) };
  let value: unknown;
  try {
    value = JSON.parse(c.item);
  } catch (e) {
    return { result: invalid(c.idx, `item ${c.idx + 1} is not valid JSON: ${(e as Error).message}`) };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return { result: invalid(c.idx, `item ${c.idx + 1} must be a JSON object with verifier and response`) };
  }
  const item = value as Record<string, unknown>;
  if (o.group_by && !ITEM_FIELDS.has(o.group_by)) delete item[o.group_by];
  if (item.verifier === undefined && o.verifier) item.verifier = o.verifier;
  return { item };
}

/** Scores a chunk; results carry their item's index. Never rejects. */
export async function scoreChunk(scorer: Scorer, chunk: ChunkItem[], o: JobOptions, maxDepth: number, signal?: AbortSignal): Promise<IndexedResult[]> {
  const out: IndexedResult[] = new Array(chunk.length);
  const items: unknown[] = [];
  const at: number[] = [];
  chunk.forEach((c, i) => {
    const p = itemOf(c, o, maxDepth);
    if ("result" in p) out[i] = { idx: c.idx, result: p.result };
    else {
      items.push(p.item);
      at.push(i);
    }
  });
  const results = await scorer.scoreBatch(items, { deadlineMs: o.deadline_ms, signal });
  results.forEach((r, j) => (out[at[j]] = { idx: chunk[at[j]].idx, result: r }));
  return out;
}

/** The group key of an uploaded item: its `group_by` field (default `prompt`) when a string or number. */
export function groupOf(item: unknown, groupBy = "prompt"): string | null {
  if (!item || typeof item !== "object") return null;
  const v = (item as Record<string, unknown>)[groupBy];
  // PostgreSQL's text holds no NUL: a prompt with `\u0000` groups under U+FFFD in its place
  return typeof v === "string" ? (v.includes("\0") ? v.replaceAll("\0", "\uFFFD") : v) : typeof v === "number" ? String(v) : null;
}

/** A chunk's queue id: the job and the chunk's first index (BullMQ forbids ':' in ids). */
export const chunkId = (job: string, start: number) => `${job}_${start}`;
