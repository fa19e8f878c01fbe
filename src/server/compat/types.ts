import type { RequestHandler } from "express";
import type { Logger } from "pino";
import type { Config } from "../../core/config.js";
import type { Scorer } from "../../core/pipeline.js";
import type { Services } from "../../core/types.js";
import type { InflightLimiter } from "../limits.js";

/** What a compat adapter may use: the same scorer, limits and services as the native routes. */
export interface CompatDeps {
  scorer: Scorer;
  limiter: InflightLimiter;
  config: Config;
  services: Services;
  /** The JSON body parser with the configured size cap. */
  json: RequestHandler;
  log: Logger;
}
