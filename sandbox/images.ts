/**
 * Sandbox images: recipes in sandbox/images/<name>/recipe.json, built into Docker images tagged
 * assay-sandbox-<name>:<hash of the recipe>, each root filesystem also kept on disk for the
 * bwrap backend (under ASSAY_SANDBOX_ROOTFS).
 *
 * One base, many layers: the `base` recipe is debootstrapped ONCE (python3, which runs the
 * in-sandbox runner); a language recipe names its `base` and the Debian `packages` it adds. Its
 * root filesystem is a copy of the base's with those packages installed by `apt-get` in a chroot
 * on the host (the host has the network; containers never do), and its Docker image is the base
 * image plus one layer: the files the install added or changed, copied into a container of the
 * base image and committed. Every build shares one apt package cache and one set of package lists
 * (<rootfs>/.apt), so a package is downloaded once for all images. A recipe's hash covers its
 * base's, so editing the base rebuilds every image and an unchanged recipe is never rebuilt.
 * A recipe may also name a registry image, used instead where a registry answers.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, mkdirSync, renameSync, rmSync, symlinkSync, lstatSync, writeFileSync } from "node:fs";
import { join, basename } from "node:path";
import { spawn } from "node:child_process";
import { IMAGES_DIR } from "./paths.js";
import type { SandboxConfig } from "../src/core/config.js";

/** The settings an image build reads (ASSAY_SANDBOX_ROOTFS, ASSAY_SANDBOX_PULL, ASSAY_DEBIAN_MIRROR). */
export type ImageConfig = Pick<SandboxConfig, "rootfs" | "pull" | "debianMirror">;

export interface Recipe {
  name: string;
  /** The image's repository (default `assay-sandbox-<name>`): deploy/images' recipes name their own. */
  image?: string;
  description?: string;
  registry?: string;
  /** The recipe this one adds its packages to (`base`); absent: debootstrapped on its own. */
  base?: string;
  debian: {
    /** debootstrap's suite, variant and --include list (a recipe without `base`). */
    suite?: string;
    variant?: string;
    include?: string[];
    /** The Debian packages added to the base with `apt-get install --no-install-recommends`. */
    packages?: string[];
  };
  /**
   * Shell lines run (`sh -e`, as root, no network needed) in the layer's chroot after its packages
   * are installed: what the image precompiles once so that no run has to (the Rust crates as
   * rlibs, Go's build cache). Part of the recipe's hash, so changing them rebuilds the image.
   */
  setup?: string[];
}

export function loadRecipes(dir = IMAGES_DIR): Recipe[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, "recipe.json")))
    .map((d) => JSON.parse(readFileSync(join(dir, d.name, "recipe.json"), "utf8")) as Recipe)
    .sort((a, b) => a.name.localeCompare(b.name));
}

function baseOf(r: Recipe, recipes: Recipe[]): Recipe | undefined {
  if (!r.base) return undefined;
  const b = recipes.find((x) => x.name === r.base);
  if (!b) throw new Error(`recipe ${r.name} names base ${JSON.stringify(r.base)}, which has no recipe; recipes: ${recipes.map((x) => x.name).join(", ")}`);
  if (b.base) throw new Error(`recipe ${r.name}'s base ${b.name} has a base of its own; a base must be debootstrapped (no "base" field)`);
  return b;
}

/** The recipe's hash, which covers its base's: a changed base makes every image on it new. */
export function recipeHash(r: Recipe, recipes?: Recipe[]): string {
  const h = createHash("sha256").update(JSON.stringify(r));
  if (r.base) h.update(recipeHash(baseOf(r, recipes ?? loadRecipes())!, recipes));
  return h.digest("hex").slice(0, 12);
}

export function imageTag(r: Recipe, recipes?: Recipe[]): string {
  return `${r.image ?? `assay-sandbox-${r.name}`}:${recipeHash(r, recipes)}`;
}

/** Where an image's root filesystem is kept for bwrap (under ASSAY_SANDBOX_ROOTFS). */
export function rootfsDir(r: Recipe, c: Pick<ImageConfig, "rootfs">, recipes?: Recipe[]): string {
  return join(c.rootfs, `${r.name}-${recipeHash(r, recipes)}`);
}

