/**
 * The health monitor: the periodic probe of every running agent, the fast re-probe of an agent that is
 * unhealthy or whose circuit is open, the forced check (SIGUSR1, admin route) that kills what does not
 * answer, and the CPU samples that drive the resource rule's admission.
 */
import type { Logger } from "../../protocol/util/log.js";
import type { AgentRecord } from "../core/agent.js";
import type { AgencyConfig } from "../core/config.js";
import { probe } from "../core/health.js";
import type { LoadSampler } from "../core/load.js";
import type { Metrics } from "../request/metrics.js";
import type { AgentProcesses } from "./processes.js";
import { processStats } from "../core/procstat.js";
import { applyResourceRule, rotationLogLevel } from "../request/router.js";

export interface HealthMonitorDeps {
  config: AgencyConfig;
  agents: readonly AgentRecord[];
  processes: AgentProcesses;
  load: LoadSampler;
  metrics: Metrics;
  agentLog: (name: string) => Logger;
}

/**
 * A probe that fails while the agent's process used at least this share of a core since the previous probe
 * meets a busy agent (a long synchronous step, such as testgen type-checking a large workspace), not a
 * stuck one: a stopped or deadlocked process uses no CPU. So does one found running or waiting for a core
 * (state "R"): on a starved host a runnable process may get less than this share, and is not stuck.
 */
export const BUSY_CPU_SHARE = 0.05;

/**
 * An agent's CPU time at its last periodic probe, and since when it has failed probes while busy: the
 * start of the first probe it left unanswered while using CPU.
 */
interface CpuMark {
  pid: number;
  seconds: number;
  at: number;
  busySince: number | undefined;
}

export class HealthMonitor {
  private healthTimer: NodeJS.Timeout | undefined;
  private loadTimer: NodeJS.Timeout | undefined;
  private checking: Promise<unknown> | undefined;
  private readonly reprobing = new Set<AgentRecord>();
  private readonly cpu = new Map<AgentRecord, CpuMark>();
  private stopped = false;

  constructor(private readonly deps: HealthMonitorDeps) {}

