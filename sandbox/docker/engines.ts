/**
 * The Docker engines the pool spreads its containers over (ASSAY_DOCKER_HOSTS, else DOCKER_HOST
 * or the default socket). Each new container goes to the answering engine with the fewest of
 * Assay's containers. An engine that fails (a create or start error, a container that dies with
 * its engine no longer answering a ping) is marked down: its idle containers are dropped, no new
 * ones go to it, and it is tried again after a back-off (2 s, doubling to 60 s); the first
 * container that starts on it brings it back. Items keep scoring on the others meanwhile.
 */
import Docker from "dockerode";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface Engine {
  /** As configured: `unix:///run/docker.sock`, `tcp://10.0.0.5:2376`. */
  readonly name: string;
  readonly docker: Docker;
  down: boolean;
  retryAt: number;
  backoffMs: number;
  /** Assay containers on it (starting or warm), across every image's pool. */
  live: number;
  lastError?: string;
}

const FIRST_BACKOFF_MS = 2000;
const MAX_BACKOFF_MS = 60_000;

/**
 * dockerode's connection options for one engine address: `unix:///path` (or a bare `/path`), or
 * `tcp://host:port`, over TLS with `ca.pem`, `cert.pem` and `key.pem` from `certPath` when given
 * (DOCKER_CERT_PATH, as the docker CLI reads it).
 */
export function connectionOf(address: string, certPath?: string): Docker.DockerOptions {
  if (address.startsWith("unix://")) return { socketPath: address.slice("unix://".length) };
  if (address.startsWith("/")) return { socketPath: address };
  const m = /^(?:tcp|https?):\/\/([^:/]+|\[[^\]]+\]):(\d+)\/?$/.exec(address);
  if (!m) throw new Error(`not a Docker engine address: ${JSON.stringify(address)} (use unix:///path or tcp://host:port)`);
  const base = { host: m[1]!.replace(/^\[|\]$/g, ""), port: Number(m[2]) };
  if (!certPath) return { ...base, protocol: "http" };
  const read = (f: string) => readFileSync(join(certPath, f));
  return { ...base, protocol: "https", ca: read("ca.pem"), cert: read("cert.pem"), key: read("key.pem") };
}

export class Engines {
  private readonly downListeners: ((e: Engine) => void)[] = [];

  constructor(readonly list: Engine[]) {}

  static of(addresses: { name: string; docker: Docker }[]): Engines {
    return new Engines(addresses.map(({ name, docker }) => ({ name, docker, down: false, retryAt: 0, backoffMs: 0, live: 0 })));
  }

  /** The engine for a new container: the least loaded of those up or due a retry; null if none. */
  pick(): Engine | null {
    const now = Date.now();
    let best: Engine | null = null;
    for (const e of this.list) {
      if (e.down && now < e.retryAt) continue;
      if (!best || e.live < best.live) best = e;
    }
    return best;
  }

  /** When the next down engine is due a retry (epoch ms), or null when none is down. */
  nextRetry(): number | null {
    const due = this.list.filter((e) => e.down).map((e) => e.retryAt);
    return due.length ? Math.min(...due) : null;
  }

  up(e: Engine): void {
    e.down = false;
    e.backoffMs = 0;
    e.lastError = undefined;
  }

  fail(e: Engine, why: string): void {
    const was = e.down;
    e.lastError = why;
    // Several containers tried on it at once fail together: one failure, one back-off step.
    if (was && Date.now() < e.retryAt) return;
    e.down = true;
    e.backoffMs = Math.min(MAX_BACKOFF_MS, e.backoffMs ? e.backoffMs * 2 : FIRST_BACKOFF_MS);
    e.retryAt = Date.now() + e.backoffMs;
    if (!was) for (const fn of this.downListeners) fn(e);
  }

  /** Calls `fn` when an engine goes down (pools drop their idle containers on it). */
  onDown(fn: (e: Engine) => void): void {
    this.downListeners.push(fn);
  }

  stats() {
    return this.list.map((e) => ({ engine: e.name, up: !e.down, live: e.live, ...(e.lastError ? { error: e.lastError } : {}) }));
  }
}
