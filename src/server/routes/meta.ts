/**
 * What describes the service: /verifiers and /metrics (behind authentication), and the API
 * reference, /openapi.yaml (with each verifier's schemas) and /docs, which are public like the
 * UI's files (a browser cannot send a bearer token when it opens a page): /docs's Authorize
 * button takes the key, and its calls carry it.
 */
import { Router } from "express";
import client from "prom-client";
import { stringify } from "yaml";
import { OPENAPI } from "../../core/contract.js";
import type { Registry } from "../../core/registry.js";
import { docsRouter } from "../docs.js";
import type { RouteDeps } from "../http.js";

/**
 * openapi.yaml as served: the contract plus, under components.schemas, each verifier's
 * `<name>.reference` and `<name>.options` as the registry publishes them, so /docs shows what
 * every verifier accepts.
 */
export function servedOpenApi(registry: Registry): string {
  const doc = structuredClone(OPENAPI);
  // Relative: "Try it out" in /docs calls the server that served the page, wherever it listens.
  doc.servers = [{ url: "/", description: "the server that served this document" }];
  for (const v of registry.list()) {
    doc.components.schemas[`${v.name}.reference`] = { description: `reference of the ${v.name} verifier: ${v.description}`, ...v.reference_schema };
    doc.components.schemas[`${v.name}.options`] = { description: `options of the ${v.name} verifier`, ...v.options_schema };
  }
  return stringify(doc);
}

export function metaRoutes({ runtime, metrics }: RouteDeps): Router {
  const r = Router();
  r.get("/metrics", async (_req, res) => {
    // The app's own registry, then the process-wide default one, where shared services (the
    // judge) register their metrics.
    res.type(metrics.registry.contentType).send((await metrics.registry.metrics()) + (await client.register.metrics()));
  });
  r.get("/verifiers", (_req, res) => {
    res.json({ verifiers: runtime.registry.list() });
  });
  return r;
}

/** /openapi.yaml and /docs: mounted before authentication (app.ts). */
export function referenceRoutes(registry: Registry): Router {
  const r = Router();
  const openapi = servedOpenApi(registry);
  r.get("/openapi.yaml", (_req, res) => {
    res.type("application/yaml").send(openapi);
  });
  r.use("/docs", docsRouter());
  return r;
}
