/**
 * The process the js backend's isolates live in (process.ts). V8 aborts the whole process when
 * an isolate's hash table (a Map, a Set, an object's properties) cannot grow within the heap
 * limit: isolated-vm calls that catastrophic and cannot recover the isolate. Here it takes only
 * this process, and the server side runs the programs that were in it again, each alone, to
 * find the one that did it.
 */
import { openJs, type JsSandbox } from "./index.js";
import type { RunRequest } from "../types.js";

// A catastrophic error leaves the isolate's thread stuck: end at once, so the host sees it.
// (process.exit waits for that thread, forever; SIGKILL leaves no core file either.)
const opened = await openJs({ onCatastrophicError: () => process.kill(process.pid, "SIGKILL") });
const sandbox = opened.sandbox as JsSandbox | null;

process.on("message", (m: { id: number; req: RunRequest }) => {
  if (!sandbox) return process.send!({ id: m.id, error: opened.note });
  sandbox.run(m.req).then(
    (outcome) => process.send!({ id: m.id, outcome }),
    (e: Error) => process.send!({ id: m.id, error: e.message }),
  );
});
// the server is gone: nothing is left to answer
process.on("disconnect", () => process.exit(0));
process.send!({ ready: true, note: opened.note });
