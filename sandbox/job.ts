/** Turns a RunRequest into the runner's job (shared by the backends that use runner.py). */
import { createHash } from "node:crypto";
import { DEFAULT_LIMITS, type RunLimits, type RunOutcome, type RunRequest } from "./types.js";
import { LANGUAGES, canonicalLanguage, heapMb, type LanguageSpec } from "./languages.js";
import { hardWallMs, overloadMessage } from "./meter.js";

/**
 * Limits as the runner applies them: `addressSpaceMb` is the RLIMIT_AS (0: none), memoryMb the
 * cgroup's share, `hardWallMs` the plain wall-time bound whatever the load (sandbox/meter.ts).
 */
export type JobLimits = RunLimits & { nproc?: number; addressSpaceMb: number; hardWallMs: number };

export interface RunnerJob {
  id: number;
  argv: string[];
  /** Added to the runner's fixed environment (PATH, LANG, HOME and TMPDIR = the scratch). */
  env: Record<string, string>;
  files: Record<string, string>;
  stdin: string;
  limits: JobLimits;
  /** What the runtime prints when it runs out of memory (with a non-zero exit: memory_limit). */
  oom: string[];
  compile?: { argv: string[]; env: Record<string, string>; output: string; key: string; limits: JobLimits };
  /** The compile step alone, its output kept in the runner's cache (a warm bwrap slot's first test of a compiled item). */
  compileOnly?: boolean;
  /** Python: the modules the warm interpreter imports when it starts (the first Python run of a container or slot). */
  preload?: string[];
  /**
   * Send back where the run's time went inside the runner (`phases`: [name, ms since the job was
   * read]), and the run's process's own minor page faults and CPU ms from the moment it had the
   * run (`faults`, `runCpuMs`); bench/code.ts --latency, bench/code-warm-ab.ts.
   */
  phases?: boolean;
}

export function limitsOf(req: RunRequest, cap?: Partial<RunLimits>): RunLimits {
  const l = { ...DEFAULT_LIMITS, ...stripUndefined(req.limits ?? {}) };
  if (cap?.memoryMb) l.memoryMb = Math.min(l.memoryMb, cap.memoryMb);
  if (cap?.pids) l.pids = Math.min(l.pids, cap.pids);
  return l;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
}

export function specOf(language: string): LanguageSpec | undefined {
  const c = canonicalLanguage(language);
  return c ? LANGUAGES[c] : undefined;
}

/** String.prototype.toWellFormed (Node 20 has it; TypeScript's ES2022 lib does not declare it). */
const wellFormed = (s: string): string => (s as string & { toWellFormed(): string }).toWellFormed();

/** Fills {memoryMb}, {heapMb} and {main} in a spec's argument or environment template. */
function fill(t: string, vars: Record<string, string>): string {
  return t.replace(/\{(memoryMb|heapMb|main)\}/g, (_, k: string) => vars[k] ?? "");
}

let seq = 0;
/**
 * The runner's job. Texts are made well-formed UTF-16 first (a lone surrogate becomes U+FFFD):
 * the runner writes them as UTF-8, which a lone surrogate cannot be, and the failure was once
 * the machinery's (null) instead of the program's.
 */
export function makeJob(req: RunRequest, spec: LanguageSpec, limits: RunLimits, preload?: readonly string[]): RunnerJob {
  const code = wellFormed(req.code);
  const vars = { memoryMb: String(limits.memoryMb), heapMb: String(heapMb(limits.memoryMb)), main: spec.main?.(code) ?? "" };
  const env = (e?: Record<string, string>) => Object.fromEntries(Object.entries(e ?? {}).map(([k, v]) => [k, fill(v, vars)]));
  const files: Record<string, string> = {};
  for (const [name, text] of Object.entries(req.files ?? {})) files[wellFormed(name)] = wellFormed(text);
  const file = fill(spec.file, vars);
  files[file] = code;
  const job: RunnerJob = {
    id: ++seq,
    argv: spec.argv.map((a) => fill(a, vars)),
    env: env(spec.env),
    files,
    stdin: wellFormed(req.stdin ?? ""),
    limits: { ...limits, addressSpaceMb: spec.addressSpaceMb ? spec.addressSpaceMb(limits.memoryMb) : limits.memoryMb, hardWallMs: hardWallMs(limits.wallMs) },
    oom: spec.oomMarkers,
  };
  if (spec.preload) job.preload = preload?.length && !spec.preloadFixed ? [...preload] : spec.preload;
  if (spec.compile) {
    const compileMs = req.compileWallMs ?? spec.compile.wallMs;
    const argv = spec.compile.argv.map((a) => fill(a, vars));
    const cenv = env(spec.compile.env);
    job.compile = {
      argv,
      env: cenv,
      output: spec.compile.output,
      // Everything that changes the output: the image, the command, its environment and every file.
      key: createHash("sha256").update(JSON.stringify([spec.image, argv, cenv, spec.compile.output, files])).digest("hex"),
      limits: { wallMs: compileMs, cpuMs: compileMs, memoryMb: 2048, addressSpaceMb: spec.compile.addressSpaceMb, outputBytes: 1 << 16, pids: 64, hardWallMs: hardWallMs(compileMs) },
    };
  }
  return job;
}

