/**
 * Per-agent model engine metrics, read at scrape time from what each agent's /healthz last said
 * (`model_engine`, agents/lib/llm): tokens, upstream requests, errors by kind, upstream latency, the
 * circuit, and the answers the model-free engine gave instead, by reason. Counters lag the agent by at
 * most one health interval (limits.health_interval_ms).
 */
import type { Registry } from "prom-client";
import { UPSTREAM_BUCKETS_S } from "../../protocol/contract/model-engine.js";
import type { AgentRecord } from "../core/agent.js";

type Values = { labels: Record<string, string | number>; value: number; metricName?: string }[];

interface EngineReport {
  kind?: string;
  model?: string | null;
  reachable?: boolean;
  circuit?: { state?: string };
  requests?: number;
  errors?: Record<string, number>;
  prompt_tokens?: number;
  completion_tokens?: number;
  latency_ms?: { sum?: number; count?: number; buckets?: number[] };
  fallbacks?: Record<string, number>;
}

function engines(agents: () => AgentRecord[]): { labels: Record<string, string>; r: EngineReport }[] {
  return agents().flatMap((a) => {
    const r = a.health.report?.["model_engine"] as EngineReport | undefined;
    if (!r || typeof r !== "object") return [];
    const model = typeof r.model === "string" ? r.model : "none";
    return [{ labels: { agent: a.name, version: a.version, engine: r.kind ?? "unknown", model }, r }];
  });
}

const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

export function registerModelEngineMetrics(registry: Registry, agents: () => AgentRecord[]): void {
  const metric = (name: string, help: string, type: "counter" | "gauge" | "histogram", values: () => Values): void => {
    registry.registerMetric({
      name,
      help,
      type,
      aggregator: "sum",
      get: () => Promise.resolve({ name, help, type, aggregator: "sum", values: values() }),
      reset: () => undefined,
    } as unknown as Parameters<Registry["registerMetric"]>[0]);
  };
  const each = (read: (r: EngineReport) => number) => (): Values =>
    engines(agents).map(({ labels, r }) => ({ labels, value: read(r) }));
  metric(
    "aip_model_engine_up",
    "1 when the agent's model engine is reachable (local: loaded)",
    "gauge",
    each((r) => (r.reachable ? 1 : 0)),
  );
  metric(
    "aip_model_engine_circuit_open",
    "1 while the agent's inference-server circuit is open",
    "gauge",
    each((r) => (r.circuit?.state === "open" ? 1 : 0)),
  );
  metric(
    "aip_model_engine_requests_total",
    "Requests sent to the inference server",
    "counter",
    each((r) => n(r.requests)),
  );
  metric(
    "aip_model_engine_prompt_tokens_total",
    "Prompt tokens as the engine counted them",
    "counter",
    each((r) => n(r.prompt_tokens)),
  );
  metric(
    "aip_model_engine_completion_tokens_total",
    "Generated tokens as the engine counted them",
    "counter",
    each((r) => n(r.completion_tokens)),
  );
  metric("aip_model_engine_errors_total", "Failed upstream requests and probes, by kind", "counter", () =>
    engines(agents).flatMap(({ labels, r }) =>
      Object.entries(r.errors ?? {}).map(([kind, v]) => ({ labels: { ...labels, kind }, value: n(v) })),
    ),
  );
  metric(
    "aip_model_fallbacks_total",
    "Answers the model-free engine gave in place of the model, by reason",
    "counter",
    () =>
      engines(agents).flatMap(({ labels, r }) =>
        Object.entries(r.fallbacks ?? {}).map(([reason, v]) => ({ labels: { ...labels, reason }, value: n(v) })),
      ),
  );
  const latency = "aip_model_engine_upstream_latency_seconds";
  metric(latency, "Upstream request latency to the inference server (successful requests)", "histogram", () =>
    engines(agents).flatMap(({ labels, r }) => {
      const l = r.latency_ms;
      if (!l || !Array.isArray(l.buckets)) return [];
      const out: Values = [];
      let acc = 0;
      UPSTREAM_BUCKETS_S.forEach((le, i) => {
        acc += n(l.buckets![i]);
        out.push({ labels: { le, ...labels }, value: acc, metricName: `${latency}_bucket` });
      });
      out.push({ labels: { le: "+Inf", ...labels }, value: n(l.count), metricName: `${latency}_bucket` });
      out.push({ labels, value: n(l.sum) / 1000, metricName: `${latency}_sum` });
      out.push({ labels, value: n(l.count), metricName: `${latency}_count` });
      return out;
    }),
  );
}
