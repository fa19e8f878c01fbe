/**
 * The per-item metrics (issue 38): counted without prom-client's per-call label hashing, and
 * printed on /metrics exactly as prom-client's own Counter and Histogram print the same
 * observations.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import client from "prom-client";
import { ItemHistogram, Metrics } from "./metrics.js";
import type { RewardResult } from "../core/types.js";

const BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const result = (verifier: string, status: RewardResult["status"], elapsed_ms: number): RewardResult =>
  ({ verifier, status, reward: status === "ok" ? 1 : null, reason: "", details: {}, elapsed_ms });

/** The lines of one metric family in a /metrics text. */
const family = (text: string, name: string) => text.split("\n").filter((l) => l.startsWith(name) || l.includes(` ${name} `));

test("ItemHistogram prints what prom-client's Histogram prints for the same observations, bucket edges included", async () => {
  const values: [string, number][] = [["exact", 0.00005], ["exact", 0.0001], ["exact", 0.0007], ["math", 0.3], ["math", 61], ["exact", 0.01], ["math", 0]];
  const ours = new client.Registry();
  const h = new ItemHistogram("x_seconds", "help text", "verifier", BUCKETS);
  ours.registerMetric(h as unknown as client.Metric);
  const theirs = new client.Registry();
  const ph = new client.Histogram({ name: "x_seconds", help: "help text", labelNames: ["verifier"], buckets: BUCKETS, registers: [theirs] });
  for (const [v, x] of values) {
    h.observe(v, x);
    ph.labels(v).observe(x);
  }
  const [a, b] = [await ours.metrics(), await theirs.metrics()];
  assert.equal(a, b);
  assert.match(a, /x_seconds_bucket\{le="0.0001",verifier="exact"\} 2/);
  assert.match(a, /x_seconds_bucket\{le="\+Inf",verifier="math"\} 3/);
  assert.match(a, /x_seconds_count\{verifier="exact"\} 4/);
  // the JSON form (getMetricsAsJSON) reads the same values (exemplars aside: none are recorded)
  const plain = async (r: client.Registry) => JSON.parse(JSON.stringify(await r.getMetricsAsJSON(), (k, v) => (k === "exemplar" ? undefined : v)));
  assert.deepEqual(await plain(ours), await plain(theirs));
  h.reset();
  assert.doesNotMatch(await ours.metrics(), /x_seconds_bucket/);
});

test("Metrics.observeItem: counts by verifier and status, held until a scrape and added to the counter then, never twice", async () => {
  const m = new Metrics(new Set(["exact", "custom"]), { defaultMetrics: false });
  for (let i = 0; i < 5; i++) m.observeItem(result("exact", "ok", 0.2));
  m.observeItem(result("exact", "error", 2));
  m.observeItem(result("custom:mine@2", "ok", 3));
  m.observeItem(result("nope", "invalid", 0));
  const first = await m.registry.metrics();
  assert.deepEqual(family(first, "assay_items_total{").sort(), [
    'assay_items_total{verifier="custom",status="ok"} 1',
    'assay_items_total{verifier="exact",status="error"} 1',
    'assay_items_total{verifier="exact",status="ok"} 5',
    'assay_items_total{verifier="unknown",status="invalid"} 1',
  ]);
  assert.match(first, /assay_item_duration_seconds_count\{verifier="exact"\} 6/);
  assert.match(first, /assay_item_duration_seconds_bucket\{le="0.0005",verifier="exact"\} 5/);
  // A second scrape with nothing new reads the same totals; new items add to them.
  assert.equal(await m.registry.metrics(), first);
  m.observeItem(result("exact", "ok", 0.2));
  const third = await m.registry.metrics();
  assert.match(third, /assay_items_total\{verifier="exact",status="ok"\} 6/);
  assert.match(third, /assay_item_duration_seconds_count\{verifier="exact"\} 7/);
  assert.match(third, /# TYPE assay_item_duration_seconds histogram/);
});

test("the in-flight gauge is read at each scrape: acquire and release make no prom-client call (issue 38)", async () => {
  const { InflightLimiter } = await import("./limits.js");
  const m = new Metrics(new Set(["exact"]), { defaultMetrics: false });
  const limiter = new InflightLimiter(10);
  m.inflightFrom(() => limiter.inflight);
  const set = client.Gauge.prototype.set;
  let calls = 0;
  client.Gauge.prototype.set = function (this: client.Gauge, ...args: Parameters<typeof set>) {
    calls++;
    return set.apply(this, args);
  } as typeof set;
  try {
    const release = limiter.acquire(3, 1);
    assert.equal(calls, 0, "acquire set the gauge");
    assert.match(await m.registry.metrics(), /^assay_inflight_items 3$/m);
    const atScrape = calls;
    release();
    assert.equal(calls, atScrape, "release set the gauge");
    assert.match(await m.registry.metrics(), /^assay_inflight_items 0$/m);
  } finally {
    client.Gauge.prototype.set = set;
  }
});
