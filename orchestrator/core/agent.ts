/**
 * One registered agent process (a name at a version on a socket): its state, health, circuit, admission
 * and pool. The record is the one owner of that state: it changes only through the methods below, each
 * of which keeps the record's invariants (e.g. a ready agent has a closed circuit; a stopped one no pid).
 */
import { cpuMillicores, type AgentManifest } from "../../protocol/contract/schemas.js";
import type { AgentConfig } from "./config.js";
import { Circuit } from "./circuit.js";
import type { ProbeResult } from "./health.js";
import type { AgentPool, PoolStats } from "../pool/agent-pool.js";

/** stable: takes the traffic; canary: takes its bucket share; retained: previous stable, out of rotation. */
export type AgentRole = "stable" | "canary" | "retained";

export type AgentState = "starting" | "healthy" | "unhealthy" | "restarting" | "failed" | "rejected" | "stopped";

/** Agents declaring at least this much CPU are "heavy" for the resource rule (docs/operations.md). */
export const HEAVY_CPU_MILLICORES = 1000;

export interface HealthInfo {
  checked_at: string | null;
  ok: boolean;
  consecutive_failures: number;
  /** What the agent's own /healthz said (status, degraded reason, …). */
  report: Record<string, unknown> | null;
}

/** One CPU sample as the resource rule sees it for one agent (orchestrator/request/router.ts). */
export interface AdmissionSample {
  /** The rule applies: the agent is heavy and a lighter agent serves one of its capabilities. */
  applies: boolean;
  /** The sample pushes the other way: above the threshold while admitted, below the re-admit mark while out. */
  pushing: boolean;
  /** Consecutive pushing samples needed before the admission changes (hysteresis). */
  samples: number;
  /** The same for coming back in, when it differs (the quiet held longer than the spike). */
  readmitSamples?: number;
  /** Why, when the agent is taken out. */
  reason: string;
}

export class AgentRecord {
  #state: AgentState = "starting";
  #role: AgentRole = "stable";
  #lastError: string | null = null;
  #restarts = 0;
  #pid: number | null = null;
  #health: HealthInfo = { checked_at: null, ok: false, consecutive_failures: 0, report: null };
  #admission: { admitted: boolean; reason: string | null } = { admitted: true, reason: null };
  /** Consecutive CPU samples pushing the admission the other way (the resource rule's hysteresis). */
  #admissionStreak = 0;
  #inflight = 0;
  readonly circuit = new Circuit();
  manifestMismatch: string[] = [];
  /** False until the checked-in manifest was compared with what the agent printed (in the vetting run). */
  registered = true;
  /** Sandbox vetting outcome, when vetting ran. */
  vetting: Record<string, unknown> | null = null;

  constructor(
    readonly config: AgentConfig,
    readonly manifest: AgentManifest,
    readonly pool: AgentPool,
  ) {}

  get state(): AgentState {
    return this.#state;
  }

  get role(): AgentRole {
    return this.#role;
  }

  get lastError(): string | null {
    return this.#lastError;
  }

  get restarts(): number {
    return this.#restarts;
  }

  get pid(): number | null {
    return this.#pid;
  }

  get health(): Readonly<HealthInfo> {
    return this.#health;
  }

  get admission(): Readonly<{ admitted: boolean; reason: string | null }> {
    return this.#admission;
  }

  /** Requests forwarded to this agent and not yet answered. */
  get inflight(): number {
    return this.#inflight;
  }

  // ---- lifecycle (the supervisor's events, vetting, registry) ----

  /** Its role in the canary split; a retained agent takes no traffic. */
  assignRole(role: AgentRole): void {
    this.#role = role;
  }

  /** Vetting refused it: it never runs. */
  markRejected(reason: string): void {
    this.#state = "rejected";
    this.#lastError = reason;
  }

