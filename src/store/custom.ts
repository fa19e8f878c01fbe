/**
 * Custom verifiers' sources: JavaScript or TypeScript modules exporting `score`. TypeScript (and
 * ES module syntax in JavaScript) is compiled on upload with TypeScript's transpileModule to a
 * CommonJS body the sandbox runs (verifiers/custom); a source that does not parse is refused then.
 *
 * Compiling runs in a worker thread (piscina, custom-compile-worker.ts), never on the event
 * loop: an 8 KB source of nested generics takes the compiler seconds. The thread has a heap limit
 * (COMPILE_HEAP_MB) and the compile a time limit (ASSAY_CUSTOM_COMPILE_MS, counted once a thread
 * with the compiler loaded takes the source: starting one is warm-up); past either the thread is
 * ended and the upload refused with what to change. The thread runs at the lowest priority
 * (nice 19 on Linux), so a long compile takes CPU only the server's own thread leaves. The
 * limit is wall time (a queued upload waits behind the one compiling, one at a time).
 */
import { Piscina } from "piscina";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Wire } from "../core/types.js";
import { Invalid } from "./versioned.js";
import type { CompileResult, CompileTask } from "./custom-compile-worker.js";

export type CustomContent = Omit<Wire["CustomVerifierInput"], "name"> & { compiled: string };
export type CustomVerifierDoc = Wire["CustomVerifier"];

/** Heap limit of the compiling thread, MiB (TypeScript itself takes ~60). */
export const COMPILE_HEAP_MB = 512;

export interface CompileLimits {
  /** Most wall time one compile may take, ms (ASSAY_CUSTOM_COMPILE_MS). */
  timeoutMs: number;
}

let pool: Piscina<CompileTask, CompileResult> | undefined;

function workerFile(): string {
  const self = fileURLToPath(import.meta.url);
  const file = self.replace(/custom\.(ts|js)$/, `custom-compile-worker.${self.endsWith(".ts") ? "ts" : "js"}`);
  if (!existsSync(file)) throw new Error(`custom verifier compile worker not found at ${file}`);
  return file;
}

function compilePool(): Piscina<CompileTask, CompileResult> {
  pool ??= new Piscina<CompileTask, CompileResult>({
    filename: workerFile(),
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: 30_000,
    concurrentTasksPerWorker: 1,
    // the worker inherits tsx's --import from execArgv when running from sources
    execArgv: process.execArgv,
    resourceLimits: { maxOldGenerationSizeMb: COMPILE_HEAP_MB, stackSizeMb: 4 },
  });
  return pool;
}

/** A compile thread with the compiler loaded: its start (seconds on a busy host) is not the source's time. */
let warmed: Promise<unknown> | undefined;
function warmPool(): Promise<unknown> {
  warmed ??= compilePool().run({ warm: true, source: "", language: "javascript" }, { signal: AbortSignal.timeout(120_000) }).catch((e) => {
    warmed = undefined;
    throw e;
  });
  return warmed;
}

/** Compiles the source off the event loop; throws Invalid with the first syntax error (line and column), or with the limit it ran past. */
export async function compileCustom(input: Omit<Wire["CustomVerifierInput"], "name">, limits: CompileLimits = { timeoutMs: 10_000 }): Promise<CustomContent> {
  await warmPool();
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let r: CompileResult;
  try {
    r = await compilePool().run({ source: input.source, language: input.language }, { signal });
  } catch (e) {
    if (signal.aborted) {
      warmed = undefined; // the thread was ended: the next compile warms a new one first
      throw new Invalid(`at /source: compiling took longer than ${limits.timeoutMs} ms (ASSAY_CUSTOM_COMPILE_MS): simplify the source (deeply nested generics and type arguments are what make the compiler slow), or upload the compiled JavaScript`);
    }
    const msg = (e as Error).message ?? String(e);
    if (/memory|ERR_WORKER_OUT_OF_MEMORY/i.test(msg) || (e as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY") {
      throw new Invalid(`at /source: compiling ran out of memory (the compiler's heap limit is ${COMPILE_HEAP_MB} MiB): simplify the source, or upload the compiled JavaScript`);
    }
    throw e;
  }
  if (!r.ok) throw new Invalid(`at /source: ${r.message}`);
  return { ...(input.description !== undefined ? { description: input.description } : {}), language: input.language, source: input.source, compiled: r.compiled };
}

/** Ends the compile thread (tests, shutdown); the next compile starts another. */
export async function closeCompilePool(): Promise<void> {
  const p = pool;
  pool = undefined;
  warmed = undefined;
  await p?.destroy();
}

export function customContent(c: CustomContent): CustomContent {
  return { ...(c.description !== undefined ? { description: c.description } : {}), language: c.language, source: c.source, compiled: c.compiled };
}
