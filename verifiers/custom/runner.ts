/**
 * Runs custom verifiers in isolated-vm: one V8 isolate per verifier version (never shared
 * between verifiers, so one cannot see another's data), with a heap limit, a CPU-time limit per
 * call, and frozen built-ins plus a fresh module evaluation per item (bootstrap.js.ts), so an
 * item cannot leave state for the next. Isolates are kept warm, least recently used closed
 * first. An isolate that timed out or ran out of memory is thrown away and made anew.
 *
 * The time limit is CPU time (an upper bound of the isolate's own, see limited(); a watchdog
 * disposes the isolate past it, which ends the call), so a verifier is not cut off because
 * other processes keep the machine busy. Wall time is only a safety net, WALL_FACTOR times the limit plus
 * WALL_SLACK_MS, for code that does not use CPU and does not return. Calls on one isolate run
 * one after the other (queued here), so each call's CPU time is its own. Loading a verifier
 * (isolate, bootstrap, module) is warm-up, not the item's: `warm()` does it, the verifier awaits
 * it with the item's clock stopped, its limit is LOAD_CPU_MS of CPU, and loads run one at a time.
 */
import type IvmNs from "isolated-vm";
import { BOOTSTRAP } from "./bootstrap.js";
import { cpuTimeOf, disposeOf } from "../../src/core/isolate.js";
import { jsonDepth } from "../../src/core/json-depth.js";

type Ivm = typeof IvmNs;
type RunRef = IvmNs.Reference<(input: string, many?: boolean) => unknown>;

export interface RunnerLimits {
  memoryMb: number;
  timeoutMs: number;
  isolates: number;
  /** Isolates per verifier version (calls on one isolate run one at a time). */
  perVersion: number;
  /** isolated-vm's callback when V8 has lost an isolate (the process cannot go on: process.ts's child ends itself). */
  onCatastrophicError?: (message: string) => void;
}

export type CustomResult =
  | { ok: true; reward: number; reason: string; details: Record<string, unknown> }
  | { ok: false; message: string };

/**
 * A call queued on an isolate that another call retired is run again on a fresh one, up to this
 * many times (a verifier that changes RegExp on every item retires an isolate per item).
 */
const RETRIES = 16;
const RETIRED = "its isolate was retired too many times in a row (does the verifier change RegExp or RegExp.prototype, or time out, on every item?)";

/** How long past its time limit a call that ignores termination is waited for. */
const GRACE_MS = 1000;
/** The wall-clock safety net of a call: WALL_FACTOR x its CPU limit + WALL_SLACK_MS. */
export const WALL_FACTOR = 10;
export const WALL_SLACK_MS = 2000;
/** CPU time loading a verifier (bootstrap, freezing, its module's top level) may take, at least: its own limit if larger. A good one takes ~20 ms. */
export const LOAD_CPU_MS = 1000;

/** Thrown by a call whose isolate used more CPU than its limit. */
class CpuLimit extends Error {}
/** Thrown by a call past its wall-clock safety net with CPU to spare (a loaded machine). */
class WallLimit extends Error {}
/** Thrown by a call whose isolate ran out of memory. */
class HeapLimit extends Error {}

interface Pending {
  input: unknown;
  resolve: (r: CustomResult) => void;
}

/** Most items sent to an isolate in one call. */
const BATCH = 32;

interface Loaded {
  isolate: IvmNs.Isolate;
  run: RunRef;
  /** The call queue: calls on one isolate run one after the other, so CPU time is per call. */
  tail: Promise<unknown>;
}

/**
 * Runs `fn` on the isolate under a CPU-time limit (watched, the isolate disposed past it) and a
 * wall-clock safety net. Queued behind the isolate's previous call; the limits start when it runs.
 */
