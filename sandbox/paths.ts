/** Where the package's non-code files (runner, image recipes) live, from sources or from dist/. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "sandbox", "runner", "runner.py"))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find the Assay package root (sandbox/runner/runner.py)");
    dir = up;
  }
}

export const PACKAGE_ROOT = findRoot();
export const RUNNER_PATH = join(PACKAGE_ROOT, "sandbox", "runner", "runner.py");
export const IMAGES_DIR = join(PACKAGE_ROOT, "sandbox", "images");
let runnerSource: string | undefined;
/** The in-sandbox runner's source (sent to each container as `python3 -c`). */
export function runnerSourceText(): string {
  return (runnerSource ??= readFileSync(RUNNER_PATH, "utf8"));
}
