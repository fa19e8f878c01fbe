/**
 * SandboxFusion's `POST /run_code` (what verl's sandbox_fusion reward calls): the same request
 * and response fields, served by Assay's sandbox directly (this route is not a verifier).
 *
 * status: "Success" (compiled if needed, ran to its end, exit code 0), "Failed" (compile error,
 * non-zero exit, time limit, crash) or "SandboxError" (the machinery failed). run_result.status:
 * "Finished" (a program killed by a signal too, with a negative return_code such as -9, as
 * SandboxFusion reports it; memory and output caps kill with SIGKILL) or "TimeLimitExceeded".
 * SandboxFusion keeps "Error" for its own failures, so it is never sent for what a program did.
 *
 * Admission knows the caller's budget: verl's client (verl/utils/reward_score/sandbox_fusion/
 * utils.py, call_sandbox_api) waits compile_timeout + run_timeout + 10 s for an answer and
 * retries only HTTP 504. A request that cannot start within ASSAY_RUN_CODE_MAX_WAIT_MS (that
 * 10 s margin less a safety margin) because every sandbox is busy is answered 504 at once, never
 * run late: a correct program answered after verl gave up would score 0.
 */
import { Router } from "express";
import type { Wire } from "../../core/types.js";
import { HttpError } from "../errors.js";
import { clientGone, type RouteDeps } from "../http.js";
import type { RunOutcome, Sandbox } from "../../../sandbox/types.js";
import { canonicalLanguage, languageNames } from "../../../sandbox/languages.js";

/** The request after validation: openapi.yaml's defaults (language, timeouts) are filled in. */
type RunCodeBody = Wire["RunCodeRequest"] & Required<Pick<Wire["RunCodeRequest"], "language" | "compile_timeout" | "run_timeout" | "memory_limit_MB">>;

type CommandStatus = Wire["CommandRunResult"]["status"];
type CommandRunResult = Wire["CommandRunResult"];

const SIGNALS: Record<string, number> = { SIGKILL: 9, SIGSEGV: 11, SIGABRT: 6, SIGFPE: 8, SIGBUS: 7, SIGXCPU: 24, SIGTERM: 15, SIGILL: 4 };

function returnCode(o: { exitCode: number | null; signal: string | null }): number | null {
  if (o.exitCode !== null) return o.exitCode;
  if (o.signal) return -(SIGNALS[o.signal] ?? 1); // Python's subprocess convention, as SandboxFusion reports it
  return null;
}

/** What the program was killed by, as a negative return code: its signal, else SIGKILL (our memory
 * and output caps kill with it). */
function killedCode(o: { exitCode: number | null; signal: string | null }): number {
  const rc = returnCode(o);
  return rc !== null && rc < 0 ? rc : -SIGNALS.SIGKILL!;
}

export function toSandboxFusion(o: RunOutcome): Wire["RunCodeResponse"] & { executor_pod_name: null; files: Record<string, string> } {
  const base = { executor_pod_name: null, files: {} as Record<string, string> };
  if (o.status === "sandbox_error" || o.status === "not_started") {
    return { ...base, status: "SandboxError", message: o.message ?? "the sandbox failed", compile_result: null, run_result: null };
  }
  let compile_result: CommandRunResult | null = null;
  if (o.compile) {
    const tle = o.compile.status === "time_limit";
    compile_result = {
      status: tle ? "TimeLimitExceeded" : "Finished",
      execution_time: Math.round(o.compile.wallMs) / 1000,
      return_code: tle ? null : o.status === "compile_error" ? (o.exitCode ?? 1) : 0,
      stdout: o.compile.stdout,
      stderr: o.compile.stderr,
    };
  }
  if (o.status === "compile_error") {
    return { ...base, status: "Failed", message: "compile error", compile_result, run_result: null };
  }
  // runtime_error, memory_limit, output_limit: the program was killed, which SandboxFusion reports
  // as Finished with a negative return code (verl reads that as a runtime error, -2).
  const status: CommandStatus = o.status === "time_limit" ? "TimeLimitExceeded" : "Finished";
  const run_result: CommandRunResult = {
    status,
    execution_time: Math.round(o.wallMs) / 1000,
    return_code: status === "TimeLimitExceeded" ? null : o.status === "finished" ? returnCode(o) : killedCode(o),
    stdout: o.stdout,
    stderr: o.stderr,
  };
  const ok = status === "Finished" && run_result.return_code === 0;
  const message = ok ? "" : o.status === "finished" ? "" : o.status.replace("_", " ") + (o.message ? `: ${o.message}` : "");
  return { ...base, status: ok ? "Success" : "Failed", message, compile_result, run_result };
}

