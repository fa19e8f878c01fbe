/**
 * The MCP endpoint's tools (issue 32): what an agent may call while it reasons. Each is a thin
 * face over what the other routes already serve, never a second implementation:
 * - `run_code`: one program, through the same RunCode as POST /run_code (its queue, its limits,
 *   SandboxFusion's request and answer);
 * - `python`, `python_close`: a stateful interpreter session and its end, through the session
 *   service's interface (src/sessions/types.ts), listed only where a session service is wired in;
 * - `check_math`, `run_tests`, `run_sql`: an item for the `math`, `code`, `sql` verifier, scored by
 *   the scorer as POST /reward scores it (registry checks, deadlines, admission). This file names
 *   the verifiers; it imports none: their input schemas are the registry's published ones.
 */
import type { Runtime } from "../../core/runtime.js";
import type { RewardResult } from "../../core/types.js";
import type { SessionService, ExecResult } from "../../sessions/types.js";
import { OPENAPI, check } from "../../core/contract.js";
import { HttpError, fieldOf } from "../errors.js";
import type { RouteDeps } from "../http.js";
import type { RunCode, RunCodeBody } from "../routes/sandboxfusion.js";

/** A tool's answer, as MCP's CallToolResult carries it: one JSON text part and the same object structured. */
export interface ToolAnswer {
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
}

export interface ToolCall {
  args: Record<string, unknown>;
  /** Aborted when the client cancels the call or goes away. */
  signal: AbortSignal;
  /** The caller's identity (auth.ts callerOf): sessions belong to it. */
  owner?: string;
}

export interface Tool {
  name: string;
  description: string;
  inputSchema: { type: "object"; properties: Record<string, unknown>; required?: string[] };
  call(c: ToolCall): Promise<ToolAnswer>;
}

export interface ToolDeps {
  runtime: Runtime;
  admit: RouteDeps["admit"];
  runCode: RunCode;
  /** The session service, where one is wired in (Services.sessions). */
  sessions?: () => Promise<SessionService>;
}

/** A verifier offered as a tool: the tool's name, the verifier it scores with, what it is for. */
export const VERIFIER_TOOLS: readonly { tool: string; verifier: string; what: string; response: string }[] = [
  {
    tool: "check_math",
    verifier: "math",
    what: "Checks a math answer against the reference answer, as the math reward does (symbolic equivalence; \\boxed{} or the last answer in the text). reward 1 = equivalent.",
    response: "your answer or whole solution; the final answer in \\boxed{} is taken where there is one",
  },
  {
    tool: "run_tests",
    verifier: "code",
    what: "Runs a program against unit tests in the sandbox, as the code reward does; reward = fraction of tests passed, details name each failing test.",
    response: "your program (a fenced ```python block, or the bare code)",
  },
  {
    tool: "run_sql",
    verifier: "sql",
    what: "Runs a SQL query against a database and compares its result with the reference query's, as the sql reward does; reward 1 = same result.",
    response: "your SQL query (a fenced ```sql block, or the bare query)",
  },
];

const json = (o: unknown) => JSON.stringify(o);

export function answer(o: Record<string, unknown>, isError: boolean): ToolAnswer {
  return { content: [{ type: "text", text: json(o) }], structuredContent: o, isError };
}

/** A call the server could not take or the caller must change: isError, the message says what to do. */
export function refusal(message: string, extra: Record<string, unknown> = {}): ToolAnswer {
  return answer({ error: message, ...extra }, true);
}

/** HttpErrors (busy, bad language) become a tool's error with their message; anything else is our bug and rethrown. */
function asRefusal(e: unknown): ToolAnswer {
  if (e instanceof HttpError) {
    const retry = e.headers["Retry-After"];
    return refusal(e.message, retry ? { retry_after_s: Number(retry) } : {});
  }
  throw e;
}

