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
/** The warm Ruby's fork server (issue 31), sent inside the runner's text. */
export const RUBY_SERVER_PATH = join(PACKAGE_ROOT, "sandbox", "runner", "ruby_server.rb");
/** The warm PHP's fork server, sent inside the runner's text too. */
export const PHP_SERVER_PATH = join(PACKAGE_ROOT, "sandbox", "runner", "php_server.php");
let runnerSource: string | undefined;
/**
 * The in-sandbox runner's source (sent to each container as `python3 -c`), with the Ruby and PHP
 * fork servers' sources in it (its `RUBY_SERVER = None` line made a string literal: JSON's is Python's).
 */
export function runnerSourceText(): string {
  if (runnerSource === undefined) {
    const text = readFileSync(RUNNER_PATH, "utf8");
    let out = text;
    for (const [name, path] of [["RUBY_SERVER", RUBY_SERVER_PATH], ["PHP_SERVER", PHP_SERVER_PATH]]) {
      const marker = new RegExp(`^${name} = None$`, "m");
      if (!marker.test(out)) throw new Error(`${RUNNER_PATH} has no "${name} = None" line for a fork server's source`);
      out = out.replace(marker, () => `${name} = ${JSON.stringify(readFileSync(path, "utf8"))}`);
    }
    runnerSource = out;
  }
  return runnerSource;
}
