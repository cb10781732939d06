/** The composition root: registry, pools, supervisor, health, router, front door, metrics. */
import { AipError } from "../protocol/errors.js";
import { RateLimit, createLogger, openDestination, type Logger } from "../protocol/log.js";
import type { DestinationStream } from "pino";
import type { AgentManifest, AipRequest, AipResponse } from "../protocol/schemas.js";
import { AgentRecord, type AgentRole } from "./agent.js";
import type { AgencyConfig, AgentConfig } from "./config.js";
import { forward, type RequestOutcome } from "./forward.js";
import { applyProbe, probe } from "./health.js";
import { CpuLoadSampler, type LoadSampler } from "./load.js";
import { nodeOptionsFor } from "./memory.js";
import { Metrics } from "./metrics.js";
import { AgentPool } from "./pool/agent-pool.js";
import type { SizingStrategy } from "./pool/sizing.js";
import { undiciTransport, type TransportFactory } from "./pool/transport.js";
import { checkedInManifest, printedManifest, registration } from "./registration.js";
import { agentEnvironment } from "./agent-env.js";
import { parseManifest } from "../protocol/manifest.js";
import { homedir } from "node:os";
import type { VetReport } from "./vet/report.js";
import { applyResourceRule, candidates, choose } from "./router.js";
import { Supervisor, adoptedChild, execaSpawner, type ChildHandle, type Spawner } from "./supervisor.js";
import { Supersession, scopeToConnection } from "./supersede.js";
import { lockSocketDir } from "./lock.js";
import { VetCache, admission, loadPolicy, vetAgent, vettingSummary, type VetPolicy } from "./vet/index.js";
import { CanaryController } from "./canary/controller.js";
import { basename, dirname, join } from "node:path";

/** Request lines for client errors (4xx but cancellations) logged per second at most; the others are counted in `suppressed`. */
const CLIENT_ERROR_LOG_PER_S = 50;

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

/** An agent process handed over by a reload: which one it is and where its output pipes arrive. */
export interface AdoptedAgent {
  name: string;
  version: string;
  socket: string;
  pid: number;
  stdout_fd: number;
  stderr_fd: number;
}

/** A running agent process a reload can hand to its successor. */
export interface Handoff {
  name: string;
  version: string;
  socket: string;
  child: ChildHandle;
}

export class Orchestrator {
  readonly agents: AgentRecord[] = [];
  readonly metrics: Metrics;
  readonly log: Logger;
  readonly load: LoadSampler;
  private readonly supervisors = new Map<AgentRecord, Supervisor>();
  private readonly agentLogs = new Map<string, Logger>();
  private readonly logDestination: DestinationStream | false;
  private healthTimer: NodeJS.Timeout | undefined;
  private loadTimer: NodeJS.Timeout | undefined;
  private checking: Promise<unknown> | undefined;
  private readonly started = Date.now();
  private stopped = false;
  /** Every agent has been registered and brought up once (start() returned). */
  private startedUp = false;
  canary!: CanaryController;
  private readonly supersession = new Supersession();
  private readonly reprobing = new Set<AgentRecord>();
  private vetCache: VetCache | undefined;
  private vetPolicy: VetPolicy | undefined;
  private unlock: (() => void) | undefined;
  private readonly clientErrorLog = new RateLimit(CLIENT_ERROR_LOG_PER_S);