  /** A process was spawned (a restart stays "restarting" until it is ready). */
  markStarting(pid: number | null): void {
    this.#pid = pid;
    if (this.#state !== "restarting") this.#state = "starting";
  }

  /** The process answers its health check: in rotation, with a closed circuit. */
  markReady(pid?: number): void {
    if (pid !== undefined) this.#pid = pid;
    this.#state = "healthy";
    this.circuit.close();
  }

  /** The process went away; the supervisor restarts it. */
  markExited(error: string | null): void {
    this.#lastError = error;
    this.#state = "restarting";
    this.#pid = null;
  }

  /** A restart begins; returns how many there have been. */
  countRestart(): number {
    return ++this.#restarts;
  }

  /** Given up on (crash loop, start failure): out of rotation until an operator acts. */
  markFailed(error: string | null): void {
    this.#state = "failed";
    this.#lastError = error;
  }

  /** Stopped on purpose (shutdown, canary removal). */
  markStopped(): void {
    this.#state = "stopped";
    this.#pid = null;
  }

  /** An error worth showing that does not change the state (e.g. a start that failed before any event). */
  noteError(error: string): void {
    this.#lastError = error;
  }

  // ---- health ----

  /**
   * Fold a periodic probe into the record; returns true when the state changed. A passing probe closes
   * the circuit and brings a starting or unhealthy agent into rotation; `unhealthyAfter` failures in a
   * row take a healthy one out.
   */
  recordProbe(result: ProbeResult, unhealthyAfter: number): boolean {
    const before = this.#state;
    this.#health = {
      checked_at: new Date().toISOString(),
      ok: result.ok,
      consecutive_failures: result.ok ? 0 : this.#health.consecutive_failures + 1,
      report: result.report ?? this.#health.report,
    };
    if (result.ok) {
      if (this.circuit.open) this.circuit.close();
      if (this.#state === "unhealthy" || this.#state === "starting") this.#state = "healthy";
    } else {
      this.#lastError = result.error;
      if (this.#state === "healthy" && this.#health.consecutive_failures >= unhealthyAfter) this.#state = "unhealthy";
    }
    return before !== this.#state;
  }

  /** The supervisor's readiness probe of a fresh process: its report is kept; the state follows markReady. */
  recordReadiness(result: ProbeResult): boolean {
    this.#health = {
      checked_at: new Date().toISOString(),
      ok: result.ok,
      consecutive_failures: result.ok ? 0 : 1,
      report: result.report,
    };
    return result.ok;
  }

  /** Registered under systemd without a passing first probe: known, not in rotation. */
  markUnreachable(): void {
    if (this.#state === "starting") this.#state = "unhealthy";
  }

  // ---- requests ----

  /** A request the agent failed (its fault, not the client's); true when this one opened the circuit. */
  recordFailure(circuitFailures: number): boolean {
    return this.circuit.recordFailure(circuitFailures);
  }

  /** An answer from the agent. */
  recordSuccess(): void {
    this.circuit.recordSuccess();
  }

  beginRequest(): void {
    this.#inflight++;
  }

  endRequest(): void {
    this.#inflight--;
  }

  // ---- the resource rule ----

  /** One CPU sample for the resource rule (with hysteresis); returns true when the admission changed. */
  admit(sample: AdmissionSample): boolean {
    if (!sample.applies) {
      this.#admissionStreak = 0;
      if (this.#admission.admitted) return false;
      this.#admission = { admitted: true, reason: null };
      return true;
    }
    this.#admissionStreak = sample.pushing ? this.#admissionStreak + 1 : 0;
    const needed = this.#admission.admitted ? sample.samples : (sample.readmitSamples ?? sample.samples);
    if (this.#admissionStreak < needed) return false;
    this.#admissionStreak = 0;
    this.#admission = this.#admission.admitted
      ? { admitted: false, reason: sample.reason }
      : { admitted: true, reason: null };
    return true;
  }

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
      circuit: this.circuit.toJSON(),
      admission: this.admission,
      health: this.health,
      ...(this.manifestMismatch.length > 0 ? { manifest_mismatch: this.manifestMismatch } : {}),
      ...(this.vetting ? { vetting: this.vetting } : {}),
    };
  }
}
