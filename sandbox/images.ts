/**
 * Sandbox images: recipes in sandbox/images/<name>/recipe.json, built into Docker images tagged
 * assay-sandbox-<name>:<hash of the recipe>. A recipe names a registry base image (used where a
 * registry answers) and the Debian packages that make the same image where none does
 * (debootstrap from the host's apt mirror, then `docker import`). The root filesystem is kept on
 * disk for the bwrap backend.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { IMAGES_DIR } from "./paths.js";
import type { SandboxConfig } from "../src/core/config.js";

/** The settings an image build reads (ASSAY_SANDBOX_ROOTFS, ASSAY_SANDBOX_PULL, ASSAY_DEBIAN_MIRROR). */
export type ImageConfig = Pick<SandboxConfig, "rootfs" | "pull" | "debianMirror">;

export interface Recipe {
  name: string;
  description?: string;
  registry?: string;
  debian: { suite: string; variant?: string; include: string[] };
}

export function loadRecipes(dir = IMAGES_DIR): Recipe[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, "recipe.json")))
    .map((d) => JSON.parse(readFileSync(join(dir, d.name, "recipe.json"), "utf8")) as Recipe)
    .sort((a, b) => a.name.localeCompare(b.name));
}

export function recipeHash(r: Recipe): string {
  return createHash("sha256").update(JSON.stringify(r)).digest("hex").slice(0, 12);
}

export function imageTag(r: Recipe): string {
  return `assay-sandbox-${r.name}:${recipeHash(r)}`;
}

/** Where an image's root filesystem is kept for bwrap (under ASSAY_SANDBOX_ROOTFS). */
export function rootfsDir(r: Recipe, c: Pick<ImageConfig, "rootfs">): string {
  return join(c.rootfs, `${r.name}-${recipeHash(r)}`);
}

/** A root filesystem is usable when it has python3 (Debian's, or a registry image's in /usr/local). */
export function hasPython(dir: string): boolean {
  return existsSync(join(dir, "usr", "bin", "python3")) || existsSync(join(dir, "usr", "local", "bin", "python3"));
}

export function recipeFor(name: string): Recipe | undefined {
  return loadRecipes().find((r) => r.name === name);
}

/** The Debian mirror from ASSAY_DEBIAN_MIRROR or the host's apt sources (first non-security entry). */
export function debianMirror(c: Pick<ImageConfig, "debianMirror">): string {
  if (c.debianMirror) return c.debianMirror;
  const files: string[] = [];
  if (existsSync("/etc/apt/sources.list")) files.push("/etc/apt/sources.list");
  if (existsSync("/etc/apt/sources.list.d")) {
    for (const f of readdirSync("/etc/apt/sources.list.d").sort()) files.push(join("/etc/apt/sources.list.d", f));
  }
  for (const f of files) {
    const text = readFileSync(f, "utf8");
    for (const m of text.matchAll(/^\s*(?:URIs:\s*(\S+)|deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+bookworm\s)/gm)) {
      const uri = m[1] ?? m[2];
      if (uri && /debian\/?$/.test(uri) && !/security/.test(uri)) return uri;
    }
  }
  return "http://deb.debian.org/debian";
}

type Log = (line: string) => void;

