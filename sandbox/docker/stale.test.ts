/**
 * Which sandbox containers a starting server removes as left behind (removeStale): those of a
 * process of this host that is gone, including a pid now held by another process. A server in a
 * container is pid 1 in every life of the container; by pid alone a replica restarted after a
 * SIGKILL (deploy/compose.yaml) took its previous life's containers for its own and kept them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { isStale } from "./index.js";
import { OWNER, processStart } from "./worker.js";

test("a container is stale when its owner is gone or its pid is another process now; never another host's", () => {
  const host = hostname();
  assert.match(OWNER, new RegExp(`^${host.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:${process.pid}:\\d+$`), "the label names the process's start");
  assert.equal(isStale(OWNER), false, "this process's own");
  const start = processStart(process.pid);
  assert.ok(start, "/proc gives the start time");
  assert.equal(isStale(`${host}:${process.pid}:${Number(start) - 1}`), true, "the same pid, an earlier process (a restarted container's pid 1)");
  const gone = spawnSync("true").pid!;
  assert.equal(isStale(`${host}:${gone}:1`), true, "a process that exited");
  assert.equal(isStale(`${host}:${process.pid}`), false, "a label without a start time (an older server's) goes by the pid");
  assert.equal(isStale(`not-${host}:${gone}:1`), false, "another host's containers are left alone");
});
