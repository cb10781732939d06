/** The composition root: registry, vetting, processes, health, canary, forwarding, metrics, logs (docs/architecture.md). */
import type { DestinationStream } from "pino";
import { createLogger, openDestination, type Logger } from "../protocol/util/log.js";
import type { AipRequest, AipResponse } from "../protocol/contract/schemas.js";
import type { AgentRecord } from "./core/agent.js";
import { CanaryController } from "./lifecycle/canary/controller.js";
import type { AgencyConfig } from "./core/config.js";
import { forward, type ForwardDeps, type JsonSource } from "./request/forward.js";
import { RequestOutcomes } from "./request/outcomes.js";
import { HealthMonitor } from "./lifecycle/health-monitor.js";
import { CpuLoadSampler, type LoadSampler } from "./core/load.js";
import { lockSocketDir } from "./lifecycle/lock.js";
import { Metrics } from "./request/metrics.js";
import type { SizingStrategy } from "./pool/sizing.js";
import type { TransportFactory } from "./pool/transport.js";
import { AgentRegistry } from "./lifecycle/registry.js";
import { AgentProcesses, type AdoptedAgent } from "./lifecycle/processes.js";
import { candidates, choose } from "./request/router.js";
import { healthz, livez, readyz, type StatusView } from "./request/status.js";
import type { Spawner } from "./lifecycle/supervisor.js";
import { LatestWins } from "../protocol/transport/latest.js";
import { scopeToConnection } from "./request/supersede.js";
import { AgentVetting } from "./lifecycle/vetting.js";

export type { AdoptedAgent, Handoff } from "./lifecycle/processes.js";

export interface OrchestratorDeps {
  /** Where JSON Lines go: a path, a file descriptor (default 1, stdout), a stream, or false for none. */
  logDestination?: string | number | DestinationStream | false;
  spawner?: Spawner;
  transport?: TransportFactory;
  load?: LoadSampler;
  sizing?: SizingStrategy;
  /** Agents a reloading predecessor hands over (embedded mode): adopted instead of started. */
  adopt?: AdoptedAgent[];
}

export class Orchestrator {
  readonly agents: AgentRecord[];
  readonly metrics: Metrics;
  readonly log: Logger;
  readonly load: LoadSampler;
  canary!: CanaryController;
  private readonly agentLogs = new Map<string, Logger>();
  private readonly logDestination: DestinationStream | false;
  private readonly vetting: AgentVetting;
  /** The agent processes; a reload hands them over through it (tools/aip/up.ts). */
  readonly processes: AgentProcesses;
  private readonly registry: AgentRegistry;
  private readonly monitor: HealthMonitor;
  private readonly latest = new LatestWins();
  private readonly outcomes: RequestOutcomes;
  private readonly startedAt = Date.now();
  /** Every agent has been registered and brought up once (start() returned). */
  private startedUp = false;
  private unlock: (() => void) | undefined;

  constructor(
    readonly config: AgencyConfig,
    deps: OrchestratorDeps = {},
  ) {
    const dest = deps.logDestination ?? 1;
    this.logDestination = dest === false ? false : openDestination(dest);
    this.log = createLogger({ agentName: "orchestrator", destination: this.logDestination });
    this.load = deps.load ?? new CpuLoadSampler(config.limits.cpu_sample_ms);
    this.metrics = new Metrics({
      agents: () => this.agents,
      canaryPercent: (name) => this.canary?.percent(name) ?? 0,
      cpuLoad: () => this.load.current(),
    });
    const agentLog = (name: string): Logger => this.agentLog(name);
    this.vetting = new AgentVetting(config, this.log, agentLog);
    this.processes = new AgentProcesses({
      config,
      metrics: this.metrics,
      agentLog,
      agentEnv: (r) => this.vetting.agentEnv(r.config, r.manifest.resources.memory),
      spawner: deps.spawner,
      adopt: deps.adopt,
    });
    this.registry = new AgentRegistry({
      config,
      vetting: this.vetting,
      processes: this.processes,
      agentLog,
      transport: deps.transport,
      sizing: deps.sizing,
    });
    this.agents = this.registry.agents;
    this.outcomes = new RequestOutcomes(this.metrics, this.log, (agent, version, ms, failed) =>
      this.canary.observe(agent, version, ms, failed),
    );
    this.monitor = new HealthMonitor({
      config,
      agents: this.agents,
      processes: this.processes,
      load: this.load,
      metrics: this.metrics,
      agentLog,
    });
  }

