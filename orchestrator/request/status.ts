/** What the orchestrator says about itself and its agents: /healthz, /livez, /readyz and /v1/agents. */
import type { AgentRecord } from "../core/agent.js";
import { packageVersion } from "../core/config.js";

export interface StatusView {
  httpStatus: number;
  body: Record<string, unknown>;
}

export interface StatusSource {
  agents: readonly AgentRecord[];
  mode: string;
  startedAt: number;
  /** Every agent has been registered and brought up once. */
  startedUp: boolean;
  cpuLoad: number;
  cpuThreshold: number;
  canaryPercent: (name: string) => number;
  canaryStatus: () => unknown;
}

function uptimeS(startedAt: number): number {
  return Math.round((Date.now() - startedAt) / 1000);
}

/**
 * One agent's status word, the same in the ready line, `aip health`, `aip agents` and /healthz: the
 * supervisor's state, or `degraded` for a healthy agent that reports itself degraded (it serves, but
 * a peer is preferred: complete without a model).
 */
export function statusWord(a: Readonly<Record<string, unknown>>): string {
  return a.status === "healthy" && a.degraded === true ? "degraded" : String(a.status);
}

/**
 * GET /healthz: every agent in detail; 200 while at least one serves; "ok" when every agent serves and
 * none is degraded, "degraded" when some do not serve or report themselves degraded, "down" when none serves.
 */
export function healthz(s: StatusSource): StatusView {
  const agents: Record<string, Record<string, unknown>> = {};
  for (const a of s.agents.filter((x) => x.role === "stable")) agents[a.name] = a.snapshot();
  for (const a of s.agents.filter((x) => x.role !== "stable")) {
    const entry = (agents[a.name] ??= {});
    entry[a.role] = { ...a.snapshot(), ...(a.role === "canary" ? { percent: s.canaryPercent(a.name) } : {}) };
  }
  const serving = s.agents.filter((a) => a.role !== "retained");
  const available = serving.filter((a) => a.available).length;
  const whole = available === serving.length && !serving.some((a) => a.degraded);
  const status = whole ? "ok" : available > 0 ? "degraded" : "down";
  return {
    httpStatus: available > 0 ? 200 : 503,
    body: {
      status,
      version: packageVersion(),
      mode: s.mode,
      pid: process.pid,
      uptime_s: uptimeS(s.startedAt),
      cpu_load: Math.round(s.cpuLoad * 1000) / 1000,
      cpu_threshold: s.cpuThreshold,
      agents,
      canary: s.canaryStatus(),
    },
  };
}

/** GET /livez: the process is alive and its event loop answers (it does not look at the agents). */
export function livez(startedAt: number): StatusView {
  return { httpStatus: 200, body: { status: "alive", pid: process.pid, uptime_s: uptimeS(startedAt) } };
}

/**
 * GET /readyz: 200 when every configured action has an available agent (healthy, circuit closed,
 * admitted), else 503 naming the actions that have none. Host CPU alone never makes it 503: the
 * resource rule only takes a heavy agent out when a lighter one serves the same action.
 */
export function readyz(s: Pick<StatusSource, "agents" | "startedUp">): StatusView {
  const serving = s.agents.filter((a) => a.role !== "retained");
  const actions = [...new Set(serving.flatMap((a) => a.manifest.capabilities))].sort();
  const byAction: Record<string, string[]> = {};
  const missing: string[] = [];
  for (const action of actions) {
    const names = serving.filter((a) => a.serves(action) && a.available).map((a) => `${a.name}@${a.version}`);
    byAction[action] = names;
    if (names.length === 0) missing.push(action);
  }
  const ready = s.startedUp && actions.length > 0 && missing.length === 0;
  return {
    httpStatus: ready ? 200 : 503,
    body: {
      status: ready ? "ready" : "not_ready",
      ...(s.startedUp ? {} : { reason: "agents are still starting" }),
      ...(missing.length > 0 ? { unavailable_actions: missing } : {}),
      actions: byAction,
    },
  };
}

/** The /v1/agents body: registered agents with their manifests. */
export function agentList(agents: readonly AgentRecord[]): Record<string, unknown>[] {
  return agents.map((a) => ({ ...a.snapshot(), manifest: a.manifest, command: a.config.command }));
}