/**
 * A tool's work under admission: refused (busy, saying when to retry) past the backlog, as
 * asRefusal words it; the admitted slot is given back however the work ends.
 */
async function underAdmission(take: () => () => void, work: () => Promise<ToolAnswer>): Promise<ToolAnswer> {
  let release: () => void;
  try {
    release = take();
  } catch (e) {
    return asRefusal(e);
  }
  try {
    return await work();
  } finally {
    release();
  }
}

export function mcpTools(d: ToolDeps): Tool[] {
  const tools: Tool[] = [runCodeTool(d)];
  if (d.sessions) tools.push(pythonTool(d, d.sessions), pythonCloseTool(d.sessions));
  const published = new Map(d.runtime.registry.list().map((v) => [v.name, v]));
  for (const t of VERIFIER_TOOLS) {
    const v = published.get(t.verifier);
    if (v) tools.push(verifierTool(d, t, v.reference_schema, v.options_schema));
  }
  return tools;
}

function runCodeTool({ runtime, admit, runCode }: ToolDeps): Tool {
  const schema = OPENAPI.components.schemas.RunCodeRequest as { properties: Record<string, unknown>; required: string[] };
  return {
    name: "run_code",
    description:
      "Runs one program in a fresh sandbox (no network, limits on time and memory) and returns its stdout, stderr and exit status, in SandboxFusion's shape (status Success / Failed / SandboxError). Nothing is kept between calls: use the python tool for a session that keeps variables.",
    inputSchema: { type: "object", properties: schema.properties, required: schema.required },
    async call({ args, signal }) {
      const body = structuredClone(args);
      const problem = check("RunCodeRequest", body); // fills the defaults openapi.yaml declares
      if (problem) return refusal(`arguments ${problem}`, { field: fieldOf(problem) ?? null });
      return underAdmission(() => admit(1), async () => {
        try {
          const out = await runCode({ body: body as RunCodeBody, arrived: Date.now(), gone: signal, log: runtime.log });
          if (!out) return refusal("the call was cancelled");
          return answer(out as unknown as Record<string, unknown>, out.status !== "Success");
        } catch (e) {
          return asRefusal(e);
        }
      });
    },
  };
}

/** Caps on what the python tool accepts, beyond the session service's own limits. */
const MAX_CODE = 1 << 20;
const SESSION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

function pythonTool({ admit }: ToolDeps, sessions: () => Promise<SessionService>): Tool {
  return {
    name: "python",
    description:
      "Runs Python code in a persistent interpreter session, like a notebook cell: variables, imports and files are kept between calls of the same session. Call it without session_id to start a session; the answer carries the session_id to pass on later calls (end it with python_close when done). Returns stdout, stderr, the value of the last expression, and the error with its traceback if the code raised.",
    inputSchema: {
      type: "object",
      properties: {
        code: { type: "string", maxLength: MAX_CODE, description: "the Python code to run (one cell)" },
        session_id: { type: "string", maxLength: 128, description: "a session_id an earlier call returned; leave it out to start a new session" },
      },
      required: ["code"],
    },
    async call({ args, signal, owner }) {
      const { code, session_id } = args;
      if (typeof code !== "string") return refusal("arguments.code must be a string: the Python code to run", { field: "code" });
      if (code.length > MAX_CODE) return refusal(`arguments.code is ${code.length} characters, over the limit of ${MAX_CODE}; send less code per call`, { field: "code" });
      if (session_id !== undefined && (typeof session_id !== "string" || !SESSION_ID.test(session_id))) {
        return refusal("arguments.session_id must be a session_id an earlier python call returned (leave it out to start a new session)", { field: "session_id" });
      }
      return underAdmission(() => admit(1), async () => {
        try {
          const service = await sessions();
          let id = session_id as string | undefined;
          let created = false;
          if (id === undefined) {
            id = (await service.create({ language: "python", owner, signal })).id;
            created = true;
          }
          // A call that made its session and is then cancelled (or its client leaves) ends it:
          // its id never reaches the caller, and it would run on and hold a slot of
          // ASSAY_SESSION_MAX until its idle timeout.
          const made = id;
          const drop = () => void service.close(made, owner).catch(() => {});
          if (created && signal?.aborted) drop();
          else if (created) signal?.addEventListener("abort", drop, { once: true });
          try {
            const r = await service.exec(id, { code, owner, signal });
            return answer(execAnswer(id, created, r), r.status !== "ok");
          } finally {
            signal?.removeEventListener("abort", drop);
          }
        } catch (e) {
          return sessionRefusal(e);
        }
      });
    },
  };
}

