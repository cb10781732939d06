/**
 * The orchestrator's vetting policy: `required` (default in systemd mode) registers only agents
 * that passed; `warn` (default embedded) registers every agent and shows what failed; `off` skips vetting.
 * What an agent's entry in /v1/agents and /healthz says about vetting comes from `vettingSummary`.
 */
import type { VetReport } from "./report.js";

export type VetMode = "required" | "warn" | "off";

export const VET_MODES: readonly VetMode[] = ["required", "warn", "off"];

/** The default for an orchestrator mode. */
export function defaultVetMode(mode: "embedded" | "systemd"): VetMode {
  return mode === "systemd" ? "required" : "warn";
}

export interface Admission {
  /** Register the agent (route to it)? */
  admit: boolean;
  /** passed | failed | could-not-vet | skipped; an agent not admitted shows as `rejected`. */
  vetting: "passed" | "failed" | "could-not-vet" | "skipped";
  state?: "rejected";
  reasons: string[];
}

/** Decide from a report (undefined when mode is off). Under `required`, "could not vet" rejects too: unvetted is untrusted. */
export function admission(report: VetReport | undefined, mode: VetMode): Admission {
  if (mode === "off" || !report) return { admit: true, vetting: "skipped", reasons: [] };
  const vetting = report.couldNotVet ? "could-not-vet" : report.ok ? "passed" : "failed";
  const admit = vetting === "passed" || mode === "warn";
  return { admit, vetting, ...(admit ? {} : { state: "rejected" as const }), reasons: report.reasons };
}

/** The vetting block of an agent's /v1/agents and /healthz entry. */
export function vettingSummary(report: VetReport, mode: VetMode): Record<string, unknown> {
  const a = admission(report, mode);
  return {
    mode,
    result: a.vetting,
    ...(a.state ? { state: a.state } : {}),
    reasons: a.reasons,
    sha256: report.sha256,
    executable: report.executable,
    failed_checks: report.checks.filter((c) => !c.ok).map((c) => c.name),
    vetted_at: report.vettedAt,
    cached: report.cached === true,
  };
}
