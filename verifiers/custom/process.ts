/**
 * Custom verifiers' isolates in a child process of their own (child.ts), behind the
 * CustomRunner's own surface (score, warm, close). A verifier that grows a Map, a Set or an
 * object's properties past its heap limit makes V8 abort the process its isolate lives in; in
 * the server's process that ended the server.
 *
 * Verifiers share one process. When it dies, each item that was scoring in it is scored again
 * alone, in a process of its own: the item that ends that one too is the verifier's error (null,
 * as any custom verifier's failure), the others get their own results.
 */
import { siblingModule } from "../../src/core/sibling.js";
import { ChildPool, type ChildHost } from "../../src/core/child-host.js";
import { WALL_FACTOR, WALL_SLACK_MS, type CustomResult, type RunnerLimits } from "./runner.js";

const WHAT = "the custom verifiers' process";
/** A call's answer is awaited this many of its wall safety nets (a batch that fails is rerun item by item) before its process counts as stuck. */
const STUCK_CALLS = 40;
const KILLED =
  "the verifier ended its runtime's process: V8 aborts when a Map, a Set or an object's properties cannot grow within the memory limit (ASSAY_CUSTOM_MEMORY_MB); scored alone in a process of its own";

export class CustomRunnerProcess {
  private readonly pool: ChildPool;
  /** The verifiers whose bodies each process has been sent. */
  private readonly sent = new WeakMap<ChildHost, Set<string>>();
  private readonly stuckMs: number;

  constructor(private readonly limits: RunnerLimits) {
    this.stuckMs = STUCK_CALLS * (WALL_FACTOR * limits.timeoutMs + WALL_SLACK_MS);
    this.pool = new ChildPool(siblingModule(import.meta.url, "child", "the custom verifiers' process"), WHAT, [JSON.stringify(limits)]);
  }

  score(name: string, compiled: string, input: unknown): Promise<CustomResult> {
    return this.pool.run<CustomResult>(
      (host) => this.ask(host, "score", name, compiled, input),
      (e) => ({ ok: false, message: `${WHAT} failed: ${e.message}` }),
      (lost) => ({ ok: false, message: lost.how === "stuck" ? "the verifier stopped answering past its time limit (scored alone in a process of its own)" : KILLED }),
    );
  }

  /** Loads the verifier in the shared process; never rejects (a failure shows on the item's call). */
  async warm(name: string, compiled: string): Promise<void> {
    try {
      await this.ask(this.pool.shared(), "warm", name, compiled);
    } catch {
      // the item's own call says what went wrong
    }
  }

  async close(): Promise<void> {
    this.pool.close();
  }

  private async ask(host: ChildHost, op: "score" | "warm", name: string, compiled: string, input?: unknown): Promise<CustomResult> {
    let sent = this.sent.get(host);
    if (!sent) this.sent.set(host, (sent = new Set()));
    const first = !sent.has(name);
    sent.add(name);
    const a = (await host.ask({ op, name, ...(first && { compiled }), input }, this.stuckMs)) as { result?: CustomResult };
    return a.result ?? { ok: false, message: `${WHAT} gave no result` };
  }
}
