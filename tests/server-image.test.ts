/**
 * The server's Docker image, built here without a registry (issue 33): `assay image build` puts
 * Node (from npm) and the built package on the sandbox images' shared Debian base, cached by a
 * content hash; the container answers /reward on loopback and runs a `code` item in a sibling
 * sandbox container through the mounted Docker socket (every sandbox container NetworkMode none).
 *
 * The live test needs a Docker engine, the base image (built here if missing: one debootstrap),
 * the python sandbox image (`assay sandbox build`), a built checkout (dist/) and the npm registry
 * once (Node's binary is cached under ASSAY_SANDBOX_ROOTFS/.node); under CI=true a missing one
 * fails instead of skipping. Everything it starts is removed at the end, whatever happened.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, mkdirSync, writeFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildServerImage, productionPackages, serverImageTag, shippedPaths } from "../src/deploy/image.js";
import { imageTag, loadRecipes } from "../sandbox/images.js";
import { PACKAGE_ROOT } from "../sandbox/paths.js";
import { loadConfig } from "../src/core/config.js";
import { IN_CI } from "./sandboxes.js";
import { exchange } from "./helpers.js";

const docker = (...args: string[]) => execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 }).trim();

function unavailable(): string | false {
  const missing: string[] = [];
  try {
    docker("info", "--format", "{{.ID}}");
  } catch {
    missing.push("a Docker engine");
  }
  if (!existsSync(join(PACKAGE_ROOT, "dist", "src", "cli", "main.js"))) missing.push("a built checkout (dist/: npm run build)");
  const python = loadRecipes().find((r) => r.name === "python");
  if (!missing.length && python) {
    try {
      docker("image", "inspect", "--format", "{{.Id}}", imageTag(python));
    } catch {
      missing.push(`the python sandbox image ${imageTag(python)} (assay sandbox build)`);
    }
  }
  if (!missing.length) return false;
  if (IN_CI) throw new Error(`CI=true but the server image test needs ${missing.join(", ")}`);
  return `the server image test needs ${missing.join(", ")}`;
}

test("the image holds the production dependencies only, and what the npm package ships", () => {
  const pkgs = productionPackages();
  for (const p of ["express", "better-sqlite3", "isolated-vm", "dockerode", "pg"]) assert.ok(pkgs.includes(`node_modules/${p}`), `${p} is a dependency`);
  for (const p of ["vite", "tsx", "supertest", "autocannon"]) assert.ok(!pkgs.includes(`node_modules/${p}`), `${p} is a dev dependency`);
  const shipped = shippedPaths();
  for (const p of ["dist", "openapi.yaml", "sandbox/runner", "sandbox/images", "package-lock.json"]) assert.ok(shipped.includes(p), p);
  for (const p of ["Dockerfile", "deploy"]) assert.ok(!shipped.includes(p), `${p} builds images; the server does not read it`);
});

test("the image's tag is a hash of what goes in: a changed shipped file, base or Node changes it", () => {
  const root = mkdtempSync(join(tmpdir(), "assay-image-hash-"));
  try {
    writeFileSync(join(root, "package.json"), JSON.stringify({ files: ["dist", "openapi.yaml"] }));
    writeFileSync(join(root, "package-lock.json"), "{}");
    mkdirSync(join(root, "dist"));
    writeFileSync(join(root, "dist", "a.js"), "1");
    writeFileSync(join(root, "openapi.yaml"), "x");
    writeFileSync(join(root, "unshipped.txt"), "a");
    const t = serverImageTag("assay-sandbox-base:1", "20.20.2", root);
    assert.match(t, /^assay-server:[0-9a-f]{12}$/);
    assert.equal(serverImageTag("assay-sandbox-base:1", "20.20.2", root), t, "stable");
    writeFileSync(join(root, "unshipped.txt"), "b");
    assert.equal(serverImageTag("assay-sandbox-base:1", "20.20.2", root), t, "a file the image does not hold does not count");
    assert.notEqual(serverImageTag("assay-sandbox-base:2", "20.20.2", root), t, "base");
    assert.notEqual(serverImageTag("assay-sandbox-base:1", "20.20.3", root), t, "node");
    writeFileSync(join(root, "dist", "a.js"), "2");
    assert.notEqual(serverImageTag("assay-sandbox-base:1", "20.20.2", root), t, "a shipped file");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the server image builds without a registry (cached), serves /reward and runs code through the mounted Docker socket", { skip: unavailable(), timeout: 20 * 60_000 }, async (t) => {
  const c = loadConfig().sandbox;
  const log: string[] = [];
  const t0 = Date.now();
  const tag = await buildServerImage(c, (l) => log.push(l));
  t.diagnostic(`build: ${((Date.now() - t0) / 1000).toFixed(0)} s (${log.some((l) => /^server image: .* already built/.test(l)) ? "cached" : "built"}) ${tag}`);
  // Built on the shared base, not a registry image: its first layer is the base's.
  const base = imageTag(loadRecipes().find((r) => r.name === "base")!);
  const layers = (x: string): string[] => JSON.parse(docker("image", "inspect", "--format", "{{json .RootFS.Layers}}", x));
  assert.deepEqual(layers(tag).slice(0, layers(base).length), layers(base), `${tag} is built on ${base}`);
  assert.equal(docker("image", "inspect", "--format", "{{.Config.User}}", tag), "10001:10001", "the server does not run as root");
  // A second build of the same checkout is the cached image.
  const again: string[] = [];
  const t1 = Date.now();
  assert.equal(await buildServerImage(c, (l) => again.push(l)), tag);
  assert.ok(again.some((l) => /^server image: .* already built/.test(l)), again.join("\n"));
  assert.ok(Date.now() - t1 < 60_000, "the cached build only hashes the checkout");

  const run = `${process.pid}-${Date.now().toString(36)}`;
  const net = `assay-image-test-${run}`;
  const name = `assay-image-test-${run}`;
  const sock = "/var/run/docker.sock";
  try {
    // A network of its own (this daemon runs without the default bridge), published on loopback only.
    docker("network", "create", net);
    docker("run", "-d", "--name", name, "--network", net, "-p", "127.0.0.1::8787", "-v", `${sock}:${sock}`, "--group-add", String(statSync(sock).gid), "-e", "ASSAY_SANDBOX=docker", "-e", "ASSAY_SANDBOX_POOL=1", "-e", "ASSAY_LOG_LEVEL=warn", tag);
    const port = docker("port", name, "8787/tcp").split("\n")[0].split(":").pop();
    const url = `http://127.0.0.1:${port}`;
    const until = Date.now() + 120_000;
    for (;;) {
      const r = await exchange(`${url}/readyz`, {}, 5_000).catch(() => null);
      if (r?.ok) break;
      if (Date.now() > until) throw new Error(`the container was not ready in 120 s: ${r ? r.text : "no answer"}\n${docker("logs", "--tail", "30", name)}`);
      await new Promise((res) => setTimeout(res, 500));
    }
    const post = async (item: unknown) => {
      const r = await exchange(`${url}/reward`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(item) }, 120_000);
      assert.equal(r.status, 200);
      return r.json<{ reward: number | null; status: string; reason: string }>();
    };
    assert.equal((await post({ verifier: "exact", response: "42", reference: "42" })).reward, 1);
    assert.equal((await post({ verifier: "math", response: "\\boxed{\\frac{1}{2}}", reference: "0.5" })).reward, 1);
    const code = await post({ verifier: "code", response: "```python\nprint(input()[::-1])\n```", reference: { inputs: ["abc\n"], outputs: ["cba\n"] } });
    assert.equal(code.reward, 1, code.reason);
    // The code ran in a sibling container of the host's engine, with no network.
    const siblings = docker("ps", "-q", "--filter", "label=assay.sandbox").split("\n").filter(Boolean);
    const mine = siblings.filter((id) => docker("inspect", "--format", "{{index .Config.Labels \"assay.sandbox\"}}", id).startsWith(docker("inspect", "--format", "{{.Config.Hostname}}", name)));
    assert.ok(mine.length >= 1, "the server's sandbox containers are on the host's engine");
    for (const id of mine) assert.equal(docker("inspect", "--format", "{{.HostConfig.NetworkMode}}", id), "none");
    // Stopped with SIGTERM, it removes its sandbox containers.
    docker("stop", "-t", "30", name);
    for (const id of mine) assert.throws(() => docker("inspect", id), `sandbox container ${id} removed at shutdown`);
  } finally {
    try {
      const hostname = docker("inspect", "--format", "{{.Config.Hostname}}", name);
      for (const id of docker("ps", "-aq", "--filter", "label=assay.sandbox").split("\n").filter(Boolean)) {
        if (docker("inspect", "--format", "{{index .Config.Labels \"assay.sandbox\"}}", id).startsWith(`${hostname}:`)) docker("rm", "-f", id);
      }
    } catch {
      /* no container was made */
    }
    try {
      docker("rm", "-f", name);
    } catch {
      /* never started */
    }
    try {
      docker("network", "rm", net);
    } catch {
      /* never made */
    }
  }
});

