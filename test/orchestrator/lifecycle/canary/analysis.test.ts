import { describe, expect, it } from "vitest";
import { evaluate, regression, type CanaryGates } from "../../../../orchestrator/lifecycle/canary/analysis.js";
import { OutcomeWindow } from "../../../../orchestrator/lifecycle/canary/window.js";

const gates: CanaryGates = { min_requests: 10, max_error_rate_diff: 0.05, max_p95_ratio: 1.5, steps: [5, 25, 50, 100] };
const w = (requests: number, errors: number, p95: number) => ({
  requests,
  errors,
  error_rate: requests ? errors / requests : 0,
  p95_ms: p95,
});

describe("canary analysis", () => {
  it("waits for min_requests before any verdict", () => {
    expect(regression(gates, w(100, 0, 10), w(9, 9, 1000))).toBeUndefined();
    expect(evaluate(gates, w(100, 0, 10), w(9, 0, 10), 5)).toMatchObject({ action: "hold" });
  });

  it("rolls back on an error-rate difference above the gate, not at it", () => {
    expect(regression(gates, w(100, 6, 10), w(20, 2, 10))).toBeUndefined(); // 10% vs 6%: diff 4%
    expect(regression(gates, w(100, 5, 10), w(20, 2, 10))).toBeUndefined(); // 10% vs 5%: exactly at 5%
    expect(regression(gates, w(100, 0, 10), w(20, 2, 10))).toMatchObject({ action: "rollback" });
    expect(regression(gates, w(100, 0, 10), w(20, 2, 10))!.reason).toContain("error rate 10.0% (2/20) vs stable 0.0%");
  });

  it("rolls back on a P95 ratio above the gate once the stable has data too", () => {
    expect(regression(gates, w(100, 0, 10), w(20, 0, 16))).toMatchObject({ action: "rollback" });
    expect(regression(gates, w(100, 0, 10), w(20, 0, 15))).toBeUndefined();
    expect(regression(gates, w(5, 0, 10), w(20, 0, 100))).toBeUndefined();
  });

  it("steps through the configured shares, then promotes", () => {
    expect(evaluate(gates, w(100, 0, 10), w(20, 0, 10), 5)).toMatchObject({ action: "step", percent: 25 });
    expect(evaluate(gates, w(100, 0, 10), w(20, 0, 10), 25)).toMatchObject({ action: "step", percent: 50 });
    expect(evaluate(gates, w(100, 0, 10), w(20, 0, 10), 50)).toMatchObject({ action: "promote" });
    expect(evaluate({ ...gates, steps: [] }, w(100, 0, 10), w(20, 0, 10), 5)).toMatchObject({ action: "hold" });
  });
});

describe("outcome window", () => {
  it("forgets samples older than the window", () => {
    const win = new OutcomeWindow(1000);
    win.record({ t: 0, ms: 5, err: true });
    win.record({ t: 900, ms: 7, err: false });
    expect(win.stats(950)).toMatchObject({ requests: 2, errors: 1 });
    expect(win.stats(1500)).toMatchObject({ requests: 1, errors: 0, p95_ms: 7 });
  });
});
