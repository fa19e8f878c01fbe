/** POST /reward and POST /reward/batch: the native API over the scorer. */
import { Router } from "express";
import { HttpError } from "../errors.js";
import { clientLeft, sendJson, type RouteDeps } from "../http.js";

export function rewardRoutes({ runtime, body, admit }: RouteDeps): Router {
  const { scorer, config } = runtime;
  const r = Router();

  r.post("/reward", body("RewardItem"), async (req, res) => {
    const release = admit(1, [req.body]);
    try {
      const result = await scorer.score(req.body, { signal: clientLeft(req, res) });
      // The item is the whole request here: an invalid one is a malformed request.
      if (result.status === "invalid") throw new HttpError(400, result.reason, result.details.field as string | undefined);
      sendJson(res, result);
    } finally {
      release();
    }
  });

  r.post("/reward/batch", body("BatchRequest"), async (req, res) => {
    const { items, deadline_ms } = req.body as { items: unknown[]; deadline_ms?: number };
    if (items.length > config.maxBatch) {
      throw new HttpError(413, `batch of ${items.length} items is over the limit of ${config.maxBatch}; split it into smaller batches (or raise ASSAY_MAX_BATCH)`, "items");
    }
    const release = admit(items.length, items);
    try {
      sendJson(res, { results: await scorer.scoreBatch(items, { deadlineMs: deadline_ms, signal: clientLeft(req, res) }) });
    } finally {
      release();
    }
  });
  return r;
}
