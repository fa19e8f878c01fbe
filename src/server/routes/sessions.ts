/**
 * Code-interpreter sessions over HTTP: `POST /sessions`, `GET /sessions`, `GET /sessions/{id}`,
 * `POST /sessions/{id}/exec`, `DELETE /sessions/{id}`. Thin over the session service
 * (src/sessions): it maps the service's errors to statuses and knows nothing of sandboxes.
 * Admission as for code runs: the in-flight cap (429 + Retry-After), and a creation that cannot
 * get a sandbox within ASSAY_SESSION_MAX_WAIT_MS is refused (429), never started late.
 */
import { Router, type Request } from "express";
import type { Wire } from "../../core/types.js";
import { HttpError } from "../errors.js";
import { clientGone, type RouteDeps } from "../http.js";
import { SessionBusyError, SessionNotFoundError, SessionRequestError, type SessionService } from "../../sessions/types.js";
import type { Runtime } from "../../core/runtime.js";

/** The session service, or 503 saying what to start or build. */
export async function sessionService(runtime: Runtime): Promise<SessionService> {
  try {
    return (await runtime.services.sessions()).sessions;
  } catch (e) {
    throw new HttpError(503, (e as Error).message);
  }
}

/** The service's errors as HTTP errors (they already say what to change). */
export function sessionHttpError(e: unknown, retryAfterS: number): unknown {
  if (e instanceof SessionNotFoundError) return new HttpError(404, e.message, "id");
  if (e instanceof SessionRequestError) return new HttpError(400, e.message);
  if (e instanceof SessionBusyError) {
    if (e.message.includes("running another exec")) return new HttpError(409, e.message);
    return new HttpError(429, e.message, undefined, { "Retry-After": String(Math.max(1, e.retryAfterS ?? retryAfterS)) });
  }
  return e;
}

export function sessionRoutes({ runtime, body: opening, admit }: RouteDeps): Router {
  const r = Router();
  const retry = runtime.config.retryAfterS;
  const guarded = async <T>(f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      throw sessionHttpError(e, retry);
    }
  };
  const id = (req: Request) => String(req.params.id);
  r.post("/sessions", opening("SessionCreate"), async (req, res) => {
    const b = req.body as Wire["SessionCreate"];
    const release = admit(1);
    try {
      const svc = await sessionService(runtime);
      const info = await guarded(() => svc.create({ language: b.language, limits: b.limits, files: b.files, labels: b.labels, signal: clientGone(req, res) }));
      res.status(201).json(info);
    } finally {
      release();
    }
  });
  r.get("/sessions", async (_req, res) => {
    const svc = await sessionService(runtime);
    res.json({ sessions: svc.list(), stats: svc.stats() });
  });
  r.get("/sessions/:id", async (req, res) => {
    const svc = await sessionService(runtime);
    res.json(await guarded(async () => svc.get(id(req))));
  });
  r.delete("/sessions/:id", async (req, res) => {
    const svc = await sessionService(runtime);
    res.json(await guarded(() => svc.close(id(req))));
  });
  r.post("/sessions/:id/exec", opening("SessionExec"), async (req, res) => {
    const b = req.body as Wire["SessionExec"];
    const release = admit(1);
    try {
      const svc = await sessionService(runtime);
      res.json(await guarded(() => svc.exec(id(req), { code: b.code, cpuMs: b.cpuMs, wallMs: b.wallMs })));
    } finally {
      release();
    }
  });
  return r;
}
