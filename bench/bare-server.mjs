// The baseline: a bare express app that parses the JSON body and returns a constant.
// Plain JavaScript run by node, like the compiled server it is compared with.
import express from "express";

const port = Number(process.env.ASSAY_PORT ?? 0);
const single = JSON.stringify({ verifier: "exact", reward: 1, status: "ok", reason: "matches the reference", details: {}, elapsed_ms: 0 });
const batches = new Map();
const app = express();
app.post("/reward", express.json({ limit: "8mb" }), (_req, res) => {
  res.type("json").send(single);
});
app.post("/reward/batch", express.json({ limit: "8mb" }), (req, res) => {
  const n = req.body.items.length;
  let body = batches.get(n);
  if (!body) batches.set(n, (body = `{"results":[${Array(n).fill(single).join(",")}]}`));
  res.type("json").send(body);
});
app.get("/healthz", (_req, res) => res.json({ status: "ok" }));
app.listen(port, "127.0.0.1");
