/** Shared bench helpers: start a server in its own process, drive it with autocannon, spawn and time runs. */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";
import { createServer } from "node:net";
import { existsSync, openSync, readFileSync } from "node:fs";
import autocannon from "autocannon";

export const root = new URL("..", import.meta.url).pathname;

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

let pinned: { server: string } | null | undefined;
function pinning(): { server: string } | null {
  if (pinned !== undefined) return pinned;
  const cores = availableParallelism();
  pinned = null;
  if (cores >= 2 && process.env.ASSAY_BENCH_PIN !== "0" && spawnSync("taskset", ["-V"]).status === 0) {
    spawnSync("taskset", ["-apc", `0-${cores - 2}`, String(process.pid)]);
    pinned = { server: String(cores - 1) };
  }
  return pinned;
}

/** The load average's three figures, as the benches print them beside a result. */
export const loadavg = (): string => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/**
 * Waits until the server at `url` answers /readyz with 200: its math workers warm up before it
 * says ready (on a loaded machine, tens of seconds), and a load run before that measures the start.
 */
export async function waitReady(url: string, timeoutMs = 180_000): Promise<void> {
  for (const t0 = Date.now(); (await fetch(`${url}/readyz`).catch(() => ({ status: 0 }))).status !== 200; ) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`the server was not ready (/readyz) in ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Runs `node args...` with ASSAY_PORT set, output to /dev/null, and waits for /healthz. */
export async function startServer(
  args: string[],
  env: Record<string, string> = {},
  opts: { pin?: boolean; startMs?: number } = {},
): Promise<{ port: number; url: string; child: ChildProcess }> {
  const port = await freePort();
  const out = openSync("/dev/null", "w");
  // With opts.pin, on two or more cores, the server under test gets the last core to itself and
  // this process (the load generator) is kept off it, so the two do not trade one core back and
  // forth and a baseline server and Assay are measured alike. ASSAY_BENCH_PIN=0 turns this off.
  const pin = opts.pin ? pinning() : null;
  const child = spawn(pin ? "taskset" : process.execPath, pin ? ["-c", pin.server, process.execPath, ...args] : args, {
    cwd: root,
    env: { ...process.env, ASSAY_PORT: String(port), ASSAY_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", out, "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${args.join(" ")} exited with ${child.exitCode}`);
    try {
      if ((await fetch(url + "/healthz")).ok) break;
    } catch {
      /* not up yet */
    }
    const limit = opts.startMs ?? 120_000 /* generous: on the shared 2-core machine at load 30+ a start has taken over 30 s */;
    if (Date.now() - t0 > limit) {
      child.kill(); // not left serving after the bench has given up on it
      throw new Error(`${args.join(" ")} did not answer /healthz in ${limit / 1000}s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, url, child };
}

/** The compiled Assay server, as `npm run serve` runs it. */
export function startAssay(env: Record<string, string> = {}, opts: { pin?: boolean } = {}) {
  if (!existsSync(root + "dist/src/cli/main.js")) throw new Error("run `npm run build` first: benchmarks measure the compiled server");
  return startServer(["dist/src/cli/main.js", "serve"], env, opts);
}

export interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** Requests answered in the run. */
  requests: number;
  /** CPU time the server process (`pid`, all its threads) spent per answered request, µs; NaN without a pid. */
  cpuUsPerRequest: number;
}

/**
 * CPU time (user + system, all threads) a process has used, µs, from /proc/<pid>/stat; NaN where
 * there is no /proc. CPU time per request does not move with the load that other processes put on
 * a shared machine the way requests/s does, so benches compare servers by it.
 */
export function cpuUs(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 (utime, stime) in clock ticks; f[0] is field 3.
    return ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK;
  } catch {
    return NaN;
  }
}
const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100;

/** autocannon against `url`; with `pid`, also the server's CPU time per answered request. */
export async function load(url: string, body: string, connections: number, seconds: number, pid?: number): Promise<Load> {
  const cpu0 = cpuUs(pid);
  const r = await autocannon({
    url,
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    connections,
    duration: seconds,
  });
  const cpu = cpuUs(pid) - cpu0;
  const requests = r.requests.total;
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx, requests, cpuUsPerRequest: cpu / requests };
}

export function table(rows: (string | number)[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  const line = (r: (string | number)[]) => "| " + r.map((c, i) => String(c).padEnd(widths[i])).join(" | ") + " |";
  return [line(rows[0]), "| " + widths.map((w) => "-".repeat(w)).join(" | ") + " |", ...rows.slice(1).map(line)].join("\n");
}

/** Runs argv with `stdin`; resolves to its stdout, rejects on a non-zero exit. */
export function spawnOut(argv: string[], stdin = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout!.on("data", (d) => (out += d));
    p.stderr!.on("data", (d) => (err += d));
    p.on("error", reject);
    p.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${argv.slice(0, 5).join(" ")}: exit ${code}: ${err.slice(-300)}`))));
    p.stdin!.end(stdin);
  });
}

