/** Prometheus metrics for one app instance (its own registry, so tests can build many apps). */
import client from "prom-client";
import type { RewardResult } from "../core/types.js";

export class Metrics {
  readonly registry = new client.Registry();
  readonly requests: client.Counter<"method" | "route" | "status">;
  readonly requestSeconds: client.Histogram<"route">;
  readonly items: client.Counter<"verifier" | "status">;
  readonly itemSeconds: client.Histogram<"verifier">;
  readonly inflight: client.Gauge;
  readonly rejected: client.Counter<"reason">;
  // Label lookups hash their arguments on every call; the hot path keeps the children.
  private readonly itemChildren = new Map<string, client.Counter.Internal>();
  private readonly itemHistChildren = new Map<string, client.Histogram.Internal<"verifier">>();

  /** `known`: verifier names allowed as label values; anything else is counted as "unknown". */
  constructor(private readonly known: ReadonlySet<string>, opts: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.requests = new client.Counter({
      name: "assay_http_requests_total", help: "HTTP requests by method, route and status code.",
      labelNames: ["method", "route", "status"], registers,
    });
    this.requestSeconds = new client.Histogram({
      name: "assay_http_request_duration_seconds", help: "HTTP request latency by route.",
      labelNames: ["route"], registers,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    });
    this.items = new client.Counter({
      name: "assay_items_total", help: "Scored items by verifier and result status (ok, error, invalid).",
      labelNames: ["verifier", "status"], registers,
    });
    this.itemSeconds = new client.Histogram({
      name: "assay_item_duration_seconds", help: "Per-item scoring latency by verifier.",
      labelNames: ["verifier"], registers,
      buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    });
    this.inflight = new client.Gauge({
      name: "assay_inflight_items", help: "Items being scored now.", registers,
    });
    this.rejected = new client.Counter({
      name: "assay_rejected_requests_total", help: "Requests turned away (busy, too large, unauthorised, malformed).",
      labelNames: ["reason"], registers,
    });
    if (opts.defaultMetrics !== false) client.collectDefaultMetrics({ register: this.registry, prefix: "assay_" });
  }

  private readonly reqChildren = new Map<string, [client.Counter.Internal, client.Histogram.Internal<"route">]>();

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let c = this.reqChildren.get(key);
    if (!c) {
      c = [this.requests.labels(method, route, String(status)), this.requestSeconds.labels(route)];
      this.reqChildren.set(key, c);
    }
    c[0].inc();
    c[1].observe(seconds);
  }

  observeItem(r: RewardResult): void {
    // Verifier names in invalid items come from clients: only known names become label values.
    // A namespace verifier's items (`custom:<name>`, `preset:<name>`) count under the namespace:
    // the names after the colon are the users', unbounded.
    const colon = r.verifier.indexOf(":");
    const verifier = this.known.has(r.verifier) ? r.verifier : colon > 0 && this.known.has(r.verifier.slice(0, colon)) ? r.verifier.slice(0, colon) : "unknown";
    const key = verifier + "\0" + r.status;
    let c = this.itemChildren.get(key);
    if (!c) {
      c = this.items.labels(verifier, r.status);
      this.itemChildren.set(key, c);
    }
    c.inc();
    let h = this.itemHistChildren.get(verifier);
    if (!h) {
      h = this.itemSeconds.labels(verifier);
      this.itemHistChildren.set(verifier, h);
    }
    h.observe(r.elapsed_ms / 1000);
  }
}
