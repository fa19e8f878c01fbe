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
 * Queueing knows the caller's budget, from what the request carries: verl's client
 * (verl/utils/reward_score/sandbox_fusion/utils.py, call_sandbox_api) waits
 * `compile_timeout + run_timeout + API_TIMEOUT` (10 s) for an answer and retries only HTTP 504
 * (three tries, 1 s then 2 s apart); any other status, and its own timeout, score the test -1.
 * So a request waits for a free sandbox for as long as it could still finish inside that budget
 * using its whole limits (`startBy`, below), and only then is answered 504, never run late: a
 * correct program answered after verl gave up would score -1, and one refused early burns verl's
 * three tries in 3 s. A python program runs in the scientific image by default, as
 * SandboxFusion's does (ASSAY_RUN_CODE_PYTHON).
 */
import { Router } from "express";
import type { Wire } from "../../core/types.js";
import { HttpError } from "../errors.js";
import { badFilePath } from "../../core/file-paths.js";
import { clientGone, type RouteDeps } from "../http.js";
import type { RunOutcome, Sandbox } from "../../../sandbox/types.js";
import { canonicalLanguage, isCompiled, languageNames } from "../../../sandbox/languages.js";
import { RunCodeQueue } from "../run-code-queue.js";
import type { Runtime } from "../../core/runtime.js";

/** The request after validation: openapi.yaml's defaults (language, timeouts) are filled in. */
export type RunCodeBody = Wire["RunCodeRequest"] & Required<Pick<Wire["RunCodeRequest"], "language" | "compile_timeout" | "run_timeout" | "memory_limit_MB">>;

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
 * The latest a run may start (epoch ms) and still be answered inside its caller's timeout:
 * `compile_timeout + run_timeout` plus the caller's slack (ASSAY_RUN_CODE_CALLER_SLACK_MS: verl's
 * API_TIMEOUT less the time for starting and answering), less what the run itself may take at
 * most (its run limit, and its compile limit where the language compiles). An interpreted program
 * never spends its compile_timeout, so it may wait that much longer. A run that started in time
 * but is still going at the caller's deadline (the sandbox times a program by its own work, so on
 * a loaded host its limits take longer than the caller's clock) is cut there and answered 504.
 */
export function runCodeStartBy(arrivedMs: number, body: { language: string; compile_timeout: number; run_timeout: number }, slackMs: number): number {
  return runCodeAnswerBy(arrivedMs, body, slackMs) - Math.round(body.run_timeout * 1000) - (isCompiled(body.language) ? Math.round(body.compile_timeout * 1000) : 0);
}

/** The caller's deadline less the time for answering (epoch ms): `compile_timeout + run_timeout` + the slack after arrival. */
export function runCodeAnswerBy(arrivedMs: number, body: { compile_timeout: number; run_timeout: number }, slackMs: number): number {
  return arrivedMs + Math.round(body.compile_timeout * 1000) + Math.round(body.run_timeout * 1000) + slackMs;
}

/**
 * Overload on /run_code: 504 (verl's client retries a 504 and nothing else; a 429 would score
 * the test -1 at once), with Retry-After for clients that read it.
 */
function busy(why: string, retryAfterS: number): HttpError {
  return new HttpError(
    504,
    `${why}, so this program could not finish within the caller's timeout; retry it (verl retries a 504). Raise ASSAY_SANDBOX_POOL, or lower sandbox_fusion.max_concurrent (see the README's verl section) if this is frequent`,
    undefined,
    { "Retry-After": String(Math.max(1, retryAfterS)) },
  );
}

/** A /run_code request after validation, with what the runner needs to know about its caller. */
export interface RunCodeCall {
  body: RunCodeBody;
  /** When the request arrived (epoch ms): its caller's clock starts there. */
  arrived: number;
  /** Aborted when the caller has gone (its answer is then never written). */
  gone: AbortSignal;
  log?: { warn(msg: string): void };
}

/**
 * What /run_code does once a request is admitted, as a function: the MCP endpoint's `run_code`
 * tool calls the same one, so both share one queue (in order of expected work, run-code-queue.ts)
 * in front of the sandbox. Resolves to SandboxFusion's response, or null when the caller has gone;
 * throws HttpError 400 (unknown language) or 504 (busy past the caller's budget).
 */
export type RunCode = (call: RunCodeCall) => Promise<ReturnType<typeof toSandboxFusion> | null>;

/** Base64 (either alphabet), whitespace and padding allowed: what Buffer decodes without dropping characters. */
const BASE64 = /^[A-Za-z0-9+/_\-\s]*(?:=\s*){0,2}$/;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * SandboxFusion's `files` (path -> base64) as the sandbox's text files; 400 naming the file for
 * a path the sandbox cannot write (badFilePath: verl would score the SandboxError that came back
 * as a machinery failure), content that is not base64 (Buffer drops what it cannot read), or
 * bytes that are not UTF-8: the sandbox writes text, and a binary file would reach the program
 * with its bytes changed. Null entries are skipped, as SandboxFusion skips them.
 */
export function runCodeFiles(given: Record<string, string | null> | undefined): Record<string, string> {
  const files: Record<string, string> = {};
  const paths = new Set(Object.keys(given ?? {}));
  for (const [name, b64] of Object.entries(given ?? {})) {
    if (b64 === null || b64 === undefined) continue;
    const label = JSON.stringify(name.slice(0, 80));
    const bad = badFilePath(name, paths, "the program's directory");
    if (bad) throw new HttpError(400, `files: the path ${label} ${bad}`, "files");
    if (!BASE64.test(b64)) throw new HttpError(400, `files: ${label} is not base64`, "files");
    try {
      files[name] = UTF8.decode(Buffer.from(b64, "base64"));
    } catch {
      throw new HttpError(400, `files: ${label} is not UTF-8 text; binary files are not supported (the sandbox writes files as text, so their bytes would change)`, "files");
    }
  }
  return files;
}

