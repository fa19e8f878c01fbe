/**
 * The process custom verifiers' isolates live in (process.ts): a CustomRunner, asked over IPC.
 * V8 aborts the process an isolate lives in when a Map, a Set or an object's properties cannot
 * grow within the heap limit (isolated-vm's catastrophic error); here that ends only this process.
 */
import { CustomRunner, type RunnerLimits } from "./runner.js";

const limits = JSON.parse(process.argv[2] ?? "{}") as RunnerLimits;
// A catastrophic error leaves the isolate's thread stuck: end at once, so the host sees it
// (process.exit would wait for that thread forever).
const runner = new CustomRunner({ ...limits, onCatastrophicError: () => process.kill(process.pid, "SIGKILL") });
/** Each verifier's compiled body, sent once per process. */
const bodies = new Map<string, string>();

process.on("message", (m: { id: number; op: "score" | "warm"; name: string; compiled?: string; input?: unknown }) => {
  if (m.compiled !== undefined) bodies.set(m.name, m.compiled);
  const compiled = bodies.get(m.name);
  if (compiled === undefined) return process.send!({ id: m.id, result: { ok: false, message: "the verifier's body never reached its process" } });
  if (m.op === "warm") void runner.warm(m.name, compiled).then(() => process.send!({ id: m.id }));
  else void runner.score(m.name, compiled, m.input).then((result) => process.send!({ id: m.id, result }));
});
// the server is gone: nothing is left to answer
process.on("disconnect", () => process.exit(0));
process.send!({ ready: true });
