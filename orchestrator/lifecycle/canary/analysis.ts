/**
 * Canary analysis: compare the canary's window with the stable's against the gates, and decide.
 * Pure: the controller feeds it windows and applies what it returns.
 */
import type { WindowStats } from "./window.js";

export interface CanaryGates {
  /** The canary needs this many requests in its window before any verdict. */
  min_requests: number;
  /** Rollback when canary error rate − stable error rate exceeds this (0-1). */
  max_error_rate_diff: number;
  /** Rollback when canary P95 / stable P95 exceeds this (checked when the stable also has min_requests). */
  max_p95_ratio: number;
  /** Automatic steps of the traffic share; empty = manual promotion only. */
  steps: number[];
}

export type Decision =
  | { action: "rollback"; reason: string }
  | { action: "step"; percent: number; reason: string }
  | { action: "promote"; reason: string }
  | { action: "hold"; reason: string };

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

/** Only the regression gates: used after every canary outcome, so a bad canary stops early. */
export function regression(gates: CanaryGates, stable: WindowStats, canary: WindowStats): Decision | undefined {
  if (canary.requests < gates.min_requests) return undefined;
  const diff = canary.error_rate - stable.error_rate;
  if (diff > gates.max_error_rate_diff) {
    return {
      action: "rollback",
      reason: `error rate ${pct(canary.error_rate)} (${canary.errors}/${canary.requests}) vs stable ${pct(stable.error_rate)}: difference ${pct(diff)} > ${pct(gates.max_error_rate_diff)}`,
    };
  }
  if (stable.requests >= gates.min_requests && stable.p95_ms > 0) {
    const ratio = canary.p95_ms / stable.p95_ms;
    if (ratio > gates.max_p95_ratio) {
      return {
        action: "rollback",
        reason: `P95 ${canary.p95_ms} ms vs stable ${stable.p95_ms} ms: ratio ${ratio.toFixed(2)} > ${gates.max_p95_ratio}`,
      };
    }
  }
  return undefined;
}

/** The periodic verdict: rollback, the next automatic step, promotion at 100%, or hold. */
export function evaluate(gates: CanaryGates, stable: WindowStats, canary: WindowStats, percent: number): Decision {
  const bad = regression(gates, stable, canary);
  if (bad) return bad;
  if (canary.requests < gates.min_requests) {
    return {
      action: "hold",
      reason: `waiting for data: ${canary.requests}/${gates.min_requests} canary requests in the window`,
    };
  }
  const healthy = `healthy: error rate ${pct(canary.error_rate)} vs ${pct(stable.error_rate)}, P95 ${canary.p95_ms} ms vs ${stable.p95_ms} ms`;
  if (gates.steps.length === 0) return { action: "hold", reason: `${healthy}; promote manually (aip canary promote)` };
  const next = gates.steps.find((s) => s > percent);
  if (next === undefined || percent >= 100) return { action: "promote", reason: `${healthy} at ${percent}%` };
  if (next >= 100) return { action: "promote", reason: `${healthy} at ${percent}%; last step reached` };
  return { action: "step", percent: next, reason: `${healthy}; stepping ${percent}% → ${next}%` };
}
