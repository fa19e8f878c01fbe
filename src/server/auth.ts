/**
 * Optional API-key auth: with ASSAY_API_KEYS set, every route after this needs a key, sent as
 * `Authorization: Bearer <key>` or, for the drop-in routes whose trainers cannot send a header
 * (OpenRLHF's --reward.remote_url, verl's sandbox_fusion url, NeMo-Gym, verl's MCP server config), in the path:
 * `/k/<key>/get_reward`. The key leaves the URL before anything logs it (keyFromPath runs first)
 * and is compared in constant time, as the header's is.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Request, RequestHandler } from "express";
import { HttpError } from "./errors.js";
import type { Metrics } from "./metrics.js";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Routes that take the key in the path: the drop-ins, whose trainers send no headers. */
export const KEY_IN_PATH_ROUTES: ReadonlySet<string> = new Set(["/get_reward", "/run_code", "/mcp", "/run_jupyter", "/seed_session", "/stateful_python_code_exec", "/close_session", "/verify", "/aggregate_metrics"]);

const PATH_KEY = /^\/k\/([^/?#]{1,512})(\/[^?#]*)(\?.*)?$/s;
const keyOf = new WeakMap<Request, string>();

/**
 * Takes `/k/<key>` off the front of a drop-in route's URL and keeps the key for bearerAuth, so
 * the request logger, the router and the error messages only ever see `/get_reward`. Runs
 * before the request logger. A `/k/<key>/...` URL for any other route 404s, its key masked too.
 */
export function keyFromPath(): RequestHandler {
  return (req, _res, next) => {
    const m = req.url.startsWith("/k/") ? PATH_KEY.exec(req.url) : null;
    // a trailing slash, as the router itself takes it (`/k/<key>/get_reward/` in a trainer's URL)
    if (m && KEY_IN_PATH_ROUTES.has(m[2]!.length > 1 && m[2]!.endsWith("/") ? m[2]!.slice(0, -1) : m[2]!)) {
      let key: string;
      try {
        key = decodeURIComponent(m[1]!);
      } catch {
        key = m[1]!;
      }
      keyOf.set(req, key);
      req.url = req.originalUrl = m[2]! + (m[3] ?? "");
      return next();
    }
    const masked = maskKeyPath(req.url);
    if (masked !== req.url) req.url = req.originalUrl = masked; // it 404s, and the key is not logged
    next();
  };
}

/**
 * Percent-decodes until nothing changes (a few rounds at most: `%252f` is `%2f` is `/`), leaving
 * malformed escapes as they are. Only for finding keys: what is served is never decoded twice.
 */
export function decodeAll(s: string): string {
  for (let i = 0; i < 4 && s.includes("%"); i++) {
    const next = Buffer.from(s.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))), "latin1").toString("utf8");
    if (next === s) break;
    s = next;
  }
  return s;
}

/**
 * A URL shaped like a key in the path that is not served as one (another route, an encoded
 * slash ending the key, `/K/`, `/%6b/`, `//k/`): everything that could hold the key is masked.
 * `/k/<key>/<rest>` keeps its rest (what the 404 names); any other spelling keeps nothing.
 */
function maskKeyPath(url: string): string {
  const q = url.indexOf("?");
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? "" : url.slice(q);
  if (!/^\/+k\//i.test(decodeAll(path))) return url;
  const literal = /^\/k\/[^/]+(\/.*)?$/s.exec(path);
  return literal ? "/k/(key)" + (literal[1] ?? "") + query : "/k/(key)/(withheld)";
}

/**
 * The URL as the request log writes it: when any configured key appears in it, in any
 * percent-encoding, the log gets the decoded URL with each key replaced by `(key)`.
 */
export function loggedUrl(url: string, keys: readonly string[]): string {
  if (keys.length === 0) return url;
  const decoded = decodeAll(url);
  let out = decoded;
  for (const k of keys) if (k && out.includes(k)) out = out.split(k).join("(key)");
  return out === decoded ? url : out;
}

/**
 * Who is calling, for what a caller owns (interpreter sessions): a digest of the API key the
 * request presented (header or path), never the key itself; undefined with no keys configured
 * (then every caller is the same one). Call it only behind bearerAuth.
 */
export function callerOf(req: Request, keys: readonly string[]): string | undefined {
  if (keys.length === 0) return undefined;
  const key = keyOf.get(req) ?? /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
  return key === undefined ? undefined : "key:" + digest(key).toString("hex").slice(0, 16);
}

export function bearerAuth(keys: string[], _metrics: Metrics): RequestHandler {
  if (keys.length === 0) return (_req, _res, next) => next();
  const digests = keys.map(digest);
  const accepted = (key: string) => {
    const d = digest(key);
    // Compare against every key in constant time so timing does not reveal a prefix match.
    let ok = false;
    for (const k of digests) ok = timingSafeEqual(d, k) || ok;
    return ok;
  };
  return (req, _res, next) => {
    const inPath = keyOf.get(req);
    if (inPath !== undefined) {
      if (!accepted(inPath)) return next(new HttpError(401, "API key in the URL (/k/<key>/...) not accepted; check ASSAY_API_KEYS on the server"));
      return next();
    }
    const header = req.headers.authorization ?? "";
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) {
      return next(new HttpError(401, "missing API key: send the header 'Authorization: Bearer <key>' (drop-in routes also take /k/<key>/<route>)", undefined, { "WWW-Authenticate": "Bearer" }));
    }
    if (!accepted(m[1]!)) return next(new HttpError(401, "API key not accepted; check ASSAY_API_KEYS on the server", undefined, { "WWW-Authenticate": "Bearer" }));
    next();
  };
}
