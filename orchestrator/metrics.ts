/** Prometheus metrics: counters fed by orchestrator events, gauges read from snapshots at scrape time. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { AgentRecord } from "./agent.js";
import type { RequestOutcome } from "./forward.js";

const STAGES = ["route", "queue", "agent", "total"] as const;

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"agent" | "version" | "action" | "status">;
  private readonly latency: Histogram<"stage" | "agent">;
  private readonly restarts: Counter<"agent">;
  private readonly events: Counter<"event" | "agent">;
  private readonly decisions: Counter<"agent" | "action">;

  constructor(agents: () => AgentRecord[], canaryPercent: (name: string) => number = () => 0) {
    collectDefaultMetrics({ register: this.registry, prefix: "aip_orchestrator_" });
    const r = [this.registry];
    this.requests = new Counter({
      name: "aip_requests_total",
      help: "Requests answered, by agent, version, action and status (success or the AIP error code)",
      labelNames: ["agent", "version", "action", "status"],
      registers: r,
    });
    this.latency = new Histogram({
      name: "aip_request_duration_seconds",
      help: "Request latency per stage (route, queue, agent, total)",
      labelNames: ["stage", "agent"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: r,
    });
    this.restarts = new Counter({ name: "aip_agent_restarts_total", help: "Agent restarts by the supervisor", labelNames: ["agent"], registers: r });
    this.events = new Counter({ name: "aip_events_total", help: "Lifecycle events (circuit_open, agent_killed, admission_changed, …)", labelNames: ["event", "agent"], registers: r });
    this.decisions = new Counter({
      name: "aip_canary_decisions_total",
      help: "Canary decisions (start, step, promote, rollback, retire) by agent",
      labelNames: ["agent", "action"],
      registers: r,
    });
    new Gauge({
      name: "aip_canary_percent",
      help: "Share of an agent's traffic on its canary version (0-100)",
      labelNames: ["agent", "version"],
      registers: r,
      collect() {
        this.reset();
        for (const a of agents()) if (a.role === "canary") this.set({ agent: a.name, version: a.version }, canaryPercent(a.name));
      },
    });
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
    gauge("aip_agent_p95_latency_seconds", "P95 latency over the recent calls", (a) => a.pool.stats().p95_ms / 1000);
    gauge("aip_agent_up", "1 when the agent is healthy and in rotation", (a) => (a.available ? 1 : 0));
    gauge("aip_agent_healthy", "1 when the last health probe succeeded", (a) => (a.health.ok ? 1 : 0));
  }

  request(o: RequestOutcome): void {
    this.requests.inc({ agent: o.agent ?? "none", version: o.version ?? "none", action: o.action || "none", status: o.outcome });
    for (const stage of STAGES) {
      const v = o.timings_ms[stage];
      if (v !== undefined) this.latency.observe({ stage, agent: o.agent ?? "none" }, v / 1000);
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
