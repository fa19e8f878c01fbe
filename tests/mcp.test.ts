/**
 * POST /mcp with the MCP SDK's own client (Client + StreamableHTTPClientTransport, the same
 * @modelcontextprotocol/sdk version the server uses) against a live server on loopback: listing
 * every tool and calling each one; API keys refused without a key when keys are set.
 * The python tool runs against a small in-memory SessionService (the interface of
 * src/sessions/types.ts): what is tested here is the tool's routing (start a session when no id is
 * given, the same session on the next call, the service's errors as tool errors), not an
 * interpreter. run_code and run_tests run in the real sandbox (bwrap, else Docker; skipped where
 * neither is here, failing under CI=true).
 */
import { test, describe, after, before } from "node:test";
import assert from "node:assert/strict";
import type { Server } from "node:http";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import request from "supertest";
import { testApp, fakeSandbox } from "./helpers.js";
import { tempDir } from "./scratch.js";
import { lazy, type Services } from "../src/core/services.js";
import { openBwrapForTests, openDockerForTests, type Opened } from "./sandboxes.js";
import {
  SessionBusyError,
  SessionNotFoundError,
  type CreateSessionRequest,
  type ExecRequest,
  type ExecResult,
  type SessionInfo,
  type SessionLimits,
  type SessionService,
} from "../src/sessions/types.js";

const LIMITS: SessionLimits = { memoryMb: 256, cpuMsPerExec: 1000, wallMsPerExec: 1000, lifetimeMs: 60_000, idleMs: 60_000, outputBytes: 1 << 16 };

/**
 * Sessions in memory: each keeps the cells it was sent, and an exec prints them all (so a test
 * sees which session ran what). `raise` in a cell is an error; `busy` throws SessionBusyError.
 */
export class MemorySessions implements SessionService {
  readonly languages = ["python"] as const;
  readonly defaults = LIMITS;
  readonly maxLimits = LIMITS;
  readonly cells = new Map<string, string[]>();
  readonly owners = new Map<string, string | undefined>();
  private n = 0;
  private info(id: string, status: SessionInfo["status"] = "active"): SessionInfo {
    const t = new Date(0).toISOString();
    return { id, language: "python", status, endedReason: null, endedMessage: null, limits: LIMITS, createdAt: t, lastUsedAt: t, expiresAt: t, execCount: this.cells.get(id)?.length ?? 0, backend: "memory", labels: {} };
  }
  async create(req: CreateSessionRequest): Promise<SessionInfo> {
    const id = `s${++this.n}`;
    if (req.labels?.slow) await new Promise((r) => setTimeout(r, 500)); // a sandbox that takes a while to start
    this.cells.set(id, []);
    this.owners.set(id, req.owner);
    return this.info(id);
  }
  async exec(id: string, req: ExecRequest): Promise<ExecResult> {
    const cells = this.cells.get(id);
    if (!cells || this.owners.get(id) !== req.owner) throw new SessionNotFoundError(`no session ${id}`);
    if (req.code === "busy") throw new SessionBusyError(`session ${id} is running another exec`, 2);
    if (req.code === "slow") await new Promise((r) => setTimeout(r, 1500)); // runs on whatever the caller does, as a real interpreter's cell
    cells.push(req.code);
    const raised = req.code.includes("raise");
    return {
      status: raised ? "error" : "ok",
      stdout: JSON.stringify(cells),
      stderr: "",
      value: null,
      error: raised ? { name: "ValueError", message: "raised", traceback: "Traceback ...\nValueError: raised" } : null,
      exitCode: null,
      truncated: false,
      ms: 1,
      cpuMs: 1,
      execCount: cells.length,
      session: this.info(id),
    };
  }
  async close(id: string, owner?: string): Promise<SessionInfo> {
    if (!this.cells.has(id) || this.owners.get(id) !== owner) throw new SessionNotFoundError(`no session ${id}`);
    this.closed.add(id);
    return this.info(id, "ended");
  }
  readonly closed = new Set<string>();
  list(): SessionInfo[] {
    return [...this.cells.keys()].map((id) => this.info(id));
  }
  get(id: string): SessionInfo {
    if (!this.cells.has(id)) throw new SessionNotFoundError(`no session ${id}`);
    return this.info(id);
  }
  stats() {
    return { active: this.cells.size, warm: 0, ended: 0, max: 100, queued: 0 };
  }
  async shutdown(): Promise<void> {}
}