function limited<T>(isolate: IvmNs.Isolate, holder: { tail: Promise<unknown> } | undefined, cpuMs: number, fn: (wallMs: number) => Promise<T>): Promise<T> {
  const wallMs = cpuMs * WALL_FACTOR + WALL_SLACK_MS;
  const go = async (): Promise<T> => {
    if (isolate.isDisposed) return fn(wallMs); // rejects: the caller sees a disposed isolate
    // The call's CPU time is read as the smaller of two upper bounds: isolate.cpuTime's growth
    // (isolated-vm times a running call by the wall clock, so it is at least the CPU time) and
    // the whole process's CPU time since the call began (getrusage: this isolate's thread plus
    // whatever else the server did meanwhile). On a host busy with other processes the second
    // is close to the isolate's own; with many calls running in this server at once it counts
    // theirs too, so the limit can only come early, never late.
    const cpu0 = cpuTimeOf(isolate) ?? 0n;
    const proc0 = process.cpuUsage();
    const procUsed = () => {
      const d = process.cpuUsage(proc0);
      return (d.user + d.system) / 1000;
    };
    const used = () => {
      const t = cpuTimeOf(isolate);
      return Math.min(t === undefined ? Infinity : Number(t - cpu0) / 1e6, procUsed());
    };
    let killed = "";
    const every = Math.max(5, Math.min(100, Math.floor(cpuMs / 5)));
    const watch = setInterval(() => {
      if (!isolate.isDisposed && used() > cpuMs) {
        killed = ` (stopped at ${Math.round(used())} ms)`;
        disposeOf(isolate);
      }
    }, every);
    const t0 = performance.now();
    let out: T;
    try {
      const applied = fn(wallMs);
      applied.catch(() => {});
      out = await Promise.race([applied, ignoredTermination(wallMs + GRACE_MS)]);
    } catch (e) {
      const msg = messageOf(e);
      if (/memory limit/i.test(msg)) throw new HeapLimit(msg);
      if (killed) throw new CpuLimit(`used more than ${cpuMs} ms of CPU${killed}`);
      if (/timed out|ignored termination/i.test(msg)) {
        const cpu = used();
        if (cpu >= cpuMs) throw new CpuLimit(`used more than ${cpuMs} ms of CPU`);
        throw new WallLimit(`ran ${Math.round(performance.now() - t0)} ms of wall time (the safety net) with ${Math.round(cpu)} ms of CPU: the host is overloaded`);
      }
      throw e;
    } finally {
      clearInterval(watch);
    }
    if (used() > cpuMs) throw new CpuLimit(`used ${Math.round(used())} ms of CPU, more than ${cpuMs} ms`);
    return out;
  };
  if (!holder) return go();
  const p = holder.tail.then(go, go);
  holder.tail = p.catch(() => {});
  return p;
}

let ivmP: Promise<Ivm> | undefined;
function loadIvm(): Promise<Ivm> {
  ivmP ??= import("isolated-vm").then((m) => ((m as { default?: Ivm }).default ?? m) as Ivm);
  return ivmP;
}

export class CustomRunner {
  private readonly loadedBy = new Map<string, Promise<Loaded>>();

  constructor(private readonly limits: RunnerLimits) {}

  /**
   * Scores one item with the verifier `name` (name@version) whose CommonJS body is `compiled`.
   * Items that arrive together for one version are sent to its isolate in one call (up to
   * BATCH): one hop across threads instead of one per item. Each item still gets a fresh module
   * evaluation; a batch that times out or fails is run again item by item, each with its own
   * limits, so one bad item is blamed alone.
   */
  score(name: string, compiled: string, input: unknown): Promise<CustomResult> {
    return new Promise((resolve) => {
      let q = this.pending.get(name);
      if (!q) {
        q = { compiled, items: [] };
        this.pending.set(name, q);
        setImmediate(() => this.flush(name));
      }
      q.items.push({ input, resolve });
    });
  }

  private readonly pending = new Map<string, { compiled: string; items: Pending[] }>();

  private flush(name: string): void {
    const q = this.pending.get(name);
    this.pending.delete(name);
    if (!q) return;
    for (let i = 0; i < q.items.length; i += BATCH) {
      const chunk = q.items.slice(i, i + BATCH);
      const key = this.slot(name);
      this.busy.set(key, (this.busy.get(key) ?? 0) + 1);
      void this.runChunk(key, q.compiled, chunk).finally(() => {
        const b = (this.busy.get(key) ?? 1) - 1;
        if (b <= 0 && !this.loadedBy.has(key)) this.busy.delete(key);
        else this.busy.set(key, b);
      });
    }
  }

  /** The least busy of this version's isolates (made on demand, up to perVersion). */
  private slot(name: string): string {
    let key = `${name}#0`;
    let least = Infinity;
    for (let i = 0; i < this.limits.perVersion; i++) {
      const k = `${name}#${i}`;
      const b = this.busy.get(k);
      if (b === undefined) {
        if (least > 0) key = k;
        break;
      }
      if (b < least) {
        least = b;
        key = k;
      }
    }
    return key;
  }

