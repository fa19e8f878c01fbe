/** GET /docs: the API reference rendered by Swagger UI from /openapi.yaml, served offline, public. */
import express, { Router } from "express";
import { createRequire } from "node:module";
import { dirname } from "node:path";

const require = createRequire(import.meta.url);
const assets = dirname(require.resolve("swagger-ui-dist/package.json"));

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Assay API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="api"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body></html>`;
// With ASSAY_API_KEYS set, the Authorize button takes the key; "Try it out" sends it, to the
// server that served the page (openapi.yaml as served has a relative server URL).
const init = `window.ui = SwaggerUIBundle({ url: "/openapi.yaml", dom_id: "#api", deepLinking: true });`;

export function docsRouter(): Router {
  const r = Router();
  r.get("/", (_req, res) => {
    res.type("html").send(page);
  });
  r.get("/init.js", (_req, res) => {
    res.type("application/javascript").send(init);
  });
  r.use(express.static(assets, { index: false, maxAge: "1h" }));
  return r;
}
