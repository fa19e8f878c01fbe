/**
 * The pre-forked Python process's rehearsal (sandbox/runner/runner.py's ZYGOTE) is only a head
 * start: with its run already waiting on the channel it begins no step (back to back, the run
 * would otherwise wait for it), and with none waiting it does every step. The fork server's own
 * functions, taken out of runner.py by name and run in a plain python3 with a socket pair for
 * the channel; no sandbox needed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { RUNNER_PATH } from "../sandbox/paths.js";

const SCRIPT = String.raw`
import ast, io, json, os, select, socket, sys
src = open(sys.argv[1]).read()
zyg = src[src.index('ZYGOTE = r"""') + len('ZYGOTE = r"""'):]
zyg = zyg[:zyg.index('"""')]
wanted = {"stream", "rehearse", "_rehearse_env", "_rehearse_streams", "_rehearse_parse"}
mod = ast.parse(zyg)
defs = [n for n in mod.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
assert {d.name for d in defs} == wanted, sorted(d.name for d in defs)
g = {"io": io, "json": json, "os": os, "select": select, "socket": socket, "sys": sys}
exec(compile(ast.Module(body=defs, type_ignores=[]), "runner.py", "exec"), g)
waiting = sys.argv[2] == "waiting"
os.environ["REHEARSAL_PROBE"] = "1"
stdout = sys.stdout
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
if waiting:
    a.send(b"{}")
g["rehearse"](b)
print(json.dumps({"env_cleared": "REHEARSAL_PROBE" not in os.environ, "stdout_replaced": sys.stdout is not stdout}), file=stdout)
`;

function rehearse(mode: "waiting" | "idle"): { env_cleared: boolean; stdout_replaced: boolean } {
  const r = spawnSync("python3", ["-c", SCRIPT, RUNNER_PATH, mode], { encoding: "utf8", timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split("\n").pop()!);
}

test("with no run waiting, the pre-forked process rehearses every step", () => {
  assert.deepEqual(rehearse("idle"), { env_cleared: true, stdout_replaced: true });
});

test("with its run already waiting on the channel, it begins no step of the rehearsal", () => {
  assert.deepEqual(rehearse("waiting"), { env_cleared: false, stdout_replaced: false });
});
