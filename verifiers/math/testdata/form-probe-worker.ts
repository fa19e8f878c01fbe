/**
 * A stand-in for worker.ts (pool-dispatch.test.ts): answers each item with the form this module
 * was loaded in, "esm" (an ES module, as the main thread runs the verifier) or "cjs" (through
 * require(): tsx's CommonJS transform of the same source).
 */
import { parentPort } from "node:worker_threads";
import type { Chunk, ChunkResult } from "../worker.js";

const form = typeof require === "undefined" ? "esm" : "cjs";
parentPort!.on("message", (c: Chunk) => {
  Atomics.store(c.progress, 0, c.items.length + 1);
  const out = c.items.map(() => ({ reward: 1, reason: form, details: { extracted: null } }));
  parentPort!.postMessage({ out: JSON.stringify(out), ms: c.items.map(() => 0) } satisfies ChunkResult);
});
parentPort!.postMessage({ ready: true });
