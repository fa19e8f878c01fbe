/** Drop-in endpoints that trainers already speak, each thin over the same scorer or services. */
import type { Router } from "express";
import type { CompatDeps } from "./types.js";

export function compatRouters(_deps: CompatDeps): Router[] {
  return [];
}
