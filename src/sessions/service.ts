/**
 * The session service (types.ts): ids, owners, limits, idle and lifetime reclaiming, and the
 * mapping of what a session's sandbox said to an ExecResult. It knows no HTTP and no verifier;
 * the sandbox side (sandbox/sessions) knows no session ids.
 *
 * A session id carries the server's boot id (`s-<boot>-<random>`): sessions live in this process
 * only, so an id with another boot id is one this server lost on a restart, and says so without a
 * store. Ended sessions are remembered (at most MAX_ENDED, oldest forgotten first) so a later exec
 * or GET says why they ended.
 */
import { randomBytes } from "node:crypto";
import type { BoxBackend, Box, KernelReply } from "../../sandbox/sessions/index.js";
import { NoBoxInTimeError } from "../../sandbox/sessions/index.js";
import { badFilePath, hasLoneSurrogate } from "../core/file-paths.js";
import {
  SessionBusyError,
  SessionNotFoundError,
  SessionRequestError,
  SessionUnavailableError,
  type CreateSessionRequest,
  type ExecRequest,
  type ExecResult,
  type SessionEndedReason,
  type SessionInfo,
  type SessionLanguage,
  type SessionLimits,
  type SessionService,
  type SessionStats,
} from "./types.js";

export const LANGUAGES: readonly SessionLanguage[] = ["python", "bash"];
const MAX_ENDED = 10_000;
/** Characters of a last expression's repr kept. */
const VALUE_CAP = 64 * 1024;
const ID_RE = /^s-([0-9a-f]{8})-([0-9a-f]{16})$/;

export interface SessionServiceOptions {
  defaults: SessionLimits;
  maxLimits: SessionLimits;
  /** Most sessions alive at once. */
  max: number;
  /** How long a creation waits for a sandbox before it is refused (429), ms. */
  maxWaitMs: number;
  /** How often idle and expired sessions are looked for, ms. */
  sweepMs?: number;
  retryAfterS: number;
}

interface Session {
  info: SessionInfo;
  box: Box | null;
  busy: boolean;
  created: number;
  lastUsed: number;
}

const ENDED_MESSAGES: Record<SessionEndedReason, string> = {
  closed: "the session was closed (DELETE /sessions/{id}); create a new one with POST /sessions",
  idle: "the session was reclaimed after its idle timeout (limits.idleMs); create a new one with POST /sessions, and send a cell more often or raise limits.idleMs",
  lifetime: "the session reached its total lifetime (limits.lifetimeMs); create a new one with POST /sessions, or raise limits.lifetimeMs",
  timeout: "an exec ran past its CPU or wall limit (limits.cpuMsPerExec / limits.wallMsPerExec) and the interpreter was killed, so the session has ended; create a new one, and split long work into shorter cells or raise those limits",
  memory: "the session ran out of memory (limits.memoryMb) and the interpreter was killed, so the session has ended; create a new one with a larger limits.memoryMb, or keep less in memory",
  output_limit: "an exec wrote more than limits.outputBytes to stdout or stderr and the interpreter was killed, so the session has ended; create a new one, and print less or raise limits.outputBytes",
  crashed: "the session's interpreter died (the code exited it, or its sandbox's process limit was exhausted), so the session has ended; create a new one with POST /sessions",
  lost_on_restart: "the server restarted since this session was created, and sessions do not survive a restart; create a new one with POST /sessions and run the cells again",
  shutdown: "the server is shutting down; create a new session once it is back",
  sandbox_error: "the session's sandbox failed (not the code's doing); create a new session with POST /sessions",
};

