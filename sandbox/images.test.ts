import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { debianMirror, loadRecipes, recipeHash, imageTag, rootfsDir, layerDiff, progress, type Recipe } from "./images.js";
import { loadConfig } from "../src/core/config.js";

test("ASSAY_SANDBOX_PULL=0 turns registry pulls off; unset leaves them on; junk is a start-up error", () => {
  assert.equal(loadConfig({ ASSAY_SANDBOX_PULL: "0" }).sandbox.pull, false);
  assert.equal(loadConfig({}).sandbox.pull, true);
  assert.equal(loadConfig({ ASSAY_SANDBOX_PULL: "1" }).sandbox.pull, true);
  assert.throws(() => loadConfig({ ASSAY_SANDBOX_PULL: "maybe" }), /ASSAY_SANDBOX_PULL="maybe" is not a boolean/);
});

test("ASSAY_DEBIAN_MIRROR overrides the mirror read from apt's sources", () => {
  assert.equal(debianMirror(loadConfig({ ASSAY_DEBIAN_MIRROR: "http://mirror.example/debian" }).sandbox), "http://mirror.example/debian");
  assert.match(debianMirror(loadConfig({}).sandbox), /^https?:\/\/\S+debian\/?$/);
});


test("one base, many layers: every language recipe adds packages to `base`, which alone is debootstrapped", () => {
  const all = loadRecipes();
  const base = all.find((r) => r.name === "base");
  assert.ok(base, "a base recipe");
  assert.equal(base.base, undefined);
  assert.ok(base.debian.include?.includes("python3"), "the base has python3, which runs the runner");
  for (const r of all.filter((x) => x.name !== "base")) {
    assert.equal(r.base, "base", r.name);
    assert.equal(r.debian.include, undefined, `${r.name} adds packages, it is not debootstrapped`);
    assert.ok(Array.isArray(r.debian.packages), r.name);
    assert.ok(!r.debian.packages!.includes("python3"), `${r.name}: python3 is the base's`);
  }
});

test("a layer's hash covers its base's: editing the base makes every image new, an unchanged recipe keeps its tag", () => {
  const base: Recipe = { name: "base", debian: { suite: "bookworm", include: ["python3"] } };
  const cpp: Recipe = { name: "cpp", base: "base", debian: { packages: ["g++"] } };
  const h1 = recipeHash(cpp, [base, cpp]);
  assert.equal(recipeHash(cpp, [base, cpp]), h1);
  const base2: Recipe = { ...base, debian: { ...base.debian, include: ["python3", "ca-certificates"] } };
  assert.notEqual(recipeHash(cpp, [base2, cpp]), h1);
  assert.equal(imageTag(cpp, [base, cpp]), `assay-sandbox-cpp:${h1}`);
  assert.equal(rootfsDir(cpp, { rootfs: "/r" }, [base, cpp]), `/r/cpp-${h1}`);
  assert.throws(() => recipeHash({ ...cpp, base: "nope" }, [base, cpp]), /names base "nope", which has no recipe; recipes: base, cpp/);
});

