import { test } from "node:test";
import assert from "node:assert/strict";
import { EXEC_MARK, isSetupFailure } from "./index.js";
import type { CappedResult } from "../process.js";

const base: CappedResult = { exitCode: 1, signal: null, stdout: "", stderr: "", truncated: false, wallMs: 5, killedBy: null, fd3: '{"child-pid": 12}\n{"exit-code": 1}\n' };
const FORK_FAIL = "bwrap: Can't fork for pid 1: Resource temporarily unavailable\n";

test("bwrap's pid 1 failing to fork the program is a setup failure, not the program's exit 1", () => {
  assert.equal(isSetupFailure({ ...base, stderr: FORK_FAIL }), true);
});

test("the same words printed by a program that ran are the program's failure", () => {
  assert.equal(isSetupFailure({ ...base, stderr: EXEC_MARK + FORK_FAIL }), false);
});

test("no child-pid on the status fd is a setup failure; a killed run never is", () => {
  assert.equal(isSetupFailure({ ...base, fd3: "", stderr: EXEC_MARK }), true);
  assert.equal(isSetupFailure({ ...base, fd3: "", killedBy: "time_limit" }), false);
  assert.equal(isSetupFailure({ ...base, stderr: EXEC_MARK, exitCode: 0 }), false);
});
