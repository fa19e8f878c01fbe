/** Test helpers: Assay servers and workers as real child processes (through tsx), to kill with signals. */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

export interface Proc {
  child: ChildProcess;
  /** Every JSON log line so far. */
  logs: Record<string, unknown>[];
  exited: Promise<unknown>;
  kill(signal?: NodeJS.Signals): void;
  /** Resolves at the first log line `match` accepts. */
  waitLog(match: (line: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>;
}
export interface ServerProcess extends Proc {
  url: string;
}

function start(args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
    cwd: root,
    env: { ...process.env, ASSAY_LOG_LEVEL: "debug", ASSAY_SANDBOX: "none", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Record<string, unknown>[] = [];
  const waiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
  createInterface({ input: child.stdout! }).on("line", (line) => {
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line);
    } catch {
      return;
    }
    logs.push(rec);
    for (const w of [...waiters]) if (w.match(rec)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(rec);
    }
  });
  const exited = once(child, "exit");
  return {
    child,
    logs,
    exited,
    kill(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    waitLog(match, ms = 60_000) {
      const seen = logs.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no such log line within ${ms} ms; stderr: ${stderr}`)), ms);
        waiters.push({ match, resolve: (l) => (clearTimeout(t), resolve(l)) });
        exited.then(() => reject(new Error(`process exited (${child.exitCode ?? child.signalCode}); stderr: ${stderr}`)));
      });
    },
  };
}

/** `assay serve --port 0`, resolved once it listens. */
export async function startServerProcess(env: Record<string, string>, startMs = 60_000): Promise<ServerProcess> {
  const p = start(["serve", "--port", "0"], env);
  const line = await p.waitLog((l) => typeof l.url === "string" && String(l.msg).includes("listening"), startMs);
  return { ...p, url: line.url as string };
}

/** `assay worker`, resolved once it takes chunks. */
export async function startWorkerProcess(env: Record<string, string>): Promise<Proc> {
  const p = start(["worker"], env);
  await p.waitLog((l) => String(l.msg).includes("worker ready"));
  return p;
}
