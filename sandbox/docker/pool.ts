/**
 * The warm containers of one image: started ahead on the engines (engines.ts), lent one run at a
 * time, replaced when distrusted or when their engine goes down.
 */
import { Worker, type DockerOptions } from "./worker.js";
import type { Engine, Engines } from "./engines.js";
import { NotStartedError } from "../job.js";
import { Ledger } from "../load.js";
import { Waiters } from "../waiters.js";

/** Warm containers of one image. */
export class Pool {
  private idle: Worker[] = [];
  /** Runs waiting for a container, served earliest deadline first (../waiters.ts). */
  private readonly waiters: Waiters<Worker>;
  private live = 0;
  private closed = false;
  private lastError: Error | null = null;
  recycled = 0;
  /** The runs queued for and running in this pool's containers (admission reads its backlog). */
  readonly ledger: Ledger;

  private retryTimer?: NodeJS.Timeout;

  constructor(private readonly engines: Engines, readonly image: string, private readonly opts: DockerOptions) {
    this.ledger = new Ledger(opts.poolSize);
    this.waiters = new Waiters(opts.maxWaitMs);
    engines.onDown((e) => this.dropEngine(e));
  }

  /** Starts containers until the pool is full, each on the least loaded engine that answers. */
  fill(): void {
    while (!this.closed && this.live < this.opts.poolSize) {
      const engine = this.engines.pick();
      if (!engine) {
        this.retryLater();
        return;
      }
      this.live++;
      engine.live++;
      Worker.start(engine.docker, this.image, this.opts).then(
        (w) => {
          w.engine = engine;
          this.lastError = null;
          this.engines.up(engine);
          if (this.closed) this.discard(w);
          else this.release(w);
        },
        (e: Error) => {
          this.live--;
          engine.live--;
          this.lastError = e;
          this.engines.fail(engine, e.message);
          // Another engine may take it; with none left, tell the waiters rather than hang them.
          if (!this.closed && this.engines.pick()) this.fill();
          else {
            if (this.live === 0) this.waiters.rejectAll(e);
            this.retryLater();
          }
        },
      );
    }
  }

  /** With every engine down, tries again when the first is due. */
  private retryLater(): void {
    const at = this.engines.nextRetry();
    if (this.closed || at === null || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.fill();
    }, Math.max(50, at - Date.now()));
    this.retryTimer.unref();
  }

  /** An engine went down: its idle containers go (their replacements start elsewhere). */
  private dropEngine(e: Engine): void {
    const gone = this.idle.filter((w) => w.engine === e);
    if (!gone.length) return;
    this.idle = this.idle.filter((w) => w.engine !== e);
    for (const w of gone) this.discard(w);
  }

  /**
   * A warm container, or a wait for one. `startBy` (epoch ms): give up waiting then with a
   * NotStartedError (the caller's budget would be spent before its program could run).
   * `prefer`: an idle container it picks is taken before the others. Waiters are served
   * earliest deadline first: a `startBy`, else the wait's start plus ASSAY_SANDBOX_MAX_WAIT_MS.
   */
  acquire(signal?: AbortSignal, startBy?: number, prefer?: (w: Worker) => boolean): Promise<Worker> {
    // An idle container `prefer` picks first (the one that compiled this program: its cache has it).
    let i = -1;
    if (prefer) for (let j = this.idle.length - 1; j >= 0 && i < 0; j--) if (!this.idle[j].dead && prefer(this.idle[j])) i = j;
    let w = i >= 0 ? this.idle.splice(i, 1)[0] : this.idle.pop();
    while (w?.dead) {
      this.discard(w); // its container ended while idle (its engine died, say)
      w = this.idle.pop();
    }
    if (w) return Promise.resolve(w);
    if (this.live < this.opts.poolSize) this.fill();
    if (this.live === 0 && this.lastError) return Promise.reject(this.lastError);
    if (startBy !== undefined && startBy <= Date.now()) return Promise.reject(new NotStartedError("no sandbox container came free in time"));
    return this.waiters.wait({ startBy, signal, late: "no sandbox container came free before the start deadline" });
  }

  release(w: Worker): void {
    if (w.dead || this.closed) {
      this.discard(w);
      return;
    }
    if (!this.waiters.give(w)) this.idle.push(w);
  }

  /** Removes a container that can no longer be trusted and starts a fresh one. */
  discard(w: Worker): void {
    this.live--;
    if (w.engine) w.engine.live--;
    this.recycled++;
    void w.destroy();
    if (!this.closed) this.fill();
  }

  /**
   * Resolves once a container is idle (warm), polling: start-up waits on it. Rejects with the
   * last start error when no container could start, or after `timeoutMs`.
   */
  async ready(timeoutMs = 120_000): Promise<void> {
    const t0 = Date.now();
    while (!this.closed && this.idle.length === 0) {
      if (this.live === 0 && this.lastError) throw new Error(`no warm container of ${this.image}: ${this.lastError.message}`);
      if (Date.now() - t0 > timeoutMs) throw new Error(`no container of ${this.image} warm after ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  stats() {
    return { image: this.image, live: this.live, idle: this.idle.length, waiting: this.waiters.length, recycled: this.recycled };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.waiters.rejectAll(new Error("sandbox closed"));
    await Promise.all(this.idle.splice(0).map((w) => w.destroy()));
  }
}