/** The sessions service slot (Services.sessions) holding `s`. */
const memory = (s: SessionService) => lazy(async () => ({ sessions: s, close: async () => {} })) as unknown as Services["sessions"];

async function listen(app: import("express").Express): Promise<{ url: URL; server: Server }> {
  const server = await new Promise<Server>((r) => {
    const s = app.listen(0, "127.0.0.1", () => r(s));
  });
  const { port } = server.address() as { port: number };
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), server };
}

async function connect(url: URL, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "assay-test", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

/** A tool result's one JSON text part, parsed (the structured copy must say the same). */
function parsed(r: Awaited<ReturnType<Client["callTool"]>>): Record<string, any> {
  const content = r.content as { type: string; text: string }[];
  assert.equal(content.length, 1);
  assert.equal(content[0]!.type, "text");
  const o = JSON.parse(content[0]!.text);
  assert.deepEqual(r.structuredContent, o);
  return o;
}

let opened: Opened = await openBwrapForTests(2);
if (!opened.sandbox) opened = await openDockerForTests(2);

describe("MCP endpoint with the SDK's client", async () => {
  const sessions = new MemorySessions();
  const { app, runtime } = await testApp({ ASSAY_SQL_UPLOAD_DIR: tempDir("assay-mcp-") }, [], { sandbox: fakeSandbox(opened.sandbox), sessions: memory(sessions) });
  const { url, server } = await listen(app);
  let client: Client;
  before(async () => {
    client = await connect(url);
  });
  after(async () => {
    await client?.close();
    server.closeAllConnections();
    server.close();
    await runtime.close();
    await opened.sandbox?.close();
  });

  test("lists every tool, each with an object input schema from the contract or the registry", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["check_math", "python", "python_close", "run_code", "run_sql", "run_tests"]);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, "object");
      assert.ok(t.description && t.description.length > 20, t.name);
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.deepEqual(byName.get("run_code")!.inputSchema.required, ["code"]);
    assert.deepEqual(byName.get("check_math")!.inputSchema.required, ["response", "reference"]);
    // The verifier's own published schemas, not a copy: GET /verifiers says the same.
    const verifiers = (await request(app).get("/verifiers").expect(200)).body.verifiers as { name: string; reference_schema: unknown; options_schema: unknown }[];
    const math = verifiers.find((v) => v.name === "math")!;
    assert.deepEqual(byName.get("check_math")!.inputSchema.properties!.options, math.options_schema);
    assert.deepEqual(byName.get("check_math")!.inputSchema.properties!.reference, math.reference_schema);
  });

  test("check_math scores through the math verifier: right, wrong, and an invalid reference as a tool error", async () => {
    const right = parsed(await client.callTool({ name: "check_math", arguments: { response: "so the answer is \\boxed{\\frac{1}{2}}", reference: "0.5" } }));
    assert.equal(right.status, "ok");
    assert.equal(right.reward, 1);
    const wrongCall = await client.callTool({ name: "check_math", arguments: { response: "\\boxed{3}", reference: "0.5" } });
    assert.equal(wrongCall.isError, false, "a wrong answer is a result, not a failed call");
    assert.equal(parsed(wrongCall).reward, 0);
    const bad = await client.callTool({ name: "check_math", arguments: { response: "1", reference: "1", options: { no_such_option: 1 } } });
    assert.equal(bad.isError, true);
    const b = parsed(bad);
    assert.equal(b.status, "invalid");
    assert.match(b.reason, /no_such_option/);
  });

  test("run_sql scores through the sql verifier on a database made with POST /databases", async () => {
    const db = { id: "mcp_t", sql: "CREATE TABLE t(a INTEGER, b TEXT); INSERT INTO t VALUES (1,'x'),(2,'y'),(3,'z');" };
    await request(app).post("/databases").send(db).expect((res) => assert.ok(res.status === 200 || res.status === 201, JSON.stringify(res.body)));
    const ok = parsed(await client.callTool({ name: "run_sql", arguments: { response: "```sql\nSELECT b FROM t WHERE a > 1\n```", reference: "SELECT b FROM t WHERE a >= 2", options: { database: "mcp_t" } } }));
    assert.equal(ok.status, "ok", JSON.stringify(ok));
    assert.equal(ok.reward, 1);
    const wrong = parsed(await client.callTool({ name: "run_sql", arguments: { response: "SELECT b FROM t", reference: "SELECT b FROM t WHERE a >= 2", options: { database: "mcp_t" } } }));
    assert.equal(wrong.reward, 0);
  });

  test("python starts a session without an id, keeps it with the id, and passes the service's errors on", async () => {
    const first = await client.callTool({ name: "python", arguments: { code: "x = 41" } });
    assert.equal(first.isError, false);
    const a = parsed(first);
    assert.equal(a.created, true);
    assert.equal(a.status, "ok");
    const id = a.session_id as string;
    const b = parsed(await client.callTool({ name: "python", arguments: { code: "x + 1", session_id: id } }));
    assert.equal(b.created, false);
    assert.equal(b.session_id, id);
    assert.deepEqual(JSON.parse(b.stdout), ["x = 41", "x + 1"], "the second call ran in the first call's session");
    const other = parsed(await client.callTool({ name: "python", arguments: { code: "y = 0" } }));
    assert.notEqual(other.session_id, id);
    assert.deepEqual(JSON.parse(other.stdout), ["y = 0"]);
    const raised = await client.callTool({ name: "python", arguments: { code: "raise ValueError", session_id: id } });
    assert.equal(raised.isError, true);
    assert.equal(parsed(raised).error.name, "ValueError");
    const lost = await client.callTool({ name: "python", arguments: { code: "1", session_id: "nope" } });
    assert.equal(lost.isError, true);
    assert.match(parsed(lost).error, /no session nope; call python without session_id/);
    const busy = await client.callTool({ name: "python", arguments: { code: "busy", session_id: id } });
    assert.equal(busy.isError, true);
    assert.equal(parsed(busy).retry_after_s, 2);
    const bad = await client.callTool({ name: "python", arguments: { code: 5 } });
    assert.equal(bad.isError, true);
    assert.match(parsed(bad).error, /code must be a string/);
  });

  test("POST /sessions whose client left while the session started: the session is closed, not left to its idle timeout", async () => {
    await assert.rejects(fetch(new URL("/sessions", url), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ language: "python", labels: { slow: "1" } }), signal: AbortSignal.timeout(100) }));
    for (const t0 = Date.now(); ; await new Promise((r) => setTimeout(r, 20))) {
      const id = [...sessions.cells.keys()].at(-1);
      if (id && sessions.closed.has(id)) break;
      assert.ok(Date.now() - t0 < 2000, "the session its client never learned of is still open");
    }
  });

  test("a python call whose client leaves while its new session runs ends that session (its id never reached the caller)", async () => {
    // Before: the session ran on and held a slot of ASSAY_SESSION_MAX until its idle timeout.
    // a client that gives up and closes its connection (curl --max-time, a trainer's timeout)
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "python", arguments: { code: "slow" } } };
    await assert.rejects(fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(call), signal: AbortSignal.timeout(300) }));
    const id = [...sessions.cells.keys()].at(-1)!;
    assert.deepEqual(sessions.cells.get(id), []);
    for (const t0 = Date.now(); !sessions.closed.has(id); await new Promise((r) => setTimeout(r, 20))) {
      assert.ok(Date.now() - t0 < 1000, "the cancelled call's session was not closed before its cell would have ended");
    }
  });

  test("python_close ends the caller's session, so it stops holding a sandbox before its idle timeout", async () => {
    const id = parsed(await client.callTool({ name: "python", arguments: { code: "x = 1" } })).session_id as string;
    const closed = await client.callTool({ name: "python_close", arguments: { session_id: id } });
    assert.equal(closed.isError, false);
    assert.deepEqual(parsed(closed), { session_id: id, session_status: "ended", ended_reason: null });
    assert.ok(sessions.closed.has(id));
    const unknown = await client.callTool({ name: "python_close", arguments: { session_id: "nope" } });
    assert.equal(unknown.isError, true);
    assert.match(parsed(unknown).error, /no session nope/);
    const bad = await client.callTool({ name: "python_close", arguments: {} });
    assert.equal(bad.isError, true);
    assert.match(parsed(bad).error, /session_id must be/);
  });

  test("an unknown tool is JSON-RPC's invalid params (-32602), naming the tools", async () => {
    await assert.rejects(client.callTool({ name: "rm_rf", arguments: {} }), (e: Error & { code?: number }) => {
      assert.equal(e.code, -32602);
      assert.match(e.message, /no tool "rm_rf"; .*run_code/);
      return true;
    });
  });

  const ACCEPT = "application/json, text/event-stream";
  test("a batch (protocol 2025-03-26) is answered with an array, one response per request", async () => {
    const r = await request(app)
      .post("/mcp")
      .set("Accept", ACCEPT)
      .set("Content-Type", "application/json")
      .send(JSON.stringify([
        { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
        { jsonrpc: "2.0", id: "two", method: "tools/call", params: { name: "check_math", arguments: { response: "\\boxed{4}", reference: "4" } } },
        { jsonrpc: "2.0", method: "notifications/initialized" },
      ]))
      .expect(200);
    assert.ok(Array.isArray(r.body), JSON.stringify(r.body));
    const byId = new Map((r.body as { id: unknown }[]).map((m) => [m.id, m as Record<string, any>]));
    assert.equal(byId.size, 2);
    assert.ok(byId.get(1)!.result.tools.length >= 6);
    assert.equal(JSON.parse(byId.get("two")!.result.content[0].text).reward, 1);
  });

  test("what is not a JSON-RPC message is a JSON-RPC error: -32700 for JSON that does not parse, -32600 for the rest", async () => {
    const post = (body: string) => request(app).post("/mcp").set("Accept", ACCEPT).set("Content-Type", "application/json").send(body);
    const bad = await post('{"jsonrpc": "2.0", "id": 1, "method": ').expect(400);
    assert.equal(bad.body.jsonrpc, "2.0");
    assert.equal(bad.body.id, null);
    assert.equal(bad.body.error.code, -32700);
    assert.match(bad.body.error.message, /not valid JSON/);
    const wrongVersion = await post('{"jsonrpc": "1.0", "id": 7, "method": "tools/list"}').expect(400);
    assert.equal(wrongVersion.body.error.code, -32600);
    assert.equal(wrongVersion.body.id, 7);
    assert.equal(wrongVersion.body.error.data.field, "jsonrpc");
    // A bare scalar is refused by the strict parser, as on every route: still a JSON-RPC error.
    for (const body of ["3", '"tools/list"']) assert.equal((await post(body).expect(400)).body.error.code, -32700, body);
    for (const body of ["[]", '[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, 5]', '[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"id": 2}]']) {
      const r = await post(body).expect(400);
      assert.equal(r.body.error.code, -32600, body);
      assert.equal(r.body.id, null, body);
    }
  });

  test("run_code: arguments checked against openapi.yaml's RunCodeRequest", async () => {
    const r = await client.callTool({ name: "run_code", arguments: { code: "print(1)", run_timeout: "ten" } });
    assert.equal(r.isError, true);
    assert.equal(parsed(r).field, "run_timeout");
  });

  test("run_code runs in the sandbox as POST /run_code does", { skip: opened.skip }, async () => {
    const ok = await client.callTool({ name: "run_code", arguments: { code: "print(input()[::-1])", stdin: "hello", language: "python" } });
    const o = parsed(ok);
    assert.equal(o.status, "Success", JSON.stringify(o));
    assert.equal(o.run_result.stdout, "olleh\n");
    assert.equal(ok.isError, false);
    const fail = await client.callTool({ name: "run_code", arguments: { code: "import sys; sys.exit(3)", language: "python" } });
    assert.equal(fail.isError, true);
    assert.equal(parsed(fail).run_result.return_code, 3);
  });

  test("run_tests scores a program through the code verifier", { skip: opened.skip }, async () => {
    const reference = { inputs: ["2 3\n", "10 -4\n"], outputs: ["5\n", "6\n"] };
    const good = parsed(await client.callTool({ name: "run_tests", arguments: { response: "```python\na, b = map(int, input().split())\nprint(a + b)\n```", reference } }));
    assert.equal(good.status, "ok", JSON.stringify(good));
    assert.equal(good.reward, 1);
    const half = parsed(await client.callTool({ name: "run_tests", arguments: { response: "```python\nprint(5)\n```", reference } }));
    assert.equal(half.reward, 0.5);
  });

  test("GET and DELETE /mcp are 405 with what to do instead", async () => {
    const r = await request(app).get("/mcp").expect(405);
    assert.match(r.body.error, /stateless.*POST JSON-RPC/);
    await request(app).delete("/mcp").expect(405);
  });
});

