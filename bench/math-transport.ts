/**
 * What a chunk costs a math worker, by how it reaches the worker: one worker thread grades
 * ordinary answers (a) in a loop of its own, no message at all (the baseline), (b) in chunks of
 * `--chunk` items sent by postMessage and answered by postMessage, as the pool does (pool.ts), and
 * (c) in the same chunks through a shared-memory ring: the chunk's JSON written into a
 * SharedArrayBuffer, the worker blocked in Atomics.wait (no event loop, no MessagePort), its
 * answer written back into shared memory and awaited here with Atomics.waitAsync. Two chunks are
 * in flight at a time in (b) and (c), as in the pool (PIPELINE). The three alternate in each
 * round; each figure is the worker thread's own CPU µs per item (/proc/thread-self/schedstat),
 * and the ratio against (a) in the same round. Issue 38 (bench/README.md, seventh pass).
 *
 *   npx tsx bench/math-transport.ts [--chunk 6] [--rounds 4] [--seconds 2] [--warm 10] [--set ordinary]
 */
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import run, { PROGRESS_SLOTS, type Task } from "../verifiers/math/worker.js";
import { tasksOf, type SetName } from "./math-sets.js";
import { threadCpuUs, workerExecArgv } from "./math-two-at-once.js";

/** Atomics.waitAsync (in V8 and Node 16+; not in this project's TypeScript lib, es2022). */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<string> | string } }).waitAsync;
/** Bytes of one ring slot, each way. */
const SLOT = 1 << 20;
/** ctrl: [0] chunks posted, [1] chunks answered, [2 + k] request bytes in slot k (-1: report CPU), [4 + k] answer bytes, [6] CPU µs per item x 10. */
const POSTED = 0, ANSWERED = 1, REQ_LEN = 2, RES_LEN = 4, STAT = 6;

interface Init { transportBench: true; set: SetName; file: string; ctrl: SharedArrayBuffer; req: SharedArrayBuffer; res: SharedArrayBuffer }
type Ask = { loop: number } | { items: Task[]; progress: Int32Array } | "stat" | "ring";

function worker(init: Init): void {
  const tasks = tasksOf(init.set);
  const port = parentPort!;
  let n = 0, c0 = threadCpuUs();
  const fresh = (size: number) => new Int32Array(new SharedArrayBuffer(4 * (PROGRESS_SLOTS + size)));
  /** The shared-memory ring: blocks in Atomics.wait until the main thread reports a stop (-1 length). */
  const ring = () => {
    const ctrl = new Int32Array(init.ctrl), req = new Uint8Array(init.req), res = new Uint8Array(init.res);
    const dec = new TextDecoder(), enc = new TextEncoder();
    let taken = Atomics.load(ctrl, ANSWERED);
    n = 0; c0 = threadCpuUs();
    for (;;) {
      Atomics.wait(ctrl, POSTED, taken);
      const posted = Atomics.load(ctrl, POSTED);
      while (taken < posted) {
        const k = taken & 1, len = ctrl[REQ_LEN + k];
        if (len < 0) {
          ctrl[STAT] = Math.round(((threadCpuUs() - c0) / n) * 10);
          Atomics.store(ctrl, ANSWERED, ++taken);
          Atomics.notify(ctrl, ANSWERED);
          return;
        }
        const items = JSON.parse(dec.decode(req.slice(k * SLOT, k * SLOT + len))) as Task[];
        n += items.length;
        const out = run({ items, progress: fresh(items.length) });
        ctrl[RES_LEN + k] = enc.encodeInto(out.out, res.subarray(k * SLOT, (k + 1) * SLOT)).written;
        Atomics.store(ctrl, ANSWERED, ++taken);
        Atomics.notify(ctrl, ANSWERED);
      }
    }
  };
  port.on("message", (m: Ask) => {
    if (m === "ring") return ring();
    if (m === "stat") {
      port.postMessage({ cpu: (threadCpuUs() - c0) / n });
      n = 0; c0 = threadCpuUs();
      return;
    }
    if ("loop" in m) {
      const c1 = threadCpuUs();
      let k = 0;
      const end = performance.now() + m.loop * 1000;
      while (performance.now() < end) for (const t of tasks) { run({ items: [t], progress: fresh(1) }); k++; }
      port.postMessage({ cpu: (threadCpuUs() - c1) / k });
      n = 0; c0 = threadCpuUs();
      return;
    }
    n += m.items.length;
    port.postMessage(run(m));
  });
}

