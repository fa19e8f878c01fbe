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
import { SessionBusyError, SessionNotFoundError, SessionRequestError, SessionUnavailableError, type SessionService } from "../../sessions/types.js";
import type { Runtime } from "../../core/runtime.js";
import { callerOf } from "../auth.js";

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
  if (e instanceof SessionUnavailableError) return new HttpError(503, e.message);
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
  // With ASSAY_API_KEYS, a session belongs to the key that made it: another key's list leaves it
  // out and its get, exec and close are 404 (as MCP's are). Without keys, undefined: one tenant.
  const owner = (req: Request) => callerOf(req, runtime.config.apiKeys);
  r.post("/sessions", opening("SessionCreate"), async (req, res) => {
    const b = req.body as Wire["SessionCreate"];
    const release = admit(1);
    try {
      const svc = await sessionService(runtime);
      const gone = clientGone(req, res);
      const info = await guarded(() => svc.create({ language: b.language, limits: b.limits, files: b.files, labels: b.labels, owner: owner(req), signal: gone }));
      // a client that left while its session started never learns the id: the session would
      // hold a slot of ASSAY_SESSION_MAX until its idle timeout
      if (gone.aborted) await svc.close(info.id).catch(() => {});
      else res.status(201).json(info);
    } finally {
      release();
    }
  });
  r.get("/sessions", async (req, res) => {
    const svc = await sessionService(runtime);
    res.json({ sessions: svc.list(owner(req)), stats: svc.stats() });
  });
  r.get("/sessions/:id", async (req, res) => {
    const svc = await sessionService(runtime);
    res.json(await guarded(async () => svc.get(id(req), owner(req))));
  });
  r.delete("/sessions/:id", async (req, res) => {
    const svc = await sessionService(runtime);
    res.json(await guarded(() => svc.close(id(req), owner(req))));
  });
  r.post("/sessions/:id/exec", opening("SessionExec"), async (req, res) => {
    const b = req.body as Wire["SessionExec"];
    const release = admit(1);
    try {
      const svc = await sessionService(runtime);
      res.json(await guarded(() => svc.exec(id(req), { code: b.code, cpuMs: b.cpuMs, wallMs: b.wallMs, owner: owner(req) })));
    } finally {
      release();
    }
  });
  return r;
}

type JupyterBody = { cells: string[]; cell_timeout?: number; total_timeout?: number; memory_limit_MB?: number; kernel?: string; files?: Record<string, string>; fetch_files?: string[] };

/**
 * SandboxFusion's `POST /run_jupyter`: the cells run in order in one kernel (an Assay Python
 * session made for the request and closed after it). Request and response as SandboxFusion's
 * own server has them (bytedance/SandboxFusion, sandbox/server/sandbox_api.py
 * `run_jupyter_handler` and `RunJupyterResponse`; sandbox/runners/types.py `RunJupyterRequest`,
 * `CellRunResult`; runtime/jupyter/main.py: each cell's stdout, stderr, `display` (the
 * execute_result's data, `{"text/plain": repr}`) and `error` (`{ename, evalue, traceback}`)).
 * A cell that raises does not stop the next, as in a Jupyter kernel; a cell past its time
 * (`cell_timeout`, else what is left of `total_timeout`) ends the kernel: status "Failed" with
 * the driver's TimeLimitExceeded, as SandboxFusion answers a driver that ran out of time.
 */
export function jupyterRoutes({ runtime, body: opening, admit }: RouteDeps): Router {
  const r = Router();
  const retry = runtime.config.retryAfterS;
  r.post("/run_jupyter", opening("RunJupyterRequest"), async (req, res) => {
    const b = req.body as JupyterBody;
    const release = admit(1);
    const t0 = Date.now();
    const totalMs = Math.max(1, Math.round((b.total_timeout ?? 45) * 1000));
    const files: Record<string, string> = {};
    for (const [name, b64] of Object.entries(b.files ?? {})) files[name] = Buffer.from(b64, "base64").toString("utf8");
    try {
      const svc = await sessionService(runtime);
      const limits: Record<string, number> = { lifetimeMs: Math.min(svc.maxLimits.lifetimeMs, totalMs + 30_000), wallMsPerExec: Math.min(svc.maxLimits.wallMsPerExec, totalMs), cpuMsPerExec: Math.min(svc.maxLimits.cpuMsPerExec, totalMs) };
      if (b.memory_limit_MB && b.memory_limit_MB > 0) limits.memoryMb = Math.min(svc.maxLimits.memoryMb, b.memory_limit_MB);
      let info;
      try {
        info = await svc.create({ language: "python", limits, files, owner: callerOf(req, runtime.config.apiKeys), signal: clientGone(req, res) });
      } catch (e) {
        throw sessionHttpError(e, retry);
      }
      const cells: { stdout: string; stderr: string; display: Record<string, string>[]; error: { ename: string; evalue: string; traceback: string[] }[] }[] = [];
      let timedOut = false;
      let failed: string | null = null;
      try {
        for (const code of b.cells) {
          const left = totalMs - (Date.now() - t0);
          const cellMs = b.cell_timeout && b.cell_timeout > 0 ? Math.min(left, Math.round(b.cell_timeout * 1000)) : left;
          if (cellMs <= 0) {
            timedOut = true;
            break;
          }
          const x = await svc.exec(info.id, { code, wallMs: cellMs, cpuMs: cellMs });
          cells.push({
            stdout: x.stdout,
            stderr: x.stderr,
            display: x.value !== null ? [{ "text/plain": x.value }] : [],
            error: x.error && x.status === "error" ? [{ ename: x.error.name, evalue: x.error.message, traceback: x.error.traceback.split("\n").filter(Boolean) }] : [],
          });
          if (x.status === "timeout") {
            timedOut = true;
            break;
          }
          if (x.status !== "ok" && x.status !== "error") {
            failed = x.error?.message ?? x.status;
            break;
          }
        }
      } finally {
        await svc.close(info.id).catch(() => {});
      }
      const driver = { status: timedOut ? "TimeLimitExceeded" : "Finished", execution_time: (Date.now() - t0) / 1000, return_code: timedOut ? null : failed ? 1 : 0, stdout: "", stderr: failed ?? "" };
      res.json({ status: timedOut || failed ? "Failed" : "Success", message: timedOut ? "a cell ran past its time limit" : (failed ?? ""), driver, cells, executor_pod_name: null, files: {} });
    } finally {
      release();
    }
  });
  return r;
}