describe("MCP endpoint with API keys", async () => {
  const KEY = "mcp-test-key-1";
  const sessions = new MemorySessions();
  const { app, runtime } = await testApp({ ASSAY_API_KEYS: `${KEY},other-key-2` }, [], { sessions: memory(sessions) });
  const { url, server } = await listen(app);
  after(async () => {
    server.closeAllConnections();
    server.close();
    await runtime.close();
  });

  test("without a key the SDK client is refused (401), with a wrong one too", async () => {
    await assert.rejects(connect(url), (e: Error) => /401|Unauthorized|missing API key/i.test(e.message));
    await assert.rejects(connect(url, { Authorization: "Bearer wrong" }), (e: Error) => /401|Unauthorized|not accepted/i.test(e.message));
  });

  test("with the key as a bearer header, or in the path (/k/<key>/mcp), it lists and calls", async () => {
    const c = await connect(url, { Authorization: `Bearer ${KEY}` });
    const { tools } = await c.listTools();
    assert.ok(tools.some((t) => t.name === "check_math"));
    assert.equal(parsed(await c.callTool({ name: "check_math", arguments: { response: "\\boxed{4}", reference: "4" } })).reward, 1);
    await c.close();
    const inPath = new URL(url);
    inPath.pathname = `/k/${KEY}/mcp`;
    const p = await connect(inPath);
    assert.ok((await p.listTools()).tools.length >= 4);
    await p.close();
  });

  test("a session belongs to the key that started it: another key cannot use its id", async () => {
    const c = await connect(url, { Authorization: `Bearer ${KEY}` });
    const id = parsed(await c.callTool({ name: "python", arguments: { code: "secret = 1" } })).session_id;
    await c.close();
    const o = await connect(url, { Authorization: "Bearer other-key-2" });
    const r = await o.callTool({ name: "python", arguments: { code: "print(secret)", session_id: id } });
    assert.equal(r.isError, true);
    assert.deepEqual(sessions.cells.get(id), ["secret = 1"], "nothing ran in the other key's session");
    assert.equal((await o.callTool({ name: "python_close", arguments: { session_id: id } })).isError, true, "nor can it close it");
    assert.ok(!sessions.closed.has(id));
    await o.close();
  });
});