/** The one apt package cache and package lists every build shares (debootstrap's and apt-get's). */
export function aptCacheDir(c: Pick<ImageConfig, "rootfs">): string {
  return join(c.rootfs, ".apt");
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

interface ShOpts {
  input?: NodeJS.ReadableStream;
  timeoutMs?: number;
  /** Called with each line of stdout and stderr (progress). */
  onLine?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

function sh(cmd: string, args: string[], opts: ShOpts = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: [opts.input ? "pipe" : "ignore", "pipe", "pipe"], timeout: opts.timeoutMs, killSignal: "SIGKILL", env: opts.env });
    let out = "";
    let err = "";
    const partial = { out: "", err: "" };
    const lines = (which: "out" | "err", d: Buffer) => {
      if (!opts.onLine) return;
      const text = partial[which] + d.toString("utf8");
      const parts = text.split("\n");
      partial[which] = parts.pop()!.slice(-4096);
      for (const l of parts) opts.onLine(l);
    };
    p.stdout!.on("data", (d: Buffer) => {
      lines("out", d);
      if (out.length < 1 << 22) out += d;
    });
    p.stderr!.on("data", (d: Buffer) => {
      lines("err", d);
      err += d;
      if (err.length > 1 << 16) err = err.slice(-(1 << 15));
    });
    if (opts.input) opts.input.pipe(p.stdin!);
    p.on("error", reject);
    p.on("close", (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.slice(0, 3).join(" ")} … exited ${code}: ${(err.trim() || out.trim()).split("\n").slice(-5).join(" | ")}`));
    });
  });
}

async function imageExists(tag: string): Promise<boolean> {
  try {
    await sh("docker", ["image", "inspect", "--format", "{{.Id}}", tag]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Progress lines for a package install: `<name>: <phase> n of m (<package>)`, at most one a
 * second per phase, plus each phase's first and last. m is apt's "N newly installed" count, or
 * (debootstrap, which announces no total) the packages it has validated so far.
 */
export function progress(name: string, log: Log): (line: string) => void {
  let total = 0;
  const count: Record<string, number> = {};
  const shown: Record<string, number> = {};
  const phases: [RegExp, string][] = [
    [/^Get:\d+ \S+ \S+ \S+ (\S+) /, "downloading"],
    [/^I: Retrieving (\S+)/, "downloading"],
    [/^I: Validating (\S+)/, "validating"],
    [/^I: Extracting (\S+)/, "extracting"],
    [/^(?:I: )?Unpacking (\S+)/, "unpacking"],
    [/^(?:I: )?(?:Setting up|Configuring) (\S+)/, "configuring"],
  ];
  return (line) => {
    const n = /^\d+ upgraded, (\d+) newly installed/.exec(line);
    if (n) {
      total = Number(n[1]);
      for (const k of Object.keys(count)) delete count[k]; // what came before was `apt-get update`
      log(`${name}: ${total} packages to install`);
      return;
    }
    for (const [re, phase] of phases) {
      const m = re.exec(line);
      if (!m) continue;
      // Index files (debootstrap's, and `apt-get update`'s "Get:1 <url> bookworm InRelease [151 kB]"), not packages.
      if (/^(?:In)?Release(?:\.gpg)?$|^Packages|^\[/.test(m[1])) return;
      const k = (count[phase] = (count[phase] ?? 0) + 1);
      const of = total || (phase === "validating" || phase === "downloading" ? 0 : count.validating ?? 0);
      const now = Date.now();
      if (k === 1 || k === of || now - (shown[phase] ?? 0) >= 1000) {
        shown[phase] = now;
        log(`${name}: ${phase} package ${k}${of >= k ? ` of ${of}` : ""} (${m[1].replace(/\.+$/, "")})`);
      }
      return;
    }
    if (/^(E|W): /.test(line)) log(`${name}: ${line}`);
  };
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
    await sh("docker", ["pull", "-q", r.registry], { timeoutMs: 120_000 });
    await sh("docker", ["tag", r.registry, tag]);
    return true;
  } catch (e) {
    log(`${r.name}: no registry image (${(e as Error).message.slice(0, 160)}); building from Debian packages`);
    return false;
  }
}

/** Package caches (apt's own binary caches, 75 MB, included), docs and locales: never used by a sandboxed program. */
const SLIM = ["var/cache/apt/archives", "var/cache/apt/pkgcache.bin", "var/cache/apt/srcpkgcache.bin", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/locale"];

function aptDirs(c: Pick<ImageConfig, "rootfs">): { archives: string; lists: string; lock: string } {
  const apt = aptCacheDir(c);
  const d = { archives: join(apt, "archives"), lists: join(apt, "lists"), lock: join(apt, "lock") };
  mkdirSync(join(d.archives, "partial"), { recursive: true });
  mkdirSync(join(d.lists, "partial"), { recursive: true });
  return d;
}

async function debootstrap(r: Recipe, dir: string, log: Log, c: ImageConfig): Promise<void> {
  const tmp = `${dir}.partial`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const { archives } = aptDirs(c);
  const mirror = debianMirror(c);
  const include = r.debian.include ?? [];
  const t0 = Date.now();
  log(`${r.name}: debootstrap ${r.debian.suite ?? "bookworm"} (${include.join(", ")}) from ${mirror}, package cache ${archives}`);
  await sh("debootstrap", [
    `--variant=${r.debian.variant ?? "minbase"}`,
    ...(include.length ? [`--include=${include.join(",")}`] : []),
    `--cache-dir=${archives}`,
    r.debian.suite ?? "bookworm", tmp, mirror,
  ], { onLine: progress(r.name, log) });
  log(`${r.name}: debootstrap done (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  for (const p of SLIM) rmSync(join(tmp, p), { recursive: true, force: true });
  mkdirSync(join(tmp, "sandbox", "run"), { recursive: true });
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
}

/**
 * A copy of the base's root filesystem with the recipe's packages installed: `apt-get install` in
 * a chroot on the host, in a private mount namespace (its mounts end with it) where the shared apt
 * cache and lists are bind-mounted over the copy's own. One install at a time (flock on the shared
 * cache, across processes too): apt locks its archive directory.
 */
async function installLayer(r: Recipe, dir: string, baseDir: string, log: Log, c: ImageConfig): Promise<void> {
  const tmp = `${dir}.partial`;
  rmSync(tmp, { recursive: true, force: true });
  await sh("cp", ["-a", baseDir, tmp]);
  const apt = aptDirs(c);
  const packages = r.debian.packages ?? [];
  // No service starts inside the chroot (dbus and the like): policy-rc.d says no, removed after.
  writeFileSync(join(tmp, "usr", "sbin", "policy-rc.d"), "#!/bin/sh\nexit 101\n", { mode: 0o755 });
  for (const p of ["var/cache/apt/archives", "var/lib/apt/lists", "proc", "etc"]) mkdirSync(join(tmp, p), { recursive: true });
  // The host's resolv.conf for the downloads, over an empty file put where the copy's own was
  // (a symlink there would be followed on the host): the copy's own is put back after.
  const resolv = join(tmp, "etc", "resolv.conf");
  const own = `${resolv}.assay-build`;
  const hadResolv = exists(resolv);
  if (hadResolv) renameSync(resolv, own);
  writeFileSync(resolv, "");
  const aptOpts = "-o APT::Sandbox::User=root -o Acquire::Retries=3 -o Dpkg::Use-Pty=0 -q";
  const script = [
    "set -e",
    'mount --bind "$2" "$1/var/cache/apt/archives"',
    'mount --bind "$3" "$1/var/lib/apt/lists"',
    'mount -t proc proc "$1/proc"',
    'if [ -e /etc/resolv.conf ]; then mount --bind /etc/resolv.conf "$1/etc/resolv.conf"; fi',
    // The lists are fresh enough for an hour: every image of one build reads the same ones.
    `if [ -z "$(find "$3" -maxdepth 1 -name '*_Packages*' -mmin -60 2>/dev/null | head -1)" ]; then chroot "$1" apt-get ${aptOpts} update; fi`,
    `chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get ${aptOpts} -y --no-install-recommends install "\${@:4}"`,
    // The recipe's setup, in the same chroot (its /proc mounted): one script, stopped at its first error.
    'if [ -n "$RECIPE_SETUP" ]; then chroot "$1" env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -ec "$RECIPE_SETUP"; fi',
  ].join("\n");
  const t0 = Date.now();
  log(`${r.name}: apt-get install ${packages.join(" ")} on ${basename(baseDir)} (reusing its debootstrap; package cache ${apt.archives})`);
  const setup = (r.setup ?? []).join("\n");
  await sh("flock", ["-w", "3600", apt.lock, "unshare", "--mount", "--propagation", "private", "--", "bash", "-c", script, "install", tmp, apt.archives, apt.lists, ...packages], {
    onLine: progress(r.name, log),
    env: { ...process.env, RECIPE_SETUP: setup },
  });
  log(`${r.name}: packages installed${setup ? " and set up" : ""} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  rmSync(join(tmp, "usr", "sbin", "policy-rc.d"), { force: true });
  rmSync(resolv, { force: true });
  if (hadResolv) renameSync(own, resolv);
  for (const p of SLIM) rmSync(join(tmp, p), { recursive: true, force: true });
  mkdirSync(join(tmp, "sandbox", "run"), { recursive: true });
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
}

/** A path, or a symlink there (dangling or not). */
function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Each entry of a tree: path -> type, size, mtime, mode, owner and link target. */
async function listing(dir: string): Promise<Map<string, string>> {
  const out = await sh("find", [dir, "-mindepth", "1", "-printf", "%P\\0%y %s %T@ %m %U %G %l\\0"]);
  const parts = out.split("\0");
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < parts.length; i += 2) m.set(parts[i], parts[i + 1]);
  return m;
}

/** What a layer holds over its base: the paths added or changed, and those removed. */
export async function layerDiff(dir: string, baseDir: string): Promise<{ changed: string[]; removed: string[] }> {
  const [mine, base] = await Promise.all([listing(dir), listing(baseDir)]);
  const changed: string[] = [];
  for (const [p, meta] of mine) {
    const was = base.get(p);
    // A directory whose entries changed has a new mtime; its own entry carries only its metadata.
    if (was !== meta) changed.push(p);
  }
  // Removed: in the base, not here; a removed directory's entries go with it (rm -rf).
  const gone = new Set([...base.keys()].filter((p) => !mine.has(p)));
  const removed = [...gone].filter((p) => !gone.has(p.slice(0, Math.max(0, p.lastIndexOf("/")))));
  return { changed, removed };
}

/**
 * The base image plus one layer: a container of the base (no network) removes what the install
 * removed, takes the changed files (a tar of them, owners kept), and is committed under the tag.
 */
async function commitLayer(r: Recipe, tag: string, dir: string, baseDir: string, baseTag: string, log: Log): Promise<void> {
  const { changed, removed } = await layerDiff(dir, baseDir);
  log(`${r.name}: docker layer on ${baseTag}: ${changed.length} paths added or changed, ${removed.length} removed`);
  const cmd = removed.length ? ["/bin/rm", "-rf", "--", ...removed.map((p) => `/${p}`)] : ["true"];
  const id = (await sh("docker", ["create", "--network", "none", baseTag, ...cmd])).trim();
  try {
    if (removed.length) await sh("docker", ["start", "-a", id]);
    const tar = spawn("tar", ["-C", dir, "--null", "--no-recursion", "-T", "-", "-c"], { stdio: ["pipe", "pipe", "inherit"] });
    tar.stdin.end(changed.join("\0") + "\0");
    await sh("docker", ["cp", "-a", "-", `${id}:/`], { input: tar.stdout });
    await sh("docker", ["commit", "--message", `assay sandbox ${r.name} on ${baseTag}`, "--change", 'CMD ["python3"]', id, tag]);
  } finally {
    await sh("docker", ["rm", "-f", id]).catch(() => {});
  }
}

async function dockerImport(r: Recipe, tag: string, dir: string, log: Log): Promise<void> {
  log(`${r.name}: docker import -> ${tag}`);
  const tar = spawn("tar", ["-C", dir, "-c", "."], { stdio: ["ignore", "pipe", "inherit"] });
  await sh("docker", ["import", "--message", `assay sandbox ${r.name}`, "-", tag], { input: tar.stdout! });
}

async function exportRootfs(r: Recipe, tag: string, dir: string, log: Log): Promise<void> {
  log(`${r.name}: exporting the image's filesystem to ${dir} for bwrap`);
  mkdirSync(dir, { recursive: true });
  const id = (await sh("docker", ["create", tag, "true"])).trim();
  try {
    const exp = spawn("docker", ["export", id], { stdio: ["ignore", "pipe", "inherit"] });
    await sh("tar", ["-C", dir, "-x"], { input: exp.stdout! });
    mkdirSync(join(dir, "sandbox", "run"), { recursive: true });
  } finally {
    await sh("docker", ["rm", "-f", id]).catch(() => {});
  }
}

export interface BuildOptions {
  force?: boolean;
  /** With force: only these recipes are rebuilt (buildAll: those asked for). */
  forced?: string[];
  /** Every recipe (default: sandbox/images); a layer's base is looked up among them. */
  recipes?: Recipe[];
}

/**
 * Builds images, each once however many ask for it at the same time (the base of every layer).
 * One session of `buildAll`; a second session finds the first's images and root filesystems.
 */
export class ImageBuilder {
  private readonly done = new Map<string, Promise<string>>();
  /** apt-get installs run one after another (they share the apt cache); the rest overlaps. */
  private aptQueue: Promise<unknown> = Promise.resolve();
  readonly recipes: Recipe[];

  constructor(private readonly c: ImageConfig, private readonly log: Log, private readonly opts: BuildOptions = {}) {
    this.recipes = opts.recipes ?? loadRecipes();
  }

  /** Builds one recipe's image (and its rootfs) unless both exist. Returns the tag. */
  build(r: Recipe): Promise<string> {
    let p = this.done.get(r.name);
    if (!p) {
      p = this.buildOnce(r);
      this.done.set(r.name, p);
    }
    return p;
  }

  private async buildOnce(r: Recipe): Promise<string> {
    const { c, log, recipes } = { c: this.c, log: this.log, recipes: this.recipes };
    const tag = imageTag(r, recipes);
    const dir = rootfsDir(r, c, recipes);
    const t0 = Date.now();
    // --force rebuilds the images asked for, not the base they are built on.
    const force = this.opts.force && (!this.opts.forced || this.opts.forced.includes(r.name));
    const haveImage = !force && (await imageExists(tag));
    const haveRootfs = !force && hasPython(dir);
    if (haveImage && haveRootfs) {
      log(`${r.name}: ${tag} already built`);
      return tag;
    }
    const base = baseOf(r, recipes);
    if (!haveImage && !haveRootfs && (await buildFromRegistry(r, tag, log, c))) {
      await exportRootfs(r, tag, dir, log);
    } else if (!base) {
      if (!haveRootfs) await debootstrap(r, dir, log, c);
      if (!(await imageExists(tag))) await dockerImport(r, tag, dir, log);
    } else {
      const baseTag = await this.build(base);
      const baseDir = rootfsDir(base, c, recipes);
      const t1 = Date.now();
      const packages = r.debian.packages ?? [];
      if (!packages.length) {
        // Nothing to add: the base itself, under this recipe's tag and directory name.
        if (!haveRootfs) {
          rmSync(dir, { recursive: true, force: true });
          symlinkSync(basename(baseDir), dir);
        }
        if (!(await imageExists(tag))) await sh("docker", ["tag", baseTag, tag]);
      } else {
        if (!haveRootfs) {
          const installed = this.aptQueue.then(() => installLayer(r, dir, baseDir, log, c));
          this.aptQueue = installed.catch(() => {});
          await installed;
        }
        if (!(await imageExists(tag))) await commitLayer(r, tag, dir, baseDir, baseTag, log);
      }
      log(`${r.name}: ${tag} ready on ${baseTag}, reused (${((Date.now() - t1) / 1000).toFixed(0)} s past the base)`);
      return tag;
    }
    log(`${r.name}: ${tag} ready (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    return tag;
  }
}

/** Builds one recipe's image (and its base's, first, if it has one). Returns the tag. */
export function buildImage(r: Recipe, c: ImageConfig, log: Log, opts: BuildOptions = {}): Promise<string> {
  return new ImageBuilder(c, log, { forced: [r.name], ...opts }).build(r);
}

/** Builds the recipes (all, or those named): the base once, then each layer on it. */
export async function buildAll(c: ImageConfig, log: Log, opts: BuildOptions & { only?: string[] } = {}): Promise<string[]> {
  const all = opts.recipes ?? loadRecipes();
  const unknown = (opts.only ?? []).filter((n) => !all.some((r) => r.name === n));
  if (unknown.length) throw new Error(`no recipe named ${unknown.join(", ")}; recipes: ${all.map((r) => r.name).join(", ")}`);
  const recipes = all.filter((r) => !opts.only?.length || opts.only.includes(r.name));
  const b = new ImageBuilder(c, log, { ...opts, recipes: all, forced: opts.forced ?? recipes.map((r) => r.name) });
  return Promise.all(recipes.map((r) => b.build(r)));
}
