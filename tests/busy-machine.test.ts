/**
 * The same reward on a busy machine (issue 36): 42 code items (right and wrong programs in
 * Python and C++, stdin/stdout and function calls, programs that use most of their CPU limit,
 * and hostile ones: many sleeping processes, a memory bomb over many processes, System V
 * message queues, a fork bomb, an endless loop) scored through HTTP on an idle machine, again
 * with a CPU hog holding every core at 4x oversubscription, and again with an I/O and memory
 * hog: every reward the same as the expected one in each phase, and no null. On both backends
 * (bwrap and docker; tests/sandboxes.ts). The hogs are started and stopped by the test.
 * Asserts are on rewards and nulls only: this machine may be busy with other work besides.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import type { ChildProcess } from "node:child_process";
import { cpus, tmpdir } from "node:os";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Sandbox } from "../sandbox/types.js";
import { openBwrapForTests, type Opened } from "./sandboxes.js";
import { openDocker, dockerOptions } from "../sandbox/docker/index.js";
import { loadConfig } from "../src/core/config.js";
import { testApp, fakeSandbox } from "./helpers.js";
import { items, cpuHog, ioMemoryHog, stopHogs } from "./busy-items.js";

const ITEMS = items();

function busySuite(name: string, open: () => Promise<Opened>) {
  return async () => {
    const opened = await open();
    describe(`${name}: the same rewards idle, under a CPU hog and under an I/O and memory hog`, { skip: opened.skip, timeout: 900_000 }, () => {
      const sb = opened.sandbox as Sandbox;
      after(() => sb?.close());
      const phases: [string, (dir: string) => ChildProcess[]][] = [
        ["idle", () => []],
        [`CPU hog (${4 * cpus().length} busy loops on ${cpus().length} cores)`, () => cpuHog(4 * cpus().length)],
        ["I/O and memory hog", ioMemoryHog],
      ];
      for (const [phase, hog] of phases) {
        test(phase, { timeout: 300_000 }, async () => {
          const { app } = await testApp({}, [], { sandbox: fakeSandbox(sb) });
          const dir = mkdtempSync(join(tmpdir(), "assay-hog-"));
          const hogs = hog(dir);
          try {
            if (hogs.length) await new Promise((r) => setTimeout(r, 500)); // the hog is at full strength
            const res = await request(app)
              .post("/reward/batch")
              .send({ items: ITEMS.map((it, id) => ({ id, verifier: "code", response: it.response, reference: it.reference, options: { time_limit_ms: 1000, ...it.options } })) });
            assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
            const wrong: string[] = [];
            for (const r of res.body.results as { id: number; reward: number | null; reason: string }[]) {
              const it = ITEMS[r.id];
              if (r.reward !== it.reward) wrong.push(`${it.name}: reward ${r.reward}, expected ${it.reward} (${r.reason})`);
            }
            assert.deepEqual(wrong, [], `${phase}: ${wrong.length} of ${ITEMS.length} items scored otherwise`);
          } finally {
            stopHogs(hogs);
            rmSync(dir, { recursive: true, force: true });
          }
        });
      }
    });
  };
}

test("the suite holds at least 40 items of every kind the issue names", () => {
  assert.ok(ITEMS.length >= 40, `${ITEMS.length} items`);
  for (const kind of ["py ", "py call", "cpp ", "near its CPU limit", "sleeping", "memory bomb", "message queues", "fork bomb"]) {
    assert.ok(ITEMS.some((it) => it.name.includes(kind)), kind);
  }
});

await busySuite("bwrap", () => openBwrapForTests(4))();
// Containers of 512 MiB: the memory bomb over processes (7 x 200 MiB) passes it with less to
// touch than the default 1 GiB would need (on a loaded 2-core machine, touching pages is slow).
await busySuite("docker", async () => {
  const { sandbox, note } = await openDocker({ ...dockerOptions(loadConfig().sandbox), poolSize: 4, memoryMb: 512 });
  if (sandbox) return { sandbox, skip: false };
  if (process.env.CI === "true") throw new Error(`CI=true but the docker sandbox is unavailable: ${note}`);
  return { sandbox: null, skip: `docker unavailable here: ${note}` };
})();