export class Sessions implements SessionService {
  readonly languages = LANGUAGES;
  readonly bootId = randomBytes(4).toString("hex");
  private readonly live = new Map<string, Session>();
  private readonly ended = new Map<string, SessionInfo>();
  private creating = 0;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly boxes: BoxBackend, private readonly opts: SessionServiceOptions) {
    this.sweeper = setInterval(() => this.sweep(), opts.sweepMs ?? 1000);
    this.sweeper.unref();
  }

  get defaults(): SessionLimits {
    return this.opts.defaults;
  }
  get maxLimits(): SessionLimits {
    return this.opts.maxLimits;
  }
  get backend(): string {
    return this.boxes.name;
  }

  /** The limits a request asks for, defaults filled, refused (400) above the caps. */
  limitsOf(asked: Partial<SessionLimits> | undefined): SessionLimits {
    const out = { ...this.opts.defaults };
    for (const [k, v] of Object.entries(asked ?? {}) as [keyof SessionLimits, number | undefined][]) {
      if (v === undefined || v === null) continue;
      if (!(k in out)) throw new SessionRequestError(`limits.${k} is not a session limit; use ${Object.keys(out).join(", ")}`);
      if (!Number.isInteger(v) || v < 1) throw new SessionRequestError(`limits.${k} must be a positive integer, got ${JSON.stringify(v)}`);
      const cap = this.opts.maxLimits[k];
      if (v > cap) throw new SessionRequestError(`limits.${k} = ${v} is above this server's cap ${cap}; ask for at most ${cap} (the server's ASSAY_SESSION_* settings set the caps)`);
      out[k] = v;
    }
    return out;
  }

  async create(req: CreateSessionRequest): Promise<SessionInfo> {
    if (this.closed) throw new SessionBusyError("the server is shutting down; retry once it is back", this.opts.retryAfterS);
    if (!LANGUAGES.includes(req.language)) throw new SessionRequestError(`language ${JSON.stringify(req.language)} has no sessions; use one of ${LANGUAGES.join(", ")}`);
    const limits = this.limitsOf(req.limits);
    checkFiles(req.files);
    if (this.live.size + this.creating >= this.opts.max) {
      throw new SessionBusyError(`${this.opts.max} sessions are open, the most this server keeps (ASSAY_SESSION_MAX); close finished sessions (DELETE /sessions/{id}) or retry later`, this.opts.retryAfterS);
    }
    // A create counts against ASSAY_SESSION_MAX until it is live: counting it only while it
    // waited for a sandbox let creates whose sandbox was starting go past the cap.
    this.creating++;
    let box: Box;
    try {
      try {
        const startBy = Math.min(req.startBy ?? Infinity, Date.now() + this.opts.maxWaitMs);
        box = await this.boxes.take(startBy, req.signal);
      } catch (e) {
        if (e instanceof NoBoxInTimeError) throw new SessionBusyError(`no session sandbox came free within ${this.opts.maxWaitMs} ms (ASSAY_SESSION_MAX_WAIT_MS); retry later`, this.opts.retryAfterS);
        throw e;
      }
      try {
        await box.start(req.language, req.files, VALUE_CAP, limits.memoryMb);
      } catch (e) {
        void box.destroy();
        throw e;
      }
    } finally {
      this.creating--; // synchronously before live.set below: the count never dips between the two
    }
    const now = Date.now();
    const id = `s-${this.bootId}-${randomBytes(8).toString("hex")}`;
    const info: SessionInfo = {
      id,
      language: req.language,
      status: "active",
      endedReason: null,
      endedMessage: null,
      limits,
      createdAt: new Date(now).toISOString(),
      lastUsedAt: new Date(now).toISOString(),
      expiresAt: null,
      execCount: 0,
      backend: this.boxes.name,
      labels: { ...req.labels },
      ...(req.owner !== undefined ? { owner: req.owner } : {}),
    };
    const s: Session = { info, box, busy: false, created: now, lastUsed: now };
    this.refreshExpiry(s);
    this.live.set(id, s);
    if (this.closed) this.end(s, "shutdown");
    return { ...info };
  }

  private refreshExpiry(s: Session): void {
    s.info.lastUsedAt = new Date(s.lastUsed).toISOString();
    s.info.expiresAt = new Date(Math.min(s.lastUsed + s.info.limits.idleMs, s.created + s.info.limits.lifetimeMs)).toISOString();
  }

  /** Ends a session: its sandbox is removed; its info is remembered with the reason. */
  private end(s: Session, reason: SessionEndedReason, detail?: string): void {
    if (s.info.status === "ended") return;
    s.info.status = "ended";
    s.info.endedReason = reason;
    s.info.endedMessage = ENDED_MESSAGES[reason] + (detail ? ` (${detail})` : "");
    s.info.expiresAt = null;
    const box = s.box;
    s.box = null;
    if (box) void box.destroy();
    this.live.delete(s.info.id);
    this.ended.set(s.info.id, s.info);
    if (this.ended.size > MAX_ENDED) this.ended.delete(this.ended.keys().next().value!);
  }

  private sweep(): void {
    const now = Date.now();
    for (const s of [...this.live.values()]) {
      if (now - s.created >= s.info.limits.lifetimeMs) {
        if (!s.busy) this.end(s, "lifetime");
      } else if (!s.busy && now - s.lastUsed >= s.info.limits.idleMs) this.end(s, "idle");
    }
  }

  /** The session, or its ended info; throws SessionNotFoundError. */
  private find(id: string, owner?: string): Session | SessionInfo {
    const s = this.live.get(id);
    const info = s?.info ?? this.ended.get(id);
    if (info) {
      // a caller with a key sees only its own sessions: not another key's, nor one made without a key
      if (owner !== undefined && info.owner !== owner) throw new SessionNotFoundError(`no session ${JSON.stringify(id)} of yours; list yours with GET /sessions`);
      return s ?? info;
    }
    const m = ID_RE.exec(id);
    if (m && m[1] !== this.bootId) {
      return {
        id,
        language: "python",
        status: "ended",
        endedReason: "lost_on_restart",
        endedMessage: ENDED_MESSAGES.lost_on_restart,
        limits: { ...this.opts.defaults },
        createdAt: new Date(0).toISOString(),
        lastUsedAt: new Date(0).toISOString(),
        expiresAt: null,
        execCount: 0,
        backend: this.boxes.name,
        labels: {},
      };
    }
    throw new SessionNotFoundError(`no session ${JSON.stringify(id)} on this server (ids look like s-<8 hex>-<16 hex>, from POST /sessions); list the open ones with GET /sessions`);
  }

  get(id: string, owner?: string): SessionInfo {
    const f = this.find(id, owner);
    return { ...("info" in f ? f.info : f) };
  }

  list(owner?: string): SessionInfo[] {
    return [...this.live.values()].filter((s) => owner === undefined || s.info.owner === owner).map((s) => ({ ...s.info }));
  }

  async exec(id: string, req: ExecRequest): Promise<ExecResult> {
    const f = this.find(id, req.owner);
    if (!("info" in f) || f.info.status === "ended" || !f.box) {
      const info = "info" in f ? f.info : f;
      return {
        status: "ended",
        stdout: "",
        stderr: "",
        value: null,
        error: { name: "SessionEnded", message: info.endedMessage ?? "the session has ended", traceback: "" },
        exitCode: null,
        truncated: false,
        ms: 0,
        cpuMs: null,
        execCount: 0,
        session: { ...info },
      };
    }
    const s = f;
    if (s.busy) throw new SessionBusyError(`session ${id} is running another exec; send cells of one session one at a time`, 1);
    if (typeof req.code !== "string") throw new SessionRequestError("code must be a string");
    const lim = s.info.limits;
    const cpuMs = Math.min(lim.cpuMsPerExec, req.cpuMs ?? Infinity);
    const wallMs = Math.min(lim.wallMsPerExec, req.wallMs ?? Infinity, Math.max(1, s.created + lim.lifetimeMs - Date.now()));
    s.busy = true;
    s.info.status = "busy";
    let r: KernelReply;
    try {
      r = await s.box!.exec({ code: req.code, cpuMs, wallMs, outputBytes: lim.outputBytes });
    } catch (e) {
      r = { status: "sandbox_error", stdout: "", stderr: "", value: null, error: null, exit_code: null, truncated: false, ms: 0, cpu_ms: null, message: (e as Error).message };
    } finally {
      s.busy = false;
    }
    s.info.execCount++;
    s.lastUsed = Date.now();
    if (s.info.status === "busy") s.info.status = "active";
    let status: ExecResult["status"];
    let error = r.error;
    switch (r.status) {
      case "ok":
      case "error":
        status = r.status;
        this.refreshExpiry(s);
        break;
      case "timeout":
      case "memory":
      case "output_limit":
        status = r.status;
        this.end(s, r.status, r.message ?? undefined);
        error ??= { name: r.status === "timeout" ? "TimeoutError" : r.status === "memory" ? "MemoryError" : "OutputLimitError", message: s.info.endedMessage!, traceback: "" };
        break;
      default:
        // crashed (the code killed its interpreter) or sandbox_error (ours): nothing more can run
        status = "ended";
        this.end(s, r.status === "crashed" ? "crashed" : "sandbox_error", r.message ?? undefined);
        error = { name: "SessionEnded", message: s.info.endedMessage!, traceback: "" };
    }
    return {
      status,
      stdout: r.stdout,
      stderr: r.stderr,
      value: r.value,
      error,
      exitCode: r.exit_code,
      truncated: r.truncated,
      ms: r.ms,
      cpuMs: r.cpu_ms,
      execCount: s.info.execCount,
      session: { ...s.info },
    };
  }

  async close(id: string, owner?: string): Promise<SessionInfo> {
    const f = this.find(id, owner);
    if ("info" in f) this.end(f, "closed");
    return { ...("info" in f ? f.info : f) };
  }

  stats(): SessionStats {
    const b = this.boxes.stats();
    return { active: this.live.size, warm: b.warm, ended: this.ended.size, max: this.opts.max, queued: b.waiting };
  }

  warmUp(): Promise<void> {
    return this.boxes.ready();
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const s of [...this.live.values()]) this.end(s, "shutdown");
    await this.boxes.close();
  }
}

