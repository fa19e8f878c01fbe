/** The warm containers of one image: started ahead, lent one run at a time, replaced when distrusted. */
import type Docker from "dockerode";
import { Worker, type DockerOptions } from "./worker.js";
import { NotStartedError } from "../job.js";
import { Ledger } from "../load.js";

/** Warm containers of one image. */
export class Pool {
  private idle: Worker[] = [];
  private waiters: { resolve: (w: Worker) => void; reject: (e: Error) => void }[] = [];
  private live = 0;
  private closed = false;
  private lastError: Error | null = null;
  recycled = 0;
  /** The runs queued for and running in this pool's containers (admission reads its backlog). */
  readonly ledger: Ledger;

  constructor(private readonly docker: Docker, readonly image: string, private readonly opts: DockerOptions) {
    this.ledger = new Ledger(opts.poolSize);
  }

  /** Starts containers until the pool is full. */
  fill(): void {
    while (!this.closed && this.live < this.opts.poolSize) {
      this.live++;
      Worker.start(this.docker, this.image, this.opts).then(
        (w) => {
          this.lastError = null;
          if (this.closed) {
            this.live--;
            void w.destroy();
          } else this.release(w);
        },
        (e: Error) => {
          this.live--;
          this.lastError = e;
          // Nothing is starting any more: tell the waiters rather than hang them.
          if (this.live === 0) for (const w of this.waiters.splice(0)) w.reject(e);
        },
      );
    }
  }

  /**
   * A warm container, or a wait for one. `startBy` (epoch ms): give up waiting then with a
   * NotStartedError (the caller's budget would be spent before its program could run).
   */
  acquire(signal?: AbortSignal, startBy?: number): Promise<Worker> {
    const w = this.idle.pop();
    if (w) return Promise.resolve(w);
    if (this.live < this.opts.poolSize) this.fill();
    if (this.live === 0 && this.lastError) return Promise.reject(this.lastError);
    if (startBy !== undefined && startBy <= Date.now()) return Promise.reject(new NotStartedError("no sandbox container came free in time"));
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = () => {
        const i = this.waiters.indexOf(entry);
        if (i >= 0) this.waiters.splice(i, 1);
        return i >= 0;
      };
      const onAbort = () => {
        if (leave()) entry.reject(new Error("aborted while waiting for a sandbox"));
      };
      const entry = {
        resolve: (x: Worker) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve(x);
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          reject(e);
        },
      };
      this.waiters.push(entry);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (startBy !== undefined) {
        timer = setTimeout(() => {
          if (leave()) entry.reject(new NotStartedError("no sandbox container came free before the start deadline"));
        }, Math.max(0, startBy - Date.now()));
      }
    });
  }

  release(w: Worker): void {
    if (w.dead || this.closed) {
      this.discard(w);
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(w);
    else this.idle.push(w);
  }

  /** Removes a container that can no longer be trusted and starts a fresh one. */
  discard(w: Worker): void {
    this.live--;
    this.recycled++;
    void w.destroy();
    if (!this.closed) this.fill();
  }

  stats() {
    return { image: this.image, live: this.live, idle: this.idle.length, waiting: this.waiters.length, recycled: this.recycled };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new Error("sandbox closed"));
    await Promise.all(this.idle.splice(0).map((w) => w.destroy()));
  }
}
