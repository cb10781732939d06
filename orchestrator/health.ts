/** Health probes: GET /healthz on each agent's socket, on a fresh connection, with a deadline. */
import { httpRequest } from "../protocol/client.js";
import type { AgentRecord } from "./agent.js";

export interface ProbeResult {
  ok: boolean;
  report: Record<string, unknown> | null;
  error: string | null;
}

/** One probe of an agent's /healthz; never throws. */
export async function probe(socketPath: string, timeoutMs: number): Promise<ProbeResult> {
  try {
    // A fresh connection each time: one kept alive would answer even after the socket file is gone.
    const res = await httpRequest(socketPath, { method: "GET", path: "/healthz", timeoutMs, agent: false });
    const report = JSON.parse(res.body) as Record<string, unknown>;
    if (res.status !== 200) return { ok: false, report, error: `healthz answered HTTP ${res.status}` };
    return { ok: true, report, error: null };
  } catch (err) {
    return { ok: false, report: null, error: `healthz failed: ${(err as Error).message}` };
  }
}

/** Fold a probe into the agent's cached health; returns true when its state changed. */
export function applyProbe(agent: AgentRecord, result: ProbeResult, unhealthyAfter: number): boolean {
  const before = agent.state;
  agent.health = {
    checked_at: new Date().toISOString(),
    ok: result.ok,
    consecutive_failures: result.ok ? 0 : agent.health.consecutive_failures + 1,
    report: result.report ?? agent.health.report,
  };
  if (result.ok) {
    if (agent.circuit.open) agent.circuit = { open: false, failures: 0, opened_at: null };
    if (agent.state === "unhealthy" || agent.state === "starting") agent.state = "healthy";
  } else {
    agent.lastError = result.error;
    if (agent.state === "healthy" && agent.health.consecutive_failures >= unhealthyAfter) agent.state = "unhealthy";
  }
  return before !== agent.state;
}