function sh(cmd: string, args: string[], log: Log, opts: { input?: NodeJS.ReadableStream; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: [opts.input ? "pipe" : "ignore", "pipe", "pipe"], timeout: opts.timeoutMs, killSignal: "SIGKILL" });
    let out = "";
    let err = "";
    p.stdout!.on("data", (d) => (out += d));
    p.stderr!.on("data", (d) => {
      err += d;
      if (err.length > 1 << 16) err = err.slice(-(1 << 15));
    });
    if (opts.input) opts.input.pipe(p.stdin!);
    p.on("error", reject);
    p.on("close", (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.slice(0, 3).join(" ")} … exited ${code}: ${err.trim().split("\n").slice(-5).join(" | ")}`));
    });
  });
}

async function imageExists(tag: string): Promise<boolean> {
  try {
    await sh("docker", ["image", "inspect", "--format", "{{.Id}}", tag], () => {});
    return true;
  } catch {
    return false;
  }
}

/**
 * Tries the recipe's registry image first, unless ASSAY_SANDBOX_PULL=0: CI sets it, so a build
 * on a host without registry access never reaches for one and goes straight to Debian packages.
 */
async function buildFromRegistry(r: Recipe, tag: string, log: Log, c: ImageConfig): Promise<boolean> {
  if (!r.registry) return false;
  if (!c.pull) {
    log(`${r.name}: ASSAY_SANDBOX_PULL=0, so no registry pull; building from Debian packages`);
    return false;
  }
  try {
    log(`${r.name}: pulling ${r.registry}`);
    // A registry that does not answer must not hang the build: give up after two minutes.
    await sh("docker", ["pull", "-q", r.registry], log, { timeoutMs: 120_000 });
    await sh("docker", ["tag", r.registry, tag], log);
    return true;
  } catch (e) {
    log(`${r.name}: no registry image (${(e as Error).message.slice(0, 160)}); building from Debian packages`);
    return false;
  }
}

async function debootstrap(r: Recipe, dir: string, log: Log, c: ImageConfig): Promise<void> {
  const tmp = `${dir}.partial`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  // One package cache per recipe: parallel builds never share a half-written .deb.
  const cache = join(c.rootfs, ".debs", r.name);
  mkdirSync(cache, { recursive: true });
  const mirror = debianMirror(c);
  log(`${r.name}: debootstrap ${r.debian.suite} (${r.debian.include.join(", ")}) from ${mirror}`);
  await sh("debootstrap", [
    `--variant=${r.debian.variant ?? "minbase"}`,
    `--include=${r.debian.include.join(",")}`,
    `--cache-dir=${cache}`,
    r.debian.suite, tmp, mirror,
  ], log);
  // Slim it: package caches, docs and locales are never used by a sandboxed program.
  for (const p of ["var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/locale"]) {
    rmSync(join(tmp, p), { recursive: true, force: true });
  }
  mkdirSync(join(tmp, "sandbox", "run"), { recursive: true });
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
}

/** Builds one recipe's image (and its rootfs) unless both exist. Returns the tag. */
export async function buildImage(r: Recipe, c: ImageConfig, log: Log, opts: { force?: boolean } = {}): Promise<string> {
  const tag = imageTag(r);
  const dir = rootfsDir(r, c);
  const t0 = Date.now();
  const haveImage = !opts.force && (await imageExists(tag));
  const haveRootfs = !opts.force && hasPython(dir);
  if (haveImage && haveRootfs) {
    log(`${r.name}: ${tag} already built`);
    return tag;
  }
  if (!haveImage && !haveRootfs && (await buildFromRegistry(r, tag, log, c))) {
    // fall through to export the rootfs below
  } else if (!haveRootfs) {
    await debootstrap(r, dir, log, c);
  }
  if (!(await imageExists(tag))) {
    log(`${r.name}: docker import -> ${tag}`);
    const tar = spawn("tar", ["-C", dir, "-c", "."], { stdio: ["ignore", "pipe", "inherit"] });
    await sh("docker", ["import", "--message", `assay sandbox ${r.name}`, "-", tag], log, { input: tar.stdout! });
  }
  if (!hasPython(dir)) {
    log(`${r.name}: exporting the image's filesystem to ${dir} for bwrap`);
    mkdirSync(dir, { recursive: true });
    const id = (await sh("docker", ["create", tag, "true"], log)).trim();
    try {
      const exp = spawn("docker", ["export", id], { stdio: ["ignore", "pipe", "inherit"] });
      await sh("tar", ["-C", dir, "-x"], log, { input: exp.stdout! });
      mkdirSync(join(dir, "sandbox", "run"), { recursive: true });
    } finally {
      await sh("docker", ["rm", "-f", id], log).catch(() => {});
    }
  }
  log(`${r.name}: ${tag} ready (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  return tag;
}

/** Builds the recipes (all, or those named) in parallel: each is mostly downloads and disk. */
export async function buildAll(c: ImageConfig, log: Log, opts: { force?: boolean; only?: string[] } = {}): Promise<string[]> {
  const all = loadRecipes();
  const unknown = (opts.only ?? []).filter((n) => !all.some((r) => r.name === n));
  if (unknown.length) throw new Error(`no recipe named ${unknown.join(", ")}; recipes: ${all.map((r) => r.name).join(", ")}`);
  const recipes = all.filter((r) => !opts.only?.length || opts.only.includes(r.name));
  return Promise.all(recipes.map((r) => buildImage(r, c, log, opts)));
}
