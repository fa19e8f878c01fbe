/**
 * The HTTP layer. It knows the contract (openapi.yaml) and the runtime (registry, scorer,
 * services); it knows no single verifier. The routes themselves are listed in routes/index.ts.
 */
import express, { type Request, type Response, type NextFunction } from "express";
import type { Config } from "../core/config.js";
import type { Runtime } from "../core/runtime.js";
import { Metrics } from "./metrics.js";
import { HttpError, toHttpError } from "./errors.js";
import { bearerAuth, keyFromPath } from "./auth.js";
import { requestLog } from "./request-log.js";
import { InflightLimiter } from "./limits.js";
import { routeDeps } from "./http.js";
import { declaredBodyTypes, sameOriginWrites } from "./origin.js";
import { ROUTES } from "./routes/index.js";
import { uiRoutes } from "./routes/ui.js";
import { referenceRoutes } from "./routes/meta.js";
import { rewardSteps } from "./routes/reward.js";
import { scoringDispatch } from "./front.js";

export interface AppHandle {
  app: express.Express;
  metrics: Metrics;
  limiter: InflightLimiter;
}

export function createApp(runtime: Runtime): AppHandle {
  const { config, registry, scorer, log } = runtime;
  const metrics = new Metrics(new Set(registry.names()));
  const limiter = new InflightLimiter(config.maxInflight);
  metrics.inflightFrom(() => limiter.inflight); // read at each scrape, not set per request
  scorer.observe((r) => metrics.observeItem(r));
  const started = Date.now();
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);

  // The global middleware, kept by name: the scoring routes' front dispatch runs the same ones.
  const pathKey = keyFromPath();
  const logLine = requestLog(app, log, config.apiKeys, metrics);
  const origin = sameOriginWrites(config.allowedOrigins);
  const auth = bearerAuth(config.apiKeys, metrics);
  const bodyType = declaredBodyTypes();
  const onError = errorHandler(config, metrics);

  app.use(pathKey); // before the logger: a key in the URL is never logged
  app.use(logLine); // one log line and one metrics observation per request
  // No cross-site writes: another origin's page may not POST here (preflights for the allowed ones).
  app.use(origin);
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok", verifiers: registry.names(), inflight: limiter.inflight, uptime_s: (Date.now() - started) / 1000 });
  });
  // Readiness, for load balancers and Kubernetes' readinessProbe: 503 naming what is still warming
  // (worker pools, warm sandbox containers) until warm-up has settled, then 200. Never needs a key.
  app.get("/readyz", (_req, res) => {
    const v = runtime.readiness.view();
    res.status(v.ready ? 200 : 503).json({ status: v.ready ? "ready" : "warming", waiting_for: v.waiting_for, parts: v.parts });
  });
  // The UI's static files and the API reference are public (a page load cannot carry a bearer
  // token); the API calls they make are not, and carry the key the user types in the page.
  app.use(uiRoutes());
  app.use(referenceRoutes(registry));
  app.use(auth);
  // A body is parsed only as a type openapi.yaml declares for its operation (415 otherwise).
  app.use(bodyType);
  const deps = routeDeps(runtime, metrics, limiter);
  for (const routes of ROUTES) app.use(routes(deps));
  app.use((req, _res, next) => {
    next(new HttpError(404, `no route ${req.method} ${req.path}; see GET /docs for the API`));
  });
  app.use(onError);
  // POST /reward and /reward/batch skip the router's walk past every layer above: the same
  // steps a request to them passes through (none of /healthz, /readyz, the UI or /docs match
  // it), then their own, as one chain (front.ts).
  scoringDispatch(app, rewardSteps(deps), [pathKey, logLine, origin, auth, bodyType], onError);
  return { app, metrics, limiter };
}

/** Every error leaves as JSON that says what to change; a 5xx is our bug, logged in full. */
function errorHandler(config: Config, metrics: Metrics) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = toHttpError(err, config.maxBodyBytes);
    if (e.status >= 500 && e.status !== 504) req.log?.error({ err }, "unhandled error");
    metrics.rejected.labels(rejectReason(e.status)).inc();
    for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
    if (!res.headersSent) res.status(e.status).json(e.payload());
  };
}

function rejectReason(status: number): string {
  switch (status) {
    case 400: return "malformed";
    case 401: return "unauthorised";
    case 403: return "forbidden_origin";
    case 415: return "unsupported_type";
    case 404: return "not_found";
    case 413: return "too_large";
    case 429: return "busy";
    case 504: return "start_timeout";
    default: return status >= 500 ? "internal" : "other";
  }
}
