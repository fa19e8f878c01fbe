/**
 * The judge's Prometheus metrics, registered once per process in prom-client's default registry
 * (GET /metrics serves that registry next to the app's own). Model and endpoint label values are
 * the configured ones or "override": requests can name any model, and label values must not be
 * theirs to choose.
 */
import client from "prom-client";

export interface JudgeMetrics {
  requests: client.Counter<"model" | "outcome">;
  tokens: client.Counter<"model" | "kind">;
  cost: client.Counter<"model">;
  cache: client.Counter<"result">;
  seconds: client.Histogram<"model">;
  inflight: client.Gauge<"endpoint">;
  retries: client.Counter<"reason">;
}

let metrics: JudgeMetrics | undefined;

export function judgeMetrics(register: client.Registry = client.register): JudgeMetrics {
  if (metrics) return metrics;
  const registers = [register];
  metrics = {
    requests: new client.Counter({
      name: "assay_judge_requests_total",
      help: "Judge chat-completion calls by model and outcome (ok, rate_limited, server_error, timeout, connection, bad_request, client_error, malformed, refused, aborted, context_exceeded).",
      labelNames: ["model", "outcome"], registers,
    }),
    tokens: new client.Counter({
      name: "assay_judge_tokens_total", help: "Tokens the judge endpoint reported, by model and kind (input, output).",
      labelNames: ["model", "kind"], registers,
    }),
    cost: new client.Counter({
      name: "assay_judge_cost_usd_total", help: "Judge cost in USD, from ASSAY_JUDGE_PRICE_INPUT/OUTPUT (absent when no price is set).",
      labelNames: ["model"], registers,
    }),
    cache: new client.Counter({
      name: "assay_judge_cache_total", help: "Judge verdict cache lookups (hit, miss).",
      labelNames: ["result"], registers,
    }),
    seconds: new client.Histogram({
      name: "assay_judge_request_duration_seconds", help: "Judge call latency (one HTTP attempt).",
      labelNames: ["model"], registers, buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    }),
    inflight: new client.Gauge({
      name: "assay_judge_inflight_requests", help: "Judge calls in flight by endpoint.",
      labelNames: ["endpoint"], registers,
    }),
    retries: new client.Counter({
      name: "assay_judge_retries_total", help: "Judge calls retried, by reason.",
      labelNames: ["reason"], registers,
    }),
  };
  return metrics;
}
