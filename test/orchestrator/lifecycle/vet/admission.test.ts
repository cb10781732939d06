import { describe, expect, it } from "vitest";
import {
  admission,
  defaultVetMode,
  vettingSummary,
  type VetReport,
} from "../../../../orchestrator/lifecycle/vet/index.js";

const report = (over: Partial<VetReport>): VetReport => ({
  ok: true,
  couldNotVet: false,
  executable: "/x/agent",
  sha256: "a".repeat(64),
  checks: [{ name: "network", ok: true, violations: [] }],
  reasons: [],
  interpreter: ["/x/agent"],
  libraries: [],
  addons: [],
  durationMs: 1,
  vettedAt: "2026-01-01T00:00:00.000Z",
  ...over,
});
const failed = report({
  ok: false,
  reasons: ["network: socket(AF_INET)"],
  checks: [{ name: "network", ok: false, violations: [{ rule: "network", detail: "socket(AF_INET)" }] }],
});
const cannot = report({ ok: false, couldNotVet: true, checks: [], reasons: ["strace is not installed"] });

describe("vetting admission (required | warn | off)", () => {
  it("defaults: required under systemd, warn embedded", () => {
    expect(defaultVetMode("systemd")).toBe("required");
    expect(defaultVetMode("embedded")).toBe("warn");
  });

  it("required registers only passing agents; a failing or unvettable one is rejected with reasons", () => {
    expect(admission(report({}), "required")).toEqual({ admit: true, vetting: "passed", reasons: [] });
    expect(admission(failed, "required")).toEqual({
      admit: false,
      vetting: "failed",
      state: "rejected",
      reasons: ["network: socket(AF_INET)"],
    });
    expect(admission(cannot, "required")).toMatchObject({ admit: false, vetting: "could-not-vet", state: "rejected" });
  });

  it("warn registers everything but keeps the reasons; off skips", () => {
    expect(admission(failed, "warn")).toEqual({
      admit: true,
      vetting: "failed",
      reasons: ["network: socket(AF_INET)"],
    });
    expect(admission(undefined, "off")).toEqual({ admit: true, vetting: "skipped", reasons: [] });
  });

  it("summarises for /v1/agents and /healthz", () => {
    expect(vettingSummary(failed, "required")).toEqual({
      mode: "required",
      result: "failed",
      state: "rejected",
      reasons: ["network: socket(AF_INET)"],
      sha256: "a".repeat(64),
      executable: "/x/agent",
      failed_checks: ["network"],
      vetted_at: "2026-01-01T00:00:00.000Z",
      cached: false,
    });
  });
});
