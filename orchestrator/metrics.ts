/**
 * Prometheus metrics: counters fed by orchestrator events, gauges read from snapshots at scrape time.
 * Conventions (docs/operations.md "Operating it"): ratios are 0-1, latencies are histograms (no precomputed
 * quantiles), the process metrics carry their standard names (`process_*`, `nodejs_*`), and
 * `promtool check metrics` is clean (tested).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { AgentRecord } from "./agent.js";
import { packageRootDir } from "./config.js";
import type { RequestOutcome } from "./forward.js";
import { processStats } from "./procstat.js";
import { ERROR_CODES } from "../protocol/errors.js";

/** The label value every unknown agent, version, action or status shares. */
const OTHER = "other";
const KNOWN_CODES = new Set<string>(ERROR_CODES);

const STAGES = ["route", "queue", "agent", "total"] as const;
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One counted series: its label values and count. */
interface CountSeries {
  readonly labels: Record<string, string>;
  value: number;
}

/** One histogram series: its label values, per-bucket counts (not cumulative), sum and count. */
interface HistogramSeries {
  readonly labels: Record<string, string>;
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

/** What prom-client's Registry reads from a metric at scrape time (its `get()`). */
interface MetricSnapshot {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  values: { labels: Record<string, string | number>; value: number; metricName?: string }[];
}

/**
 * A per-request metric whose series are looked up once per label set and then counted with plain
 * arithmetic: prom-client's own `inc`/`observe`, even on a bound child, validates and hashes the labels
 * on every call (docs/performance.md, "The orchestrator hop"). The registry reads it like any
 * prom-client metric, through `get()`, so the exposition is the same.
 */
class RequestSeries<S> {
  private readonly series = new Map<string, S>();
  readonly aggregator = "sum";

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly make: (labels: Record<string, string>) => S,
    private readonly snapshot: (series: Iterable<S>) => MetricSnapshot["values"],
    readonly type: "counter" | "histogram",
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Parameters<Registry["registerMetric"]>[0]);
  }

  /** The series for `key` (the label values joined), made with `labels` the first time. */
  at(key: string, labels: () => Record<string, string>): S {
    let s = this.series.get(key);
    if (s === undefined) {
      s = this.make(labels());
      this.series.set(key, s);
    }
    return s;
  }

  get(): Promise<MetricSnapshot> {
    const { name, help, type, aggregator } = this;
    return Promise.resolve({ name, help, type, aggregator, values: this.snapshot(this.series.values()) });
  }

  reset(): void {
    this.series.clear();
  }
}

function counterValues(series: Iterable<CountSeries>): MetricSnapshot["values"] {
  return [...series].map((s) => ({ labels: s.labels, value: s.value }));
}

/** Prometheus histogram samples (cumulative `_bucket` with `le` first, as prom-client writes them, then `_sum`, `_count`). */
function histogramValues(name: string, bounds: readonly number[]) {
  return (series: Iterable<HistogramSeries>): MetricSnapshot["values"] => {
    const out: MetricSnapshot["values"] = [];
    for (const s of series) {
      let acc = 0;
      for (let i = 0; i < bounds.length; i++) {
        acc += s.buckets[i]!;
        out.push({ labels: { le: bounds[i]!, ...s.labels }, value: acc, metricName: `${name}_bucket` });
      }
      out.push({ labels: { le: "+Inf", ...s.labels }, value: s.count, metricName: `${name}_bucket` });
      out.push({ labels: s.labels, value: s.sum, metricName: `${name}_sum` });
      out.push({ labels: s.labels, value: s.count, metricName: `${name}_count` });
    }
    return out;
  };
}

function observe(s: HistogramSeries, value: number, bounds: readonly number[]): void {
  let i = 0;
  while (i < bounds.length && value > bounds[i]!) i++;
  if (i < bounds.length) s.buckets[i]!++;
  s.sum += value;
  s.count++;
}

/** This package's version (package.json), for aip_build_info. */
function packageVersion(): string {
  try {
    return (
      (JSON.parse(readFileSync(join(packageRootDir(), "package.json"), "utf8")) as { version?: string }).version ??
      "unknown"
    );
  } catch {
    return "unknown";
  }
}