/** The median of `xs` (the mean of the middle two for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b), h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

export function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export interface Cell {
  rate: number;
  p50: number;
  p99: number;
  n: number;
}

/**
 * A closed loop: `concurrency` callers each run `run` until `total` runs are done (after
 * `warmup` uncounted runs in parallel); throughput and latency percentiles.
 */
export async function closedLoop(run: () => Promise<unknown>, concurrency: number, total: number, warmup = concurrency): Promise<Cell> {
  await Promise.all(Array.from({ length: warmup }, () => run()));
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const s = performance.now();
        await run();
        lat.push(performance.now() - s);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return { rate: total / secs, p50: pct(lat, 50), p99: pct(lat, 99), n: total };
}

/** CPU time of this process's reaped children so far (cutime + cstime of /proc/self/stat), ms. */
export function childrenCpuMs(): number {
  const f = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return ((Number(f[13]) + Number(f[14])) * 1000) / 100; // fields 16 and 17, in clock ticks (USER_HZ = 100)
}

/**
 * CPU time of the sandbox so far, ms, and what it was read from (it must not change within a
 * round): docker, every Assay sandbox container's cgroup (v1 or v2); bwrap, the server's slot
 * cgroups (every slot's fresh-sandbox runs and warm sandbox). null where unreadable.
 */
export function sandboxCpuMs(kind: "docker" | "bwrap" | "bwrap-cold"): { ids: string; ms: number } | null {
  if (kind !== "docker") {
    const name = `assay-bwrap-${process.pid}`;
    for (const f of [`/sys/fs/cgroup/cpuacct/${name}/cpuacct.usage`, `/sys/fs/cgroup/cpu,cpuacct/${name}/cpuacct.usage`]) {
      try {
        return { ids: name, ms: Number(readFileSync(f, "utf8")) / 1e6 };
      } catch {
        /* next */
      }
    }
    try {
      return { ids: name, ms: Number(/usage_usec (\d+)/.exec(readFileSync(`/sys/fs/cgroup/${name}/cpu.stat`, "utf8"))![1]) / 1000 };
    } catch {
      return null;
    }
  }
  const ids = spawnSync("docker", ["ps", "-q", "--no-trunc", "--filter", "label=assay.sandbox"], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
  let ns = 0;
  for (const id of ids) {
    try {
      ns += Number(readFileSync(`/sys/fs/cgroup/cpuacct/docker/${id}/cpuacct.usage`, "utf8"));
    } catch {
      try {
        const stat = readFileSync(`/sys/fs/cgroup/system.slice/docker-${id}.scope/cpu.stat`, "utf8");
        ns += Number(/usage_usec (\d+)/.exec(stat)![1]) * 1000;
      } catch {
        return null;
      }
    }
  }
  return { ids: ids.sort().join(), ms: ns / 1e6 };
}
