/**
 * POST /mcp: the Model Context Protocol over streamable HTTP, with the official TypeScript SDK
 * (@modelcontextprotocol/sdk). Stateless: every POST gets its own SDK Server and transport (no
 * MCP session to keep, so any replica answers, and nothing outlives the request); JSON answers,
 * no server push (GET and DELETE are 405). The tools are in ../mcp/tools.ts. Authentication is
 * the app's, as for every route behind it (a bearer key, or /k/<key>/mcp for clients that send no
 * header); the body is parsed and capped by the shared opening (size, depth, McpMessage).
 */
import { Router, type Request, type RequestHandler } from "express";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { HttpError, fieldOf, toHttpError } from "../errors.js";
import { clientGone, type RouteDeps } from "../http.js";
import { callerOf } from "../auth.js";
import { runCodeOf } from "./sandboxfusion.js";
import { mcpTools, type Tool } from "../mcp/tools.js";
import { OPENAPI, check } from "../../core/contract.js";

export function mcpRoutes({ runtime, json, admit }: RouteDeps): Router {
  const r = Router();
  const service = runtime.services.sessions;
  const sessions = service ? async () => (await service()).sessions : undefined;
  const tools = mcpTools({ runtime, admit, runCode: runCodeOf(runtime), sessions });
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listed = tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));

  r.post("/mcp", jsonRpcOpening(json, runtime.config.maxBodyBytes), async (req, res) => {
    const gone = clientGone(req, res);
    const owner = callerOf(req, runtime.config.apiKeys);
    const server = new Server({ name: "assay", version: String(OPENAPI.info?.version ?? "0") }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
    server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
      const tool: Tool | undefined = byName.get(call.params.name);
      // A protocol error, as MCP's tools page has it: the call names nothing this server serves.
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `no tool ${JSON.stringify(call.params.name)}; tools/list names them: ${[...byName.keys()].join(", ")}`);
      const signal = AbortSignal.any([gone, extra.signal]);
      return (await tool.call({ args: call.params.arguments ?? {}, signal, owner })) as CallToolResult;
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req as Request & { auth?: undefined }, res, req.body);
  });
  const notServed = (what: string) => () => {
    throw new HttpError(405, `${what} is not served: this MCP endpoint is stateless (no server-initiated stream, no MCP session); POST JSON-RPC messages to /mcp`, undefined, { Allow: "POST" });
  };
  r.get("/mcp", notServed("GET /mcp"));
  r.delete("/mcp", notServed("DELETE /mcp"));
  return r;
}

/**
 * An error before the SDK sees the message, answered as JSON-RPC (an MCP client reads `error`
 * from a JSON-RPC response, not Assay's `{error}`), with the same HTTP status.
 */
class JsonRpcHttpError extends HttpError {
  constructor(
    e: HttpError,
    readonly code: number,
    readonly id: string | number | null = null,
  ) {
    super(e.status, e.message, e.field, e.headers);
  }
  override payload(): object {
    const data = this.field ? { field: this.field } : undefined;
    return { jsonrpc: "2.0", id: this.id, error: { code: this.code, message: this.message, ...(data && { data }) } };
  }
}

/**
 * The body of POST /mcp: one JSON-RPC message or, as protocol 2025-03-26 allows, a batch (an
 * array of them; the SDK answers a batch with an array and bounds its length). Size and depth are
 * capped as on every route. JSON that does not parse is -32700; a value that is not a message is
 * -32600, naming the field.
 */
function jsonRpcOpening(json: RequestHandler, maxBodyBytes: number): RequestHandler {
  return (req, res, next) =>
    json(req, res, (err?: unknown) => {
      if (err) {
        const e = toHttpError(err, maxBodyBytes);
        return next(e.status === 400 ? new JsonRpcHttpError(e, ErrorCode.ParseError) : new JsonRpcHttpError(e, -32000));
      }
      const body: unknown = req.body;
      const batch = Array.isArray(body);
      const messages = batch ? (body as unknown[]) : [body];
      if (batch && messages.length === 0) return next(new JsonRpcHttpError(new HttpError(400, "request an empty batch: send at least one JSON-RPC message"), ErrorCode.InvalidRequest));
      for (let i = 0; i < messages.length; i++) {
        const m = messages[i];
        if (m === null || typeof m !== "object" || Array.isArray(m)) {
          return next(new JsonRpcHttpError(new HttpError(400, `request ${batch ? `[${i}] ` : ""}must be a JSON-RPC message (an object)`), ErrorCode.InvalidRequest));
        }
        const problem = check("McpMessage", m);
        if (problem) {
          const id = (m as { id?: unknown }).id;
          const echo = !batch && (typeof id === "string" || (Number.isSafeInteger(id) as boolean)) ? (id as string | number) : null;
          return next(new JsonRpcHttpError(new HttpError(400, `request ${batch ? `[${i}] ` : ""}${problem}`, fieldOf(problem)), ErrorCode.InvalidRequest, echo));
        }
      }
      next();
    });
}

const INSTRUCTIONS =
  "Assay's tools: run_code runs one program in a sandbox; python keeps an interpreter session between calls (pass the session_id it returns); check_math, run_tests and run_sql check an answer, a program or a query as the reward will.";
