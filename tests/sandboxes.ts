/**
 * Opens the real sandbox backends for tests. On a developer machine without Docker or bwrap a
 * test may skip; under CI=true a missing backend fails instead (CI installs both).
 */
import assert from "node:assert/strict";
import type { RunOutcome, Sandbox } from "../sandbox/types.js";
import { openDocker, dockerOptions } from "../sandbox/docker/index.js";
import { loadConfig } from "../src/core/config.js";
import { openBwrap } from "../sandbox/bwrap/index.js";
import { Worker } from "../sandbox/docker/worker.js";
import { WarmSlot } from "../sandbox/bwrap/warm.js";

export const IN_CI = process.env.CI === "true";

/** The sandbox settings the tests run with: the environment's, as the server would read them. */
const sandboxConfig = () => loadConfig().sandbox;

export interface Opened {
  sandbox: Sandbox | null;
  /** Why there is none (a skip reason on a laptop). */
  skip: string | false;
}

function verdict(name: string, sandbox: Sandbox | null, note: string): Opened {
  if (sandbox) return { sandbox, skip: false };
  if (IN_CI) throw new Error(`CI=true but the ${name} sandbox is unavailable: ${note}`);
  return { sandbox: null, skip: `${name} unavailable here: ${note}` };
}

export async function openDockerForTests(poolSize = 2): Promise<Opened> {
  const { sandbox, note } = await openDocker({ ...dockerOptions(sandboxConfig()), poolSize });
  return verdict("docker", sandbox, note);
}

export async function openBwrapForTests(slots?: number): Promise<Opened> {
  const c = sandboxConfig();
  const { sandbox, note } = await openBwrap(slots ? { ...c, poolSize: slots } : c);
  return verdict("bwrap", sandbox, note);
}

/**
 * The named backend's sandbox, for a bench script's `--backend`: an error that says what is
 * missing when it cannot open, and one that names the backends when the name is none of them
 * (a misspelt name must not quietly measure the other backend).
 */
export async function openBackend(backend: string, slots: number): Promise<Sandbox> {
  const opened = backend === "docker" ? await openDockerForTests(slots) : backend === "bwrap" ? await openBwrapForTests(slots) : null;
  if (!opened) throw new Error(`--backend ${JSON.stringify(backend)}: the backends are docker and bwrap`);
  if (!opened.sandbox) throw new Error(`${backend}: ${opened.skip}`);
  return opened.sandbox;
}

/**
 * A warm slot keeps nothing of one run for the next (issue 31): twice, a polluting run and then a
 * probe on the same slot; the probe's JSON must equal `clean` but for `random`, which must differ
 * between the two rounds (a fresh random state per run). Shared by the Python, Ruby and PHP fork
 * servers' tests, each with its own programs.
 */
export async function assertCleanAfterPollution(run: (code: string) => Promise<RunOutcome>, pollute: string, probe: string, clean: unknown): Promise<void> {
  const randoms = new Set<number>();
  for (let round = 0; round < 2; round++) {
    const p = await run(pollute);
    assert.equal(p.status, "finished", `${p.message ?? ""} ${p.stderr}`);
    assert.match(p.stdout, /^polluted /);
    const r = await run(probe);
    assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
    const seen = JSON.parse(r.stdout);
    randoms.add(seen.random);
    delete seen.random;
    assert.deepEqual(seen, clean);
  }
  assert.equal(randoms.size, 2, "two runs drew the same first random number: the random state is shared");
}

/**
 * Makes every job sent to a docker worker or a warm bwrap slot from now on ask for the runner's
 * phases (the run's own faults and CPU), and returns the list the runner's raw replies are pushed
 * to, in order (tests/warm-run-cost.test.ts, tests/warm-prefork.test.ts).
 */
export function recordRunnerReplies<R>(): R[] {
  const replies: R[] = [];
  for (const C of [Worker, WarmSlot] as unknown as { prototype: { exec: (job: any, ...a: unknown[]) => Promise<any> } }[]) {
    const orig = C.prototype.exec;
    C.prototype.exec = async function (this: unknown, job: any, ...a: unknown[]) {
      job.phases = true;
      const r = await orig.call(this, job, ...a);
      replies.push(r);
      return r;
    };
  }
  return replies;
}
