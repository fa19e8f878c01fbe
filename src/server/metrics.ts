/** Prometheus metrics for one app instance (its own registry, so tests can build many apps). */
import client from "prom-client";
import type { RewardResult } from "../core/types.js";

/**
 * A histogram with one label, observed per scored item (issue 38): prom-client's own observe
 * rebuilds, validates and hashes the label set on every call (its label-bound children too),
 * which cost more CPU than scoring an `exact` item. Here an observation is a Map lookup, a bucket
 * search and two additions; the registry reads it through the interface it reads its own metrics
 * by (`get()`: name, help, type and the values, bucket counts cumulative), so /metrics prints it
 * exactly as it printed a prom-client Histogram.
 */
export class ItemHistogram<L extends string> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly series = new Map<string, { buckets: Float64Array; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly label: L,
    private readonly upperBounds: readonly number[],
  ) {}

  observe(labelValue: string, value: number): void {
    let s = this.series.get(labelValue);
    if (!s) this.series.set(labelValue, (s = { buckets: new Float64Array(this.upperBounds.length), sum: 0, count: 0 }));
    const b = this.upperBounds;
    for (let i = 0; i < b.length; i++) {
      if (value <= b[i]!) {
        s.buckets[i]!++;
        break;
      }
    }
    s.sum += value;
    s.count++;
  }

  /** What prom-client's Registry reads from a metric (Histogram.get()'s shape). */
  async get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const [lv, s] of this.series) {
      let acc = 0;
      this.upperBounds.forEach((le, i) => {
        acc += s.buckets[i]!;
        values.push({ labels: { le, [this.label]: lv }, value: acc, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: "+Inf", [this.label]: lv }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { [this.label]: lv }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { [this.label]: lv }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.clear();
  }
}

export class Metrics {
  readonly registry = new client.Registry();
  readonly requests: client.Counter<"method" | "route" | "status">;
  readonly requestSeconds: client.Histogram<"route">;
  readonly items: client.Counter<"verifier" | "status">;
  readonly itemSeconds: ItemHistogram<"verifier">;
  /** Read when /metrics is scraped (its collect hook), not set per request: see `inflightFrom`. */
  readonly inflight: client.Gauge;
  /** What the in-flight gauge reports; set by the app to its limiter's count. */
  private inflightNow: () => number = () => 0;
  readonly rejected: client.Counter<"reason">;
  /**
   * Items counted since the last scrape, by verifier and status: a per-item inc() on prom-client's
   * counter hashes its labels each time; these are added to it when /metrics is read (the
   * counter's collect hook).
   */
  private readonly itemCounts = new Map<string, { verifier: string; status: string; n: number }>();

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
    const counts = this.itemCounts;
    this.items = new client.Counter({
      name: "assay_items_total", help: "Scored items by verifier and result status (ok, error, invalid).",
      labelNames: ["verifier", "status"], registers,
      collect() {
        for (const c of counts.values()) {
          if (c.n > 0) this.labels(c.verifier, c.status).inc(c.n);
          c.n = 0;
        }
      },
    });
    this.itemSeconds = new ItemHistogram(
      "assay_item_duration_seconds", "Per-item scoring latency by verifier.", "verifier",
      [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    );
    this.registry.registerMetric(this.itemSeconds as unknown as client.Metric);
    const inflightNow = () => this.inflightNow();
    this.inflight = new client.Gauge({
      name: "assay_inflight_items", help: "Items being scored now.", registers,
      // Two set() calls a request (acquire, release) were prom-client label work on the hot path.
      collect() {
        this.set(inflightNow());
      },
    });
    this.rejected = new client.Counter({
      name: "assay_rejected_requests_total", help: "Requests turned away (busy, too large, unauthorised, malformed).",
      labelNames: ["reason"], registers,
    });
    if (opts.defaultMetrics !== false) client.collectDefaultMetrics({ register: this.registry, prefix: "assay_" });
  }

  /** The in-flight gauge reads `count` at each scrape. */
  inflightFrom(count: () => number): void {
    this.inflightNow = count;
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
    const c = this.itemCounts.get(key);
    if (c) c.n++;
    else this.itemCounts.set(key, { verifier, status: r.status, n: 1 });
    this.itemSeconds.observe(verifier, r.elapsed_ms / 1000);
  }
}
