/** Optional bearer-token auth: with ASSAY_API_KEYS set, every route after this needs a key. */
import { createHash, timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import { HttpError } from "./errors.js";
import type { Metrics } from "./metrics.js";

const digest = (s: string) => createHash("sha256").update(s).digest();

export function bearerAuth(keys: string[], _metrics: Metrics): RequestHandler {
  if (keys.length === 0) return (_req, _res, next) => next();
  const digests = keys.map(digest);
  return (req, _res, next) => {
    const header = req.headers.authorization ?? "";
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) {
      return next(new HttpError(401, "missing API key: send the header 'Authorization: Bearer <key>'", undefined, { "WWW-Authenticate": "Bearer" }));
    }
    const d = digest(m[1]);
    // Compare against every key in constant time so timing does not reveal a prefix match.
    let ok = false;
    for (const k of digests) ok = timingSafeEqual(d, k) || ok;
    if (!ok) return next(new HttpError(401, "API key not accepted; check ASSAY_API_KEYS on the server", undefined, { "WWW-Authenticate": "Bearer" }));
    next();
  };
}
