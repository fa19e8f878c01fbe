/**
 * An experiment for issue 38: how much of the math pool's main-thread cost per item is its
 * transport. A minimal dispatcher over shared memory (bench/math-sab-worker.ts: chunks of tasks
 * as JSON in a SharedArrayBuffer, Atomics.wait in the workers, Atomics.waitAsync here; no
 * MessagePort, no structured clone, no per-chunk SharedArrayBuffer, no watchdog, no budgets)
 * against the pool (verifiers/math/pool.ts) and one in-process loop, alternated round by round
 * in one run, the same callers driving both: items/s, the main thread's CPU µs per item and the
 * process's. Not a replacement: it has none of the pool's budgets, kills or re-sends; it bounds
 * what a cheaper transport could give.
 *
 *   npx tsx bench/math-sab.ts [conformance|hard|ordinary] [--callers 32] [--batch 1] [--warm 5] [--rounds 3] [--seconds 2]
 */
import { Worker } from "node:worker_threads";
import { loadavg, median } from "./lib.js";
import { fileURLToPath } from "node:url";
import { MathPool, WARMUP_MS } from "../verifiers/math/pool.js";
import type { Task, TaskResult } from "../verifiers/math/worker.js";
import { tasksOf, inline, drive as driveCallers, type SetName } from "./math-sets.js";
import { HEAD, slotViews, type SabWorkerData } from "./math-sab-layout.js";
import { threadCpuMs } from "../tests/loop-watch.js";

const arg = (name: string, d: number) => { const i = process.argv.indexOf(name); return i > 0 ? Number(process.argv[i + 1]) : d; };
const which = (process.argv[2] && !process.argv[2].startsWith("--") ? process.argv[2] : "ordinary") as SetName;
const tasks: Task[] = tasksOf(which);
const callers = arg("--callers", 32), batch = arg("--batch", 1), warm = arg("--warm", 5), rounds = arg("--rounds", 3), seconds = arg("--seconds", 2);
/** ES2024's Atomics.waitAsync (in Node since 16), not in this project's TypeScript lib. */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, ms?: number): { async: boolean; value: Promise<string> | string } }).waitAsync;
const THREADS = 2, SLOTS = 2, SLOT_BYTES = 4 * 1024 * 1024, MAX_CHUNK = 64;

interface Job { task: Task; resolve(r: TaskResult): void; reject(e: unknown): void }
interface Slot { views: ReturnType<typeof slotViews>; jobs: Job[] | null; sent: number }
interface Thread { worker: Worker; slots: Slot[]; next: number; held: number }