export function sandboxError(message: string, wallMs = 0): RunOutcome {
  return { status: "sandbox_error", exitCode: null, signal: null, stdout: "", stderr: "", truncated: false, wallMs, cpuMs: null, message };
}

/** Thrown by a backend's slot queue when `startBy` passes first. */
export class NotStartedError extends Error {}

/** The run never started: no slot came free before `startBy`. */
export function notStarted(message: string, wallMs = 0): RunOutcome {
  return { status: "not_started", exitCode: null, signal: null, stdout: "", stderr: "", truncated: false, wallMs, cpuMs: null, message };
}

/** The worst-case wall time of a job (its runs and compile at their plain wall-time bounds), ms. */
export function jobHardWallMs(job: RunnerJob): number {
  return job.limits.hardWallMs + (job.compile?.limits.hardWallMs ?? 0);
}

/** The runner's JSON answer as a RunOutcome. */
export function outcomeOf(r: any, job?: RunnerJob): RunOutcome {
  if (r.status === "sandbox_error") return sandboxError(String(r.message ?? "runner failed"));
  if (r.status === "overloaded") {
    const compiling = r.compile?.status === "overloaded";
    const o = sandboxError(overloadMessage(r, compiling ? job?.compile?.limits : job?.limits, compiling ? "the compiler" : "the program"), r.wallMs ?? 0);
    return { ...o, cpuMs: r.cpuMs ?? null, waitMs: r.waitMs ?? null };
  }
  const o: RunOutcome = {
    status: r.status,
    exitCode: r.exitCode ?? null,
    signal: r.signal ?? null,
    stdout: r.stdout ?? "",
    stderr: r.stderr ?? "",
    truncated: !!r.truncated,
    wallMs: r.wallMs ?? 0,
    cpuMs: r.cpuMs ?? null,
    waitMs: r.waitMs ?? null,
  };
  if (r.compile) o.compile = { status: r.compile.status, stdout: r.compile.stdout ?? "", stderr: r.compile.stderr ?? "", wallMs: r.compile.wallMs ?? 0, cpuMs: r.compile.cpuMs ?? null, waitMs: r.compile.waitMs ?? null };
  if (r.leftover) o.message = "the program left processes behind; they were killed";
  return o;
}

/**
 * Warns once per image and list (through `warn`) of the modules a warm interpreter was asked to
 * preload that did not import: the runner names them in the reply of the run that started it
 * (`preloadSkipped`), and a run importing one pays the import each time.
 */
export function preloadWarner(warn: ((message: string) => void) | undefined): (image: string, reply: { preloadSkipped?: unknown }) => void {
  const told = new Set<string>();
  return (image, reply) => {
    const skipped = reply.preloadSkipped;
    if (!warn || !Array.isArray(skipped) || !skipped.length) return;
    const key = `${image}\0${skipped.join("\0")}`;
    if (told.has(key) || told.size > 256) return;
    told.add(key);
    warn(
      `sandbox: the warm ${image === "scripting" ? "Ruby" : "Python"} of ${image} could not preload ${skipped.join(", ")}; runs that import it pay the import each time ` +
        (image === "scripting"
          ? "(install it in the scripting image's recipe, or remove it from RB_PRELOAD in sandbox/languages.ts)"
          : "(remove it from ASSAY_SANDBOX_PRELOAD, or install it in that image's recipe)"),
    );
  };
}