  private async runChunk(key: string, compiled: string, chunk: Pending[]): Promise<void> {
    const single = async (c: Pending) => c.resolve(await this.scoreOn(key, compiled, c.input));
    if (chunk.length === 1) return single(chunk[0]);
    let loaded: Loaded;
    try {
      loaded = await this.load(key, compiled);
    } catch (e) {
      this.drop(key);
      for (const c of chunk) c.resolve({ ok: false, message: `the verifier could not be loaded: ${messageOf(e)}` });
      return;
    }
    let raw: unknown;
    try {
      const input = JSON.stringify(chunk.map((c) => c.input));
      raw = await limited(loaded.isolate, loaded, this.limits.timeoutMs, (wall) => loaded.run.apply(undefined, [input, true], { timeout: wall, result: { copy: true } }));
    } catch {
      // Time-out, memory or a retired isolate: every item again on its own, with its own limits.
      this.drop(key, loaded);
      await Promise.all(chunk.map(single));
      return;
    }
    if (!Array.isArray(raw) || raw.length !== chunk.length) {
      this.drop(key, loaded);
      for (const c of chunk) c.resolve({ ok: false, message: "the verifier's result could not be read" });
      return;
    }
    const results = raw as unknown[];
    if (results.some((r) => !Array.isArray(r) || r[r.length - 1] !== false)) this.drop(key, loaded);
    await Promise.all(
      chunk.map((c, i) => {
        const r = results[i];
        if (Array.isArray(r) && r[0] === 2) return single(c); // refused by a retired isolate
        c.resolve(checked(Array.isArray(r) ? r.slice(0, -1) : r));
        return undefined;
      }),
    );
  }

  /** Calls in flight per isolate key (name@version#slot). */
  private readonly busy = new Map<string, number>();

  private async scoreOn(key: string, compiled: string, input: unknown, tries = RETRIES): Promise<CustomResult> {
    let loaded: Loaded;
    try {
      loaded = await this.load(key, compiled);
    } catch (e) {
      this.drop(key);
      return { ok: false, message: `the verifier could not be loaded: ${messageOf(e)}` };
    }
    const { timeoutMs, memoryMb } = this.limits;
    let raw: unknown;
    try {
      const json = JSON.stringify(input);
      raw = await limited(loaded.isolate, loaded, timeoutMs, (wall) => loaded.run.apply(undefined, [json], { timeout: wall, result: { copy: true } }));
    } catch (e) {
      const msg = messageOf(e);
      const timedOut = e instanceof CpuLimit || e instanceof WallLimit || e instanceof HeapLimit;
      // Queued behind a call that retired this isolate (time-out, RegExp change): run it afresh.
      if (this.retired.has(loaded) && !timedOut) {
        return tries > 0 ? this.scoreOn(key, compiled, input, tries - 1) : { ok: false, message: RETIRED };
      }
      this.drop(key, loaded);
      // A heap near its limit spends its CPU collecting garbage: a memory bomb may end here too.
      if (e instanceof CpuLimit) return { ok: false, message: `timed out: score ${msg}, past ASSAY_CUSTOM_TIMEOUT_MS (a heap kept near ASSAY_CUSTOM_MEMORY_MB, ${memoryMb} MiB, uses it up collecting garbage)` };
      if (e instanceof WallLimit) return { ok: false, message: `timed out: score ${msg}` };
      if (e instanceof HeapLimit || /memory limit|disposed/i.test(msg)) return { ok: false, message: `ran out of memory: the isolate's heap limit is ASSAY_CUSTOM_MEMORY_MB (${memoryMb} MiB)` };
      return { ok: false, message: `the sandbox failed: ${msg}` };
    }
    // The item changed RegExp / RegExp.prototype: its own result stands, the isolate retires;
    // an item queued behind it was refused there ([2]) and runs once more on a fresh isolate.
    if (Array.isArray(raw) && raw[raw.length - 1] !== false) {
      this.drop(key, loaded);
      if (raw[0] === 2) return tries > 0 ? this.scoreOn(key, compiled, input, tries - 1) : { ok: false, message: RETIRED };
    }
    return checked(Array.isArray(raw) ? raw.slice(0, -1) : raw);
  }

  private load(key: string, compiled: string): Promise<Loaded> {
    let p = this.loadedBy.get(key);
    if (p) {
      this.loadedBy.delete(key); // most recently used goes last
      this.loadedBy.set(key, p);
      return p;
    }
    p = this.make(compiled).then((l) => {
      if (this.loadedBy.get(key) === p) this.made.set(key, l);
      return l;
    });
    this.loadedBy.set(key, p);
    while (this.loadedBy.size > this.limits.isolates) {
      this.drop(this.loadedBy.keys().next().value!);
    }
    return p;
  }

  /**
   * Loads the version's isolate (the first slot) unless it is loaded: warm-up, which the verifier
   * awaits with the item's clock stopped. Never rejects; a failure shows on the item's call.
   */
  warm(name: string, compiled: string): Promise<void> {
    return this.load(`${name}#0`, compiled).then(() => undefined, () => undefined);
  }

