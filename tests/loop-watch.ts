/**
 * How long this process's event loop goes without a turn: a timer that should fire every
 * `everyMs` records each gap between two firings, in wall ms and in this process's CPU ms.
 * A request that arrives during a gap waits for it, so the longest gap bounds how long
 * `/healthz` can be held. On a busy shared machine wall time measures the neighbours; the CPU
 * time of the loop's own thread in one gap measures the work that held the loop (Linux:
 * /proc/thread-self/schedstat, in ns; elsewhere the whole process's CPU time, worker threads
 * included, so only an upper bound).
 */
import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";

/** CPU time of the calling thread, ms. */
export function threadCpuMs(): number {
  try {
    return Number(readFileSync("/proc/thread-self/schedstat", "latin1").split(" ")[0]) / 1e6;
  } catch {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  }
}

export interface LoopGaps {
  maxWallMs: number;
  maxCpuMs: number;
  /** 99th percentile of the wall gaps. */
  p99WallMs: number;
  turns: number;
}

export function watchLoop(everyMs = 2): { stop(): LoopGaps } {
  let cpu0 = threadCpuMs();
  let wall0 = performance.now();
  let maxCpuMs = 0;
  const walls: number[] = [];
  const timer = setInterval(() => {
    const cpu = threadCpuMs();
    const now = performance.now();
    maxCpuMs = Math.max(maxCpuMs, cpu - cpu0);
    walls.push(now - wall0);
    cpu0 = cpu;
    wall0 = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      walls.sort((a, b) => a - b);
      return {
        maxWallMs: walls.at(-1) ?? 0,
        maxCpuMs,
        p99WallMs: walls[Math.min(walls.length - 1, Math.floor(walls.length * 0.99))] ?? 0,
        turns: walls.length,
      };
    },
  };
}

export interface Polled { n: number; p50: number; p99: number; max: number }

/**
 * GETs `url`/healthz one request after another, `pauseMs` apart, until `stop()`, which resolves
 * with the latencies' count, p50, p99 and max, ms (NaN with no sample: a bound then fails).
 * The tests and bench/host-stall.ts measure /healthz while the host works with it.
 */
export function pollHealthz(url: string, pauseMs = 10): { stop(): Promise<Polled> } {
  let done = false;
  const lat: number[] = [];
  const poll = (async () => {
    while (!done) {
      const t0 = performance.now();
      await (await fetch(url + "/healthz")).arrayBuffer();
      lat.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  })();
  return {
    async stop() {
      done = true;
      await poll;
      lat.sort((a, b) => a - b);
      const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(lat.length * p))] ?? NaN;
      return { n: lat.length, p50: q(0.5), p99: q(0.99), max: lat.at(-1) ?? NaN };
    },
  };
}

export interface Post { path: string; type: string; body: Uint8Array }
export interface Answer { status: number; body: any }

/**
 * An HTTP client on a thread of its own: a test that watches this thread's loop while it sends
 * megabytes would otherwise count the client's own work (undici copies each body, ~40 ms of CPU
 * in one turn for seven 1 MiB bodies, more for 24 MB) as the server's. Bodies are transferred to
 * the thread, not copied; each must own its whole ArrayBuffer (TextEncoder's do).
 */
export function clientThread(url: string): { post(posts: Post[]): Promise<Answer[]>; close(): Promise<number> } {
  const worker = new Worker(
    `const { parentPort } = require("node:worker_threads");
     parentPort.on("message", async ({ url, posts }) => {
       try {
         parentPort.postMessage({ answers: await Promise.all(posts.map(async (p) => {
           const r = await fetch(url + p.path, { method: "POST", headers: { "content-type": p.type }, body: p.body });
           const text = await r.text();
           let body; try { body = JSON.parse(text); } catch { body = text; }
           return { status: r.status, body };
         })) });
       } catch (e) { parentPort.postMessage({ error: String(e && e.stack || e) }); }
     });`,
    { eval: true },
  );
  return {
    post(posts) {
      return new Promise((resolve, reject) => {
        // One listener pair per post, each taking the other away: a client used for many posts
        // does not gather listeners.
        const onError = (e: Error) => (worker.off("message", onMessage), reject(e));
        const onMessage = (m: { answers?: Answer[]; error?: string }) => (worker.off("error", onError), m.error ? reject(new Error(m.error)) : resolve(m.answers!));
        worker.once("message", onMessage);
        worker.once("error", onError);
        worker.postMessage({ url, posts }, posts.map((p) => p.body.buffer as ArrayBuffer));
      });
    },
    close: () => worker.terminate(),
  };
}

/**
 * `f`'s result, the longest the event loop went without a turn while it ran (the gaps between a
 * 1 ms timer's firings, and the one up to `f`'s end; wall ms), and how many turns it had.
 */
export async function longestGap<T>(f: () => Promise<T>, everyMs = 1): Promise<{ out: T; gap: number; turns: number }> {
  let last = performance.now();
  let gap = 0;
  let turns = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
    turns++;
  }, everyMs);
  try {
    const out = await f();
    gap = Math.max(gap, performance.now() - last);
    return { out, gap, turns };
  } finally {
    clearInterval(timer);
  }
}