  /** A logger whose lines carry the agent's name (for its drained output and its lifecycle events). */
  agentLog(name: string): Logger {
    let l = this.agentLogs.get(name);
    if (!l) {
      l = createLogger({ agentName: name, destination: this.logDestination });
      this.agentLogs.set(name, l);
    }
    return l;
  }

  /** Register every enabled agent, start them (embedded) or find them (systemd), start health checks. */
  async start(): Promise<void> {
    // Before anything else (vetting included): a second orchestrator on these sockets stops here.
    this.unlock = lockSocketDir(this.config.agentSocketDir);
    this.canary = new CanaryController(
      {
        agents: this.agents,
        addRecord: (c, m, r) => this.registry.add(c, m, r),
        removeRecord: (r) => this.registry.remove(r),
        prepare: (config) => this.vetting.prepare(config),
        declared: (name, version) => this.registry.declared(name, version),
        agentLog: (name) => this.agentLog(name),
        onDecision: (agent, action) => this.metrics.decision(agent, action),
      },
      { ...this.config.canary },
      this.config.stateDir,
      this.log,
    );
    const records = this.config.agents
      .filter((a) => a.enabled)
      .map((a) => this.registry.initialRecord(a, this.canary.stableOverride(a.name)));
    await Promise.all(records.map((r) => this.vetting.vet(r)));
    this.agents.push(...records);
    await this.processes.bringUpAll(records.filter((r) => r.state !== "rejected"));
    await this.canary.restore();
    this.monitor.start();
    this.startedUp = true;
  }

  /** What forwarding needs from the orchestrator, made once (not per request). */
  private readonly forwardDeps: ForwardDeps = {
    select: (request: AipRequest, traceId: string) =>
      choose(this.canary.split(candidates(request, this.agents), traceId)),
    onAgentFailure: (agent) => {
      if (!agent.recordFailure(this.config.limits.circuit_failures)) return;
      this.metrics.event("circuit_open", agent.name);
      this.agentLog(agent.name).error(
        { event: "circuit_open", failures: agent.circuit.failures },
        "circuit opened after consecutive failures",
      );
      this.monitor.circuitOpened(agent);
    },
    onAgentSuccess: (agent) => agent.recordSuccess(),
    onOutcome: (o) => this.outcomes.record(o),
    supersede: (request, traceId, cancel) => this.latest.supersede(request, traceId, cancel),
  };

  /** Answer one decoded request (`source`: its JSON, forwarded spliced); `connection` scopes latest-wins. */
  handle(value: unknown, signal: AbortSignal, connection = 0, source?: JsonSource): Promise<AipResponse> {
    return forward(scopeToConnection(value, connection), signal, this.forwardDeps, connection, source);
  }

  /** Health-check every agent now (SIGUSR1, admin route); unresponsive agents are killed and restarted. */
  checkNow(): Promise<Record<string, unknown>[]> {
    return this.monitor.checkNow();
  }

  healthz(): StatusView {
    return healthz({
      agents: this.agents,
      mode: this.config.mode,
      startedAt: this.startedAt,
      startedUp: this.startedUp,
      cpuLoad: this.load.current(),
      cpuThreshold: this.config.limits.cpu_threshold,
      canaryPercent: (name) => this.canary.percent(name),
      canaryStatus: () => this.canary.status(),
    });
  }

  livez(): StatusView {
    return livez(this.startedAt);
  }

  readyz(): StatusView {
    return readyz({ agents: this.agents, startedUp: this.startedUp });
  }

  /** Stop health checks, stop every agent (no orphans), close pools. */
  async stop(): Promise<void> {
    await this.monitor.stop();
    this.canary?.stop();
    await this.processes.stopAll();
    await Promise.all(this.agents.map((a) => a.pool.close()));
    this.unlock?.();
    this.unlock = undefined;
  }
}
