/**
 * One warm sandbox container and the runner attached to it over stdin/stdout: how a container
 * is created (no network, read-only root, tmpfs scratch, memory and pids cgroup limits, only
 * the capabilities the runner needs), how a job is sent and its answer read, how it is removed.
 */
import type { Recipe } from "../images.js";
import Docker from "dockerode";
import { PassThrough, type Duplex } from "node:stream";
import { hostname } from "node:os";
import { readFileSync } from "node:fs";
import { runnerSourceText } from "../paths.js";
import type { RunnerJob } from "../job.js";
import type { SandboxConfig } from "../../src/core/config.js";
import type { Engine } from "./engines.js";

export interface DockerOptions {
  /** Containers per image. */
  poolSize: number;
  /** Each container's memory (cgroup), MiB: the ceiling of any run's memory limit. */
  memoryMb: number;
  /** Each container's pids limit (cgroup). */
  pids: number;
  /** Scratch tmpfs size, MiB. */
  scratchMb: number;
  /** Engine addresses (`unix:///...`, `tcp://host:port`); empty: dockerode's default (DOCKER_HOST or /var/run/docker.sock). */
  hosts: string[];
  /** Directory of ca.pem, cert.pem, key.pem for tcp:// engines over TLS. */
  certPath?: string;
  /** Python's warm interpreter imports these (empty: each language's own list, sandbox/languages.ts). */
  preload?: string[];
  /**
   * ASSAY_SANDBOX_MAX_WAIT_MS: a run waiting for a container without a `startBy` is served as if
   * it had one this far after it began waiting (../waiters.ts; default 30 s).
   */
  maxWaitMs?: number;
  /** The tag a recipe's image has (default: images.ts's imageTag). Tests point it at tags of their own. */
  tagOf?: (r: Recipe) => string;
  /** Told what an operator should fix (a preloaded module that does not import); the server logs it as a warning. */
  onWarning?: (message: string) => void;
}

/** The docker backend's options from the sandbox settings (config.ts declares and checks them). */
export function dockerOptions(c: SandboxConfig): DockerOptions {
  return {
    poolSize: c.poolSize,
    memoryMb: c.memoryMb,
    pids: c.pids,
    scratchMb: c.scratchMb,
    hosts: c.dockerHosts.length ? c.dockerHosts : c.dockerHost ? [c.dockerHost] : [],
    certPath: c.dockerCertPath || undefined,
    preload: c.preload,
    maxWaitMs: c.maxWaitMs,
  };
}

/**
 * When a process started, in clock ticks since boot (/proc/<pid>/stat's 22nd field), or "" where
 * there is no /proc or no such process. With the pid it names one process across pid reuse: a
 * server in a container is pid 1 in every life of that container, so the pid alone would make a
 * restarted replica take its previous life's containers for its own and never remove them.
 */
export function processStart(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}

/** The owner label of this process's containers: `<hostname>:<pid>:<start>`. */
export const OWNER = `${hostname()}:${process.pid}:${processStart(process.pid)}`;
export const LABEL = "assay.sandbox";

interface Pending {
  resolve: (r: any) => void;
  reject: (e: Error) => void;
}

/**
 * Splits a byte stream into lines, each decoded once it is whole: linear in the bytes however
 * they are chunked (a 12 MB result line arriving in 64 KB pieces is searched once, not once per
 * piece), and a character split across two chunks is never torn.
 */
export function lines(onLine: (line: string) => void): (chunk: Buffer) => void {
  let parts: Buffer[] = [];
  return (chunk) => {
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl >= 0; nl = chunk.indexOf(10, from)) {
      parts.push(chunk.subarray(from, nl));
      const line = parts.length === 1 ? parts[0] : Buffer.concat(parts);
      parts = [];
      from = nl + 1;
      onLine(line.toString("utf8"));
    }
    if (from < chunk.length) parts.push(chunk.subarray(from));
  };
}

/**
 * The runner's stdout as both backends read it: JSON lines, the first `{"ready": …}` one resolving
 * the start, every later one the reply to the run in flight (lines that are not JSON are skipped).
 */
export function runnerReplies(onReady: () => void, onReply: (msg: any) => void): (chunk: Buffer) => void {
  let gotReady = false;
  return lines((line) => {
    let msg: any;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (!gotReady && msg.ready) {
      gotReady = true;
      onReady();
      return;
    }
    onReply(msg);
  });
}

