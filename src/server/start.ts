/** Builds the whole service from configuration and listens; closes cleanly on SIGINT/SIGTERM. */
import { createServer, type Server } from "node:http";
import { farOverLimit } from "./json-body.js";
import pino, { type Logger } from "pino";
import { loadConfig, type Config } from "../core/config.js";
import type { Runtime } from "../core/runtime.js";
import type { AppHandle } from "./app.js";

export interface Running extends AppHandle {
  runtime: Runtime;
  server: Server;
  log: Logger;
  url: string;
  close(): Promise<void>;
}

/**
 * Bytes of log lines gathered before one write(2): under load, one write for ~40 request lines
 * (a line each, ~200 bytes) where each line used to start its own write, a libuv round trip on
 * a worker thread and a callback (issue 38).
 */
export const LOG_BATCH_BYTES = 8192;
/** The longest a line waits in the buffer, ms: a quiet server's lines show within this. */
export const LOG_FLUSH_MS = 100;

/**
 * JSON logs to stdout (or `fd`), written asynchronously in batches of LOG_BATCH_BYTES, and at
 * least every LOG_FLUSH_MS: `npm run serve > log` shows a line within 100 ms (the "listening"
 * and "ready" lines at once: startServer flushes after them). Flushed when the server closes
 * (SIGTERM, SIGINT: `close()` waits for the write) and synchronously on exit, so no line is
 * lost when the process ends.
 */
export function serverLogger(level: string, fd = 1): Logger {
  const dest = pino.destination({ dest: fd, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS });
  process.once("exit", () => {
    try {
      dest.flushSync();
    } catch {
      /* stdout already gone: nothing to write to */
    }
  });
  return pino({ level }, dest);
}

/**
 * Waits until what `log` holds has been written (pino's flush with a callback; at once for a
 * stream that holds nothing back), or 2 s for a destination that never drains (a stalled pipe:
 * the exit handler's synchronous flush is the last word then).
 */
export function flushed(log: Logger): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, 2_000).unref();
    try {
      log.flush(() => resolve());
    } catch {
      resolve();
    }
  });
}

/** Why listening failed, as a person can act on it (EADDRINUSE is the common one). */
function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `${host}:${port}`;
  if (err.code === "EADDRINUSE") return new Error(`cannot listen on ${where}: the port is in use (EADDRINUSE) by another process; stop it, or pick another port with --port or ASSAY_PORT`);
  if (err.code === "EACCES") return new Error(`cannot listen on ${where}: permission denied (EACCES); ports below 1024 need privileges, pick another with --port or ASSAY_PORT`);
  if (err.code === "EADDRNOTAVAIL") return new Error(`cannot listen on ${where}: no such address on this host (EADDRNOTAVAIL); pick another with --host or ASSAY_HOST`);
  return new Error(`cannot listen on ${where}: ${err.message}`);
}

/**
 * Listens, then warms up: `/healthz` answers at once (liveness), `/readyz` answers 503 naming
 * what is still warming until every verifier's pool and the sandbox's warm containers are up
 * (or have failed, said there), then 200; a line "assay ready" is logged then. A bind error
 * (a busy port) rejects before anything is built, so `assay serve` exits non-zero at once.
 */
export async function startServer(config: Config = loadConfig(), log: Logger = serverLogger(config.logLevel)): Promise<Running> {
  // Bound first, before anything is built: a busy port fails at once. Not app.listen: Express 5
  // hands a bind error to its callback, where it would read as success. Until the app exists
  // (a moment), a request is answered 503.
  let app: AppHandle["app"] | undefined;
  const server = createServer((req, res) => {
    if (app) return void app(req, res);
    res.writeHead(503, { "content-type": "application/json", "retry-after": "1" }).end(JSON.stringify({ error: "the server is starting; retry in a moment" }));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, config.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    throw listenError(err as NodeJS.ErrnoException, config.host, config.port);
  }
  let runtime: Runtime;
  let handle: AppHandle;
  try {
    // Loaded only now, after the bind: on a busy port `assay serve` fails before loading them.
    const { createRuntime } = await import("../core/runtime.js");
    runtime = await createRuntime(config, { log });
  } catch (err) {
    server.close();
    throw err;
  }
  try {
    if (config.sql.postgres.length) {
      // A PostgreSQL role that may create temporary tables or objects lets a query shadow a table:
      // refuse to start, naming what to REVOKE (src/sql/postgres.ts). Unreachable ones are checked
      // again before their first query.
      const { unreachable } = await (await runtime.services.sql()).checkPostgres();
      for (const u of unreachable) log.warn({ database: u.id }, `PostgreSQL database ${u.id} did not answer at start-up (${u.error}); its role is checked before its first query`);
    }
    const { createApp } = await import("./app.js");
    handle = createApp(runtime);
  } catch (err) {
    server.close();
    await runtime.close();
    throw err;
  }
  app = handle.app;
  // `Expect: 100-continue` on a JSON body of a length the body parser refuses unread
  // (farOverLimit): no 100, so the client does not send the body, and the route's 413 says why.
  // Any other request (a job's file upload among them) gets its 100 as Node gives it.
  server.on("checkContinue", (req, res) => {
    const json = /^application\/json\b/i.test(req.headers["content-type"] ?? "");
    if (!json || !farOverLimit(req.headers["content-length"], config.maxBodyBytes)) res.writeContinue();
    server.emit("request", req, res);
  });
  // Keep-alive longer than common client pools so idle sockets are closed by the client side.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : config.port;
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
  log.info({ url, verifiers: runtime.registry.names() }, `assay listening on ${url} (GET /readyz says when it is warm)`);
  log.flush(); // shown at once, not after LOG_FLUSH_MS: scripts wait for this line
  // Start verifiers' pools and the sandbox now, so the first items of a training run do not wait for them.
  void runtime.warmUp().then(() => {
    const { parts } = runtime.readiness.view();
    const said = Object.entries(parts).map(([k, p]) => `${k} ${p.state === "ready" ? "" : "FAILED "}(${p.note}${p.ms !== undefined ? `, ${(p.ms / 1000).toFixed(1)} s` : ""})`);
    log.info({ url, parts }, `assay ready on ${url}: ${said.join("; ") || "nothing to warm"}`);
    log.flush();
  });
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
        await flushed(log); // before process.exit: a line still in the buffer is written
      })();
      return closing;
    },
  };
}
