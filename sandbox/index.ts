/**
 * Chooses a sandbox backend from configuration (ASSAY_SANDBOX): `docker` (warm container pool),
 * `bwrap` (bubblewrap namespaces, no daemon), `auto` (the first of those that answers), `none`.
 * JavaScript always runs in isolated-vm (the `js` backend) next to whichever was chosen. With no
 * backend, code verifiers answer status "error" saying what to install: code never runs
 * unsandboxed.
 */
import type { RunOutcome, RunRequest, Sandbox, SandboxLoad } from "./types.js";
import { canonicalLanguage, notBuiltReason } from "./languages.js";
import type { SandboxConfig } from "../src/core/config.js";

export interface SandboxChoice {
  sandbox: Sandbox | null;
  /** Why this backend (or why none): logged at start-up. */
  note: string;
}

/** How often a host with no process backend (no Docker engine or image, no bwrap) looks for one again. */
export const REOPEN_MS = 5_000;

/** Routes each language to the backend that runs it. */
export class CompositeSandbox implements Sandbox {
  private nextReopen = 0;
  /**
   * `missing`: why other languages cannot run (what to install), said when one is asked for.
   * `pythonAs`: the language a plain `python` program runs as (ASSAY_SANDBOX_PYTHON=python-sci).
   * `reopen`: looks for a process backend again (none answered at start-up; images may be built
   * since), at most once per REOPEN_MS, when a language none of `backends` runs is asked for.
   */
  constructor(private readonly backends: Sandbox[], private missing?: string, private readonly pythonAs?: string, private readonly reopen?: () => Promise<SandboxChoice>) {}
  get name(): string {
    return this.backends.map((b) => b.name).join("+");
  }
  get languages(): readonly string[] {
    return [...new Set(this.backends.flatMap((b) => b.languages))];
  }
  /** The language a request's name runs as. */
  private resolve(language: string): string {
    const c = canonicalLanguage(language) ?? language;
    return c === "python" && this.pythonAs ? this.pythonAs : c;
  }
  backendFor(language: string): Sandbox | undefined {
    const c = this.resolve(language);
    return this.backends.find((b) => b.languages.includes(c));
  }
  /** A backend for a language none runs yet: an image built since, or a backend found since. */
  private async lookAgain(language: string): Promise<Sandbox | undefined> {
    for (const b of this.backends) if (b.refresh && (await b.refresh(language))) return b;
    if (this.reopen && Date.now() >= this.nextReopen) {
      this.nextReopen = Date.now() + REOPEN_MS;
      const found = await this.reopen();
      if (found.sandbox) {
        this.backends.unshift(found.sandbox);
        this.missing = undefined;
        return this.backendFor(language);
      }
      this.missing = found.note;
    }
    return undefined;
  }
  async run(req: RunRequest): Promise<RunOutcome> {
    const b = this.backendFor(req.language) ?? (await this.lookAgain(this.resolve(req.language)));
    if (!b) {
      return {
        status: "sandbox_error", exitCode: null, signal: null, stdout: "", stderr: "", truncated: false, wallMs: 0, cpuMs: null,
        message: (this.missing ? undefined : notBuiltReason(this.resolve(req.language))) ??
          `no sandbox here runs ${JSON.stringify(this.resolve(req.language))} (it runs ${this.languages.join(", ")})` + (this.missing ? `: ${this.missing}` : ""),
      };
    }
    return b.run({ ...req, language: this.resolve(req.language) });
  }
  async refresh(language: string): Promise<boolean> {
    return !!(this.backendFor(language) ?? (await this.lookAgain(this.resolve(language))));
  }
  /** The busiest backend's backlog (js has none: it never queues). */
  load(): SandboxLoad {
    let worst: SandboxLoad = { slots: 0, running: 0, queued: 0, waitMs: 0, typicalMs: 0 };
    for (const b of this.backends) {
      const l = b.load?.();
      if (l && (l.waitMs > worst.waitMs || worst.slots === 0)) worst = l;
    }
    return worst;
  }

  async warmUp(): Promise<void> {
    await Promise.all(this.backends.map((b) => b.warmUp?.()));
  }

  async close(): Promise<void> {
    await Promise.all(this.backends.map((b) => b.close()));
  }
}

/** Where a backend reports what an operator should fix while it runs (the server's log, as warnings). */
export type OnWarning = (message: string) => void;

async function pickProcessBackend(c: SandboxConfig, onWarning?: OnWarning): Promise<SandboxChoice> {
  const mode = c.backend;
  const notes: string[] = [];
  if (mode === "docker" || mode === "auto") {
    const { openDocker, dockerOptions } = await import("./docker/index.js");
    const d = await openDocker({ ...dockerOptions(c), onWarning });
    if (d.sandbox) {
      d.sandbox.warm("python");
      return { sandbox: d.sandbox, note: d.note };
    }
    notes.push(d.note);
  }
  if (mode === "bwrap" || mode === "auto") {
    const { openBwrap } = await import("./bwrap/index.js");
    const b = await openBwrap({ ...c, onWarning });
    if (b.sandbox) return { sandbox: b.sandbox, note: (notes.length ? `${notes.join("; ")}; so ` : "") + b.note };
    notes.push(b.note);
  }
  if (mode === "none") return { sandbox: null, note: "sandboxed code execution is off (ASSAY_SANDBOX=none)" };
  return { sandbox: null, note: notes.join("; ") };
}

export async function selectSandbox(c: SandboxConfig, onWarning?: OnWarning): Promise<SandboxChoice> {
  const main = await pickProcessBackend(c, onWarning);
  if (c.backend === "none") return main;
  const { openJsProcess } = await import("./js/process.js");
  const js = await openJsProcess();
  const py = c.python === "python" ? undefined : c.python;
  const pyNote = py ? `; plain python programs run in ${py} (ASSAY_SANDBOX_PYTHON)` + (main.sandbox?.languages.includes(py) ? "" : `, whose image is not built: ${notBuiltReason(py)}`) : "";
  if (!js.sandbox) return { sandbox: main.sandbox && py ? new CompositeSandbox([main.sandbox], undefined, py) : main.sandbox, note: `${main.note}; ${js.note}${pyNote}` };
  // No process backend now: look again when a program needs one (`sandbox build` may run later).
  if (!main.sandbox) return { sandbox: new CompositeSandbox([js.sandbox], main.note, py, () => pickProcessBackend(c, onWarning)), note: `${main.note}; only JavaScript can run (${js.note}); looked for again when a program needs it` };
  return { sandbox: new CompositeSandbox([main.sandbox, js.sandbox], undefined, py), note: `${main.note}; ${js.note}${pyNote}` };
}
