/**
 * The compose cluster (deploy/compose.yaml, issue 33), brought up here and broken on purpose:
 * HAProxy over two Assay replicas sharing one store (PostgreSQL) and one job queue (Redis), two
 * batch workers, code on the host's two Docker engines. Through the load balancer, on loopback:
 * - a rubric created on one replica is read and used (scored with the fixture judge) on the other;
 * - a 100k-item job (cheap `exact` items) survives SIGKILL of one replica and one worker: every
 *   result once, in input order, each the right reward;
 * - `/reward/batch` traffic goes on being answered while a replica is SIGKILLed and restarted: the
 *   client retries a batch that failed (a batch is idempotent), no item is lost and each answer
 *   holds each of its items exactly once;
 * - items/s through the load balancer with 1 and with 2 replicas, measured in the same run.
 *
 * Bounded (each phase has its own limit; the whole test 25 min) and the cluster is always taken
 * down (`docker-compose down -v`, and any sandbox container its replicas left). Needs a Docker
 * engine, Debian's docker-compose, the second engine (scripts/docker2.sh start) and a built
 * checkout; under CI=true a missing one fails instead of skipping. The images are built (or
 * found, by content hash) by `assay image build --compose`'s code.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer as netServer } from "node:net";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { buildDeployImages, buildServerImage } from "../src/deploy/image.js";
import { PACKAGE_ROOT } from "../sandbox/paths.js";
import { loadConfig, settingsList } from "../src/core/config.js";
import { IN_CI } from "./sandboxes.js";
import { startJudgeFixture } from "./fixtures/judge-server.js";
import { exchange } from "./helpers.js";

const DEPLOY = join(PACKAGE_ROOT, "deploy");
const COMPOSE_FILE = join(DEPLOY, "compose.yaml");
/**
 * The shared store (ASSAY_STORE_URL) is another branch's work (issue 33, part A). Where this tree
 * does not declare it, the cluster runs without it (a server refuses an unknown ASSAY_* name), and
 * what needs a shared store (a rubric across replicas, a job followed on any replica) is skipped,
 * saying so; the load balancer, kill and restart parts run either way.
 */
const SHARED_STORE = settingsList().some((s) => s.env === "ASSAY_STORE_URL");
const NO_STORE = SHARED_STORE ? false : "this tree has no ASSAY_STORE_URL setting (the shared store, issue 33 part A): replicas keep their own stores";

/** deploy/compose.yaml as it is, or (no shared store here) without ASSAY_STORE_URL, in a temporary file. */
function composeFile(dir: string): string {
  if (SHARED_STORE) return COMPOSE_FILE;
  const doc = parse(readFileSync(COMPOSE_FILE, "utf8"), { merge: true }) as { services: Record<string, { environment?: Record<string, string>; volumes?: string[] }>; "x-assay"?: unknown };
  delete doc["x-assay"]; // merged into the services already
  for (const svc of Object.values(doc.services)) {
    if (svc.environment) delete svc.environment.ASSAY_STORE_URL;
    // Its bind mounts are relative to deploy/.
    if (svc.volumes) svc.volumes = svc.volumes.map((v) => (v.startsWith("./") ? join(DEPLOY, v.slice(2)) : v));
  }
  const file = join(dir, "compose.yaml");
  writeFileSync(file, stringify(doc, { aliasDuplicateObjects: false, version: "1.1" }));
  return file;
}
const DOCKER2 = "/run/assay-docker2.sock";
const sh = (cmd: string, args: string[], env?: NodeJS.ProcessEnv, timeout = 180_000) =>
  execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout, env: env ?? process.env, maxBuffer: 1 << 26 }).trim();
const docker = (...args: string[]) => sh("docker", args);

function unavailable(): string | false {
  const missing: string[] = [];
  try {
    docker("info", "--format", "{{.ID}}");
  } catch {
    missing.push("a Docker engine");
  }
  try {
    sh("docker-compose", ["version", "--short"]);
  } catch {
    missing.push("docker-compose (apt-get install docker-compose)");
  }
  try {
    sh("docker", ["-H", `unix://${DOCKER2}`, "info", "--format", "{{.ID}}"]);
  } catch {
    missing.push("the second Docker engine (bash scripts/docker2.sh start)");
  }
  if (!existsSync(join(PACKAGE_ROOT, "dist", "src", "cli", "main.js"))) missing.push("a built checkout (dist/: npm run build)");
  if (!missing.length) return false;
  if (IN_CI) throw new Error(`CI=true but the compose test needs ${missing.join(", ")}`);
  return `the compose test needs ${missing.join(", ")}`;
}