/** One warm container and its attached runner. */
export class Worker {
  private pending: Pending | null = null;
  private stderrTail = "";
  dead = false;
  ready: Promise<void>;
  /** The engine it runs on (set by the pool). */
  engine?: Engine;
  /**
   * Compile keys of the programs this container compiled (its runner's cache holds them, unless
   * evicted): every test of a compiled item goes where its binary is, so it is compiled once.
   */
  readonly compiled = new Set<string>();

  private constructor(readonly container: Docker.Container, private readonly stream: Duplex, demux: (s: Duplex, o: PassThrough, e: PassThrough) => void) {
    const out = new PassThrough();
    const err = new PassThrough();
    demux(stream, out, err);
    err.on("data", (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString("utf8")).slice(-2000);
    });
    let readyResolve!: () => void;
    let readyReject!: (e: Error) => void;
    this.ready = new Promise((res, rej) => {
      readyResolve = res;
      readyReject = rej;
    });
    this.ready.catch(() => {});
    out.on("data", runnerReplies(() => readyResolve(), (msg) => {
      const p = this.pending;
      this.pending = null;
      p?.resolve(msg);
    }));
    const onEnd = () => {
      if (this.dead) return;
      this.dead = true;
      const e = new Error(`sandbox container ended unexpectedly${this.stderrTail ? ": " + this.stderrTail.trim().slice(-300) : ""}`);
      readyReject(e);
      const p = this.pending;
      this.pending = null;
      p?.reject(e);
    };
    stream.on("end", onEnd);
    stream.on("close", onEnd);
    stream.on("error", onEnd);
  }

  /**
   * Starts a container. `program`: another in-sandbox program than the runner (the session
   * supervisor, sandbox/sessions/kernel.py) speaking the same ready-then-replies protocol, and
   * tmpfs mounts beside /sandbox, and a memory limit of its own (MiB) in place of `opts.memoryMb`.
   */
  static async start(docker: Docker, image: string, opts: DockerOptions, program?: { source: string; tmpfs?: Record<string, string>; memoryMb?: number; labels?: Record<string, string> }): Promise<Worker> {
    const memoryMb = program?.memoryMb ?? opts.memoryMb;
    const container = await docker.createContainer({
      Image: image,
      Cmd: ["python3", "-u", "-c", program?.source ?? runnerSourceText()],
      Env: ["ASSAY_SCRATCH=/sandbox", "ASSAY_IN_SANDBOX=1", "PATH=/usr/local/bin:/usr/bin:/bin"],
      User: "0:0",
      WorkingDir: "/sandbox",
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      OpenStdin: true,
      StdinOnce: false,
      Tty: false,
      NetworkDisabled: true,
      Labels: { [LABEL]: OWNER, ...program?.labels },
      HostConfig: {
        NetworkMode: "none",
        ReadonlyRootfs: true,
        Tmpfs: { "/sandbox": `rw,exec,nosuid,nodev,size=${opts.scratchMb}m,mode=755`, ...program?.tmpfs },
        ShmSize: 16 * 1024 * 1024,
        Memory: memoryMb * 1024 * 1024,
        MemorySwap: memoryMb * 1024 * 1024,
        PidsLimit: opts.pids,
        // At most one core per container: a fork bomb in one sample cannot starve the others.
        NanoCpus: 1_000_000_000,
        CapDrop: ["ALL"],
        CapAdd: ["SETUID", "SETGID", "CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL"],
        SecurityOpt: ["no-new-privileges"],
        IpcMode: "private",
        Init: false,
        AutoRemove: false,
        LogConfig: { Type: "none", Config: {} },
      },
    });
    try {
      const stream = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as unknown as Duplex;
      const w = new Worker(container, stream, (s, o, e) => docker.modem.demuxStream(s, o, e));
      await container.start();
      await withTimeout(w.ready, 20_000, "the sandbox runner did not start within 20 s");
      return w;
    } catch (e) {
      await container.remove({ force: true }).catch(() => {});
      throw e;
    }
  }

  /** Sends one job; resolves with the runner's answer, rejects if the container dies or overruns. */
  exec(job: RunnerJob, timeoutMs: number): Promise<any> {
    if (this.dead) return Promise.reject(new Error("sandbox container is gone"));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = null;
        reject(new Error(`the sandbox runner did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending = {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.stream.write(JSON.stringify(job) + "\n");
    });
  }

  async destroy(): Promise<void> {
    this.dead = true;
    try {
      this.stream.destroy();
    } catch {
      /* already closed */
    }
    await this.container.remove({ force: true }).catch(() => {});
  }
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<T>((_, rej) => {
      t = setTimeout(() => rej(new Error(what)), ms);
    }),
  ]);
}
