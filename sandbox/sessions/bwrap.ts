/**
 * Session boxes on bubblewrap, for hosts without a Docker engine: each session is one long-lived
 * bwrap sandbox (a warm slot's, bwrap/warm.ts: new pid, network, ipc, uts and cgroup namespaces,
 * the python image's root filesystem read-only, tmpfs /sandbox, /dev/shm and /tmp, the seccomp
 * filter every bwrap run loads, the runner's few capabilities) running the session supervisor
 * (kernel.py) in memory, pids and CPU-accounting cgroups of its own. Needs root, as warm slots do.
 */
import { mkdtempSync, rmSync, rmdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WarmSlot } from "../bwrap/warm.js";
import { SlotCgroups } from "../bwrap/cgroups.js";
import { seccompFilter } from "../bwrap/index.js";
import { withTimeout } from "../docker/worker.js";
import { hasPython, recipeFor, rootfsDir } from "../images.js";
import { kernelSourceText, waitInLine, type Waiter, type Box, type BoxBackend, type KernelExec, type KernelReply } from "./index.js";

/** Session groups are numbered apart from the run backend's slots (they share its cgroup parent). */
const FIRST_GROUP = 1 << 20;

export interface BwrapBoxOptions {
  warm: number;
  memoryMb: number;
  pids: number;
  scratchMb: number;
  /** Where `sandbox build` keeps root filesystems (ASSAY_SANDBOX_ROOTFS). */
  rootfs: string;
  bwrap?: string;
}

type Held = { slot: WarmSlot; group: number };

class BwrapBox implements Box {
  constructor(private readonly held: Held, private readonly cg: SlotCgroups, private readonly pids: number, private readonly onGone: () => void) {}
  get dead() {
    return this.held.slot.dead;
  }
  async start(language: string, files: Record<string, string> | undefined, valueBytes: number, memoryMb: number): Promise<void> {
    this.cg.prepare(this.held.group, 0, memoryMb, this.pids);
    const r = await this.held.slot.exec({ op: "start", language, files, value_bytes: valueBytes } as any, 20_000);
    if (!r.ok) throw new Error(`the session sandbox could not start ${language}: ${r.message ?? "no reason given"}`);
  }
  async exec(x: KernelExec): Promise<KernelReply> {
    const oom0 = this.cg.oomKills(this.held.group);
    try {
      return await this.held.slot.exec({ op: "exec", code: x.code, cpu_ms: x.cpuMs, wall_ms: x.wallMs, output_bytes: x.outputBytes } as any, x.wallMs + 15_000);
    } catch (e) {
      const base = { stdout: "", stderr: "", value: null, error: null, exit_code: null, truncated: false, ms: 0, cpu_ms: null };
      if (this.cg.oomKills(this.held.group) > oom0) return { ...base, status: "memory", message: "the session's sandbox ran out of memory" };
      if (this.held.slot.dead) return { ...base, status: "crashed", message: (e as Error).message };
      return { ...base, status: "timeout", message: (e as Error).message };
    }
  }
  async destroy(): Promise<void> {
    await this.held.slot.kill();
    this.onGone();
  }
}

export class BwrapBoxes implements BoxBackend {
  readonly name = "bwrap";
  private readonly cg: SlotCgroups | string;
  private readonly seccomp: Buffer | string;
  private readonly base: string;
  private readonly rootfs: string | null;
  private idle: Held[] = [];
  private starting = 0;
  private nextGroup = FIRST_GROUP;
  private freeGroups: number[] = [];
  private waiters: Waiter<Held>[] = [];
  private closed = false;
  private failures = 0;
  private lastError: Error | null = null;

  constructor(private readonly opts: BwrapBoxOptions) {
    this.cg = SlotCgroups.open();
    this.base = mkdtempSync(join(tmpdir(), `assay-bwsess-${process.pid}-`));
    this.seccomp = seccompFilter(this.base);
    const r = recipeFor("python");
    this.rootfs = r && hasPython(rootfsDir(r, { rootfs: opts.rootfs })) ? rootfsDir(r, { rootfs: opts.rootfs }) : null;
  }