class SabPool {
  private readonly threads: Thread[] = [];
  private queue: Job[] = [];
  private scheduled = false;
  constructor() {
    const boot = fileURLToPath(new URL("../src/core/worker-boot.mjs", import.meta.url));
    const file = fileURLToPath(new URL("./math-sab-worker.ts", import.meta.url));
    for (let i = 0; i < THREADS; i++) {
      const sab = new SharedArrayBuffer(SLOTS * SLOT_BYTES);
      const workerData: SabWorkerData = { file, sab, slots: SLOTS, slotBytes: SLOT_BYTES, warmupMs: WARMUP_MS };
      const worker = new Worker(boot, { workerData, execArgv: process.execArgv, resourceLimits: { maxOldGenerationSizeMb: 512 } });
      worker.on("error", (e) => { console.error(e); process.exit(1); });
      this.threads.push({ worker, slots: Array.from({ length: SLOTS }, (_, k) => ({ views: slotViews(sab, k, SLOT_BYTES), jobs: null, sent: 0 })), next: 0, held: 0 });
    }
  }
  async ready(): Promise<void> {
    for (const t of this.threads) {
      const h = t.slots[0]!.views.head;
      while (Atomics.load(h, HEAD.ready) === 0) await waitAsync(h, HEAD.ready, 0, 1000).value;
    }
  }
  submit(task: Task): Promise<TaskResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      if (!this.scheduled) (this.scheduled = true), setImmediate(() => ((this.scheduled = false), this.pump()));
    });
  }
  private pump(): void {
    while (this.queue.length) {
      let t: Thread | null = null;
      let held = 0;
      for (const x of this.threads) {
        held += x.held;
        if (x.slots[x.next]!.jobs === null && (t === null || x.held < t.held)) t = x;
      }
      if (t === null) return;
      const share = Math.max(1, Math.ceil((held + this.queue.length) / THREADS) - t.held);
      const jobs = this.queue.splice(0, Math.min(MAX_CHUNK, share));
      const s = t.slots[t.next]!;
      t.next = (t.next + 1) % SLOTS;
      const v = s.views;
      v.head[HEAD.reqLen] = v.bytes.write(JSON.stringify(jobs.map((j) => j.task)), v.reqAt, "utf8");
      s.jobs = jobs;
      t.held += jobs.length;
      const before = Atomics.load(v.head, HEAD.resp);
      Atomics.add(v.head, HEAD.req, 1);
      Atomics.notify(v.head, HEAD.req);
      this.await(t, s, before);
    }
  }
  /** Waits for the slot's answer. A wait that times out with the answer there is counted: a wake-up lost. */
  lost = 0;
  private await(t: Thread, s: Slot, before: number): void {
    const h = s.views.head;
    const wait = waitAsync(h, HEAD.resp, before, 1000);
    if (!wait.async) return this.answer(t, s);
    void (wait.value as Promise<string>).then((how) => {
      if (Atomics.load(h, HEAD.resp) === before) return this.await(t, s, before);
      if (how === "timed-out") this.lost++;
      this.answer(t, s);
    });
  }
  private answer(t: Thread, s: Slot): void {
    const v = s.views;
    const out = JSON.parse(v.bytes.toString("utf8", v.respAt, v.respAt + v.head[HEAD.respLen]!)) as (TaskResult | { error: string })[];
    const jobs = s.jobs!;
    s.jobs = null;
    t.held -= jobs.length;
    for (let i = 0; i < jobs.length; i++) {
      const r = out[i]!;
      if ("error" in r) jobs[i]!.reject(new Error(r.error));
      else jobs[i]!.resolve(r);
    }
    this.pump();
  }
  close(): Promise<unknown> {
    return Promise.all(this.threads.map((t) => t.worker.terminate()));
  }
}

const mainCpuUs = () => threadCpuMs() * 1000;
type Submit = (t: Task) => Promise<unknown>;
const drive = (submit: Submit, secs: number) => driveCallers(submit, tasks, { callers, batch, secs });

// The same results, item by item, before anything is timed: the transport must not change a grade.
const sab = new SabPool();
const pool = new MathPool(THREADS);
await Promise.all([sab.ready(), pool.ready()]);
const settled = (ps: Promise<unknown>[]) => Promise.allSettled(ps).then((x) => x.map((r) => (r.status === "fulfilled" ? r.value : String((r.reason as Error).message))));
const a = await settled(tasks.map((t) => sab.submit(t)));
const b = await settled(tasks.map((t) => pool.run(t)));
if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error("the shared-memory transport graded differently from the pool");
const paths: [string, Submit][] = [["pool (MessagePort)", (t) => pool.submit(t).done], ["shared memory", (t) => sab.submit(t)]];
for (const [, s] of paths) await drive(s, warm);
inline(tasks, 1); // warms the in-process loop's code on this thread
console.log(`${which}: ${THREADS} threads, ${callers} callers of ${batch} item(s), load ${loadavg()}`);
const ratios: Record<string, number[]> = {};
for (let r = 0; r < rounds; r++) {
  const loop = inline(tasks, seconds);
  const row = [`round ${r + 1}: one in-process loop ${loop.toFixed(0)}/s`];
  for (const [name, s] of paths) {
    const m0 = mainCpuUs(), c0 = process.cpuUsage(), t0 = performance.now();
    const n = await drive(s, seconds);
    const rate = n / ((performance.now() - t0) / 1000), c = process.cpuUsage(c0);
    (ratios[name] ??= []).push(rate / loop);
    row.push(`${name} ${rate.toFixed(0)}/s = ${(rate / loop).toFixed(2)}x, main ${((mainCpuUs() - m0) / n).toFixed(1)} µs/item, process ${((c.user + c.system) / n).toFixed(1)} µs/item`);
  }
  console.log(row.join(" | "));
}
console.log(`shared memory: ${sab.lost} answers found only by a wait's 1 s timeout`);
console.log(Object.entries(ratios).map(([k, v]) => `${k}: median ${median(v).toFixed(2)}x one thread`).join("; "));
await Promise.all([sab.close(), pool.close()]);
