/**
 * The worker side of bench/math-sab.ts's shared-memory transport (an experiment, issue 38): a
 * thread blocks in Atomics.wait on its slots in turn, reads a chunk of tasks as JSON from shared
 * memory, grades them with the pool's own gradeTask, writes the results' JSON back and notifies.
 * No MessagePort, no event loop turn, no structured clone on either side.
 */
import { workerData } from "node:worker_threads";
import { gradeTask, warmUp } from "../verifiers/math/worker.js";
import { HEAD, slotViews, type SabWorkerData } from "./math-sab-layout.js";

const d = workerData as SabWorkerData;
warmUp(d.warmupMs);
const slots = Array.from({ length: d.slots }, (_, k) => slotViews(d.sab, k, d.slotBytes));
Atomics.store(slots[0]!.head, HEAD.ready, 1);
Atomics.notify(slots[0]!.head, HEAD.ready);
const seen = slots.map(() => 0);
for (let k = 0; ; k = (k + 1) % slots.length) {
  const s = slots[k]!;
  Atomics.wait(s.head, HEAD.req, seen[k]!);
  seen[k] = Atomics.load(s.head, HEAD.req);
  const tasks = JSON.parse(s.bytes.toString("utf8", s.reqAt, s.reqAt + s.head[HEAD.reqLen]!)) as Parameters<typeof gradeTask>[0][];
  const out = tasks.map((t) => {
    try {
      return gradeTask(t);
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
  });
  s.head[HEAD.respLen] = s.bytes.write(JSON.stringify(out), s.respAt, "utf8");
  Atomics.add(s.head, HEAD.resp, 1);
  Atomics.notify(s.head, HEAD.resp);
}
