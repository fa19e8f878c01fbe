/**
 * What the server is still warming (verifiers' worker pools, the sandbox's warm containers) and
 * what failed to: `GET /readyz` answers from here. Ready means every part has settled: warm, or
 * failed with a reason (a failed part is shown, and retried by the first item that needs it, but
 * does not hold the rest of the server back: a host without Docker still scores math).
 */

export type PartState = "warming" | "ready" | "failed";

export interface Part {
  state: PartState;
  /** What it is (warming), how it stands (ready), or why it failed: one line a person can read. */
  note: string;
  /** Milliseconds from the start of warm-up until it settled. */
  ms?: number;
}

export interface ReadinessView {
  ready: boolean;
  /** The parts still warming, by name. */
  waiting_for: string[];
  parts: Record<string, Part>;
}

export class Readiness {
  private readonly parts = new Map<string, Part>();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly t0 = performance.now();

  /** How each ready part stands now, asked at every view (the sandbox's languages grow as images are built). */
  private readonly live = new Map<string, () => string>();

  /** Tracks one part: warming until `work` settles; `note(result)` says how it stands once ready, asked anew at each view. */
  track<T>(name: string, warming: string, work: Promise<T>, note: (value: T) => string = () => "ready"): void {
    const part: Part = { state: "warming", note: warming };
    this.parts.set(name, part);
    const settled = work.then(
      (v) => {
        this.live.set(name, () => note(v));
        Object.assign(part, { state: "ready", note: note(v) });
      },
      (err: unknown) => Object.assign(part, { state: "failed", note: err instanceof Error ? err.message : String(err) }),
    ).then(() => {
      part.ms = Math.round(performance.now() - this.t0);
      this.pending.delete(settled);
    });
    this.pending.add(settled);
  }

  /** Resolves once every part tracked so far has settled (never rejects). */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending);
  }

  view(): ReadinessView {
    const parts = Object.fromEntries([...this.parts].map(([k, p]) => [k, { ...p, ...(p.state === "ready" && this.live.has(k) ? { note: this.live.get(k)!() } : {}) }]));
    const waiting_for = [...this.parts].filter(([, p]) => p.state === "warming").map(([k]) => k);
    if (!this.started) waiting_for.push("warm-up (not started)");
    return { ready: waiting_for.length === 0, waiting_for, parts };
  }

  /** Set once warm-up has begun tracking its parts: before that nothing is known to be warm. */
  started = false;
}
