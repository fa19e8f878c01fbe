/**
 * Per-slot cgroups for the bwrap backend, so a run's memory and process count are bounded as a
 * whole (rlimits bound each process only). Needs root and a writable cgroup file system (v1 or
 * v2); where there is none the backend runs on rlimits alone and says so.
 */
import { existsSync, mkdirSync, rmdirSync, writeFileSync, readFileSync, chownSync, readdirSync } from "node:fs";
import { join } from "node:path";

export class SlotCgroups {
  private constructor(private readonly kind: "v1" | "v2", private readonly dirs: { memory: string; pids: string }) {}

  /** Creates `assay-bwrap-<pid>` groups, or returns why it cannot. */
  static open(): SlotCgroups | string {
    if (process.getuid?.() !== 0) return "not root";
    const name = `assay-bwrap-${process.pid}`;
    for (const top of ["/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup"]) removeStale(top);
    try {
      if (existsSync("/sys/fs/cgroup/memory/cgroup.procs") && existsSync("/sys/fs/cgroup/pids/cgroup.procs")) {
        const dirs = { memory: join("/sys/fs/cgroup/memory", name), pids: join("/sys/fs/cgroup/pids", name) };
        mkdirSync(dirs.memory, { recursive: true });
        mkdirSync(dirs.pids, { recursive: true });
        return new SlotCgroups("v1", dirs);
      }
      if (existsSync("/sys/fs/cgroup/cgroup.controllers")) {
        const controllers = readFileSync("/sys/fs/cgroup/cgroup.controllers", "utf8");
        if (!/\bmemory\b/.test(controllers) || !/\bpids\b/.test(controllers)) return "the cgroup v2 memory or pids controller is missing";
        const dir = join("/sys/fs/cgroup", name);
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, "cgroup.subtree_control"), "+memory +pids");
        return new SlotCgroups("v2", { memory: dir, pids: dir });
      }
      return "no cgroup file system";
    } catch (e) {
      return `cgroups not writable (${(e as Error).message})`;
    }
  }

  /** Sets up slot `slot` for one run; returns the cgroup.procs files the run joins. */
  prepare(slot: number, uid: number, memoryMb: number, pids: number): string[] {
    const mem = join(this.dirs.memory, `slot-${slot}`);
    const pid = join(this.dirs.pids, `slot-${slot}`);
    mkdirSync(mem, { recursive: true });
    mkdirSync(pid, { recursive: true });
    const bytes = String(memoryMb * 1024 * 1024);
    if (this.kind === "v1") {
      writeFileSync(join(mem, "memory.limit_in_bytes"), bytes);
      writeFileSync(join(pid, "pids.max"), String(pids));
    } else {
      writeFileSync(join(mem, "memory.max"), bytes);
      writeFileSync(join(mem, "memory.swap.max"), "0");
      writeFileSync(join(pid, "pids.max"), String(pids));
    }
    const procs = [...new Set([join(mem, "cgroup.procs"), join(pid, "cgroup.procs")])];
    for (const p of procs) chownSync(p, uid, uid);
    return procs;
  }

  /** OOM kills in slot `slot` so far (to tell a memory kill from any other SIGKILL). */
  oomKills(slot: number): number {
    try {
      const mem = join(this.dirs.memory, `slot-${slot}`);
      const text = this.kind === "v1" ? readFileSync(join(mem, "memory.oom_control"), "utf8") : readFileSync(join(mem, "memory.events"), "utf8");
      const m = /oom_kill (\d+)/.exec(text);
      return m ? Number(m[1]) : 0;
    } catch {
      return 0;
    }
  }

  close(slots: number): void {
    for (let i = 0; i < slots; i++) {
      for (const d of new Set([this.dirs.memory, this.dirs.pids])) {
        try {
          rmdirSync(join(d, `slot-${i}`));
        } catch {
          /* never created, or still busy */
        }
      }
    }
    for (const d of new Set([this.dirs.memory, this.dirs.pids])) {
      try {
        rmdirSync(d);
      } catch {
        /* busy */
      }
    }
  }
}

/** Removes `assay-bwrap-<pid>` groups whose process is gone (a crashed server or test). */
function removeStale(top: string): void {
  let names: string[];
  try {
    names = readdirSync(top).filter((n) => /^assay-bwrap-\d+$/.test(n));
  } catch {
    return;
  }
  for (const n of names) {
    const pid = Number(n.slice("assay-bwrap-".length));
    try {
      process.kill(pid, 0);
      continue; // still running
    } catch {
      /* gone */
    }
    const dir = join(top, n);
    try {
      for (const s of readdirSync(dir)) if (s.startsWith("slot-")) rmdirSync(join(dir, s));
      rmdirSync(dir);
    } catch {
      /* still holds processes */
    }
  }
}