const runners = new WeakMap<Runtime, RunCode>();

/** The runtime's one RunCode (made on first use). */
export function runCodeOf(runtime: Runtime): RunCode {
  let run = runners.get(runtime);
  if (!run) runners.set(runtime, (run = makeRunCode(runtime)));
  return run;
}

function makeRunCode(runtime: Runtime): RunCode {
  const { runCodeSlackMs: slackMs, runCodePython } = runtime.config.sandbox;
  let warnedNoSci = false;
  const queue = new RunCodeQueue();
  return async ({ body, arrived, gone, log }) => {
    let language = canonicalLanguage(body.language);
    if (!language) throw new HttpError(400, `language ${JSON.stringify(body.language)} is not supported; use one of ${languageNames().join(", ")}`, "language");
    const startBy = runCodeStartBy(arrived, { ...body, language }, slackMs);
    const answerBy = runCodeAnswerBy(arrived, body, slackMs);
    const files = runCodeFiles(body.files);
    let sandbox: Sandbox;
    try {
      sandbox = await runtime.services.sandbox();
    } catch (e) {
      return { status: "SandboxError", message: (e as Error).message, compile_result: null, run_result: null, executor_pod_name: null, files: {} };
    }
    if (language === "python" && runCodePython === "python-sci") {
      if (sandbox.languages.includes("python-sci")) language = "python-sci";
      else if (!warnedNoSci) {
        warnedNoSci = true;
        log?.warn("/run_code: the python-sci image is not built, so python programs run in the lean image without NumPy; build it with `npx assay sandbox build --lang python-sci` (or set ASSAY_RUN_CODE_PYTHON=python to silence this)");
      }
    }
    // No refusal from the backlog's estimate (it counts loops' whole limits, and a refusal made
    // early spends verl's three tries in 3 s): the request waits for its turn until startBy,
    // in order of expected work (run-code-queue.ts), and only then is answered 504.
    const late = AbortSignal.timeout(Math.max(1, answerBy - Date.now()));
    const signal = AbortSignal.any([gone, late]);
    const slots = sandbox.load?.().slots || runtime.config.sandbox.poolSize || 4;
    const keys = RunCodeQueue.keys(language, body.code, JSON.stringify([body.stdin ?? "", body.files ?? {}, body.compile_timeout, body.run_timeout, body.memory_limit_MB]));
    const turn = await queue.take(language, slots, keys, startBy, signal);
    if (!turn) {
      if (gone.aborted) return null;
      throw busy(`every sandbox stayed busy for ${Math.round((Date.now() - arrived) / 1000)} s`, runtime.config.retryAfterS);
    }
    const runMs = Math.round(body.run_timeout * 1000);
    // The turn ends when the run does (its slot is busy until then), even where the answer,
    // a 504 at the caller's deadline, has gone before: killing a container on a loaded host
    // can take seconds, and the caller's clock does not wait for it.
    const running = sandbox.run({
      language,
      code: body.code,
      stdin: body.stdin ?? "",
      files,
      compileWallMs: Math.round(body.compile_timeout * 1000),
      limits: { wallMs: runMs, cpuMs: runMs, ...(body.memory_limit_MB > 0 ? { memoryMb: body.memory_limit_MB } : {}) },
      signal,
      startBy,
    });
    // Cut at the caller's deadline: it ran long, so its other cases wait behind quick ones.
    void running.then((o) => turn.end(o.status === "time_limit" || late.aborted), () => turn.end(late.aborted));
    const cut = new Promise<null>((resolve) => {
      if (late.aborted) resolve(null);
      else late.addEventListener("abort", () => resolve(null), { once: true });
    });
    const outcome = await Promise.race([running, cut]);
    if (gone.aborted) return null;
    if (outcome === null || (late.aborted && outcome.status === "sandbox_error")) throw busy(`the program was still running ${Math.round((Date.now() - arrived) / 1000)} s after arrival (the sandbox counts its own time, and this host is loaded), so it was stopped before the caller's timeout`, runtime.config.retryAfterS);
    if (outcome.status === "not_started") throw busy(`every sandbox stayed busy for ${Math.round((Date.now() - arrived) / 1000)} s`, runtime.config.retryAfterS);
    const out = toSandboxFusion(outcome);
    if (body.fetch_files?.length) out.message = `${out.message ? out.message + "; " : ""}fetch_files is not supported: no files are returned`;
    return out;
  };
}

export function sandboxFusionRoutes({ runtime, body: opening, admit }: RouteDeps): Router {
  const r = Router();
  const run = runCodeOf(runtime);
  r.post("/run_code", (req, _res, next) => {
    arrivedAt.set(req, Date.now());
    next();
  }, opening("RunCodeRequest"), async (req, res) => {
    const body = req.body as RunCodeBody;
    const arrived = arrivedAt.get(req) ?? Date.now();
    let release: () => void;
    try {
      release = admit(1);
    } catch (e) {
      // The in-flight cap's 429 would be final for verl (-1); a 504 is retried.
      if (e instanceof HttpError && e.status === 429) throw busy(`the server is busy (${e.message})`, runtime.config.retryAfterS);
      throw e;
    }
    try {
      const out = await run({ body, arrived, gone: clientGone(req, res), log: req.log });
      if (out) res.json(out);
    } finally {
      release();
    }
  });
  return r;
}
