/** One registered agent process (a name at a version on a socket): its state, health, circuit and pool. */
import { cpuMillicores, type AgentManifest } from "../protocol/schemas.js";
import type { AgentConfig } from "./config.js";
import type { AgentPool, PoolStats } from "./pool/agent-pool.js";

/** stable: takes the traffic; canary: takes its bucket share; retained: previous stable, out of rotation. */
export type AgentRole = "stable" | "canary" | "retained";

export type AgentState = "starting" | "healthy" | "unhealthy" | "restarting" | "failed" | "rejected" | "stopped";

/** Agents declaring at least this much CPU are "heavy" for the resource rule (DESIGN.md). */
export const HEAVY_CPU_MILLICORES = 1000;

export interface HealthInfo {
  checked_at: string | null;
  ok: boolean;
  consecutive_failures: number;
  /** What the agent's own /healthz said (status, degraded reason, …). */
  report: Record<string, unknown> | null;
}

export class AgentRecord {
  state: AgentState = "starting";
  role: AgentRole = "stable";
  lastError: string | null = null;
  restarts = 0;
  pid: number | null = null;
  health: HealthInfo = { checked_at: null, ok: false, consecutive_failures: 0, report: null };
  circuit = { open: false, failures: 0, opened_at: null as string | null };
  admission: { admitted: boolean; reason: string | null } = { admitted: true, reason: null };
  /** Consecutive CPU samples pushing the admission the other way (the resource rule's hysteresis). */
  admissionStreak = 0;
  manifestMismatch: string[] = [];
  /** False until the checked-in manifest was compared with what the agent printed (in the vetting run). */
  registered = true;
  /** Sandbox vetting outcome, when vetting ran. */
  vetting: Record<string, unknown> | null = null;
  inflight = 0;

  constructor(
    readonly config: AgentConfig,
    readonly manifest: AgentManifest,
    readonly pool: AgentPool,
  ) {}

  get name(): string {
    return this.manifest.name;
  }

  get version(): string {
    return this.manifest.version;
  }

  get socketPath(): string {
    return this.config.socket;
  }

  get heavy(): boolean {
    return cpuMillicores(this.manifest.resources.cpu) >= HEAVY_CPU_MILLICORES;
  }

  /** The agent reports itself degraded (e.g. no model loaded): it serves, but a peer is preferred. */
  get degraded(): boolean {
    return this.health.report?.["status"] === "degraded";
  }

  /** Can take requests now: healthy, circuit closed, admitted by the resource rule. */
  get available(): boolean {
    return this.state === "healthy" && this.role !== "retained" && !this.circuit.open && this.admission.admitted;
  }

  serves(action: string): boolean {
    return this.manifest.capabilities.includes(action);
  }

  speaks(language: string): boolean {
    return this.manifest.languages.includes("*") || this.manifest.languages.includes(language.toLowerCase());
  }

  /** The /healthz view of this agent. */
  snapshot(): Record<string, unknown> & { pool: PoolStats } {
    const pool = this.pool.stats();
    return {
      name: this.name,
      version: this.version,
      status: this.state,
      role: this.role,
      available: this.available,
      degraded: this.degraded,
      ...(this.degraded ? { degraded_reason: this.health.report?.["reason"] ?? null } : {}),
      p95_latency_ms: pool.p95_ms,
      concurrent_requests: this.inflight,
      pool_size: pool.size,
      queue_depth: pool.queued,
      pool,
      last_error: this.lastError,
      restarts: this.restarts,
      pid: this.pid,
      socket: this.socketPath,
      circuit: this.circuit,
      admission: this.admission,
      health: this.health,
      ...(this.manifestMismatch.length > 0 ? { manifest_mismatch: this.manifestMismatch } : {}),
      ...(this.vetting ? { vetting: this.vetting } : {}),
    };
  }
}
