/** POST /reward and POST /reward/batch: the native API over the scorer. */
import { Router, type RequestHandler } from "express";
import { HttpError } from "../errors.js";
import { clientLeft, sendJson, type RouteDeps } from "../http.js";

/**
 * The scoring routes' own steps (body, then handler), by path: mounted on the router below, and
 * run by the app's front dispatch (app.ts, `scoringDispatch`) for exactly `POST /reward` and
 * `POST /reward/batch` without express's router walking every other layer first (issue 38).
 */
export function rewardSteps(deps: RouteDeps): Record<"/reward" | "/reward/batch", RequestHandler[]> {
  let steps = made.get(deps);
  if (!steps) made.set(deps, (steps = makeSteps(deps)));
  return steps;
}

/** One set of steps per app: the router and the front dispatch share them. */
const made = new WeakMap<RouteDeps, Record<"/reward" | "/reward/batch", RequestHandler[]>>();

function makeSteps({ runtime, body, admit }: RouteDeps): Record<"/reward" | "/reward/batch", RequestHandler[]> {
  const { scorer, config } = runtime;
  const one: RequestHandler = async (req, res) => {
    const release = admit(1, [req.body]);
    try {
      const result = await scorer.score(req.body, { signal: clientLeft(req, res) });
      // The item is the whole request here: an invalid one is a malformed request.
      if (result.status === "invalid") throw new HttpError(400, result.reason, result.details.field as string | undefined);
      sendJson(res, result);
    } finally {
      release();
    }
  };
  const batch: RequestHandler = async (req, res) => {
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
  };
  return { "/reward": [body("RewardItem"), one], "/reward/batch": [body("BatchRequest"), batch] };
}

export function rewardRoutes(deps: RouteDeps): Router {
  const r = Router();
  for (const [path, steps] of Object.entries(rewardSteps(deps))) r.post(path, ...steps);
  return r;
}