  start(): void {
    this.deps.load.start();
    this.loadTimer = setInterval(() => this.applyLoad(), this.deps.config.limits.cpu_sample_ms).unref();
    this.applyLoad();
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.healthTimer);
    clearInterval(this.loadTimer);
    this.deps.load.stop();
    await this.checking?.catch(() => undefined);
  }

  /** Health-check every agent now; unresponsive agents are killed and restarted. */
  checkNow(): Promise<Record<string, unknown>[]> {
    const run = this.run(true);
    this.checking = run;
    return run;
  }

  /** The circuit of `agent` just opened: probe it until it answers again. */
  circuitOpened(agent: AgentRecord): void {
    this.reprobe(agent);
  }

  private applyLoad(): void {
    const load = this.deps.load.current();
    const l = this.deps.config.limits;
    for (const a of applyResourceRule(this.deps.agents, load, {
      threshold: l.cpu_threshold,
      readmitBelow: Math.min(l.cpu_readmit_below, l.cpu_threshold),
      samples: l.cpu_samples,
      readmitSamples: l.cpu_readmit_samples,
    })) {
      this.deps.metrics.event("admission_changed", a.name);
      this.deps.agentLog(a.name)[rotationLogLevel(a, this.deps.agents)](
        {
          event: a.admission.admitted ? "admitted" : "out_of_rotation",
          cpu_load: Math.round(load * 100) / 100,
          reason: a.admission.reason,
        },
        a.admission.admitted ? "back in rotation" : `out of rotation: ${a.admission.reason}`,
      );
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.healthTimer = setTimeout(() => {
      void this.run(false).finally(() => this.schedule());
    }, this.deps.config.limits.health_interval_ms);
    this.healthTimer.unref();
  }

  /**
   * Probe every running agent. With `enforce` (a forced check), an agent that does not answer in time is
   * killed and restarted, and a failed (crash-looping) one is started again.
   */
  private async run(enforce: boolean): Promise<Record<string, unknown>[]> {
    const l = this.deps.config.limits;
    const failed = enforce ? this.deps.agents.filter((a) => a.state === "failed") : [];
    const revived = await Promise.all(
      failed.map(async (a) => {
        const start = this.deps.processes.revive(a);
        if (start === undefined) return undefined;
        await start;
        const ok = a.state === "healthy";
        return {
          agent: a.name,
          version: a.version,
          ok,
          state: a.state,
          action: "revived",
          error: ok ? null : a.lastError,
        };
      }),
    );
    const probed = this.deps.agents.filter(
      (a) => (a.state === "healthy" || a.state === "unhealthy") && !failed.includes(a),
    );
    for (const a of this.cpu.keys()) if (!probed.includes(a)) this.cpu.delete(a);
    const checked = await Promise.all(
      probed.map(async (a) => {
        const started = Date.now();
        const result = await probe(a.socketPath, l.health_timeout_ms);
        // Waited out its timeout (not refused): the process may be busy rather than stuck.
        const unanswered = !result.ok && Date.now() - started >= l.health_timeout_ms;
        const changed = a.recordProbe(result, enforce ? 1 : l.unhealthy_after);
        const log = this.deps.agentLog(a.name);
        if (changed) log.warn({ event: "health_changed", state: a.state, err: result.error }, `health: ${a.state}`);
        if (a.state === "unhealthy") this.reprobe(a);
        let action = "none";
        const busy = this.busy(a, unanswered, started);
        const stuck =
          l.restart_unhealthy_after > 0 && a.health.consecutive_failures >= l.restart_unhealthy_after && !busy;
        if (busy && a.health.consecutive_failures === l.restart_unhealthy_after) {
          log.warn(
            { event: "agent_busy", reason: result.error, spared_ms: a.manifest.timeouts_ms.default },
            `${a.health.consecutive_failures} failed probes in a row while using CPU: busy, not stuck; ` +
              `not restarted for up to ${a.manifest.timeouts_ms.default} ms (its manifest's default timeout)`,
          );
        }
        if ((enforce || stuck) && !result.ok) {
          const why = enforce
            ? `no answer to the health check within ${l.health_timeout_ms} ms`
            : `${a.health.consecutive_failures} failed probes in a row`;
          if (this.deps.processes.kill(a)) {
            action = "killed";
            this.deps.metrics.event("agent_killed", a.name);
            log.error({ event: "agent_killed", reason: result.error }, `${why}: killing for restart`);
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
    return [...revived.filter((r) => r !== undefined), ...checked];
  }

  /**
   * Whether a probe left unanswered met a busy agent: its process used at least `BUSY_CPU_SHARE` of a
   * core since the previous probe, and has not been unresponsive for longer than its manifest's default
   * timeout (no request of its own should hold it longer; past that it is a runaway, and restarted).
   *
   * The spared time counts from the start of the first probe it left unanswered, plus one probe timeout:
   * the request that keeps it busy reached it no earlier than that probe's window, so that request's own
   * deadline (at most the default timeout) has passed, and its caller got `AIP_ERR_TIMEOUT`, before a
   * restart can cut it off with `AIP_ERR_AGENT_CRASHED`.
   */
  private busy(a: AgentRecord, unanswered: boolean, probeStarted: number): boolean {
    const pid = a.pid;
    const stats = pid === null ? null : processStats(pid);
    const seconds = stats?.cpuSeconds;
    const now = Date.now();
    const prev = this.cpu.get(a);
    if (pid === null || seconds === undefined) {
      this.cpu.delete(a);
      return false;
    }
    const using =
      unanswered &&
      prev !== undefined &&
      prev.pid === pid &&
      ((seconds - prev.seconds) * 1000 >= BUSY_CPU_SHARE * (now - prev.at) || stats?.state === "R");
    const busySince = using ? (prev.busySince ?? probeStarted) : undefined;
    this.cpu.set(a, { pid, seconds, at: now, busySince });
    const spared = a.manifest.timeouts_ms.default + this.deps.config.limits.health_timeout_ms;
    return busySince !== undefined && now - busySince <= spared;
  }

  /**
   * While an agent is unhealthy or its circuit is open, probe it every `reprobe_ms` instead of waiting
   * for the periodic check (a stuck agent always has a probe waiting on it): a restarted, resumed
   * (SIGCONT) or recovered agent is back in rotation at once.
   */
  private reprobe(agent: AgentRecord): void {
    if (this.reprobing.has(agent) || this.stopped) return;
    this.reprobing.add(agent);
    const l = this.deps.config.limits;
    const step = (): void => {
      const needed =
        this.deps.agents.includes(agent) &&
        (agent.state === "unhealthy" || (agent.state === "healthy" && agent.circuit.open));
      if (!needed || this.stopped) {
        this.reprobing.delete(agent);
        return;
      }
      const started = Date.now();
      void probe(agent.socketPath, l.health_timeout_ms).then((result) => {
        if (result.ok && agent.recordProbe(result, l.unhealthy_after)) {
          this.deps
            .agentLog(agent.name)
            .info({ event: "health_changed", state: agent.state, reprobe: true }, `health: ${agent.state}`);
        }
        // A probe that waited out its timeout met a stuck (e.g. stopped) agent: the next one goes at once,
        // so that one is always waiting when it resumes; a quick failure waits reprobe_ms.
        const timedOut = Date.now() - started >= l.health_timeout_ms;
        setTimeout(step, timedOut ? 0 : l.reprobe_ms).unref();
      });
    };
    setTimeout(step, l.reprobe_ms).unref();
  }
}