  /**
   * Loads run one after another, with a turn of the event loop between (creating an isolate
   * blocks the loop a few ms), so 24 cold verifiers neither hold /healthz nor share the process
   * CPU time that bounds each load's limit (see limited()).
   */
  private creating: Promise<unknown> = Promise.resolve();

  private make(compiled: string): Promise<Loaded> {
    const p = this.creating.then(() => new Promise<void>((r) => setImmediate(r))).then(() => this.makeNow(compiled));
    this.creating = p.catch(() => {});
    return p;
  }

  private async makeNow(compiled: string): Promise<Loaded> {
    const ivm = await loadIvm();
    const isolate = new ivm.Isolate({ memoryLimit: this.limits.memoryMb, ...(this.limits.onCatastrophicError && { onCatastrophicError: this.limits.onCatastrophicError }) });
    try {
      const context = await isolate.createContext();
      const cpuMs = Math.max(LOAD_CPU_MS, this.limits.timeoutMs);
      const prepare = (await limited(isolate, undefined, cpuMs, (wall) => context.eval(BOOTSTRAP, { reference: true, timeout: wall }))) as IvmNs.Reference<(src: string) => unknown>;
      const run = (await limited(isolate, undefined, cpuMs, (wall) => prepare.apply(undefined, [compiled], { timeout: wall, arguments: { copy: true }, result: { reference: true } }))) as unknown as RunRef;
      if (run.typeof !== "function") throw new Error("the module did not load");
      return { isolate, run, tail: Promise.resolve() };
    } catch (e) {
      disposeOf(isolate);
      if (e instanceof CpuLimit) throw new Error(`timed out: loading the module ${e.message} (loading may take ${Math.max(LOAD_CPU_MS, this.limits.timeoutMs)} ms of CPU)`);
      throw e;
    }
  }

  /** Disposes `loaded` (or whatever `key` holds), forgetting it only if it is still key's isolate. */
  private drop(key: string, loaded?: Loaded): void {
    if (loaded) {
      this.retired.add(loaded);
      disposeOf(loaded.isolate);
      if (this.made.get(key) === loaded) {
        this.loadedBy.delete(key);
        this.made.delete(key);
      }
      return;
    }
    const p = this.loadedBy.get(key);
    this.loadedBy.delete(key);
    this.made.delete(key);
    p?.then((l) => {
      this.retired.add(l);
      disposeOf(l.isolate);
    }, () => {});
  }

  /** The isolate each key's promise resolved to. */
  private readonly made = new Map<string, Loaded>();
  /** Isolates this runner disposed on purpose: calls queued on them are retried, not failed. */
  private readonly retired = new WeakSet<Loaded>();

  async close(): Promise<void> {
    const all = [...this.loadedBy.values()];
    this.loadedBy.clear();
    await Promise.allSettled(all.map((p) => p.then((l) => disposeOf(l.isolate))));
  }
}

/** How deep a custom verifier's details may nest. */
const MAX_DETAILS_DEPTH = 64;

/** The bootstrap's plain array, checked here: anything else means the verifier tampered. */
function checked(raw: unknown): CustomResult {
  if (!Array.isArray(raw)) return { ok: false, message: "the verifier's result could not be read" };
  if (raw[0] === 0 && raw.length === 2 && typeof raw[1] === "string") return { ok: false, message: raw[1] };
  const [flag, reward, reason, details] = raw;
  if (raw.length !== 4 || flag !== 1 || typeof reward !== "number" || !Number.isFinite(reward) || typeof reason !== "string" || typeof details !== "string" || details.length > 16384) {
    return { ok: false, message: "the verifier's result could not be read" };
  }
  // 16 KiB of `[` is 8,000 levels: JSON.parse takes them, but writing the answer overflowed the
  // stack and the whole request (its batch, a combine around it) answered 500
  if (jsonDepth(details, MAX_DETAILS_DEPTH) > MAX_DETAILS_DEPTH) return { ok: false, message: `the verifier's details nest deeper than ${MAX_DETAILS_DEPTH} levels` };
  let d: unknown;
  try {
    d = JSON.parse(details);
  } catch {
    return { ok: false, message: "the verifier's details are not JSON" };
  }
  if (!d || typeof d !== "object" || Array.isArray(d)) return { ok: false, message: "the verifier's details are not a JSON object" };
  return { ok: true, reward, reason: reason.slice(0, 2000), details: d as Record<string, unknown> };
}

function messageOf(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).slice(0, 2000);
}

function ignoredTermination(ms: number): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(`ignored termination for ${ms} ms`)), ms).unref());
}
