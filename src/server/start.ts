/** Builds the whole service from configuration and listens; closes cleanly on SIGINT/SIGTERM. */
import type { Server } from "node:http";
import pino, { type Logger } from "pino";
import { loadConfig, type Config } from "../core/config.js";
import { createRuntime, type Runtime } from "../core/runtime.js";
import { createApp, type AppHandle } from "./app.js";

export interface Running extends AppHandle {
  runtime: Runtime;
  server: Server;
  log: Logger;
  url: string;
  close(): Promise<void>;
}

/**
 * JSON logs to stdout, written asynchronously as they come (sonic-boom gathers what arrives
 * while a write is in flight, so a busy server still makes few syscalls) and never held back:
 * `npm run serve > log` shows the "listening" line at once. Flushed on exit.
 */
export function serverLogger(level: string): Logger {
  const dest = pino.destination({ dest: 1, sync: false, minLength: 0 });
  process.once("exit", () => dest.flushSync());
  return pino({ level }, dest);
}

export async function startServer(config: Config = loadConfig(), log: Logger = serverLogger(config.logLevel)): Promise<Running> {
  const runtime = await createRuntime(config, { log });
  if (config.sql.postgres.length) {
    // A PostgreSQL role that may create temporary tables or objects lets a query shadow a table:
    // refuse to start, naming what to REVOKE (src/sql/postgres.ts). Unreachable ones are checked
    // again before their first query.
    try {
      const { unreachable } = await (await runtime.services.sql()).checkPostgres();
      for (const u of unreachable) log.warn({ database: u.id }, `PostgreSQL database ${u.id} did not answer at start-up (${u.error}); its role is checked before its first query`);
    } catch (err) {
      await runtime.close();
      throw err;
    }
  }
  const handle = createApp(runtime);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = handle.app.listen(config.port, config.host, () => resolve(s));
    s.once("error", reject);
  });
  // Keep-alive longer than common client pools so idle sockets are closed by the client side.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : config.port;
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
  log.info({ url, verifiers: runtime.registry.names() }, `assay listening on ${url}`);
  // Pick the sandbox now, so the log says at start-up which backend runs code (or why none).
  if (config.sandbox.backend !== "none") runtime.services.sandbox().catch(() => {});
  // Start verifiers' pools now, so the first items of a training run do not wait for them.
  void runtime.warmUp();
  let closing: Promise<void> | undefined;
  return {
    ...handle,
    runtime,
    server,
    log,
    url,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((r) => server.close(() => r()));
        server.closeIdleConnections();
        const force = setTimeout(() => server.closeAllConnections(), 5_000).unref();
        await closed;
        clearTimeout(force);
        await runtime.close();
        log.flush();
      })();
      return closing;
    },
  };
}
