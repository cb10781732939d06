/**
 * The agent processes: in embedded mode one Supervisor per record (start, adopt from a reload, restart,
 * warm standby, stop), its events folded into the record; under systemd the units are found by probing.
 */
import { basename, dirname, join } from "node:path";
import { AipError } from "../../protocol/contract/errors.js";
import type { Logger } from "../../protocol/util/log.js";
import type { AgentRecord } from "../core/agent.js";
import type { AgencyConfig } from "../core/config.js";
import { probe } from "../core/health.js";
import type { Metrics } from "../request/metrics.js";
import { Supervisor, adoptedChild, execaSpawner, type ChildHandle, type Spawner } from "./supervisor.js";

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

export interface ProcessesDeps {
  config: AgencyConfig;
  metrics: Metrics;
  agentLog: (name: string) => Logger;
  agentEnv: (record: AgentRecord) => Record<string, string>;
  spawner?: Spawner | undefined;
  /** Agents a reloading predecessor hands over (embedded mode): adopted instead of started. */
  adopt?: AdoptedAgent[] | undefined;
}

export class AgentProcesses {
  private readonly supervisors = new Map<AgentRecord, Supervisor>();
  /** Until the agency's start is over, agents' warm standbys wait (`bringUpAll`). */
  private standbysHeld = true;

  constructor(private readonly deps: ProcessesDeps) {}

  /** Start (or adopt, or under systemd find) the record's process; failures are recorded, never thrown. */
  async bringUp(record: AgentRecord): Promise<void> {
    const { config } = this.deps;
    const log = this.deps.agentLog(record.name);
    const l = config.limits;
    if (config.mode === "systemd") {
      record.recordProbe(await probe(record.socketPath, l.health_timeout_ms), 1);
      record.markUnreachable();
      log.info(
        { event: "registered", state: record.state, socket: record.socketPath },
        `systemd agent ${record.state}`,
      );
      return;
    }
    const supervisor = new Supervisor({
      name: record.name,
      command: record.config.command,
      socketPath: record.socketPath,
      env: this.deps.agentEnv(record),
      log,
      spawner: this.deps.spawner ?? execaSpawner,
      startTimeoutMs: l.start_timeout_ms,
      restartInitialMs: l.restart_initial_ms,
      restartMaxMs: l.restart_max_ms,
      crashLoopRestarts: l.crash_loop_restarts,
      crashLoopWindowMs: l.crash_loop_window_ms,
      failedRetryMs: l.failed_retry_ms,
      failedRetryMaxMs: l.failed_retry_max_ms,
      shutdownGraceMs: l.shutdown_grace_ms,
      ready: async (socket) => {
        const result = await probe(socket, l.health_timeout_ms);
        if (socket === record.socketPath) record.recordReadiness(result);
        return result;
      },
      ...((l.warm_standby === "all" || (l.warm_standby === "light" && !record.heavy)) && record.role !== "retained"
        ? { standbySocketPath: standbyPath(record.socketPath), holdStandby: this.standbysHeld }
        : {}),
      onState: (state, info) => this.onState(record, state, info),
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
      record.noteError((err as Error).message);
      log.error({ event: "start_failed", err: (err as Error).message }, (err as Error).message);
    }
  }

  private onState(
    record: AgentRecord,
    state: string,
    info: { pid?: number | undefined; error?: string; retryInMs?: number },
  ): void {
    const log = this.deps.agentLog(record.name);
    switch (state) {
      case "starting":
        record.markStarting(info.pid ?? null);
        log.info({ event: "agent_starting", pid: info.pid }, "starting agent");
        break;
      case "ready":
        record.markReady(info.pid);
        log.info({ event: "agent_ready", pid: info.pid }, "agent ready");
        break;
      case "exited":
        record.markExited(info.error ?? null);
        log.warn({ event: "agent_exited", err: info.error }, `agent ${info.error ?? "exited"}`);
        break;
      case "restarting": {
        const restarts = record.countRestart();
        this.deps.metrics.restart(record.name);
        log.info({ event: "agent_restarting", restarts }, info.error ?? "restarting");
        break;
      }
      case "failed":
        record.markFailed(info.error ?? null);
        record.pool.failQueued(new AipError("AIP_ERR_UNAVAILABLE", `Agent ${record.name} failed: ${info.error ?? ""}`));
        log.error(
          { event: "agent_failed", err: info.error, retry_in_ms: info.retryInMs },
          info.error ?? "agent failed",
        );
        break;
      case "stopped":
        record.markStopped();
        break;
    }
  }

  /**
   * The agency's start: every agent at once, then their warm standbys, held until now, since a
   * standby would take CPU from the agents still starting for a restart that has not happened.
   */
  async bringUpAll(records: AgentRecord[]): Promise<void> {
    await Promise.all(records.map((r) => this.bringUp(r)));
    this.standbysHeld = false;
    for (const sup of this.supervisors.values()) sup.releaseStandby();
  }

  /** Kill the record's process for a restart; false when it has none here (systemd mode). */
  kill(record: AgentRecord): boolean {
    const sup = this.supervisors.get(record);
    sup?.kill();
    return sup !== undefined;
  }

  /** Start a failed (crash-looping) agent again now; undefined when it is not failed here. */
  revive(record: AgentRecord): Promise<void> | undefined {
    return this.supervisors.get(record)?.revive("check");
  }

  /** Stop the record's process (no restart) and forget it. */
  async stop(record: AgentRecord): Promise<void> {
    const sup = this.supervisors.get(record);
    this.supervisors.delete(record);
    await sup?.stop();
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.supervisors.values()].map((s) => s.stop()));
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

  /** The successor supervises the agents now: let go of them (stopAll() then leaves them running). */
  release(): void {
    for (const sup of this.supervisors.values()) sup.release();
    this.supervisors.clear();
  }
}

/** The warm standby's socket: beside the agent's, a dot-name (short: socket paths are limited to 107 bytes). */
function standbyPath(socket: string): string {
  return join(dirname(socket), `.${basename(socket, ".sock")}.standby`);
}
