/**
 * ASSAY_DOCKER_HOSTS: the docker pool over two engines on this machine (the main one and a second
 * dockerd started by scripts/docker2.sh with its own data root, exec root, socket and containerd
 * namespace). Warm containers go to both; when engine 2 is killed mid-run, the runs it held are
 * run again on engine 1 and every item still scores, and nothing crashes.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import Docker from "dockerode";
import request from "supertest";
import { openDocker, dockerOptions, type DockerSandbox } from "../sandbox/docker/index.js";
import { LABEL, OWNER } from "../sandbox/docker/worker.js";
import { connectionOf, Engines } from "../sandbox/docker/engines.js";
import { loadConfig } from "../src/core/config.js";
import { IN_CI } from "./sandboxes.js";
import { testApp, fakeSandbox } from "./helpers.js";

const ENGINE1 = "unix:///var/run/docker.sock";
const ENGINE2 = "unix:///run/assay-docker2.sock";
/** Engine 2 on TCP with mutual TLS; the client's certificates as DOCKER_CERT_PATH reads them. */
const ENGINE2_TLS = "tcp://127.0.0.1:23760";
const CLIENT_CERTS = "/var/lib/assay-docker2/tls/client";
const PIDFILE = "/run/assay-docker2.pid";

function startEngine2(): string | false {
  const r = spawnSync("bash", ["scripts/docker2.sh", "start"], { encoding: "utf8", timeout: 300_000 });
  if (r.status === 0) return false;
  const why = `second Docker engine did not start: ${(r.stderr || r.error?.message || "").trim().slice(-300)}`;
  if (IN_CI) throw new Error(why);
  return why;
}

const mine = async (docker: Docker) =>
  (await docker.listContainers({ all: true, filters: { label: [`${LABEL}=${OWNER}`] } })).length;

describe("connectionOf", () => {
  test("unix sockets, tcp, tcp over TLS; anything else is refused", () => {
    assert.deepEqual(connectionOf("unix:///run/x.sock"), { socketPath: "/run/x.sock" });
    assert.deepEqual(connectionOf("tcp://10.0.0.5:2375"), { host: "10.0.0.5", port: 2375, protocol: "http" });
    assert.throws(() => connectionOf("tcp://10.0.0.5:2376", "/nonexistent-certs"), /ENOENT/);
    assert.throws(() => connectionOf("ssh://box"), /not a Docker engine address/);
  });
});

describe("Engines", () => {
  test("least loaded first; a failed engine is skipped until its back-off passes, which doubles per failure", () => {
    const fake = {} as Docker;
    const en = Engines.of([{ name: "a", docker: fake }, { name: "b", docker: fake }]);
    const [a, b] = en.list as [ReturnType<Engines["pick"]> & object, ReturnType<Engines["pick"]> & object];
    let downs = 0;
    en.onDown(() => downs++);
    a.live = 3;
    assert.equal(en.pick(), b);
    en.fail(b, "create failed");
    en.fail(b, "create failed"); // the same outage: one back-off step, one notice
    assert.equal(downs, 1);
    assert.equal(b.backoffMs, 2000);
    assert.equal(en.pick(), a);
    b.retryAt = Date.now() - 1; // its back-off has passed
    assert.equal(en.pick(), b);
    en.fail(b, "still down");
    assert.equal(b.backoffMs, 4000);
    en.fail(a, "gone");
    assert.equal(en.pick(), null);
    assert.equal(en.nextRetry(), Math.min(a.retryAt, b.retryAt));
    en.up(b);
    assert.equal(en.pick(), b);
  });
});

const skip = process.getuid?.() !== 0 ? "needs root to start a second dockerd" : startEngine2();
describe("two engines", { skip }, async () => {
  const config = loadConfig({ ASSAY_DOCKER_HOSTS: `${ENGINE1},${ENGINE2}` }).sandbox;
  const opened = await openDocker({ ...dockerOptions(config), poolSize: 4 });
  const sb = opened.sandbox as DockerSandbox;
  const d1 = new Docker(connectionOf(ENGINE1));
  const d2 = new Docker(connectionOf(ENGINE2));
  after(async () => {
    await sb?.close();
    // Bring engine 2 back (a restarted dockerd stops what it ran) and clear what was left on it.
    startEngine2();
    for (const c of await d2.listContainers({ all: true, filters: { label: [`${LABEL}=${OWNER}`] } }).catch(() => [])) {
      await d2.getContainer(c.Id).remove({ force: true }).catch(() => {});
    }
  });

  test("warm containers are spread over both engines", { timeout: 60_000 }, async () => {
    assert.ok(sb, opened.note);
    assert.match(opened.note, /over 2 engines/);
    sb.warm("python");
    for (let i = 0; i < 200 && (await mine(d1)) + (await mine(d2)) < 4; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await mine(d1), 2);
    assert.equal(await mine(d2), 2);
    const r = await sb.run({ language: "python", code: "print(6 * 7)" });
    assert.equal(r.stdout, "42\n");
  });

  test("an engine over TCP with mutual TLS (DOCKER_CERT_PATH): runs there; without the client's certificates it does not answer", { timeout: 60_000 }, async () => {
    const tls = await openDocker({ ...dockerOptions(loadConfig({ ASSAY_DOCKER_HOSTS: ENGINE2_TLS, DOCKER_CERT_PATH: CLIENT_CERTS }).sandbox), poolSize: 1 });
    try {
      assert.ok(tls.sandbox, tls.note);
      const r = await tls.sandbox.run({ language: "python", code: "print(6 * 7)" });
      assert.equal(r.stdout, "42\n", JSON.stringify(r));
      assert.equal(tls.sandbox.engineStats()[0]?.engine, ENGINE2_TLS);
    } finally {
      await tls.sandbox?.close();
    }
    const plain = await openDocker({ ...dockerOptions(loadConfig({ ASSAY_DOCKER_HOSTS: ENGINE2_TLS }).sandbox), poolSize: 1 });
    assert.equal(plain.sandbox, null);
    assert.match(plain.note, /no Docker engine answers/);
  });

  test("engine 2 killed mid-run: every item still scores 1 (on engine 1), and the sandbox keeps serving", { timeout: 120_000 }, async () => {
    const { app } = await testApp({}, [], { sandbox: fakeSandbox(sb) });
    const items = Array.from({ length: 8 }, (_, i) => ({
      id: i,
      verifier: "code",
      response: "```python\nimport time\ntime.sleep(1.5)\nprint(int(input()) * 2)\n```",
      reference: { inputs: ["21\n"], outputs: ["42\n"] },
    }));
    const batch = request(app).post("/reward/batch").send({ items });
    const pending = batch.then((res) => res);
    await new Promise((r) => setTimeout(r, 700)); // the first four are running, two on each engine
    process.kill(Number(readFileSync(PIDFILE, "utf8").trim()), "SIGKILL");
    const res = await pending;
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.results.map((r: { reward: number | null }) => r.reward), Array(8).fill(1), JSON.stringify(res.body.results.filter((r: { reward: unknown }) => r.reward !== 1).slice(0, 2)));
    const e2 = sb.engineStats().find((e) => e.engine === ENGINE2)!;
    assert.equal(e2.up, false);
    assert.ok(sb.rerun >= 1, "runs that were on engine 2 when it died were run again on engine 1");
    const again = await sb.run({ language: "python", code: "print('still serving')" });
    assert.equal(again.stdout, "still serving\n");
  });
});
