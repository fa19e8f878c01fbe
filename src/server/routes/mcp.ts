/**
 * POST /mcp: the Model Context Protocol over streamable HTTP, with the official TypeScript SDK
 * (@modelcontextprotocol/sdk). Stateless: every POST gets its own SDK Server and transport (no
 * MCP session to keep, so any replica answers, and nothing outlives the request); JSON answers,
 * no server push (GET and DELETE are 405). The tools are in ../mcp/tools.ts. Authentication is
 * the app's, as for every route behind it (a bearer key, or /k/<key>/mcp for clients that send no
 * header); the body is parsed and capped by the shared opening (size, depth, McpMessage).
 */
import { Router, type Request } from "express";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { HttpError } from "../errors.js";
import { clientGone, type RouteDeps } from "../http.js";
import { callerOf } from "../auth.js";
import { runCodeOf } from "./sandboxfusion.js";
import { mcpTools, refusal, type Tool } from "../mcp/tools.js";
import { OPENAPI } from "../../core/contract.js";

export function mcpRoutes({ runtime, body, admit }: RouteDeps): Router {
  const r = Router();
  const service = runtime.services.sessions;
  const sessions = service ? async () => (await service()).sessions : undefined;
  const tools = mcpTools({ runtime, admit, runCode: runCodeOf(runtime), sessions });
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listed = tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));

  r.post("/mcp", body("McpMessage"), async (req, res) => {
    const gone = clientGone(req, res);
    const owner = callerOf(req, runtime.config.apiKeys);
    const server = new Server({ name: "assay", version: String(OPENAPI.info?.version ?? "0") }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
    server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
      const tool: Tool | undefined = byName.get(call.params.name);
      if (!tool) return refusal(`no tool ${JSON.stringify(call.params.name)}; tools/list names them: ${[...byName.keys()].join(", ")}`) as CallToolResult;
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

const INSTRUCTIONS =
  "Assay's tools: run_code runs one program in a sandbox; python keeps an interpreter session between calls (pass the session_id it returns); check_math, run_tests and run_sql check an answer, a program or a query as the reward will.";