/**
 * A free loopback port for HAProxy, below the kernel's ephemeral range. Docker publishes the
 * replicas' ports (`127.0.0.1::8787`) from that range, so a port the kernel picked there could be
 * handed to a replica before HAProxy binds it: one local CI run failed so ("Bind for
 * 127.0.0.1:32775 failed: port is already allocated").
 */
async function freePort(): Promise<number> {
  const ephemeral = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
  const high = ephemeral > 2048 ? ephemeral : 32768;
  const low = Math.max(1024, high - 12_000);
  for (let tries = 0; tries < 100; tries++) {
    const port = low + Math.floor(Math.random() * (high - low));
    const s = netServer();
    const bound = await new Promise<boolean>((r) => {
      s.once("error", () => r(false));
      s.listen(port, "127.0.0.1", () => r(true));
    });
    if (bound) {
      await new Promise<void>((r) => s.close(() => r()));
      return port;
    }
  }
  throw new Error(`no free loopback port in ${low}-${high - 1} for the compose test's load balancer`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Result {
  id?: string | number;
  reward: number | null;
  status: string;
  reason: string;
}

test("compose: two replicas behind HAProxy share a store and a queue, and survive SIGKILL", { skip: unavailable(), timeout: 25 * 60_000 }, async (t) => {
  const c = loadConfig().sandbox;
  const t0 = Date.now();
  const log: string[] = [];
  await buildServerImage(c, (l) => log.push(l));
  await buildDeployImages(c, (l) => log.push(l));
  t.diagnostic(`images: ${((Date.now() - t0) / 1000).toFixed(0)} s (${log.filter((l) => /already built/.test(l)).length} of 5 already built)`);

  const run = `${process.pid}${Date.now().toString(36)}`;
  const project = `assayct${run}`;
  const lbPort = await freePort();
  const env = { ...process.env, LB_PORT: String(lbPort), DOCKER_GID: String(statSync("/var/run/docker.sock").gid), DOCKER2_SOCK: DOCKER2, SANDBOX_POOL: "1", LOG_LEVEL: "warn" };
  const tmp = mkdtempSync(join(tmpdir(), "assay-compose-"));
  const file = composeFile(tmp);
  const compose = (args: string[], timeout = 180_000) => sh("docker-compose", ["-p", project, "-f", file, ...args], env, timeout);
  const lb = `http://127.0.0.1:${lbPort}`;
  let judge: Awaited<ReturnType<typeof startJudgeFixture>> | undefined;
  const containerOf = (service: string) => compose(["ps", "-q", service]);
  const replicaUrl = (service: string) => `http://${compose(["port", service, "8787"])}`;

  async function waitReady(url: string, what: string, ms = 240_000): Promise<void> {
    const until = Date.now() + ms;
    for (;;) {
      const r = await exchange(`${url}/readyz`, {}, 5_000).catch(() => null);
      if (r?.ok) return;
      if (Date.now() > until) throw new Error(`${what} not ready in ${ms / 1000} s: ${r ? r.text : "no answer"}\n${compose(["logs", "--tail", "40"])}`);
      await sleep(500);
    }
  }
  /**
   * One batch through the load balancer, retried (on another replica: round robin) on a
   * connection error, a 5xx or 429 until it is answered or its deadline passes.
   */
  async function batch(items: { id: string; verifier: string; response: string; reference: string }[], deadline: number): Promise<{ results: Result[]; tries: number }> {
    let tries = 0;
    for (;;) {
      tries++;
      try {
        const r = await exchange(`${lb}/reward/batch`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ items }) }, 30_000);
        if (r.ok) return { results: r.json<{ results: Result[] }>().results, tries };
        if (r.status < 500 && r.status !== 429) throw new Error(`batch refused: HTTP ${r.status}`);
      } catch (e) {
        if ((e as Error).message.startsWith("batch refused")) throw e;
      }
      if (Date.now() > deadline) throw new Error(`a batch was not answered in time after ${tries} tries`);
      await sleep(200);
    }
  }

  let n = 0;
  const items = (k: number) =>
    Array.from({ length: k }, () => {
      const i = n++;
      return { id: `b${i}`, verifier: "exact", response: String(i % 7), reference: String(i % 5) };
    });
  const check = (sent: { id: string; response: string; reference: string }[], results: Result[]) => {
    assert.equal(results.length, sent.length, "one result per item");
    sent.forEach((s, j) => {
      assert.equal(results[j].id, s.id, "in order, each once");
      assert.equal(results[j].reward, s.response === s.reference ? 1 : 0, results[j].reason);
    });
  };

  /** items/s through the load balancer: `workers` clients sending batches of 200 for `ms`. */
  async function throughput(ms: number, workers = 8): Promise<number> {
    const end = Date.now() + ms;
    let done = 0;
    const t1 = Date.now();
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (Date.now() < end) {
          const sent = items(200);
          check(sent, (await batch(sent, end + 60_000)).results);
          done += sent.length;
        }
      }),
    );
    return done / ((Date.now() - t1) / 1000);
  }

  // The replicas' and workers' hostnames (container ids): the owners of their sandbox containers.
  const owners = new Set<string>();
  try {
    const tUp = Date.now();
    compose(["up", "-d"], 300_000);
    const hostnames = () => {
      for (const s of ["assay1", "assay2", "worker1", "worker2"]) owners.add(docker("inspect", "--format", "{{.Config.Hostname}}", containerOf(s)));
    };
    hostnames();
    await waitReady(replicaUrl("assay1"), "assay1");
    await waitReady(replicaUrl("assay2"), "assay2");
    await waitReady(lb, "the load balancer");
    await sleep(3_000); // both in HAProxy's rotation (2 good checks, 1 s apart)
    t.diagnostic(`cluster up in ${((Date.now() - tUp) / 1000).toFixed(0)} s`);

    await t.test("a rubric created on one replica is used on the other", { skip: NO_STORE }, async () => {
      const a = replicaUrl("assay1");
      const b = replicaUrl("assay2");
      const made = await exchange(`${a}/rubrics`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: `compose ${run}`, criteria: [{ id: "names-paris", description: 'The answer names "Paris".', weight: 1 }] }),
      });
      assert.equal(made.status, 201, made.text);
      const { id } = made.json<{ id: string }>();
      const got = await exchange(`${b}/rubrics/${id}`);
      assert.equal(got.status, 200, `replica 2 knows the rubric replica 1 stored: ${got.text}`);
      // The fixture judge listens where the containers reach the host: their network's gateway.
      judge = await startJudgeFixture(docker("network", "inspect", "--format", "{{(index .IPAM.Config 0).Gateway}}", `${project}_default`));
      const judgeUrl = judge.url;
      const score = async (response: string) => {
        const r = await exchange(`${b}/reward`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ verifier: "rubric", prompt: "Capital of France?", response, reference: { rubric_id: id }, options: { judge: { base_url: judgeUrl, model: "fixture" } } }),
        });
        return r.json<Result>();
      };
      assert.equal((await score("It is Paris.")).reward, 1);
      assert.equal((await score("It is Lyon.")).reward, 0);
    });

    await t.test("items/s through the load balancer, 1 replica then 2", async () => {
      compose(["stop", "-t", "10", "assay2"]);
      await sleep(3_000); // out of the rotation (2 failed checks, 1 s apart)
      const one = await throughput(4_000);
      compose(["start", "assay2"]);
      await waitReady(replicaUrl("assay2"), "assay2");
      await sleep(3_000); // back in the rotation (2 good checks)
      const two = await throughput(4_000);
      t.diagnostic(`through the load balancer, exact items, batches of 200, 8 clients: 1 replica ${one.toFixed(0)} items/s, 2 replicas ${two.toFixed(0)} items/s (x${(two / one).toFixed(2)}), on ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores shared with the test`);
      assert.ok(one > 0 && two > 0);
    });

    await t.test("/reward/batch keeps being answered while a replica is SIGKILLed and restarted", async () => {
      const stop = { now: false };
      let answered = 0;
      let retried = 0;
      const clients = Array.from({ length: 4 }, async () => {
        while (!stop.now) {
          const sent = items(50);
          const { results, tries } = await batch(sent, Date.now() + 120_000);
          check(sent, results);
          answered += sent.length;
          if (tries > 1) retried++;
        }
      });
      await sleep(3_000);
      const before = answered;
      docker("kill", "-s", "KILL", containerOf("assay1"));
      await sleep(5_000);
      const duringKill = answered - before;
      compose(["start", "assay1"]);
      await waitReady(replicaUrl("assay1"), "assay1 after its restart");
      await sleep(3_000);
      stop.now = true;
      await Promise.all(clients);
      t.diagnostic(`kill and restart: ${answered} items answered, ${duringKill} in the 5 s after the SIGKILL, ${retried} batches needed a retry; none lost, none twice`);
      assert.ok(duringKill > 0, "answers went on while a replica was dead");
    });

    await t.test("a 100k-item job survives SIGKILL of a replica and a worker: every result once, in order", { skip: NO_STORE }, async () => {
      const total = 100_000;
      const lines: string[] = [];
      for (let i = 0; i < total; i++) lines.push(JSON.stringify({ id: `j${i}`, verifier: "exact", response: String(i % 3), reference: "0" }));
      const sub = await exchange(`${lb}/jobs`, { method: "POST", headers: { "content-type": "application/x-ndjson" }, body: lines.join("\n") + "\n" }, 120_000);
      assert.equal(sub.status, 201, sub.text);
      const { id } = sub.json<{ id: string }>();
      const tJob = Date.now();
      const progress = async () => (await exchange(`${lb}/jobs/${id}?summary=false`)).json<{ status: string; done: number; total: number }>();
      // Kill once it is under way: as soon as it runs. Waiting for 10% done, or for the first
      // result, saw the job already done in some runs (the count can go from 0 to all at once)
      // and the kills tested nothing.
      let before = await progress();
      for (; before.status === "queued"; before = await progress()) {
        if (Date.now() - tJob > 300_000) throw new Error(`the job did not start in 300 s: ${JSON.stringify(before)}`);
        await sleep(50);
      }
      // Running, not done: the kills land before the job ends. (Exact items are scored in a few
      // seconds, so the worker may hold no chunk by then; tests/jobs-redis.test.ts kills one mid-chunk.)
      assert.equal(before.status, "running", `the job was ${before.status} with ${before.done} of ${total} done before the kills: they would test nothing`);
      docker("kill", "-s", "KILL", containerOf("assay2"));
      docker("kill", "-s", "KILL", containerOf("worker1"));
      const killedAt = (await progress()).done;
      let p = await progress();
      while (p.status !== "done") {
        if (Date.now() - tJob > 900_000) throw new Error(`the job did not finish in 900 s: ${JSON.stringify(p)}`);
        if (p.status === "failed" || p.status === "cancelled") throw new Error(`the job ${p.status}`);
        await sleep(1_000);
        p = await progress();
      }
      const s = (Date.now() - tJob) / 1000;
      const { text } = await exchange(`${lb}/jobs/${id}/results`, {}, 300_000);
      const results = text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Result);
      assert.equal(results.length, total, "every result");
      for (let i = 0; i < total; i++) {
        if (results[i].id !== `j${i}`) assert.fail(`result ${i} is ${results[i].id}: each once, in order`);
        if (results[i].reward !== (i % 3 === 0 ? 1 : 0)) assert.fail(`result ${i}: ${JSON.stringify(results[i])}`);
      }
      t.diagnostic(`100k-item job: done in ${s.toFixed(0)} s (${(total / s).toFixed(0)} items/s), assay2 and worker1 SIGKILLed at ${killedAt} items`);
      compose(["start", "assay2", "worker1"]);
    });
  } finally {
    // Always down, whatever happened; sandbox containers the replicas left (a SIGKILLed replica
    // cannot remove its own) are found by their owner label, the replica's hostname.
    try {
      for (const s of ["assay1", "assay2", "worker1", "worker2"]) {
        const id = containerOf(s);
        if (id) owners.add(docker("inspect", "--format", "{{.Config.Hostname}}", id));
      }
    } catch {
      /* never came up */
    }
    try {
      compose(["down", "-v", "--remove-orphans", "-t", "5"], 180_000);
    } catch (e) {
      t.diagnostic(`docker-compose down: ${(e as Error).message.slice(0, 300)}`);
    }
    for (const host of ["", `-H unix://${DOCKER2}`]) {
      try {
        const args = host ? host.split(" ") : [];
        const ids = sh("docker", [...args, "ps", "-aq", "--filter", "label=assay.sandbox"]).split("\n").filter(Boolean);
        for (const cid of ids) {
          const owner = sh("docker", [...args, "inspect", "--format", '{{index .Config.Labels "assay.sandbox"}}', cid]);
          if (owners.has(owner.split(":")[0])) sh("docker", [...args, "rm", "-f", cid]);
        }
      } catch {
        /* the engine is gone */
      }
    }
    await judge?.close();
    rmSync(tmp, { recursive: true, force: true });
  }
});