test("build progress is printed as package n of m, from apt's count and debootstrap's", () => {
  const lines: string[] = [];
  const p = progress("cpp", (l) => lines.push(l));
  p("Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]");
  p("Get:2 http://deb.debian.org/debian bookworm/main amd64 Packages [8788 kB]");
  p("0 upgraded, 3 newly installed, 0 to remove and 0 not upgraded.");
  p("Get:1 http://deb.debian.org/debian bookworm/main amd64 libisl23 amd64 0.25-1.1 [683 kB]");
  for (const pkg of ["libisl23", "cpp-12", "g++"]) p(`Unpacking ${pkg} (1.0) ...`);
  for (const pkg of ["libisl23", "cpp-12", "g++"]) p(`Setting up ${pkg} (1.0) ...`);
  assert.ok(lines.includes("cpp: 3 packages to install"), lines.join("\n"));
  assert.ok(lines.includes("cpp: downloading package 1 of 3 (libisl23)"), lines.join("\n"));
  assert.ok(lines.includes("cpp: unpacking package 3 of 3 (g++)"), lines.join("\n"));
  assert.ok(lines.includes("cpp: configuring package 3 of 3 (g++)"), lines.join("\n"));
  assert.ok(!lines.some((l) => /InRelease|Packages|\[/.test(l)), `apt-get update's index files are not packages:\n${lines.join("\n")}`);
  const d: string[] = [];
  const q = progress("base", (l) => d.push(l));
  q("I: Retrieving InRelease");
  for (const pkg of ["libc6", "python3"]) q(`I: Validating ${pkg} 1.0`);
  for (const pkg of ["libc6", "python3"]) q(`I: Unpacking ${pkg}...`);
  assert.ok(d.includes("base: validating package 1 (libc6)"), d.join("\n"));
  assert.ok(d.includes("base: unpacking package 2 of 2 (python3)"), d.join("\n"));
  assert.ok(!d.some((l) => /InRelease/.test(l)), "index files are not packages");
});

test("a layer is what the install added, changed or removed over the base, nothing the two share", async () => {
  const root = mkdtempSync(join(tmpdir(), "assay-layer-"));
  try {
    const base = join(root, "base");
    mkdirSync(join(base, "usr", "bin"), { recursive: true });
    mkdirSync(join(base, "var", "lib", "gone", "deep"), { recursive: true });
    writeFileSync(join(base, "usr", "bin", "python3"), "py");
    writeFileSync(join(base, "status"), "a");
    writeFileSync(join(base, "var", "lib", "gone", "deep", "x"), "x");
    const old = new Date("2024-01-01T00:00:00Z");
    for (const p of ["usr/bin/python3", "status", "usr/bin", "usr", "var/lib/gone/deep/x", "var/lib/gone/deep", "var/lib/gone", "var/lib", "var"]) utimesSync(join(base, p), old, old);
    const layer = join(root, "layer");
    execFileSync("cp", ["-a", base, layer]);
    writeFileSync(join(layer, "usr", "bin", "g++"), "gxx");
    writeFileSync(join(layer, "status"), "ab");
    rmSync(join(layer, "var", "lib", "gone"), { recursive: true });
    const { changed, removed } = await layerDiff(layer, base);
    assert.deepEqual(changed.sort(), ["status", "usr/bin", "usr/bin/g++", "var/lib"]);
    assert.deepEqual(removed, ["var/lib/gone"], "a removed directory is one rm -rf, not one per entry");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("what a compile reads from an image is what its recipe's setup makes: the rust crates, the go cache; setup is in the hash", async () => {
  const { LANGUAGES, RUST_CRATES, GO_CACHE } = await import("./languages.js");
  const all = loadRecipes();
  const setup = (name: string) => (all.find((r) => r.name === name)?.setup ?? []).join("\n");
  // Each --extern names lib<crate>.rlib in the directory the rust recipe moves it to.
  for (const lang of ["rust", "rust_test"]) {
    const argv = LANGUAGES[lang].compile!.argv;
    for (const c of ["rand", "regex", "md5"]) assert.ok(argv.includes(`${c}=/usr/lib/assay-crates/lib${c}.rlib`), `${lang} links ${c}`);
  }
  assert.ok(RUST_CRATES.includes("dependency=/usr/lib/assay-crates/deps"));
  assert.match(setup("rust"), /for c in rand regex md5; do mv \/usr\/lib\/assay-crates\/deps\/lib\$c-\*\.rlib \/usr\/lib\/assay-crates\/lib\$c\.rlib/);
  // The go cache is filled with the env every Go compile runs with (else no entry would match).
  for (const lang of ["go", "go_test"]) {
    const env = LANGUAGES[lang].compile!.env!;
    assert.equal(env.GOCACHE, GO_CACHE);
    assert.equal(env.CGO_ENABLED, "0");
    assert.equal(env.GO111MODULE, "off");
  }
  assert.match(setup("go"), new RegExp(`GOCACHE=${GO_CACHE} .*GO111MODULE=off CGO_ENABLED=0`));
  assert.match(setup("go"), /go build std/);
  const base: Recipe = { name: "base", debian: { include: ["python3"] } };
  const r: Recipe = { name: "x", base: "base", debian: { packages: ["g++"] } };
  assert.notEqual(recipeHash({ ...r, setup: ["true"] }, [base, r]), recipeHash(r, [base, r]));
});