/**
 * Ends a python session now: its sandbox goes back at once, instead of holding one of the
 * server's ASSAY_SESSION_MAX slots until its idle timeout (an agent that starts a session per
 * rollout and never closes it would otherwise hold them all).
 */
function pythonCloseTool(sessions: () => Promise<SessionService>): Tool {
  return {
    name: "python_close",
    description:
      "Ends a python session: its interpreter, variables and files are gone, and its sandbox is freed for other sessions. Call it when you are done with a session_id; an ended session's id answers as ended.",
    inputSchema: {
      type: "object",
      properties: { session_id: { type: "string", maxLength: 128, description: "the session_id a python call returned" } },
      required: ["session_id"],
    },
    async call({ args, owner }) {
      const { session_id } = args;
      if (typeof session_id !== "string" || !SESSION_ID.test(session_id)) return refusal("arguments.session_id must be a session_id a python call returned", { field: "session_id" });
      try {
        const info = await (await sessions()).close(session_id, owner);
        return answer({ session_id, session_status: info.status, ended_reason: info.endedReason }, false);
      } catch (e) {
        return sessionRefusal(e);
      }
    },
  };
}

function execAnswer(id: string, created: boolean, r: ExecResult): Record<string, unknown> {
  return {
    session_id: id,
    created,
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    value: r.value,
    error: r.error,
    truncated: r.truncated,
    exec_count: r.execCount,
    session_status: r.session.status,
    ...(r.session.status === "ended" ? { ended_reason: r.session.endedReason, ended_message: r.session.endedMessage } : {}),
  };
}

/** The session service's errors, by their codes (types.ts), as tool errors that say what to do. */
function sessionRefusal(e: unknown): ToolAnswer {
  const code = (e as { code?: unknown })?.code;
  const message = (e as Error)?.message ?? String(e);
  if (code === "session_not_found") return refusal(`${message}; call python without session_id to start a new session`);
  if (code === "session_busy") {
    const retry = (e as { retryAfterS?: number }).retryAfterS;
    return refusal(`${message}; wait for the session's running call to end, or retry later`, retry ? { retry_after_s: retry } : {});
  }
  if (code === "session_request" || code === "session_unavailable") return refusal(message);
  return asRefusal(e);
}

function verifierTool({ runtime, admit }: ToolDeps, t: (typeof VERIFIER_TOOLS)[number], reference: unknown, options: unknown): Tool {
  return {
    name: t.tool,
    description: `${t.what} Scored by the '${t.verifier}' verifier (GET /verifiers has its reference and options); the answer is its reward result: reward, status, reason, details.`,
    inputSchema: {
      type: "object",
      properties: {
        response: { type: "string", description: t.response },
        reference: reference,
        options: options,
      },
      required: ["response", "reference"],
    },
    async call({ args, signal }) {
      const item = { verifier: t.verifier, response: args.response, reference: args.reference, ...(args.options !== undefined ? { options: args.options } : {}) };
      return underAdmission(() => admit(1, [item]), async () => {
        const r: RewardResult = await runtime.scorer.score(item, { signal });
        const { verifier: _v, id: _id, ...rest } = r;
        return answer(rest as Record<string, unknown>, r.status !== "ok");
      });
    },
  };
}