  constructor(
    readonly config: AgencyConfig,
    private readonly deps: OrchestratorDeps = {},
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
        addRecord: (c, m, r) => this.addRecord(c, m, r),
        removeRecord: (r) => this.removeRecord(r),
        prepare: (config) => this.prepare(config),
        declared: (name, version) => this.declared(name, version),
        agentLog: (name) => this.agentLog(name),
        onDecision: (agent, action) => this.metrics.decision(agent, action),
      },
      { ...this.config.canary },
      this.config.stateDir,
      this.log,
    );
    const enabled = this.config.agents.filter((a) => a.enabled);
    const records = await Promise.all(
      enabled.map(async (a) => {
        // A promotion that survived a restart replaces the config's version of this agent, if the
        // config still declares that version (the state file never carries a command).
        const promoted = this.canary.stableOverride(a.name);
        const declared = promoted ? this.declared(a.name, promoted.version) : undefined;
        if (!promoted || !declared) {
          if (promoted)
            this.agentLog(a.name).warn(
              { event: "promotion_dropped", version: promoted.version },
              `promoted version ${promoted.version} is no longer declared in the config; running the config's version`,
            );
          return this.registerAgent(a);
        }
        // In embedded mode the stable version always listens on the config's socket: state on disk
        // (a stale canary.json) never moves it. Under systemd the promoted instance is the versioned unit.
        const socket = this.config.mode === "embedded" ? a.socket : declared.socket;
        return this.newRecord({ ...declared, socket }, promoted.manifest, "stable");
      }),
    );
    await Promise.all(records.map((r) => this.vet(r)));
    this.agents.push(...records);
    await Promise.all(records.filter((r) => r.state !== "rejected").map((r) => this.bringUp(r)));
    await this.canary.restore();
    this.load.start();
    this.loadTimer = setInterval(() => this.applyLoad(), this.config.limits.cpu_sample_ms).unref();
    this.applyLoad();
    this.scheduleHealth();
    this.startedUp = true;
  }

  private newRecord(config: AgentConfig, manifest: AgentManifest, role: AgentRole): AgentRecord {
    const pool = new AgentPool({
      label: `${manifest.name}@${manifest.version}`,
      socketPath: config.socket,
      maxConcurrent: manifest.max_concurrent,
      maxQueue: this.config.limits.max_queue,
      transport: this.deps.transport ?? undiciTransport,
      ...(this.deps.sizing ? { sizing: this.deps.sizing } : {}),
    });
    const record = new AgentRecord(config, manifest, pool);
    record.role = role;
    return record;
  }

  /** Add and start another agent process at runtime (a canary, a retained version), vetted first. */
  async addRecord(
    config: AgentConfig,
    manifest: AgentManifest,
    role: AgentRole,
    report?: VetReport,
  ): Promise<AgentRecord> {
    const record = this.newRecord(config, manifest, role);
    await this.vet(record, report);
    this.agents.push(record);
    if (record.state !== "rejected") await this.bringUp(record);
    return record;
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

  /**
   * The whole environment an agent process gets, in vetting and in the real run alike, with the heap
   * limit from the manifest's memory (README, Supervisor; orchestrator/memory.ts). `memory` defaults
   * to the agent's checked-in manifest (a canary is vetted before its own manifest is known).
   */
  private agentEnv(config: AgentConfig, memory?: string): Record<string, string> {
    const env = agentEnvironment({ env: config.env, workspaceRoots: this.config.workspaceRoots });
    let mem = memory;
    if (mem === undefined) {
      try {
        mem = checkedInManifest(config).resources.memory;
      } catch {
        // no readable manifest: no heap flags (vetting reports the manifest problem)
      }
    }
    if (mem !== undefined) env.NODE_OPTIONS = nodeOptionsFor(mem, config.env.NODE_OPTIONS);
    return env;
  }

  /** Where the sandbox puts a candidate: the real run's HOME, TMPDIR and cwd; the sockets hidden. */
  private sandboxLayout(env: Record<string, string>): { home: string; tmpdir: string; cwd: string; hide: string[] } {
    const hide = [
      this.config.agentSocketDir,
      dirname(this.config.socket),
      ...(this.config.adminSocket ? [dirname(this.config.adminSocket)] : []),
    ];
    return { home: env.HOME ?? homedir(), tmpdir: env.TMPDIR ?? "/tmp", cwd: process.cwd(), hide };
  }

  /** Vet a config's command (sandboxed); undefined when vetting is off. */
  private async vetReport(config: AgentConfig): Promise<VetReport | undefined> {
    const mode = this.config.vetting;
    if (mode === "off") return undefined;
    this.vetPolicy ??= loadPolicy(this.config.vetPolicy);
    if (!this.vetCache) {
      this.vetCache = new VetCache(join(this.config.stateDir, "vet-cache.json"));
      for (const r of this.vetCache.rejected) {
        this.log.warn(
          { event: "vet_cache_entry_rejected", executable: r.path, reason: r.reason },
          `vetting cache entry for ${r.path} dropped (${r.reason}); it will be vetted again`,
        );
      }
    }
    const [exe, ...args] = config.command;
    const env = this.agentEnv(config);
    const { hide, cwd } = this.sandboxLayout(env);
    return vetAgent(exe!, {
      policy: this.vetPolicy,
      cache: this.vetCache,
      args,
      env,
      configEnv: config.env,
      layout: { cwd, hide },
    });
  }

  /** What the agent printed for `--manifest`: from the vetting run, or (vetting off) from a sandboxed run. */
  private async printed(config: AgentConfig, report: VetReport | undefined): Promise<unknown> {
    if (report)
      return (
        report.manifest ??
        new Error(
          `--manifest gave no valid manifest in the vetting run${report.reasons.length > 0 ? `: ${report.reasons.slice(0, 3).join("; ")}` : ""}`,
        )
      );
    const env = this.agentEnv(config);
    return printedManifest(config.command, env, {
      layout: this.sandboxLayout(env),
      configEnv: config.env,
      unsandboxed: true,
    }).catch((err: Error) => err);
  }

  /**
   * Sandbox vetting (config `vetting`): an agent that fails under `required` is registered as
   * `rejected` with its reasons and never started; under `warn` it runs and the failure is shown.
   * Nothing of the agent runs outside the sandbox before this: `--manifest` is one of the vetting runs.
   */
  private async vet(record: AgentRecord, known?: VetReport): Promise<void> {
    const mode = this.config.vetting;
    const report = known ?? (await this.vetReport(record.config));
    if (!record.registered) {
      record.registered = true;
      const { mismatch } = registration(record.manifest, await this.printed(record.config, report));
      record.manifestMismatch = mismatch;
      if (mismatch.length > 0) {
        this.agentLog(record.name).warn(
          { event: "manifest_mismatch", differences: mismatch },
          `checked-in manifest and --manifest differ: ${mismatch.join("; ")}`,
        );
      }
    }
    if (!report) return;
    const verdict = admission(report, mode);
    record.vetting = vettingSummary(report, mode);
    const log = this.agentLog(record.name);
    if (!verdict.admit) {
      record.state = "rejected";
      record.lastError = `vetting ${verdict.vetting}: ${verdict.reasons.join("; ")}`;
      log.error({ event: "agent_rejected", vetting: verdict.vetting, reasons: verdict.reasons }, record.lastError);
    } else if (verdict.vetting !== "passed") {
      log.warn(
        { event: "vetting_failed", vetting: verdict.vetting, reasons: verdict.reasons },
        `vetting ${verdict.vetting} (mode warn: registered anyway): ${verdict.reasons.join("; ")}`,
      );
    } else {
      log.info(
        {
          event: "vetting_passed",
          sha256: report.sha256,
          cached: report.cached === true,
          ms: Math.round(report.durationMs),
        },
        "vetting passed",
      );
    }
  }

  /**
   * Before a canary starts: vet its declared command in the sandbox and read its manifest from that run.
   * A candidate that vetting rejects never runs outside the sandbox.
   */
  async prepare(config: AgentConfig): Promise<{ manifest: AgentManifest; report: VetReport | undefined }> {
    const report = await this.vetReport(config);
    if (report) {
      const verdict = admission(report, this.config.vetting);
      if (!verdict.admit) {
        throw new AipError(
          "AIP_ERR_FORBIDDEN",
          `${config.name}: vetting ${verdict.vetting}: ${verdict.reasons.slice(0, 5).join("; ")}`,
          { extensions: { vetting: vettingSummary(report, this.config.vetting) } },
        );
      }
    }
    const printed = await this.printed(config, report);
    if (printed instanceof Error)
      throw new AipError("AIP_ERR_INVALID_FIELD", `Cannot start ${config.name}: ${printed.message}`);
    try {
      return { manifest: parseManifest(printed, `${config.command.join(" ")} --manifest`), report };
    } catch (err) {
      throw new AipError("AIP_ERR_INVALID_FIELD", `Cannot start ${config.name}: ${(err as Error).message}`);
    }
  }

  /** Take an agent out of the registry and stop its process (embedded). */
  async removeRecord(record: AgentRecord): Promise<void> {
    const i = this.agents.indexOf(record);
    if (i !== -1) this.agents.splice(i, 1);
    const sup = this.supervisors.get(record);
    this.supervisors.delete(record);
    await sup?.stop();
    record.state = "stopped";
    record.pool.failQueued(new AipError("AIP_ERR_UNAVAILABLE", `Agent ${record.name}@${record.version} was stopped`));
    await record.pool.close();
  }

  /** A configured agent with its checked-in manifest; vet() compares it with the printed one. */
  private registerAgent(config: AgentConfig): AgentRecord {
    const record = this.newRecord(config, checkedInManifest(config), "stable");
    record.registered = false;
    return record;
  }

  private async bringUp(record: AgentRecord): Promise<void> {
    const log = this.agentLog(record.name);
    if (this.config.mode === "systemd") {
      applyProbe(record, await probe(record.socketPath, this.config.limits.health_timeout_ms), 1);
      if (record.state === "starting") record.state = "unhealthy";
      log.info(
        { event: "registered", state: record.state, socket: record.socketPath },
        `systemd agent ${record.state}`,
      );
      return;
    }
    const l = this.config.limits;
    const supervisor = new Supervisor({
      name: record.name,
      command: record.config.command,
      socketPath: record.socketPath,
      env: this.agentEnv(record.config, record.manifest.resources.memory),
      log,
      spawner: this.deps.spawner ?? execaSpawner,
      startTimeoutMs: l.start_timeout_ms,
      restartInitialMs: l.restart_initial_ms,
      restartMaxMs: l.restart_max_ms,
      crashLoopRestarts: l.crash_loop_restarts,
      crashLoopWindowMs: l.crash_loop_window_ms,
      shutdownGraceMs: l.shutdown_grace_ms,
      ready: async (socket) => {
        const result = await probe(socket, l.health_timeout_ms);
        return socket === record.socketPath ? applyProbeResult(record, result) : result.ok;
      },
      ...((l.warm_standby === "all" || (l.warm_standby === "light" && !record.heavy)) && record.role !== "retained"
        ? { standbySocketPath: standbyPath(record.socketPath) }
        : {}),
      onState: (state, info) => this.onSupervisorState(record, state, info),
    });
    this.supervisors.set(record, supervisor);
    const adopted = this.deps.adopt?.find(
      (x) => x.name === record.name && x.version === record.version && x.socket === record.socketPath,
    );
    try {
      if (adopted) {
        log.info({ event: "agent_adopted", pid: adopted.pid }, "agent handed over by the previous orchestrator");
        await supervisor.adopt(adoptedChild(adopted.pid, adopted.stdout_fd, adopted.stderr_fd));
      } else await supervisor.start();
    } catch (err) {
      record.lastError = (err as Error).message;
      log.error({ event: "start_failed", err: (err as Error).message }, (err as Error).message);
    }
  }

  private onSupervisorState(
    record: AgentRecord,
    state: string,
    info: { pid?: number | undefined; error?: string },
  ): void {
    const log = this.agentLog(record.name);
    switch (state) {
      case "starting":
        record.pid = info.pid ?? null;
        if (record.state !== "restarting") record.state = "starting";
        log.info({ event: "agent_starting", pid: info.pid }, "starting agent");
        break;
      case "ready":
        if (info.pid !== undefined) record.pid = info.pid;
        record.state = "healthy";
        record.circuit = { open: false, failures: 0, opened_at: null };
        log.info({ event: "agent_ready", pid: info.pid }, "agent ready");
        break;
      case "exited":
        record.lastError = info.error ?? null;
        record.state = "restarting";
        record.pid = null;
        log.warn({ event: "agent_exited", err: info.error }, `agent ${info.error ?? "exited"}`);
        break;
      case "restarting":
        record.restarts++;
        this.metrics.restart(record.name);
        log.info({ event: "agent_restarting", restarts: record.restarts }, info.error ?? "restarting");
        break;
      case "failed":
        record.state = "failed";
        record.lastError = info.error ?? null;
        record.pool.failQueued(new AipError("AIP_ERR_UNAVAILABLE", `Agent ${record.name} failed: ${info.error ?? ""}`));
        log.error({ event: "agent_failed", err: info.error }, info.error ?? "agent failed");
        break;
      case "stopped":
        record.state = "stopped";
        record.pid = null;
        break;
    }
  }

  private applyLoad(): void {
    const load = this.load.current();
    const l = this.config.limits;
    for (const a of applyResourceRule(this.agents, load, {
      threshold: l.cpu_threshold,
      readmitBelow: Math.min(l.cpu_readmit_below, l.cpu_threshold),
      samples: l.cpu_samples,
    })) {
      this.metrics.event("admission_changed", a.name);
      this.agentLog(a.name).warn(
        {
          event: a.admission.admitted ? "admitted" : "out_of_rotation",
          cpu_load: Math.round(load * 100) / 100,
          reason: a.admission.reason,
        },
        a.admission.admitted ? "back in rotation" : `out of rotation: ${a.admission.reason}`,
      );
    }
  }

  private scheduleHealth(): void {
    if (this.stopped) return;
    this.healthTimer = setTimeout(() => {
      void this.runHealth(false).finally(() => this.scheduleHealth());
    }, this.config.limits.health_interval_ms);
    this.healthTimer.unref();
  }

  /** Probe every running agent. With `enforce`, an agent that does not answer in time is killed and restarted. */
  private async runHealth(enforce: boolean): Promise<Record<string, unknown>[]> {
    const l = this.config.limits;
    const probed = this.agents.filter((a) => ["healthy", "unhealthy"].includes(a.state));
    return Promise.all(
      probed.map(async (a) => {
        const result = await probe(a.socketPath, l.health_timeout_ms);
        const changed = applyProbe(a, result, enforce ? 1 : l.unhealthy_after);
        const log = this.agentLog(a.name);
        if (changed) log.warn({ event: "health_changed", state: a.state, err: result.error }, `health: ${a.state}`);
        if (a.state === "unhealthy") this.reprobe(a);
        let action = "none";
        const stuck = l.restart_unhealthy_after > 0 && a.health.consecutive_failures >= l.restart_unhealthy_after;
        if ((enforce || stuck) && !result.ok) {
          const sup = this.supervisors.get(a);
          if (sup) {
            action = "killed";
            this.metrics.event("agent_killed", a.name);
            const why = enforce
              ? `no answer to the health check within ${l.health_timeout_ms} ms`
              : `${a.health.consecutive_failures} failed probes in a row`;
            log.error({ event: "agent_killed", reason: result.error }, `${why}: killing for restart`);
            sup.kill();
          } else {
            action = "reported";
            log.error(
              { event: "agent_unresponsive", reason: result.error },
              "no answer to the health check (systemd mode: restart it with systemctl)",
            );
          }
        }
        return { agent: a.name, version: a.version, ok: result.ok, state: a.state, action, error: result.error };
      }),
    );
  }

  /**
   * While an agent is unhealthy or its circuit is open, probe it every `reprobe_ms` instead of waiting
   * for the periodic check (a stuck agent always has a probe waiting on it): a restarted, resumed
   * (SIGCONT) or recovered agent is back in rotation at once.
   */
  private reprobe(agent: AgentRecord): void {
    if (this.reprobing.has(agent) || this.stopped) return;
    this.reprobing.add(agent);
    const l = this.config.limits;
    const step = (): void => {
      const needed =
        this.agents.includes(agent) &&
        (agent.state === "unhealthy" || (agent.state === "healthy" && agent.circuit.open));
      if (!needed || this.stopped) {
        this.reprobing.delete(agent);
        return;
      }
      const started = Date.now();
      void probe(agent.socketPath, l.health_timeout_ms).then((result) => {
        if (result.ok && applyProbe(agent, result, l.unhealthy_after)) {
          this.agentLog(agent.name).info(
            { event: "health_changed", state: agent.state, reprobe: true },
            `health: ${agent.state}`,
          );
        }
        // A probe that waited out its timeout met a stuck (e.g. stopped) agent: the next one goes at once,
        // so that one is always waiting when it resumes; a quick failure waits reprobe_ms.
        const timedOut = Date.now() - started >= l.health_timeout_ms;
        setTimeout(step, timedOut ? 0 : l.reprobe_ms).unref();
      });
    };
    setTimeout(step, l.reprobe_ms).unref();
  }

  /** Health-check every agent now (SIGUSR1, admin route); unresponsive agents are killed and restarted. */
  checkNow(): Promise<Record<string, unknown>[]> {
    const run = this.runHealth(true);
    this.checking = run;
    return run;
  }

  /** Answer one decoded request from a client; `connection` scopes latest-wins to that client. */
  handle(value: unknown, signal: AbortSignal, connection = 0): Promise<AipResponse> {
    return forward(scopeToConnection(value, connection), signal, {
      select: (request: AipRequest, traceId: string) =>
        choose(this.canary.split(candidates(request, this.agents), traceId)),
      onAgentFailure: (agent) => {
        agent.circuit.failures++;
        if (!agent.circuit.open && agent.circuit.failures >= this.config.limits.circuit_failures) {
          agent.circuit = { open: true, failures: agent.circuit.failures, opened_at: new Date().toISOString() };
          this.metrics.event("circuit_open", agent.name);
          this.agentLog(agent.name).error(
            { event: "circuit_open", failures: agent.circuit.failures },
            "circuit opened after consecutive failures",
          );
          this.reprobe(agent);
        }
      },
      onAgentSuccess: (agent) => {
        agent.circuit.failures = 0;
      },
      onOutcome: (o) => this.onOutcome(o),
      supersede: (request, traceId, controller) => this.supersession.claim(request, traceId, controller),
      connection,
    });
  }

  private onOutcome(o: RequestOutcome): void {
    this.metrics.request(o);
    if (o.agent && o.version) this.canary.observe(o.agent, o.version, o.timings_ms.total ?? 0, o.server_error);
    const fields = {
      event: "request",
      trace_id: o.trace_id,
      action: o.action,
      agent: o.agent,
      version: o.version,
      outcome: o.outcome,
      timings_ms: o.timings_ms,
    };
    if (o.server_error) this.log.warn(fields, `request failed: ${o.outcome}`);
    else if (o.outcome === "success" || o.outcome === "AIP_ERR_CANCELLED") this.log.info(fields, "request");
    else {
      // The client's own errors are logged at most CLIENT_ERROR_LOG_PER_S a second (README, Operating it);
      // the metrics count every one.
      const suppressed = this.clientErrorLog.take();
      if (suppressed !== undefined) this.log.info(suppressed > 0 ? { ...fields, suppressed } : fields, "request");
    }
  }

  /** The /healthz body. */
  healthz(): { httpStatus: number; body: Record<string, unknown> } {
    const agents: Record<string, Record<string, unknown>> = {};
    for (const a of this.agents.filter((x) => x.role === "stable")) agents[a.name] = a.snapshot();
    for (const a of this.agents.filter((x) => x.role !== "stable")) {
      const entry = (agents[a.name] ??= {});
      entry[a.role] = { ...a.snapshot(), ...(a.role === "canary" ? { percent: this.canary.percent(a.name) } : {}) };
    }
    const serving = this.agents.filter((a) => a.role !== "retained");
    const available = serving.filter((a) => a.available).length;
    const status = available === serving.length ? "ok" : available > 0 ? "degraded" : "down";
    return {
      httpStatus: available > 0 ? 200 : 503,
      body: {
        status,
        mode: this.config.mode,
        pid: process.pid,
        uptime_s: Math.round((Date.now() - this.started) / 1000),
        cpu_load: Math.round(this.load.current() * 1000) / 1000,
        cpu_threshold: this.config.limits.cpu_threshold,
        agents,
        canary: this.canary.status(),
      },
    };
  }

  /** GET /livez: the process is alive and its event loop answers (it does not look at the agents). */
  livez(): { httpStatus: number; body: Record<string, unknown> } {
    return {
      httpStatus: 200,
      body: { status: "alive", pid: process.pid, uptime_s: Math.round((Date.now() - this.started) / 1000) },
    };
  }

  /**
   * GET /readyz: 200 when every configured action has an available agent (healthy, circuit closed,
   * admitted), else 503 naming the actions that have none. Host CPU alone never makes it 503: the
   * resource rule only takes a heavy agent out when a lighter one serves the same action.
   */
  readyz(): { httpStatus: number; body: Record<string, unknown> } {
    const serving = this.agents.filter((a) => a.role !== "retained");
    const actions = [...new Set(serving.flatMap((a) => a.manifest.capabilities))].sort();
    const byAction: Record<string, string[]> = {};
    const missing: string[] = [];
    for (const action of actions) {
      byAction[action] = serving.filter((a) => a.serves(action) && a.available).map((a) => `${a.name}@${a.version}`);
      if (byAction[action].length === 0) missing.push(action);
    }
    const ready = this.startedUp && actions.length > 0 && missing.length === 0;
    return {
      httpStatus: ready ? 200 : 503,
      body: {
        status: ready ? "ready" : "not_ready",
        ...(this.startedUp ? {} : { reason: "agents are still starting" }),
        ...(missing.length > 0 ? { unavailable_actions: missing } : {}),
        actions: byAction,
      },
    };
  }

  /** The /v1/agents body: registered agents with their manifests. */
  agentList(): Record<string, unknown>[] {
    return this.agents.map((a) => ({ ...a.snapshot(), manifest: a.manifest, command: a.config.command }));
  }

  /** The running agent processes (embedded), for a reload to hand over; their output is paused meanwhile. */
  handoffs(): Handoff[] {
    const out: Handoff[] = [];
    for (const [record, sup] of this.supervisors) {
      const child = sup.current;
      if (!child || child.pid === undefined) continue;
      child.stdout.pause();
      child.stderr.pause();
      out.push({ name: record.name, version: record.version, socket: record.socketPath, child });
    }
    return out;
  }

  /** The successor did not start: read the agents' output again. */
  resumeHandoffs(handoffs: Handoff[]): void {
    for (const h of handoffs) {
      h.child.stdout.resume();
      h.child.stderr.resume();
    }
  }

  /** The successor supervises the agents now: let go of them (stop() then leaves them running). */
  releaseAgents(): void {
    for (const sup of this.supervisors.values()) sup.release();
    this.supervisors.clear();
  }

  /** Stop health checks, stop every agent (no orphans), close pools. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.healthTimer);
    clearInterval(this.loadTimer);
    this.load.stop();
    await this.checking?.catch(() => undefined);
    this.canary?.stop();
    await Promise.all([...this.supervisors.values()].map((s) => s.stop()));
    await Promise.all(this.agents.map((a) => a.pool.close()));
    this.unlock?.();
    this.unlock = undefined;
  }
}

/** The warm standby's socket: beside the agent's, a dot-name (short: socket paths are limited to 107 bytes). */
function standbyPath(socket: string): string {
  return join(dirname(socket), `.${basename(socket, ".sock")}.standby`);
}

function applyProbeResult(record: AgentRecord, result: Awaited<ReturnType<typeof probe>>): boolean {
  record.health = {
    checked_at: new Date().toISOString(),
    ok: result.ok,
    consecutive_failures: result.ok ? 0 : 1,
    report: result.report,
  };
  return result.ok;
}
