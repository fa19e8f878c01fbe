/**
 * No cross-site writes. A page on another origin can make a browser send a "simple" request —
 * a POST whose body is text/plain, a form or multipart — without asking first, carrying
 * whatever the user's network can reach (a server on loopback with no keys, the default).
 * Two checks close that:
 *
 * - `sameOriginWrites`: a state-changing request (POST/PUT/PATCH/DELETE) that carries an
 *   `Origin` header is accepted only from the server's own origin (the Host it was reached
 *   at, so the UI and /docs work wherever they are served from) or an origin in
 *   ASSAY_ALLOWED_ORIGINS (which also get CORS answers, preflights included). Clients that are
 *   not browsers (curl, requests, the trainers) send no Origin and are not affected.
 * - `declaredBodyTypes`: a request body must have a Content-Type that openapi.yaml declares for
 *   that operation (application/json almost everywhere; application/x-ndjson and multipart only
 *   where the contract says so, e.g. POST /jobs), else 415 naming what to send. A text/plain or
 *   form body is never parsed as JSON.
 */
import type { Request, RequestHandler } from "express";
import { OPENAPI } from "../core/contract.js";
import { HttpError } from "./errors.js";

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** What a browser would put in `Origin` for `host` (scheme dropped: the Host header has none). */
function hostOf(origin: string): string | null {
  try {
    const u = new URL(origin);
    return u.protocol === "http:" || u.protocol === "https:" ? u.host.toLowerCase() : null;
  } catch {
    return null;
  }
}

/** The Host a request was sent to, as URL would print it (default ports dropped). */
function requestHost(req: Request): string | null {
  const h = req.headers.host;
  if (!h) return null;
  try {
    return new URL(`http://${h}`).host.toLowerCase();
  } catch {
    return null;
  }
}

/** Normalises ASSAY_ALLOWED_ORIGINS entries: `*`, `null`, or scheme://host[:port]. */
export function normaliseOrigin(entry: string): string {
  if (entry === "*" || entry === "null") return entry;
  return new URL(entry).origin.toLowerCase();
}

export function sameOriginWrites(allowed: readonly string[]): RequestHandler {
  const list = new Set(allowed.map(normaliseOrigin));
  const any = list.has("*");
  const listed = (origin: string) => {
    if (any) return true;
    if (origin === "null") return list.has("null");
    try {
      return list.has(new URL(origin).origin.toLowerCase());
    } catch {
      return false;
    }
  };
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin === undefined) return next();
    const host = requestHost(req);
    const same = host !== null && hostOf(origin) === host;
    const fromList = !same && listed(origin);
    if (fromList) {
      // CORS for the listed origins, so a page there can call the API with JSON and keys.
      res.setHeader("Access-Control-Allow-Origin", origin);
      res.setHeader("Access-Control-Expose-Headers", "X-Request-Id, Retry-After, Location");
      res.append("Vary", "Origin");
      if (req.method === "OPTIONS" && req.headers["access-control-request-method"]) {
        res.setHeader("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE");
        res.setHeader("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Request-Id");
        res.setHeader("Access-Control-Max-Age", "600");
        res.status(204).end();
        return;
      }
    }
    if (!STATE_CHANGING.has(req.method) || same || fromList) return next();
    const shown = JSON.stringify(origin.slice(0, 200));
    next(
      new HttpError(
        403,
        `cross-origin ${req.method} from ${shown} refused: this server takes writes only from its own origin (${host ?? "its Host"}) and from the origins in ASSAY_ALLOWED_ORIGINS; add ${shown} there (comma-separated) to allow that page`,
        "origin",
      ),
    );
  };
}

/** True when the request carries a body (as type-is decides: a length above 0, or chunked). */
function hasBody(req: Request): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const len = req.headers["content-length"];
  return len !== undefined && len !== "0";
}

interface Operation {
  method: string;
  path: RegExp;
  template: string;
  types: string[];
}

/** Every operation of openapi.yaml with the request body types it declares (none: it takes no body). */
export function operations(doc: Record<string, any> = OPENAPI): Operation[] {
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries((doc.paths ?? {}) as Record<string, Record<string, unknown>>)) {
    const path = new RegExp("^" + template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+") + "/?$");
    for (const [method, op] of Object.entries(item)) {
      if (!STATE_CHANGING.has(method.toUpperCase())) continue;
      const body = (op as { requestBody?: { content?: Record<string, unknown> } }).requestBody;
      ops.push({ method: method.toUpperCase(), path, template, types: Object.keys(body?.content ?? {}) });
    }
  }
  return ops;
}

export function declaredBodyTypes(ops: Operation[] = operations()): RequestHandler {
  // Paths without a parameter are looked up by name (POST /reward/batch is not tried against
  // fifty patterns on every request); the rest in order, as before.
  const exact = new Map<string, Operation>();
  for (const o of ops) if (!o.template.includes("{")) exact.set(`${o.method} ${o.template}`, o);
  return (req, _res, next) => {
    if (!STATE_CHANGING.has(req.method) || !hasBody(req)) return next();
    const path = req.path;
    const op = exact.get(`${req.method} ${path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path}`) ?? ops.find((o) => o.method === req.method && o.path.test(path));
    if (!op) return next(); // not a route: the 404 says so
    // An operation that takes no body tolerates an (ignored) JSON one, e.g. requests.post(url, json={}).
    const types = op.types.length ? op.types : ["application/json"];
    // The common case, a bare `application/json`, without parsing the header.
    if (req.headers["content-type"] === "application/json" && types.includes("application/json")) return next();
    if (req.is(types)) return next();
    const got = req.headers["content-type"] ? JSON.stringify(req.headers["content-type"].slice(0, 100)) : "no Content-Type";
    const send = types.map((t) => `Content-Type: ${t}`).join(" or ");
    next(new HttpError(415, `${req.method} ${op.template} takes a body sent with ${send} (got ${got}); with curl add -H '${send.split(" or ")[0]}'`, "content-type"));
  };
}
