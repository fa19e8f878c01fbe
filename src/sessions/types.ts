/**
 * Stateful code-interpreter sessions: the service's interface (issue 32). A session is one
 * sandbox (a warm Docker container or a bubblewrap process tree, today's isolation) holding a
 * persistent interpreter: Python keeps variables, imports and files between execs, like a
 * notebook kernel; Bash keeps its shell (variables, cwd, files). The service knows no rewards
 * and no HTTP: routes, the MCP endpoint and the trajectory reward call it through this file.
 *
 * Stability: other modules copy this file verbatim; change it only by adding (optional) fields.
 */

export type SessionLanguage = "python" | "bash";

/** Per-session limits. Every field is optional on create; the service fills its defaults and caps. */
export interface SessionLimits {
  /** Memory of the whole session (cgroup), MiB. */
  memoryMb: number;
  /** CPU time one exec may use (its process tree), ms. */
  cpuMsPerExec: number;
  /** Wall time one exec may take, ms. */
  wallMsPerExec: number;
  /** The session's whole life from creation, ms; past it the session ends ("lifetime"). */
  lifetimeMs: number;
  /** With no exec for this long the session is reclaimed ("idle"), ms. */
  idleMs: number;
  /** Max bytes kept per stream per exec (stdout, stderr); more ends the session ("output_limit"). */
  outputBytes: number;
}

export interface CreateSessionRequest {
  language: SessionLanguage;
  limits?: Partial<SessionLimits>;
  /** Files placed in the session's scratch directory before the first exec, path -> utf8 content. */
  files?: Record<string, string>;
  /** Free-form labels echoed back in SessionInfo (a trainer's rollout id, say). */
  labels?: Record<string, string>;
  /** Caller identity (the API key's name): list/get/exec/close of another owner's session is refused. */
  owner?: string;
  /** Epoch ms by which the session must have a sandbox; past it, SessionBusyError (no late start). */
  startBy?: number;
  signal?: AbortSignal;
}

export interface ExecRequest {
  code: string;
  /** Tighter per-exec limits for this exec only (never looser than the session's). */
  cpuMs?: number;
  wallMs?: number;
  owner?: string;
  signal?: AbortSignal;
}

/**
 * How one exec ended.
 * - ok: ran to the end (an exception is "error", not "ok").
 * - error: the code raised (Python) or exited non-zero (Bash); `error` says what. Session lives on.
 * - timeout: the exec's CPU or wall limit hit; the interpreter was killed: the session has ended.
 * - memory: the session's memory limit hit (OOM); the session has ended.
 * - output_limit: more output than the cap; the session has ended.
 * - ended: the session had already ended (or was closed, reclaimed, lost on restart): nothing ran;
 *   `error.message` says why (SessionInfo.endedReason).
 */
export type ExecStatus = "ok" | "error" | "timeout" | "memory" | "output_limit" | "ended";

export interface ExecError {
  /** Python's exception class name ("NameError"), or "ExitCode" for a Bash non-zero exit, or the status. */
  name: string;
  message: string;
  /** Python's formatted traceback (cells appear as "<cell N>"), "" where there is none. */
  traceback: string;
}

export interface ExecResult {
  status: ExecStatus;
  stdout: string;
  stderr: string;
  /** repr() of the last expression's value when the cell ends in an expression that is not None (Python; capped); null otherwise. */
  value: string | null;
  error: ExecError | null;
  /** Bash: the exit status of the exec; Python: null. */
  exitCode: number | null;
  /** true when stdout/stderr were cut at the output cap, or the value or error message at the value cap. */
  truncated: boolean;
  /** Wall time of the exec inside the sandbox, ms. */
  ms: number;
  /** CPU time of the exec, ms (null where not counted). */
  cpuMs: number | null;
  /** The exec's sequence number in its session, from 1 (0 when nothing ran). */
  execCount: number;
  /** The session after this exec ("active", or "ended" when this exec ended it). */
  session: SessionInfo;
}

export type SessionStatus = "starting" | "active" | "busy" | "ended";

/**
 * Why a session ended.
 * closed: DELETE /sessions/{id}; idle: idle timeout; lifetime: total lifetime reached; timeout,
 * memory, output_limit: an exec hit that limit; crashed: the interpreter or sandbox died
 * (the code killed it, e.g. os._exit or a fork bomb filling the pids limit); lost_on_restart: the
 * server restarted since it was created; shutdown: the server is shutting down; sandbox_error:
 * our machinery failed.
 */
export type SessionEndedReason =
  | "closed"
  | "idle"
  | "lifetime"
  | "timeout"
  | "memory"
  | "output_limit"
  | "crashed"
  | "lost_on_restart"
  | "shutdown"
  | "sandbox_error";

export interface SessionInfo {
  id: string;
  language: SessionLanguage;
  status: SessionStatus;
  /** Set once status is "ended". */
  endedReason: SessionEndedReason | null;
  /** One line a person can read: why it ended and what to do next. */
  endedMessage: string | null;
  limits: SessionLimits;
  /** ISO timestamps. */
  createdAt: string;
  lastUsedAt: string;
  /** When the session will be reclaimed if unused (min of idle and lifetime), ISO; null once ended. */
  expiresAt: string | null;
  execCount: number;
  /** Sandbox backend ("docker" | "bwrap"). */
  backend: string;
  labels: Record<string, string>;
  owner?: string;
}

/** The service's counts (metrics, /healthz, admission). */
export interface SessionStats {
  active: number;
  /** Warm sandboxes waiting to become sessions. */
  warm: number;
  /** Ended sessions still remembered (so a later exec says why). */
  ended: number;
  /** Most sessions allowed at once. */
  max: number;
  /** Creations waiting for a sandbox. */
  queued: number;
}

export interface SessionService {
  readonly languages: readonly SessionLanguage[];
  /** The defaults and caps applied to CreateSessionRequest.limits. */
  readonly defaults: SessionLimits;
  readonly maxLimits: SessionLimits;
  create(req: CreateSessionRequest): Promise<SessionInfo>;
  /** Runs code in the session. Never throws for what the code did (see ExecStatus); throws SessionNotFoundError, SessionBusyError. */
  exec(id: string, req: ExecRequest): Promise<ExecResult>;
  /** Ends the session (kills its sandbox); resolves to its final info. Closing an ended session is a no-op. */
  close(id: string, owner?: string): Promise<SessionInfo>;
  list(owner?: string): SessionInfo[];
  /** Throws SessionNotFoundError; an id from before a restart gives an ended info with reason lost_on_restart. */
  get(id: string, owner?: string): SessionInfo;
  stats(): SessionStats;
  /** Resolves once a session can be created at once (the warm pool has one). */
  warmUp?(): Promise<void>;
  shutdown(): Promise<void>;
}

/** The id is not a session of this server (never was, or forgotten long ago). HTTP 404. */
export class SessionNotFoundError extends Error {
  readonly code = "session_not_found";
}
/** The session is running another exec, or no sandbox came free in time (past the backlog). HTTP 409 / 429. */
export class SessionBusyError extends Error {
  readonly code = "session_busy";
  constructor(message: string, readonly retryAfterS?: number) {
    super(message);
  }
}
/** A request the caller must change (unknown language, limits above the caps). HTTP 400. */
export class SessionRequestError extends Error {
  readonly code = "session_request";
}
/** No sandbox here can run sessions (ASSAY_SANDBOX=none, no Docker engine and no bwrap): what to set. HTTP 503. */
export class SessionUnavailableError extends Error {
  readonly code = "session_unavailable";
}
