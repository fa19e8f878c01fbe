/** Drop-in endpoints that trainers already speak, each thin over the same scorer or services. */
import type { Router } from "express";
import type { CompatDeps } from "./types.js";
import { sandboxFusionRouter } from "./sandboxfusion.js";

export function compatRouters(deps: CompatDeps): Router[] {
  return [sandboxFusionRouter(deps)];
}
