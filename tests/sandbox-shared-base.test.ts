/**
 * One base, many layers (issue 30): two language images built from the shared base, in two
 * separate builds, the second reusing the first's base (no second debootstrap; its build time is
 * in its log). The test's recipes are its own (`assay-sandbox-test-layer-{a,b}-<run>`, a small
 * package each: bc, jq) over the real `base` recipe, so nothing another test uses changes; its
 * images and root filesystems are removed at the end. The base is the one `assay sandbox build`
 * makes (ASSAY_SANDBOX_ROOTFS, DOCKER_HOST): built here (one debootstrap, minutes) if it is not yet.
 * Needs root, a Docker engine, debootstrap, the host's Debian mirror; under CI=true a missing one
 * fails instead of skipping.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildAll, imageTag, loadRecipes, rootfsDir, type Recipe } from "../sandbox/images.js";
import { loadConfig } from "../src/core/config.js";
import { IN_CI } from "./sandboxes.js";

const run = `${process.pid}-${Date.now().toString(36)}`;
const docker = (...args: string[]) => execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });

function available(): string | false {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push("root (debootstrap, chroot)");
  for (const cmd of ["debootstrap", "unshare", "flock", "chroot"]) {
    try {
      execFileSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" });
    } catch {
      missing.push(cmd);
    }
  }
  try {
    docker("info", "--format", "{{.ID}}");
  } catch {
    missing.push("a Docker engine");
  }
  if (!missing.length) return false;
  if (IN_CI) throw new Error(`CI=true but the image build needs ${missing.join(", ")}`);
  return `building images needs ${missing.join(", ")}`;
}

const layers = (tag: string): string[] => JSON.parse(docker("image", "inspect", "--format", "{{json .RootFS.Layers}}", tag));

test("two language images from the shared base: the second reuses it (no second debootstrap), one layer each", { skip: available(), timeout: 40 * 60_000 }, async (t) => {
  const c = loadConfig().sandbox;
  const base = loadRecipes().find((r) => r.name === "base")!;
  const a: Recipe = { name: `test-layer-a-${run}`, base: "base", debian: { packages: ["bc"] } };
  const b: Recipe = { name: `test-layer-b-${run}`, base: "base", debian: { packages: ["jq"] } };
  const recipes = [base, a, b];
  try {
    const first: string[] = [];
    const t0 = Date.now();
    const [tagA] = await buildAll(c, (l) => first.push(l), { recipes, only: [a.name] });
    t.diagnostic(`first build (${a.name}${first.some((l) => /debootstrap /.test(l)) ? ", with the base's debootstrap" : ", base already built"}): ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    assert.ok(first.filter((l) => /: debootstrap /.test(l)).length <= 1, first.join("\n"));

    const second: string[] = [];
    const t1 = Date.now();
    const [tagB] = await buildAll(c, (l) => second.push(l), { recipes, only: [b.name] });
    const secondS = (Date.now() - t1) / 1000;
    t.diagnostic(`second build (${b.name}): ${secondS.toFixed(0)} s; its log:`);
    for (const l of second) t.diagnostic(l);
    assert.ok(!second.some((l) => /: debootstrap /.test(l)), `the second build ran no debootstrap:\n${second.join("\n")}`);
    const baseTag = imageTag(base, recipes);
    assert.ok(second.includes(`base: ${baseTag} already built`), second.join("\n"));
    // Its build time, in its log.
    assert.ok(second.some((l) => new RegExp(`^${b.name}: ${tagB.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} ready on ${baseTag}, reused \\(\\d+ s past the base\\)$`).test(l)), second.join("\n"));
    assert.ok(second.some((l) => /: packages to install|packages to install/.test(l) && l.startsWith(b.name)), "apt's count is printed");
    assert.ok(second.some((l) => new RegExp(`^${b.name}: configuring package (\\d+) of \\1 `).test(l)), `progress reaches n of n:\n${second.join("\n")}`);

    // Docker: each is the base's layers plus one of its own.
    const baseLayers = layers(baseTag);
    for (const tag of [tagA, tagB]) {
      const own = layers(tag);
      assert.deepEqual(own.slice(0, baseLayers.length), baseLayers, `${tag} is built on ${baseTag}`);
      assert.equal(own.length, baseLayers.length + 1, `${tag} adds one layer`);
    }
    // The layers hold their packages (and only their own), and run with no network, as a sandbox does.
    assert.match(docker("run", "--rm", "--network", "none", tagB, "sh", "-c", "echo '{\"a\":[1,2]}' | jq -c .a; python3 -c 'print(6*7)'"), /^\[1,2\]\n42\n$/);
    assert.match(docker("run", "--rm", "--network", "none", tagA, "sh", "-c", "echo 6*7 | bc; command -v jq || echo no-jq"), /^42\nno-jq\n$/);
    // bwrap: each has a root filesystem of its own, a copy of the base plus its packages.
    const dirA = rootfsDir(a, c, recipes);
    const dirB = rootfsDir(b, c, recipes);
    assert.ok(existsSync(join(dirB, "usr", "bin", "jq")) && existsSync(join(dirB, "usr", "bin", "python3")));
    assert.ok(existsSync(join(dirA, "usr", "bin", "bc")) && !existsSync(join(dirA, "usr", "bin", "jq")));
    assert.ok(!existsSync(join(dirB, "var", "cache", "apt", "pkgcache.bin")), "apt's 75 MB binary caches are not kept");
    assert.equal(docker("run", "--rm", "--network", "none", tagB, "sh", "-c", "ls /var/cache/apt"), "", "nor in the image's layer");
    assert.ok(!existsSync(join(rootfsDir(base, c, recipes), "usr", "bin", "jq")), "the base is untouched");

    // Built again: nothing to do.
    const third: string[] = [];
    await buildAll(c, (l) => third.push(l), { recipes, only: [a.name, b.name] });
    assert.deepEqual(third.filter((l) => !/already built/.test(l)), [], third.join("\n"));
  } finally {
    for (const r of [a, b]) {
      try {
        docker("rmi", imageTag(r, recipes));
      } catch {
        /* not built */
      }
      rmSync(rootfsDir(r, c, recipes), { recursive: true, force: true });
      rmSync(`${rootfsDir(r, c, recipes)}.partial`, { recursive: true, force: true });
    }
  }
});
