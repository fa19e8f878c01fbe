/**
 * One log line and one metrics observation per request, from one listener, and a request id
 * (echoed as X-Request-Id). It writes the line pino-http wrote (`req` {id, method, url}, `res`
 * {statusCode}, `responseTime`, "request completed"; "request errored" and the error for a 5xx),
 * without pino-http's two child loggers and three listeners per request, which cost more than
 * scoring a text item (issue 38). `req.log`, the request's own logger (bound to its `req`), is
 * made only when a route or the error handler asks for it.
 */
import type { Express, Request, RequestHandler } from "express";
import type { Logger } from "pino";
import { randomUUID } from "node:crypto";
import { loggedUrl } from "./auth.js";
import type { Metrics } from "./metrics.js";

declare module "http" {
  interface IncomingMessage {
    /** The request id (X-Request-Id): the client's when it sent a sane one, else a UUID. */
    id: string;
    /** A logger whose lines carry this request's id, method and URL. */
    log: Logger;
  }
}

/** A client's X-Request-Id is kept when it looks like one. */
const CLIENT_ID = /^[\w.-]{1,128}$/;
/** Polled by probes and scrapers: counted in the metrics, not logged. */
const UNLOGGED = new Set(["/healthz", "/readyz", "/metrics"]);

const LOGGER = Symbol("request logger");

/** What the line says of the request (the URL with any API key masked). */
function reqFields(req: Request, keys: readonly string[]) {
  return { id: req.id, method: req.method, url: loggedUrl(req.originalUrl ?? req.url, keys) };
}

/**
 * Installs `req.log` on the app's request prototype: a child of `log` bound to the request, made
 * on first use. Returns the middleware that sets the id and writes the line.
 */
export function requestLog(app: Express, log: Logger, keys: readonly string[], metrics: Metrics): RequestHandler {
  Object.defineProperty(app.request, "log", {
    configurable: true,
    get(this: Request & { [LOGGER]?: Logger }) {
      return (this[LOGGER] ??= log.child({ req: reqFields(this, keys) }));
    },
    set(this: Request & { [LOGGER]?: Logger }, v: Logger) {
      this[LOGGER] = v;
    },
  });
  return (req, res, next) => {
    const incoming = req.headers["x-request-id"];
    const id = typeof incoming === "string" && CLIENT_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader("X-Request-Id", id);
    req.id = id;
    const t0 = performance.now();
    const logged = !UNLOGGED.has(req.url);
    // 'close' comes after 'finish' when the response was sent, and alone when the client left first.
    // `on`, not `once`: a response emits 'close' once (node marks it closed), and once's wrapper
    // is an allocation and an extra call per request.
    res.on("close", () => {
      const ms = performance.now() - t0;
      // Metrics count responses sent (a client that left first is only logged).
      if (res.writableFinished) {
        const path = req.route?.path as string | undefined;
        const route = path ? (req.baseUrl || "") + path : res.statusCode === 404 ? "unmatched" : "other";
        metrics.observeRequest(req.method, route, res.statusCode, ms / 1000);
      }
      if (!logged) return;
      const status = res.statusCode;
      const fields = { req: reqFields(req, keys), res: { statusCode: status }, responseTime: Math.round(ms) };
      if (status >= 500) log.error({ ...fields, err: new Error(`failed with status code ${status}`) }, "request errored");
      else if (status >= 400) log.warn(fields, "request completed");
      else log.info(fields, "request completed");
    });
    next();
  };
}
