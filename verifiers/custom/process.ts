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
import pLimit from "p-limit";
import { siblingModule } from "../../src/core/sibling.js";
import { ChildHost, ChildLost } from "../../src/core/child-host.js";
import { WALL_FACTOR, WALL_SLACK_MS, type CustomResult, type RunnerLimits } from "./runner.js";

const WHAT = "the custom verifiers' process";
/** Items scored again alone at once, each in a process of its own. */
const ALONE_AT_ONCE = 2;
/** A call's answer is awaited this many of its wall safety nets (a batch that fails is rerun item by item) before its process counts as stuck. */
const STUCK_CALLS = 40;
const KILLED =
  "the verifier ended its runtime's process: V8 aborts when a Map, a Set or an object's properties cannot grow within the memory limit (ASSAY_CUSTOM_MEMORY_MB); scored alone in a process of its own";

export class CustomRunnerProcess {
  private readonly file = siblingModule(import.meta.url, "child", "the custom verifiers' process");
  private shared: ChildHost | null = null;
  /** The verifiers whose bodies each process has been sent. */
  private readonly sent = new WeakMap<ChildHost, Set<string>>();
  private readonly alone = pLimit(ALONE_AT_ONCE);
  private readonly stuckMs: number;
  /** Shared processes lost, and items that lost a process of their own (tests). */
  lostShared = 0;
  blamed = 0;

  constructor(private readonly limits: RunnerLimits) {
    this.stuckMs = STUCK_CALLS * (WALL_FACTOR * limits.timeoutMs + WALL_SLACK_MS);
  }

  async score(name: string, compiled: string, input: unknown): Promise<CustomResult> {
    try {
      return await this.ask(this.host(), "score", name, compiled, input);
    } catch (e) {
      if (!(e instanceof ChildLost)) return { ok: false, message: `${WHAT} failed: ${(e as Error).message}` };
    }
    return this.alone(async () => {
      const own = new ChildHost(this.file, WHAT, () => {}, [JSON.stringify(this.limits)]);
      try {
        return await this.ask(own, "score", name, compiled, input);
      } catch (e) {
        if (!(e instanceof ChildLost)) return { ok: false, message: `${WHAT} failed: ${(e as Error).message}` };
        this.blamed++;
        return { ok: false, message: e.how === "stuck" ? "the verifier stopped answering past its time limit (scored alone in a process of its own)" : KILLED };
      } finally {
        own.kill();
      }
    });
  }

  /** Loads the verifier in the shared process; never rejects (a failure shows on the item's call). */
  async warm(name: string, compiled: string): Promise<void> {
    try {
      await this.ask(this.host(), "warm", name, compiled);
    } catch {
      // the item's own call says what went wrong
    }
  }

  async close(): Promise<void> {
    this.shared?.kill();
    this.shared = null;
  }

  private async ask(host: ChildHost, op: "score" | "warm", name: string, compiled: string, input?: unknown): Promise<CustomResult> {
    let sent = this.sent.get(host);
    if (!sent) this.sent.set(host, (sent = new Set()));
    const first = !sent.has(name);
    sent.add(name);
    const a = (await host.ask({ op, name, ...(first && { compiled }), input }, this.stuckMs)) as { result?: CustomResult };
    return a.result ?? { ok: false, message: `${WHAT} gave no result` };
  }

  private host(): ChildHost {
    if (this.shared?.alive) return this.shared;
    const h = new ChildHost(this.file, WHAT, (gone) => {
      if (this.shared === gone) this.shared = null;
      this.lostShared++;
    }, [JSON.stringify(this.limits)]);
    this.shared = h;
    return h;
  }
}