  /** Why sessions cannot run here, or null. */
  check(): string | null {
    if (process.getuid?.() !== 0) return "bubblewrap sessions need the server to run as root (as warm bwrap slots do)";
    if (typeof this.cg === "string") return `bubblewrap sessions need per-session cgroups: ${this.cg}`;
    if (!this.rootfs) return "no python root filesystem on disk: run `npx assay sandbox build --lang python`";
    return null;
  }

  /** The group's cgroups go once empty; its number is reused. */
  private release(group: number): void {
    for (const d of ["memory", "pids", "cpuacct", "cpu,cpuacct", ""]) {
      try {
        rmdirSync(join("/sys/fs/cgroup", d, `assay-bwrap-${process.pid}`, `slot-${group}`));
      } catch {
        /* not there, or not empty yet */
      }
    }
    this.freeGroups.push(group);
  }

  fill(): void {
    while (!this.closed && this.idle.length + this.starting < this.opts.warm + this.waiters.length) {
      this.starting++;
      const group = this.freeGroups.pop() ?? this.nextGroup++;
      let slot: WarmSlot | undefined;
      const started = (async (): Promise<Held> => {
        const cg = this.cg as SlotCgroups;
        const procs = cg.prepare(group, 0, this.opts.memoryMb, this.opts.pids);
        slot = new WarmSlot({
          bwrap: this.opts.bwrap ?? "bwrap", rootfs: this.rootfs!, image: "python", scratchMb: this.opts.scratchMb,
          seccomp: typeof this.seccomp === "string" ? null : this.seccomp, procs, cgroups: cg.binds(group), program: kernelSourceText(), tmp: true,
        });
        await withTimeout(slot.ready, 20_000, "the session supervisor did not start within 20 s");
        return { slot, group };
      })();
      started.then(
        (b) => {
          this.starting--;
          this.failures = 0;
          if (this.closed) return void b.slot.kill().then(() => this.release(b.group));
          const w = this.waiters.shift();
          if (w) w.resolve(b);
          else this.idle.push(b);
        },
        (e: Error) => {
          this.starting--;
          this.failures++;
          this.lastError = e;
          void (slot?.kill() ?? Promise.resolve()).then(() => this.release(group));
          if (this.failures >= 3) for (const w of this.waiters.splice(0)) w.reject(new Error(`no session sandbox could start: ${e.message}`));
          else if (!this.closed) setTimeout(() => this.fill(), 500).unref();
        },
      );
    }
  }

  private box(b: Held): Box {
    return new BwrapBox(b, this.cg as SlotCgroups, this.opts.pids, () => this.release(b.group));
  }

  take(startBy: number, signal?: AbortSignal): Promise<Box> {
    let b = this.idle.shift();
    while (b?.slot.dead) {
      const gone = b;
      void gone.slot.kill().then(() => this.release(gone.group));
      b = this.idle.shift();
    }
    if (b) {
      this.fill();
      return Promise.resolve(this.box(b));
    }
    if (this.failures >= 3 && this.lastError) {
      this.failures = 0; // the next creation tries again
      return Promise.reject(new Error(`no session sandbox could start: ${this.lastError.message}`));
    }
    const box = waitInLine(this.waiters, startBy, signal, (x) => this.box(x));
    this.fill();
    return box;
  }

  async ready(timeoutMs = 120_000): Promise<void> {
    this.fill();
    const t0 = Date.now();
    while (!this.closed && this.idle.length === 0) {
      if (this.failures >= 3 && this.lastError) throw new Error(`no warm session sandbox: ${this.lastError.message}`);
      if (Date.now() - t0 > timeoutMs) throw new Error(`no session sandbox warm after ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  stats() {
    return { warm: this.idle.length, starting: this.starting, waiting: this.waiters.length };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new Error("the session service is shutting down"));
    await Promise.all(this.idle.splice(0).map((b) => b.slot.kill().then(() => this.release(b.group))));
    rmSync(this.base, { recursive: true, force: true });
    // The parent groups go too once nothing else of this process uses them (the run backend's slots).
    for (const d of ["memory", "pids", "cpuacct", "cpu,cpuacct", ""]) {
      try {
        rmdirSync(join("/sys/fs/cgroup", d, `assay-bwrap-${process.pid}`));
      } catch {
        /* not there, or still in use */
      }
    }
  }
}