describe("MCP python tool with the real session service", async () => {
  // The session service is built by createServices where it is wired in (the sessions branch);
  // in a tree without it this suite has nothing to drive and says so.
  const { app, runtime } = await testApp({ ASSAY_SANDBOX: process.env.ASSAY_SANDBOX ?? "auto" });
  const wired = runtime.services.sessions !== undefined;
  const { url, server } = await listen(app);
  after(async () => {
    server.closeAllConnections();
    server.close();
    await runtime.close();
  });
  test("state kept between calls of one session; another session does not see it", { skip: wired ? false : "no session service in this tree (Services.sessions undefined)" }, async () => {
    const client = await connect(url);
    try {
      const first = await client.callTool({ name: "python", arguments: { code: "import math\nx = 41" } });
      const a = parsed(first);
      assert.equal(a.status, "ok", JSON.stringify(a));
      const b = parsed(await client.callTool({ name: "python", arguments: { code: "x + 1", session_id: a.session_id } }));
      assert.equal(b.value, "42", JSON.stringify(b));
      const other = await client.callTool({ name: "python", arguments: { code: "x" } });
      assert.equal(other.isError, true);
      assert.equal(parsed(other).error.name, "NameError");
    } finally {
      await client.close();
    }
  });
});

describe("MCP and /sessions with no sandbox for sessions (ASSAY_SANDBOX=none)", async () => {
  const { app, runtime } = await testApp({}, []);
  const { url, server } = await listen(app);
  after(async () => {
    server.closeAllConnections();
    server.close();
    await runtime.close();
  });

  test("python answers a tool error saying what to set, not a JSON-RPC internal error; POST /sessions is 503", async () => {
    // Before: the service's start-up failure was rethrown: JSON-RPC -32603 on MCP, and a 500 on /sessions.
    const c = await connect(url);
    try {
      const r = await c.callTool({ name: "python", arguments: { code: "1" } });
      assert.equal(r.isError, true);
      assert.match(JSON.stringify(r.content), /need a sandbox/);
    } finally {
      await c.close();
    }
    const res = await request(app).post("/sessions").send({ language: "python" }).expect(503);
    assert.match(res.body.error, /ASSAY_SANDBOX/);
  });
});