const arrivedAt = new WeakMap<object, number>();

/**
 * Overload on /run_code: 504 (verl's client retries a 504 and nothing else; a 429 would score
 * the test -1 at once), with Retry-After for clients that read it.
 */
function busy(why: string, overMs: number, retryAfterS: number): HttpError {
  const retry = Math.max(retryAfterS, Math.ceil(overMs / 1000));
  return new HttpError(
    504,
    `${why}, so this program could not finish within the caller's timeout; retry it (verl retries a 504). Raise ASSAY_SANDBOX_POOL or lower sandbox_fusion.max_concurrent if this is frequent`,
    undefined,
    { "Retry-After": String(retry) },
  );
}

export function sandboxFusionRoutes({ runtime, body: opening, admit }: RouteDeps): Router {
  const r = Router();
  const maxWaitMs = runtime.config.sandbox.runCodeMaxWaitMs;
  r.post("/run_code", (req, _res, next) => {
    arrivedAt.set(req, Date.now());
    next();
  }, opening("RunCodeRequest"), async (req, res) => {
    const body = req.body as RunCodeBody;
    const startBy = (arrivedAt.get(req) ?? Date.now()) + maxWaitMs;
    const language = canonicalLanguage(body.language);
    if (!language) throw new HttpError(400, `language ${JSON.stringify(body.language)} is not supported; use one of ${languageNames().join(", ")}`, "language");
    const files: Record<string, string> = {};
    for (const [name, b64] of Object.entries(body.files ?? {})) {
      if (b64 === null || b64 === undefined) continue;
      files[name] = Buffer.from(b64, "base64").toString("utf8");
    }
    const release = admit(1);
    try {
      let sandbox: Sandbox;
      try {
        sandbox = await runtime.services.sandbox();
      } catch (e) {
        res.json({ status: "SandboxError", message: (e as Error).message, compile_result: null, run_result: null, executor_pod_name: null, files: {} });
        return;
      }
      // Refused at once (504, what verl retries) when the backlog says it would not start in time.
      const waitMs = sandbox.load?.().waitMs ?? 0;
      if (waitMs > maxWaitMs) throw busy(`the sandbox's backlog would keep this program waiting about ${Math.round(waitMs / 1000)} s`, waitMs - maxWaitMs, runtime.config.retryAfterS);
      const runMs = Math.round(body.run_timeout * 1000);
      const outcome = await sandbox.run({
        language,
        code: body.code,
        stdin: body.stdin ?? "",
        files,
        compileWallMs: Math.round(body.compile_timeout * 1000),
        limits: { wallMs: runMs, cpuMs: runMs, ...(body.memory_limit_MB > 0 ? { memoryMb: body.memory_limit_MB } : {}) },
        signal: clientGone(req, res),
        startBy,
      });
      if (outcome.status === "not_started") throw busy(`every sandbox stayed busy for ${maxWaitMs} ms`, 0, runtime.config.retryAfterS);
      const out = toSandboxFusion(outcome);
      if (body.fetch_files?.length) out.message = `${out.message ? out.message + "; " : ""}fetch_files is not supported: no files are returned`;
      res.json(out);
    } finally {
      release();
    }
  });
  return r;
}
