/**
 * The module `name` beside the calling module, as a file path: `name.js` when the caller runs
 * compiled, `name.ts` when it runs from sources under tsx. For the modules that start a worker
 * thread or a child process from a file of their own folder (the math pool, the SQLite pool, the
 * SQL parse process). Throws, naming `what`, when the file is missing.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export function siblingModule(callerUrl: string, name: string, what: string): string {
  const self = fileURLToPath(callerUrl);
  const ext = self.endsWith(".ts") ? ".ts" : ".js";
  const file = fileURLToPath(new URL(`./${name}${ext}`, callerUrl));
  if (!existsSync(file)) throw new Error(`${what} not found at ${file}`);
  return file;
}
