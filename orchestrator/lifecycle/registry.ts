/**
 * The agent registry: the records the router chooses from, how a configured or declared version
 * becomes a record (with its pool), and how records are added (vetted, started) and removed (stopped).
 */
import { join } from "node:path";
import { AipError } from "../../protocol/contract/errors.js";
import type { Logger } from "../../protocol/util/log.js";
import type { AgentManifest } from "../../protocol/contract/schemas.js";
import { AgentRecord, type AgentRole } from "../core/agent.js";
import type { Deployment } from "./canary/state.js";
import type { AgencyConfig, AgentConfig } from "../core/config.js";
import { AgentPool } from "../pool/agent-pool.js";
import { AgentCosts } from "../pool/cost.js";
import type { SizingStrategy } from "../pool/sizing.js";
import { ndjsonTransport, type TransportFactory } from "../pool/transport.js";
import type { AgentProcesses } from "./processes.js";
import { checkedInManifest } from "./registration.js";
import type { VetReport } from "./vet/report.js";
import type { AgentVetting } from "./vetting.js";

export interface RegistryDeps {
  config: AgencyConfig;
  vetting: AgentVetting;
  processes: AgentProcesses;
  agentLog: (name: string) => Logger;
  transport?: TransportFactory | undefined;
  sizing?: SizingStrategy | undefined;
}

export class AgentRegistry {
  readonly agents: AgentRecord[] = [];
  /** Every agent's calls compared: a CPU-heavy agent is paced while the others are served (pool/cost.ts). */
  private readonly costs = new AgentCosts();

  constructor(private readonly deps: RegistryDeps) {}

  private get config(): AgencyConfig {
    return this.deps.config;
  }

  /**
   * The record an enabled agent starts as: its configured version, or a promotion that survived a
   * restart, if the config still declares that version (the state file never carries a command).
   */
  initialRecord(a: AgentConfig, promotion: Deployment | null): AgentRecord {
    const promoted = promotion;
    const declared = promoted ? this.declared(a.name, promoted.version) : undefined;
    if (!promoted || !declared) {
      if (promoted)
        this.deps
          .agentLog(a.name)
          .warn(
            { event: "promotion_dropped", version: promoted.version },
            `promoted version ${promoted.version} is no longer declared in the config; running the config's version`,
          );
      const record = this.newRecord(a, checkedInManifest(a), "stable");
      record.registered = false; // vetting compares the checked-in manifest with the printed one
      return record;
    }
    // In embedded mode the stable version always listens on the config's socket: state on disk
    // (a stale canary.json) never moves it. Under systemd the promoted instance is the versioned unit.
    const socket = this.config.mode === "embedded" ? a.socket : declared.socket;
    return this.newRecord({ ...declared, socket }, promoted.manifest, "stable");
  }

  private newRecord(config: AgentConfig, manifest: AgentManifest, role: AgentRole): AgentRecord {
    const pool = new AgentPool({
      label: `${manifest.name}@${manifest.version}`,
      socketPath: config.socket,
      maxConcurrent: manifest.max_concurrent,
      maxQueue: this.config.limits.max_queue,
      costs: this.costs,
      transport: this.deps.transport ?? ndjsonTransport,
      ...(this.deps.sizing ? { sizing: this.deps.sizing } : {}),
    });
    const record = new AgentRecord(config, manifest, pool);
    record.assignRole(role);
    return record;
  }

  /** Add and start another agent process at runtime (a canary, a retained version), vetted first. */
  async add(config: AgentConfig, manifest: AgentManifest, role: AgentRole, report?: VetReport): Promise<AgentRecord> {
    const record = this.newRecord(config, manifest, role);
    await this.deps.vetting.vet(record, report);
    this.agents.push(record);
    if (record.state !== "rejected") await this.deps.processes.bringUp(record);
    return record;
  }

  /** Take an agent out of the registry and stop its process (embedded). */
  async remove(record: AgentRecord): Promise<void> {
    const i = this.agents.indexOf(record);
    if (i !== -1) this.agents.splice(i, 1);
    await this.deps.processes.stop(record);
    record.markStopped();
    record.pool.failQueued(new AipError("AIP_ERR_UNAVAILABLE", `Agent ${record.name}@${record.version} was stopped`));
    await record.pool.close();
    this.costs.remove(record.pool.cost);
  }

  /**
   * The config of `name` at `version`, when the config declares it: the agent's own command (its
   * checked-in manifest's version) or one of its `versions`. Anything else cannot run.
   */
  declared(name: string, version: string): AgentConfig | undefined {
    const base = this.config.agents.find((a) => a.name === name);
    if (!base) return undefined;
    const v = base.versions[version];
    if (v)
      return {
        ...base,
        command: v.command,
        env: v.env,
        socket: join(this.config.agentSocketDir, `${name}-${version}.sock`),
      };
    try {
      return checkedInManifest(base).version === version ? base : undefined;
    } catch {
      return undefined;
    }
  }
}
