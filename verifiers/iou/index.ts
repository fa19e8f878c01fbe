/** iou: visual grounding rewards, boxes by IoU and points by containment. See README.md. */
import { Type } from "@sinclair/typebox";
import { defineVerifier } from "../../src/core/verifier.js";
import { afterThink } from "../../src/core/completion.js";
import { DEFAULT_LIMITS } from "../json/parse.js";
import { bestPairs, inBox, iou, readTuples, type Box, type Point } from "./geometry.js";

/** The largest max_response_chars: the longest completion read (and the default). */
export const IOU_MAX_CHARS = 262_144;

const BoxT = Type.Array(Type.Number(), { minItems: 4, maxItems: 4, description: "[x1, y1, x2, y2]" });

/** The text inside the last <answer>…</answer>, if there is one. */
function answerTag(text: string): string {
  const close = text.lastIndexOf("</answer>");
  if (close < 0) return text;
  const open = text.lastIndexOf("<answer>", close);
  return open < 0 ? text : text.slice(open + 8, close);
}

export const iouVerifier = defineVerifier({
  name: "iou",
  description: "Visual grounding: predicted boxes vs reference boxes by IoU (optimal matching), or predicted points inside reference boxes.",
  reference: Type.Union([BoxT, Type.Array(BoxT, { minItems: 1, maxItems: 100 })]),
  options: Type.Object(
    {
      mode: Type.Union([Type.Literal("box"), Type.Literal("point")], { default: "box", description: "the completion gives boxes, or points" }),
      reward: Type.Union([Type.Literal("iou"), Type.Literal("threshold")], {
        default: "iou", description: "iou: each pair earns its IoU; threshold: 1 when IoU >= iou_threshold",
      }),
      iou_threshold: Type.Number({ default: 0.5, minimum: 0, maximum: 1 }),
      max_predictions: Type.Integer({ default: 100, minimum: 1, maximum: 1000, description: "more boxes/points than this score 0" }),
      strip_think: Type.Boolean({ default: true }),
      // At most 262,144: reading a completion (extractJson, then tuplesFromText) is one block of
      // work on the event loop, 10-35 ms at this size; 1 MiB of "```json\n[1\n```\n" held it 0.45 s.
      max_response_chars: Type.Integer({ default: IOU_MAX_CHARS, minimum: 1, maximum: IOU_MAX_CHARS, description: "a longer response scores 0 (bounds the work per item)" }),
    },
    { additionalProperties: false },
  ),
  verify(item) {
    const o = item.options;
    const refs: Box[] = (typeof item.reference[0] === "number" ? [item.reference] : item.reference) as Box[];
    if (item.response.length > o.max_response_chars) {
      return { reward: 0, reason: `response longer than max_response_chars (${item.response.length})`, details: {} };
    }
    const text = answerTag(o.strip_think ? afterThink(item.response) : item.response);
    const k = o.mode === "box" ? 4 : 2;
    const found = readTuples(text, k, o.max_predictions, { maxChars: o.max_response_chars, maxDepth: DEFAULT_LIMITS.maxDepth });
    const what = o.mode === "box" ? "box" : "point";
    if (!found.length) return { reward: 0, reason: `no ${what} in the completion`, details: { predicted: [] } };
    if (found.length > o.max_predictions) {
      return { reward: 0, reason: `more than max_predictions (${o.max_predictions}) ${what}es`, details: { predicted: found.length } };
    }
    let scores: number[][];
    if (o.mode === "box") {
      const boxes = found as Box[];
      scores = boxes.map((b) => refs.map((r) => {
        const v = iou(b, r);
        return o.reward === "threshold" ? (v >= o.iou_threshold && v > 0 ? 1 : 0) : v;
      }));
    } else {
      scores = (found as Point[]).map((p) => refs.map((r) => (inBox(p, r) ? 1 : 0)));
    }
    const pairs = bestPairs(scores);
    const total = pairs.reduce((acc, [, , s]) => acc + s, 0);
    const denom = Math.max(found.length, refs.length);
    const reward = total / denom;
    const ious = o.mode === "box" ? pairs.map(([p, r]) => iou(found[p] as Box, refs[r])) : undefined;
    return {
      reward,
      reason: `${pairs.length} of ${refs.length} reference box(es) matched by ${found.length} predicted ${what}(s); reward ${reward.toFixed(4)}`,
      details: { predicted: found.slice(0, 100), pairs: pairs.map(([p, r, s]) => ({ predicted: p, reference: r, score: s })), ...(ious ? { ious } : {}) },
    };
  },
});

export default [iouVerifier];
