/**
 * The worker-thread side of compiling an uploaded custom verifier (custom.ts): TypeScript's
 * transpileModule on one source. Runs in a piscina thread with a heap limit, aborted past its
 * time limit, so a source that makes the compiler slow (nested generics' speculative parsing is
 * super-linear) or deep (a stack overflow) never holds the server's event loop.
 */
import ts from "typescript";
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";

export interface CompileTask {
  /** A warm-up task: loads the compiler, compiles nothing. */
  warm?: true;
  source: string;
  language: "javascript" | "typescript";
}

// The compile thread yields to the server's own thread: on Linux a thread has its own nice value,
// found through /proc/thread-self (-> "<pid>/task/<tid>"). Best effort elsewhere.
try {
  const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, 19);
} catch {
  /* not Linux, or not allowed: the thread keeps the default priority */
}

export type CompileResult = { ok: true; compiled: string } | { ok: false; message: string };

export default function compile(task: CompileTask): CompileResult {
  if (task.warm) return { ok: true, compiled: "" };
  let out: ts.TranspileOutput;
  try {
    out = ts.transpileModule(task.source, {
      reportDiagnostics: true,
      fileName: task.language === "typescript" ? "verifier.ts" : "verifier.js",
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, allowJs: true, isolatedModules: true, sourceMap: false, removeComments: false },
    });
  } catch (e) {
    if (e instanceof RangeError) return { ok: false, message: "does not compile: it is nested too deeply for the compiler (a stack overflow); flatten the nesting" };
    throw e;
  }
  const diag = out.diagnostics?.find((d) => d.category === ts.DiagnosticCategory.Error);
  if (diag) {
    const where = diag.file && diag.start !== undefined ? diag.file.getLineAndCharacterOfPosition(diag.start) : undefined;
    const at = where ? ` at line ${where.line + 1}, column ${where.character + 1}` : "";
    return { ok: false, message: `does not compile${at}: ${ts.flattenDiagnosticMessageText(diag.messageText, " ")}` };
  }
  return { ok: true, compiled: out.outputText };
}