async function main(): Promise<void> {
  const arg = (name: string) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : undefined; };
  const chunk = Number(arg("--chunk")) || 6, rounds = Number(arg("--rounds")) || 4, secs = Number(arg("--seconds")) || 2;
  const warm = Number(arg("--warm") ?? 10), set = (arg("--set") ?? "ordinary") as SetName;
  const tasks = tasksOf(set);
  const init: Init = { transportBench: true, set, file: fileURLToPath(import.meta.url), ctrl: new SharedArrayBuffer(64), req: new SharedArrayBuffer(2 * SLOT), res: new SharedArrayBuffer(2 * SLOT) };
  const boot = fileURLToPath(new URL("../src/core/worker-boot.mjs", import.meta.url));
  const w = new Worker(boot, { workerData: init, execArgv: workerExecArgv() });
  w.on("error", (e) => { console.error(e); process.exit(1); });
  const reply = <T>(m: Ask) => new Promise<T>((res) => { w.once("message", res); w.postMessage(m); });
  let next = 0;
  const chunkOf = () => Array.from({ length: chunk }, () => next++ % tasks.length);

  /** (b): chunks by postMessage, two in flight. */
  const byMessage = async (seconds: number): Promise<number> => {
    const end = performance.now() + seconds * 1000;
    await new Promise<void>((done) => {
      let inflight = 0;
      const send = () => { inflight++; w.postMessage({ items: chunkOf().map((i) => tasks[i]), progress: new Int32Array(new SharedArrayBuffer(4 * (PROGRESS_SLOTS + chunk))) }); };
      const on = (m: { out: string }) => {
        JSON.parse(m.out);
        inflight--;
        if (performance.now() < end) send();
        else if (inflight === 0) { w.off("message", on); done(); }
      };
      w.on("message", on);
      send(); send();
    });
    return (await reply<{ cpu: number }>("stat")).cpu;
  };

  /** (c): the same chunks through the shared-memory ring. */
  const byRing = async (seconds: number): Promise<number> => {
    const ctrl = new Int32Array(init.ctrl), req = new Uint8Array(init.req), res = new Uint8Array(init.res);
    const enc = new TextEncoder(), dec = new TextDecoder();
    let posted = Atomics.load(ctrl, POSTED), got = posted;
    const post = (json: string | null) => {
      const k = posted & 1;
      ctrl[REQ_LEN + k] = json === null ? -1 : enc.encodeInto(json, req.subarray(k * SLOT, (k + 1) * SLOT)).written;
      Atomics.store(ctrl, POSTED, ++posted);
      Atomics.notify(ctrl, POSTED);
    };
    const answered = async (): Promise<number> => {
      for (;;) {
        if (Atomics.load(ctrl, ANSWERED) > got) return got++;
        const r = waitAsync(ctrl, ANSWERED, got);
        if (r.async) await r.value;
      }
    };
    w.postMessage("ring");
    const end = performance.now() + seconds * 1000;
    const send = () => post(JSON.stringify(chunkOf().map((i) => tasks[i])));
    send(); send();
    for (let inflight = 2; inflight > 0;) {
      const k = (await answered()) & 1;
      JSON.parse(dec.decode(res.slice(k * SLOT, k * SLOT + ctrl[RES_LEN + k])));
      inflight--;
      if (performance.now() < end) { send(); inflight++; }
    }
    post(null);
    await answered();
    return ctrl[STAT] / 10;
  };
  const byLoop = async (seconds: number) => (await reply<{ cpu: number }>({ loop: seconds })).cpu;

  await byLoop(warm / 2); await byMessage(warm / 4); await byRing(warm / 4);
  console.log(`${set}, chunks of ${chunk}, one worker, load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
  console.log("worker CPU µs per item: loop (no message) | postMessage (ratio) | shared-memory ring (ratio)");
  for (let r = 0; r < rounds; r++) {
    const loop = await byLoop(secs), msg = await byMessage(secs), ring = await byRing(secs);
    console.log(`${loop.toFixed(1)} | ${msg.toFixed(1)} (${(msg / loop).toFixed(2)}x) | ${ring.toFixed(1)} (${(ring / loop).toFixed(2)}x)`);
  }
  await w.terminate();
}

if (isMainThread) await main();
else if ((workerData as Init | undefined)?.transportBench) worker(workerData as Init);
