/**
 * Per-slot cgroups for the bwrap backend, so a run's memory and process count are bounded as a
 * whole (rlimits bound each process only). Needs root and a writable cgroup file system (v1 or
 * v2); where there is none the backend runs on rlimits alone and says so.
 */
import { existsSync, mkdirSync, rmdirSync, writeFileSync, readFileSync, chownSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { CgroupBinds } from "./warm.js";

/** Where a v1 host mounts the CPU accounting controller (alone, or with cpu). */
const CPUACCT_V1 = ["/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpu,cpuacct"];
/** Where a v1 host mounts the CPU scheduling controller (alone, or with cpuacct). */
const CPU_V1 = ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"];

/**
 * Each slot's CPU bandwidth: one core, as a Docker container has (NanoCpus, docker/worker.ts),
 * so a fork bomb in one slot cannot starve the others. Its own CPU group also makes the run's
 * nice(10) (below the runner that must time and end it) rank only within the slot, as in a
 * container: without one, a bwrap run competed at nice 10 with every process on the host and
 * got a tenth of a busy core's time (bwrap's trivial test took 2x Docker's under load).
 */
const CPU_PERIOD_US = 100_000;
/**
 * All slots' CPU weight against the host's other work: ten host processes' worth, the weight
 * scripts/setup-sandbox.sh gives Docker's `/docker` group (sandbox/README.md#time-limits). With the
 * default weight (one process's), a run on a loaded host waited 20-28 ms for a CPU in a 5 ms
 * trivial test where a container's waited 0.4 ms.
 */
const WEIGHT = { v1: "10240", v2: "1000" };

export class SlotCgroups {
  /**
   * `dirs.cpu`: the CPU accounting group (v1 cpuacct; v2's cpu.stat is in every group), if any;
   * `dirs.sched`: the CPU scheduling group (v1 cpu; v2's cpu controller), where each slot gets a
   * group of its own with one core's bandwidth.
   */
  private constructor(private readonly kind: "v1" | "v2", private readonly dirs: { memory: string; pids: string; cpu?: string; sched?: string }) {}

  /** Creates `assay-bwrap-<pid>` groups, or returns why it cannot. */
  static open(): SlotCgroups | string {
    if (process.getuid?.() !== 0) return "not root";
    const name = `assay-bwrap-${process.pid}`;
    for (const top of new Set(["/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup", ...CPUACCT_V1, ...CPU_V1])) removeStale(top);
    try {
      if (existsSync("/sys/fs/cgroup/memory/cgroup.procs") && existsSync("/sys/fs/cgroup/pids/cgroup.procs")) {
        const acct = CPUACCT_V1.find((d) => existsSync(join(d, "cpuacct.usage")));
        const sched = CPU_V1.find((d) => existsSync(join(d, "cpu.cfs_quota_us")));
        const dirs = { memory: join("/sys/fs/cgroup/memory", name), pids: join("/sys/fs/cgroup/pids", name), cpu: acct && join(acct, name), sched: sched && join(sched, name) };
        mkdirSync(dirs.memory, { recursive: true });
        mkdirSync(dirs.pids, { recursive: true });
        if (dirs.cpu) mkdirSync(dirs.cpu, { recursive: true });
        if (dirs.sched) {
          mkdirSync(dirs.sched, { recursive: true });
          writeFileSync(join(dirs.sched, "cpu.shares"), WEIGHT.v1);
        }
        return new SlotCgroups("v1", dirs);
      }
      if (existsSync("/sys/fs/cgroup/cgroup.controllers")) {
        const controllers = readFileSync("/sys/fs/cgroup/cgroup.controllers", "utf8");
        if (!/\bmemory\b/.test(controllers) || !/\bpids\b/.test(controllers)) return "the cgroup v2 memory or pids controller is missing";
        const dir = join("/sys/fs/cgroup", name);
        mkdirSync(dir, { recursive: true });
        // (the cpu controller only where the root hands it down: otherwise +cpu below would fail)
        const cpu = /\bcpu\b/.test(readFileSync("/sys/fs/cgroup/cgroup.subtree_control", "utf8"));
        writeFileSync(join(dir, "cgroup.subtree_control"), cpu ? "+memory +pids +cpu" : "+memory +pids");
        if (cpu) writeFileSync(join(dir, "cpu.weight"), WEIGHT.v2);
        return new SlotCgroups("v2", { memory: dir, pids: dir, cpu: dir, ...(cpu ? { sched: dir } : {}) });
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
    if (this.dirs.cpu) mkdirSync(join(this.dirs.cpu, `slot-${slot}`), { recursive: true });
    const sched = this.dirs.sched && join(this.dirs.sched, `slot-${slot}`);
    if (sched) {
      mkdirSync(sched, { recursive: true });
      if (this.kind === "v1") {
        writeFileSync(join(sched, "cpu.cfs_period_us"), String(CPU_PERIOD_US));
        writeFileSync(join(sched, "cpu.cfs_quota_us"), String(CPU_PERIOD_US));
      } else writeFileSync(join(sched, "cpu.max"), `${CPU_PERIOD_US} ${CPU_PERIOD_US}`);
    }
    const procs = [...new Set([join(mem, "cgroup.procs"), join(pid, "cgroup.procs"), ...(this.dirs.cpu ? [join(this.dirs.cpu, `slot-${slot}`, "cgroup.procs")] : []), ...(sched ? [join(sched, "cgroup.procs")] : [])])];
    for (const p of procs) chownSync(p, uid, uid);
    return procs;
  }

  /** Where slot `slot`'s groups are (prepared first), for a warm sandbox to bind where its runner reads them. */
  binds(slot: number): CgroupBinds {
    if (this.kind === "v2") return { kind: "v2", dir: join(this.dirs.memory, `slot-${slot}`) };
    return { kind: "v1", memory: join(this.dirs.memory, `slot-${slot}`), ...(this.dirs.cpu ? { cpu: join(this.dirs.cpu, `slot-${slot}`) } : {}) };
  }

  private all(): string[] {
    return [...new Set([this.dirs.memory, this.dirs.pids, ...(this.dirs.cpu ? [this.dirs.cpu] : []), ...(this.dirs.sched ? [this.dirs.sched] : [])])];
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

  /** CPU time used in slot `slot` so far, ns (every process that ever ran in it); null without CPU accounting. */
  cpuNs(slot: number): number | null {
    if (!this.dirs.cpu) return null;
    const dir = join(this.dirs.cpu, `slot-${slot}`);
    try {
      if (this.kind === "v1") return Number(readFileSync(join(dir, "cpuacct.usage"), "utf8").trim());
      const m = /^usage_usec (\d+)/m.exec(readFileSync(join(dir, "cpu.stat"), "utf8"));
      return m ? Number(m[1]) * 1000 : null;
    } catch {
      return null;
    }
  }

  /** The thread ids in slot `slot` now (the pids group's: at most its pids limit). */
  threads(slot: number): string[] {
    try {
      const f = this.kind === "v1" ? join(this.dirs.pids, `slot-${slot}`, "tasks") : join(this.dirs.pids, `slot-${slot}`, "cgroup.threads");
      return readFileSync(f, "utf8").split("\n").filter(Boolean);
    } catch {
      return [];
    }
  }

  close(slots: number): void {
    for (let i = 0; i < slots; i++) {
      for (const d of this.all()) {
        try {
          rmdirSync(join(d, `slot-${i}`));
        } catch {
          /* never created, or still busy */
        }
      }
    }
    for (const d of this.all()) {
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