/** The service from the configuration (ASSAY_SESSION_*, the sandbox's backend, pids, scratch and rootfs): Docker, else bubblewrap. */
export async function openSessions(config: import("../core/config.js").Config): Promise<Sessions> {
  const c = config.sessions;
  const sb = config.sandbox;
  if (sb.backend === "none") throw new SessionUnavailableError("code-interpreter sessions need a sandbox, and ASSAY_SANDBOX=none; set ASSAY_SANDBOX=auto, docker or bwrap");
  const reasons: string[] = [];
  let boxes: BoxBackend | null = null;
  if (sb.backend === "auto" || sb.backend === "docker") {
    const { DockerBoxes } = await import("../../sandbox/sessions/index.js");
    const host = sb.dockerHosts[0] ?? (sb.dockerHost || undefined);
    const d = new DockerBoxes({ warm: c.warm, memoryMb: c.memoryMb, pids: sb.pids, scratchMb: sb.scratchMb, host, certPath: sb.dockerCertPath || undefined });
    const why = await d.check();
    if (why) reasons.push(`docker: ${why}`);
    else boxes = d;
  }
  if (!boxes && (sb.backend === "auto" || sb.backend === "bwrap")) {
    const { BwrapBoxes } = await import("../../sandbox/sessions/bwrap.js");
    const b = new BwrapBoxes({ warm: c.warm, memoryMb: c.memoryMb, pids: sb.pids, scratchMb: sb.scratchMb, rootfs: sb.rootfs });
    const why = b.check();
    if (why) {
      reasons.push(`bwrap: ${why}`);
      await b.close();
    } else boxes = b;
  }
  if (!boxes) throw new SessionUnavailableError(`code-interpreter sessions cannot run here: ${reasons.join("; ")}`);
  (boxes as { fill?: () => void }).fill?.();
  const cap = c.maxLifetimeS * 1000;
  return new Sessions(boxes, {
    defaults: { memoryMb: c.memoryMb, cpuMsPerExec: c.cpuMs, wallMsPerExec: c.wallMs, lifetimeMs: Math.min(cap, c.lifetimeS * 1000), idleMs: Math.min(cap, c.idleS * 1000), outputBytes: c.outputBytes },
    maxLimits: { memoryMb: Math.max(c.memoryMb, c.maxMemoryMb), cpuMsPerExec: 600_000, wallMsPerExec: 600_000, lifetimeMs: cap, idleMs: cap, outputBytes: Math.max(c.outputBytes, 16 * 1024 ** 2) },
    max: c.max,
    maxWaitMs: c.maxWaitMs,
    retryAfterS: config.retryAfterS,
  });
}

/**
 * Refuses (400) a `files` map the sandbox could not write: a path that is empty, absolute, holds
 * a `..`, `.` or empty segment (so also one ending in `/`), a NUL or a lone surrogate, or names
 * a folder of another file (`a` and `a/b`); content that is not well-formed text. These reached
 * the sandbox's start and came back as a 500.
 */
export function checkFiles(files: unknown): void {
  if (files === undefined || files === null) return;
  if (typeof files !== "object" || Array.isArray(files)) throw new SessionRequestError("files must be an object: relative path -> utf8 text");
  const paths = new Set(Object.keys(files));
  for (const [path, text] of Object.entries(files)) {
    const bad = badFilePath(path, paths, "the session's directory");
    if (bad) throw new SessionRequestError(`files: the path ${JSON.stringify(path.slice(0, 80))} ${bad}`);
    if (typeof text !== "string") throw new SessionRequestError(`files: ${JSON.stringify(path.slice(0, 80))} must be utf8 text, got ${text === null ? "null" : typeof text}`);
    if (hasLoneSurrogate(text)) throw new SessionRequestError(`files: ${JSON.stringify(path.slice(0, 80))} holds a lone surrogate, which utf8 cannot write`);
  }
}
