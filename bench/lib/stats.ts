/** Latency summaries: nearest-rank percentiles (protocol/util/percentile.ts) and medians over rounds. */
import { percentile } from "../../protocol/util/percentile.js";

export interface LatencySummary {
  count: number;
  errors: number;
  seconds: number;
  rps: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
}

export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** Summarise one measurement: latencies in ms, errors counted apart, over `seconds`. */
export function summarize(latencies: number[], errors: number, seconds: number): LatencySummary {
  const s = Float64Array.from(latencies).sort();
  return {
    count: s.length,
    errors,
    seconds: round(seconds),
    rps: round(s.length / seconds, 1),
    p50_ms: round(percentile(s, 50)),
    p95_ms: round(percentile(s, 95)),
    p99_ms: round(percentile(s, 99)),
    max_ms: round(s.length ? s[s.length - 1]! : 0),
  };
}

/** Per-metric medians of several rounds of the same configuration. */
export function medianOf(rounds: LatencySummary[]): LatencySummary {
  const m = (k: keyof LatencySummary): number => round(median(rounds.map((r) => r[k])), 2);
  return {
    count: m("count"),
    errors: m("errors"),
    seconds: m("seconds"),
    rps: m("rps"),
    p50_ms: m("p50_ms"),
    p95_ms: m("p95_ms"),
    p99_ms: m("p99_ms"),
    max_ms: m("max_ms"),
  };
}
