/**
 * The scoring routes' front door (issue 38). Express hands every request to its router, which
 * walks each `app.use` layer in turn (the key in the path, the log, the origin check, /healthz,
 * /readyz, the UI, /docs, auth, body types, then a dozen route routers) matching paths as it goes:
 * ~13% of a `POST /reward`'s CPU, paid before a line of scoring. For exactly `POST /reward` and
 * `POST /reward/batch` (the URL as sent, no query, no trailing slash) this dispatch runs the same
 * steps, the very same middleware the app mounts, in the same order, as one chain, and hands any
 * error to the app's own error handler; every other request (including `/reward/`,
 * `/reward?x=1`, `/k/...`) goes to express as before. Headers, statuses and bytes stay
 * express's: the steps write them, with express's request and response prototypes.
 */
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from "express";
import type { IncomingMessage, ServerResponse } from "node:http";

interface Chain {
  /** What express's router would leave in `req.route` (the metrics' route label reads `path`). */
  route: { path: string; methods: { post: true } };
  steps: readonly RequestHandler[];
}

type Handle = (req: IncomingMessage, res: ServerResponse, callback?: NextFunction) => void;

/**
 * Puts the front dispatch in front of `app`'s router: for `POST <path>`, `before` (the app's
 * global middleware a request to it passes through) then `routes[path]`, errors to `onError`.
 * Returns the number of requests it took (for tests: `taken()`).
 */
export function scoringDispatch(
  app: Express,
  routes: Readonly<Record<string, readonly RequestHandler[]>>,
  before: readonly RequestHandler[],
  onError: ErrorRequestHandler,
): { taken: () => number } {
  const chains = new Map<string, Chain>();
  for (const [path, steps] of Object.entries(routes)) {
    checkBefore(app, path, before);
    chains.set(path, { route: { path, methods: { post: true } }, steps: [...before, ...steps] });
  }
  const app_ = app as unknown as { handle: Handle; request: object; response: object };
  const routerHandle = app_.handle;
  let count = 0;
  app_.handle = function (this: Express, req: IncomingMessage, res: ServerResponse, callback?: NextFunction) {
    const chain = req.method === "POST" ? chains.get(req.url!) : undefined;
    if (!chain) return routerHandle.call(this, req, res, callback);
    count++;
    // What express's app.handle and router.handle set up for every request.
    if (this.enabled("x-powered-by")) res.setHeader("X-Powered-By", "Express");
    const r = req as Request & { res: Response; route: unknown; baseUrl: string };
    const s = res as Response & { req: Request };
    r.res = s;
    s.req = r;
    Object.setPrototypeOf(req, app_.request);
    Object.setPrototypeOf(res, app_.response);
    if (!s.locals) s.locals = Object.create(null);
    r.originalUrl = r.originalUrl || r.url;
    r.baseUrl = "";
    r.params = {};
    r.route = chain.route;
    run(chain.steps, r, s, onError);
  };
  return { taken: () => count };
}

interface Layer {
  handle: RequestHandler & { stack?: Layer[] };
  route?: { path: string; methods: Record<string, boolean> };
  match(path: string): unknown;
}

/**
 * Refuses to start when `before` is not exactly the middleware express's router would run for
 * `POST path` ahead of the router holding its route: a layer added with `app.use` and left out
 * of the front dispatch's list (a rate limit, an auth check) would otherwise be skipped by the
 * scoring routes without a word. Routers that hold no `POST path` route (the UI, /docs) and
 * error handlers are passed over, as the router passes them over for that request.
 */
export function checkBefore(app: Express, path: string, before: readonly RequestHandler[]): void {
  const stack = (app as unknown as { router: { stack: Layer[] } }).router.stack;
  const runs: RequestHandler[] = [];
  let routed = false;
  for (const layer of stack) {
    if (layer.route) {
      if (layer.route.path === path && layer.route.methods.post) { routed = true; break; }
      continue;
    }
    if (!layer.match(path) || layer.handle.length === 4) continue;
    const inner = layer.handle.stack;
    if (inner) {
      if (inner.some((l) => l.route?.path === path && l.route.methods.post)) { routed = true; break; }
      continue;
    }
    runs.push(layer.handle);
  }
  const same = routed && runs.length === before.length && runs.every((f, i) => f === before[i]);
  if (!same) {
    const names = (fs: readonly RequestHandler[]) => fs.map((f) => f.name || "(anonymous)").join(", ");
    throw new Error(
      routed
        ? `the front dispatch for POST ${path} would run [${names(before)}] where express's router runs [${names(runs)}]: pass the app's middleware to scoringDispatch in the order app.use mounts it (src/server/app.ts)`
        : `no router of the app holds POST ${path}: mount its route before calling scoringDispatch (src/server/app.ts)`,
    );
  }
}

/** Runs `steps` as express's router would: next(err) skips to `onError`; a rejected promise is an error. */
function run(steps: readonly RequestHandler[], req: Request, res: Response, onError: ErrorRequestHandler): void {
  let i = 0;
  const fail = (err: unknown) => {
    try {
      onError(err, req, res, (e?: unknown) => {
        // The error handler passed it on (it does not): as express's final handler would.
        if (!res.headersSent) res.status(500).end();
        else if (e) res.destroy();
      });
    } catch {
      if (!res.headersSent) res.status(500).end();
    }
  };
  const next: NextFunction = (err?: unknown) => {
    if (err !== undefined && err !== null && err !== false) return fail(err === "route" || err === "router" ? new Error(`next('${err}') is not supported on the scoring routes`) : err);
    const step = steps[i++];
    if (!step) return fail(new Error(`no step answered ${req.method} ${req.url}`));
    try {
      const ret = step(req, res, next) as unknown;
      if (ret instanceof Promise) ret.then(null, (e: unknown) => next(e || new Error("Rejected promise")));
    } catch (e) {
      next(e);
    }
  };
  next();
}