export interface MetricsSources {
  agents: () => AgentRecord[];
  /** The share of an agent's traffic on its canary, 0-100 (as configured). */
  canaryPercent?: (name: string) => number;
  /** Host CPU load, 0-1. */
  cpuLoad?: () => number;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: RequestSeries<CountSeries>;
  private readonly latency: RequestSeries<HistogramSeries[]>;
  private readonly restarts: Counter<"agent">;
  private readonly events: Counter<"event" | "agent">;
  private readonly decisions: Counter<"agent" | "action">;
  private readonly promptTokens: Counter<"agent">;
  private readonly reusedTokens: Counter<"agent">;
  private readonly generatedTokens: Counter<"agent">;
  private readonly inference: Histogram<"agent">;
  private readonly tokensPerSecond: Histogram<"agent">;

  private readonly sources: MetricsSources;

  constructor(src: MetricsSources) {
    this.sources = src;
    const agents = src.agents;
    const percent = src.canaryPercent ?? ((): number => 0);
    collectDefaultMetrics({ register: this.registry });
    // Gauges named *_total break the exposition conventions (promtool flags them); the same counts stay
    // available per handle/request/resource type as nodejs_active_handles{type} and its siblings.
    for (const name of ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"])
      this.registry.removeSingleMetric(name);
    const r = [this.registry];
    new Gauge({
      name: "aip_build_info",
      help: "Always 1; the labels name the agency version and the Node.js it runs on",
      labelNames: ["version", "nodejs_version"],
      registers: r,
    }).set({ version: packageVersion(), nodejs_version: process.versions.node }, 1);
    this.requests = new RequestSeries<CountSeries>(
      "aip_requests_total",
      "Requests answered, by agent, version, action and status (success or the AIP error code)",
      (labels) => ({ labels, value: 0 }),
      counterValues,
      "counter",
      this.registry,
    );
    this.latency = new RequestSeries<HistogramSeries[]>(
      "aip_request_duration_seconds",
      "Request latency per stage (route, queue, agent, total)",
      (labels) =>
        STAGES.map((stage) => ({
          labels: { stage, agent: labels.agent! },
          buckets: new Float64Array(LATENCY_BUCKETS.length),
          sum: 0,
          count: 0,
        })),
      (series) => histogramValues("aip_request_duration_seconds", LATENCY_BUCKETS)([...series].flat()),
      "histogram",
      this.registry,
    );
    this.restarts = new Counter({
      name: "aip_agent_restarts_total",
      help: "Agent restarts by the supervisor",
      labelNames: ["agent"],
      registers: r,
    });
    this.events = new Counter({
      name: "aip_events_total",
      help: "Lifecycle events (circuit_open, agent_killed, admission_changed, …)",
      labelNames: ["event", "agent"],
      registers: r,
    });
    this.decisions = new Counter({
      name: "aip_canary_decisions_total",
      help: "Canary decisions (start, step, promote, rollback, retire) by agent",
      labelNames: ["agent", "action"],
      registers: r,
    });
    this.promptTokens = new Counter({
      name: "aip_model_prompt_tokens_total",
      help: "Prompt tokens of model inferences (KV-cache reused ones included)",
      labelNames: ["agent"],
      registers: r,
    });
    this.reusedTokens = new Counter({
      name: "aip_model_kv_reused_tokens_total",
      help: "Prompt tokens found in the KV cache, not evaluated again",
      labelNames: ["agent"],
      registers: r,
    });
    this.generatedTokens = new Counter({
      name: "aip_model_generated_tokens_total",
      help: "Tokens generated by model inferences",
      labelNames: ["agent"],
      registers: r,
    });
    this.inference = new Histogram({
      name: "aip_model_inference_duration_seconds",
      help: "Model inference time per request (all attempts)",
      labelNames: ["agent"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2],
      registers: r,
    });
    this.tokensPerSecond = new Histogram({
      name: "aip_model_generation_tokens_per_second",
      help: "Generation speed per request (generated tokens / inference time)",
      labelNames: ["agent"],
      buckets: [10, 25, 50, 100, 250, 500, 1000, 2500, 5000],
      registers: r,
    });
    new Gauge({
      name: "aip_canary_traffic_ratio",
      help: "Share of an agent's traffic on its canary version (0-1)",
      labelNames: ["agent", "version"],
      registers: r,
      collect() {
        this.reset();
        for (const a of agents())
          if (a.role === "canary") this.set({ agent: a.name, version: a.version }, percent(a.name) / 100);
      },
    });
    const cpuLoad = src.cpuLoad;
    if (cpuLoad) {
      new Gauge({
        name: "aip_host_cpu_load_ratio",
        help: "Host CPU busy fraction over the last sample (0-1), what the resource rule reads",
        registers: r,
        collect() {
          this.set(cpuLoad());
        },
      });
    }
    const gauge = (name: string, help: string, read: (a: AgentRecord) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ["agent", "version"],
        registers: r,
        collect() {
          this.reset();
          for (const a of agents()) this.set({ agent: a.name, version: a.version }, read(a));
        },
      });
    };
    gauge("aip_pool_size", "Current adaptive pool size", (a) => a.pool.size);
    gauge("aip_inflight_requests", "Requests in flight to the agent", (a) => a.inflight);
    gauge("aip_queue_depth", "Requests waiting for a pool slot", (a) => a.pool.stats().queued);
    gauge("aip_agent_up", "1 when the agent is healthy and in rotation", (a) => (a.available ? 1 : 0));
    gauge("aip_agent_healthy", "1 when the last health probe succeeded", (a) => (a.health.ok ? 1 : 0));
    // Each agent process's own CPU and memory (embedded mode: the orchestrator knows the pids; under
    // systemd, the unit's cgroup accounting has them).
    const running = (): { a: AgentRecord; s: NonNullable<ReturnType<typeof processStats>> }[] =>
      agents().flatMap((a) => {
        const s = a.pid ? processStats(a.pid) : null;
        return s ? [{ a, s }] : [];
      });
    new Counter({
      name: "aip_agent_process_cpu_seconds_total",
      help: "User and system CPU time of the agent's current process, seconds (restarts from 0 with the process)",
      labelNames: ["agent", "version"],
      registers: r,
      collect() {
        this.reset();
        for (const { a, s } of running()) this.inc({ agent: a.name, version: a.version }, s.cpuSeconds);
      },
    });
    new Gauge({
      name: "aip_agent_process_resident_memory_bytes",
      help: "Resident memory of the agent's process, bytes",
      labelNames: ["agent", "version"],
      registers: r,
      collect() {
        this.reset();
        for (const { a, s } of running()) this.set({ agent: a.name, version: a.version }, s.rssBytes);
      },
    });
  }

  /**
   * Label values are bounded: only the registered agents, their versions, the actions their manifests
   * declare and the AIP error codes become values; anything else a client sent shares `other`, so no
   * request can add series.
   */
  request(o: RequestOutcome): void {
    const known = this.sources.agents();
    const agent = o.agent == null ? "none" : known.some((a) => a.name === o.agent) ? o.agent : OTHER;
    const version =
      o.version == null ? "none" : known.some((a) => a.name === agent && a.version === o.version) ? o.version : OTHER;
    const action = !o.action
      ? "none"
      : known.some((a) => a.manifest.capabilities.includes(o.action!))
        ? o.action
        : OTHER;
    const outcome = o.outcome === "success" || KNOWN_CODES.has(o.outcome) ? o.outcome : OTHER;
    this.requests.at(`${agent}\u0000${version}\u0000${action}\u0000${outcome}`, () => ({
      agent,
      version,
      action,
      status: outcome,
    })).value++;
    const stages = this.latency.at(agent, () => ({ agent }));
    const t = o.timings_ms;
    for (let i = 0; i < STAGES.length; i++) {
      const v = t[STAGES[i]!];
      if (v !== undefined) observe(stages[i]!, v / 1000, LATENCY_BUCKETS);
    }
    if (o.model) {
      this.promptTokens.inc({ agent }, o.model.prompt_tokens);
      this.reusedTokens.inc({ agent }, o.model.kv_reused_tokens);
      this.generatedTokens.inc({ agent }, o.model.generated_tokens);
      if (o.model.inference_ms > 0) {
        this.inference.observe({ agent }, o.model.inference_ms / 1000);
        this.tokensPerSecond.observe({ agent }, o.model.generated_tokens / (o.model.inference_ms / 1000));
      }
    }
  }

  decision(agent: string, action: string): void {
    this.decisions.inc({ agent, action });
  }

  restart(agent: string): void {
    this.restarts.inc({ agent });
  }

  event(event: string, agent: string): void {
    this.events.inc({ event, agent });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
