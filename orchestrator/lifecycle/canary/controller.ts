/**
 * Canary rollout of agent versions: start a second version beside the stable one, split traffic by
 * the trace id's bucket, watch both windows, roll back on regression, step up or promote, retain the
 * old stable for a while, and persist all of it.
 */
import { AipError } from "../../../protocol/contract/errors.js";
import { goesToCanary } from "../../../protocol/util/bucket.js";
import type { Logger } from "../../../protocol/util/log.js";
import type { AgentManifest } from "../../../protocol/contract/schemas.js";
import type { AgentRecord } from "../../core/agent.js";
import type { AgentConfig } from "../../core/config.js";
import type { VetReport } from "../vet/report.js";
import { evaluate, regression, type CanaryGates, type Decision } from "./analysis.js";
import {
  loadState,
  saveState,
  statePath,
  type AgentCanaryState,
  type CanaryFile,
  type DecisionRecord,
  type Deployment,
} from "./state.js";
import { OutcomeWindow } from "./window.js";

export interface CanarySettings extends CanaryGates {
  interval_ms: number;
  window_ms: number;
  retention_ms: number;
  default_percent: number;
}

/** What the controller needs from the orchestrator. */
export interface CanaryHost {
  readonly agents: AgentRecord[];
  addRecord(
    config: AgentConfig,
    manifest: AgentManifest,
    role: AgentRecord["role"],
    report?: VetReport,
  ): Promise<AgentRecord>;
  removeRecord(record: AgentRecord): Promise<void>;
  /** Vet a declared version in the sandbox and read its manifest from that run; throws when it may not run. */
  prepare(config: AgentConfig): Promise<{ manifest: AgentManifest; report: VetReport | undefined }>;
  /** The config of a version the agency config declares, or undefined. */
  declared(name: string, version: string): AgentConfig | undefined;
  agentLog(name: string): Logger;
  onDecision(agent: string, action: string): void;
}

/** A canary names a version the config declares; it never carries a command or an environment. */
export interface StartOptions {
  version: string;
  percent?: number;
}

interface Live {
  stable: OutcomeWindow;
  canary: OutcomeWindow;
}

const MAX_DECISIONS = 20;

export class CanaryController {
  private state: CanaryFile;
  private readonly windows = new Map<string, Live>();
  private timer: NodeJS.Timeout | undefined;
  private readonly path: string;
  private busy: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly host: CanaryHost,
    private readonly settings: CanarySettings,
    stateDir: string,
    private readonly log: Logger,
  ) {
    this.path = statePath(stateDir);
    this.state = loadState(this.path, (reason) => {
      log.error(
        { event: "canary_state_corrupt", reason },
        `canary state unreadable, starting with stable versions only: ${reason}`,
      );
    });
  }

  /** After a promotion survived a restart: the deployment that replaces the config's stable. */
  stableOverride(name: string): Deployment | null {
    return this.state.agents[name]?.stable ?? null;
  }

  /** Bring back running canaries and retained versions after a restart; start the evaluation timer. */
  async restore(): Promise<void> {
    for (const [name, s] of Object.entries(this.state.agents)) {
      const log = this.host.agentLog(name);
      if (s.canary) {
        try {
          await this.launch(name, s.canary, "canary");
          this.live(name).stable.restore(s.windows.stable);
          this.live(name).canary.restore(s.windows.canary);
          log.info(
            { event: "canary_restored", version: s.canary.version, percent: s.canary.percent },
            `canary ${s.canary.version} restored at ${s.canary.percent}%`,
          );
        } catch (err) {
          log.error(
            { event: "canary_restore_failed", err: (err as Error).message },
            `canary ${s.canary.version} could not be restored; stable only`,
          );
          s.canary = null;
        }
      }
      if (s.retained) {
        if (Date.parse(s.retained.until) > Date.now())
          await this.launch(name, s.retained, "retained").catch(() => (s.retained = null));
        else s.retained = null;
      }
    }
    this.save();
    this.timer = setInterval(() => void this.tick(), this.settings.interval_ms);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.save();
  }

  private live(name: string): Live {
    let w = this.windows.get(name);
    if (!w) {
      w = { stable: new OutcomeWindow(this.settings.window_ms), canary: new OutcomeWindow(this.settings.window_ms) };
      this.windows.set(name, w);
    }
    return w;
  }

  private agentState(name: string): AgentCanaryState {
    return (this.state.agents[name] ??= {
      stable: null,
      canary: null,
      retained: null,
      decisions: [],
      last_evaluation: null,
      windows: { stable: [], canary: [] },
    });
  }

  private async launch(name: string, d: Deployment, role: AgentRecord["role"]): Promise<AgentRecord> {
    const config = this.host.declared(name, d.version);
    if (!config) throw new Error(`${name}@${d.version} is no longer declared in the agency config`);
    return this.host.addRecord(config, d.manifest, role);
  }

  private record(name: string, role: AgentRecord["role"], version?: string): AgentRecord | undefined {
    return this.host.agents.find(
      (a) => a.name === name && a.role === role && (version === undefined || a.version === version),
    );
  }

  /** Serialise control operations: they start and stop processes. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.busy.then(fn, fn);
    this.busy = run.catch(() => undefined);
    return run;
  }

  /** Start VERSION of AGENT as a canary taking `percent` of its traffic. */
  start(name: string, opts: StartOptions): Promise<Record<string, unknown>> {
    return this.exclusive(async () => {
      const stable = this.record(name, "stable");
      if (!stable)
        throw new AipError(
          "AIP_ERR_NO_ROUTE",
          `No stable agent named "${name}"; registered: ${[...new Set(this.host.agents.map((a) => a.name))].join(", ")}`,
        );
      const s = this.agentState(name);
      if (s.canary)
        throw new AipError(
          "AIP_ERR_INVALID_FIELD",
          `Agent ${name} already has canary ${s.canary.version}; promote or roll it back first`,
        );
      if (opts.version === stable.version)
        throw new AipError("AIP_ERR_INVALID_FIELD", `Version ${opts.version} is already the stable version of ${name}`);
      const percent = opts.percent ?? this.settings.default_percent;
      const config = this.host.declared(name, opts.version);
      if (!config) {
        const listed = Object.keys(stable.config.versions);
        throw new AipError(
          "AIP_ERR_FORBIDDEN",
          `Version ${opts.version} of ${name} is not declared in the agency config (agents[].versions); declared: ${listed.join(", ") || "none"}`,
          {
            extensions: { declared_versions: listed },
          },
        );
      }
      // Vetting (sandboxed) runs before anything else of the candidate; its --manifest run names it.
      const { manifest, report } = await this.host.prepare(config);
      if (manifest.name !== name || manifest.version !== opts.version) {
        throw new AipError(
          "AIP_ERR_INVALID_FIELD",
          `The canary command prints ${manifest.name}@${manifest.version}, expected ${name}@${opts.version}`,
        );
      }
      const record = await this.host.addRecord(config, manifest, "canary", report);
      if (record.state !== "healthy") {
        await this.host.removeRecord(record);
        throw new AipError(
          "AIP_ERR_UNAVAILABLE",
          `Canary ${name}@${opts.version} did not become healthy: ${record.lastError ?? record.state}`,
        );
      }
      s.canary = { version: opts.version, manifest, percent, started_at: new Date().toISOString() };
      this.live(name).stable.clear();
      this.live(name).canary.clear();
      this.decide(
        name,
        { action: "step", percent, reason: `canary ${opts.version} started at ${percent}%` },
        false,
        "start",
      );
      return this.statusOf(name);
    });
  }

  /** Make the canary the stable; the old stable leaves rotation and is retained for `retention_ms`. */
  promote(name: string, reason = "manual promotion", automatic = false): Promise<Record<string, unknown>> {
    return this.exclusive(async () => {
      const s = this.agentState(name);
      const canary = s.canary ? this.record(name, "canary", s.canary.version) : undefined;
      if (!s.canary || !canary) throw new AipError("AIP_ERR_INVALID_FIELD", `Agent ${name} has no canary to promote`);
      const old = this.record(name, "stable");
      if (s.retained) await this.retire(name);
      if (old) {
        old.assignRole("retained");
        s.retained = {
          version: old.version,
          manifest: old.manifest,
          until: new Date(Date.now() + this.settings.retention_ms).toISOString(),
        };
      }
      canary.assignRole("stable");
      s.stable = { version: s.canary.version, manifest: s.canary.manifest };
      const promoted = s.canary.version;
      s.canary = null;
      this.live(name).stable.clear();
      this.live(name).canary.clear();
      this.decide(name, { action: "promote", reason: `${promoted} promoted: ${reason}` }, automatic);
      return this.statusOf(name);
    });
  }

  /**
   * Before promotion: stop the canary (0%). After promotion, within retention: restore the old stable.
   * With `canaryVersion` (automatic rollbacks) it only ever stops that canary, nothing else.
   */
  rollback(
    name: string,
    reason = "manual rollback",
    automatic = false,
    canaryVersion?: string,
  ): Promise<Record<string, unknown>> {
    return this.exclusive(async () => {
      if (canaryVersion !== undefined && this.state.agents[name]?.canary?.version !== canaryVersion)
        return this.statusOf(name);
      return this.doRollback(name, reason, automatic);
    });
  }

  private async doRollback(name: string, reason: string, automatic: boolean): Promise<Record<string, unknown>> {
    const s = this.agentState(name);
    if (s.canary) {
      const version = s.canary.version;
      s.canary.percent = 0; // out of rotation at once, before the process is stopped
      const rec = this.record(name, "canary", version);
      s.canary = null;
      this.decide(name, { action: "rollback", reason: `canary ${version} rolled back: ${reason}` }, automatic);
      if (rec) await this.host.removeRecord(rec);
      return this.statusOf(name);
    }
    const retained = s.retained ? this.record(name, "retained", s.retained.version) : undefined;
    if (!s.retained || !retained)
      throw new AipError(
        "AIP_ERR_INVALID_FIELD",
        `Agent ${name} has no canary and no retained version to roll back to`,
      );
    const current = this.record(name, "stable");
    retained.assignRole("stable");
    const restored = s.retained.version;
    s.stable = { version: s.retained.version, manifest: s.retained.manifest };
    s.retained = null;
    this.decide(
      name,
      { action: "rollback", reason: `${current?.version ?? "?"} rolled back to retained ${restored}: ${reason}` },
      automatic,
    );
    if (current) await this.host.removeRecord(current);
    return this.statusOf(name);
  }

  private async retire(name: string): Promise<void> {
    const s = this.agentState(name);
    if (!s.retained) return;
    const rec = this.record(name, "retained", s.retained.version);
    const version = s.retained.version;
    s.retained = null;
    this.decide(name, { action: "hold", reason: `retention of ${version} ended; stopped` }, true, "retire");
    if (rec) await this.host.removeRecord(rec);
  }

  /** Pick stable or canary for a request among same-name candidates (bucket < percent → canary). */
  split(found: AgentRecord[], traceId: string): AgentRecord[] {
    const names = new Set(found.filter((a) => a.role === "canary").map((a) => a.name));
    if (names.size === 0) return found;
    return found.filter((a) => {
      if (!names.has(a.name)) return true;
      const percent = this.state.agents[a.name]?.canary?.percent ?? 0;
      const canary = found.find((b) => b.name === a.name && b.role === "canary");
      const stable = found.find((b) => b.name === a.name && b.role === "stable");
      let want = goesToCanary(traceId, percent) ? canary : stable;
      // If the chosen version is down, the other one serves rather than failing the request.
      if (!want?.available) want = want === canary ? stable : canary;
      return a === (want ?? a);
    });
  }

  /** Account one finished request of `name@version` (server-side error or not, latency). */
  observe(name: string, version: string, ms: number, serverError: boolean): void {
    const s = this.state.agents[name];
    if (!s?.canary) return;
    const live = this.live(name);
    const sample = { t: Date.now(), ms, err: serverError };
    if (version === s.canary.version) {
      live.canary.record(sample);
      // Regression gates after every canary outcome: a bad canary stops as soon as it has min_requests.
      const bad = regression(this.settings, live.stable.stats(), live.canary.stats());
      if (bad && s.canary.percent > 0) {
        s.canary.percent = 0; // out of rotation now; the process is stopped by the rollback
        void this.rollback(name, bad.reason, true, s.canary.version).catch(() => undefined);
      }
    } else if (version === this.record(name, "stable")?.version) {
      live.stable.record(sample);
    }
  }

  /** Periodic evaluation: steps, promotion, retention expiry; state saved. */
  async tick(): Promise<void> {
    for (const [name, s] of Object.entries(this.state.agents)) {
      if (s.retained && Date.parse(s.retained.until) <= Date.now()) await this.exclusive(() => this.retire(name));
      if (!s.canary) continue;
      const live = this.live(name);
      const d = evaluate(this.settings, live.stable.stats(), live.canary.stats(), s.canary.percent);
      if (d.action === "rollback") await this.rollback(name, d.reason, true, s.canary.version).catch(() => undefined);
      else if (d.action === "promote") await this.promote(name, d.reason, true).catch(() => undefined);
      else if (d.action === "step") {
        s.canary.percent = d.percent;
        this.decide(name, d, true);
      } else {
        s.last_evaluation = {
          at: new Date().toISOString(),
          action: "hold",
          reason: d.reason,
          percent: s.canary.percent,
          automatic: true,
        };
      }
    }
    this.save();
  }

  private decide(name: string, d: Decision, automatic: boolean, action?: DecisionRecord["action"]): void {
    const s = this.agentState(name);
    const rec: DecisionRecord = {
      at: new Date().toISOString(),
      action: action ?? d.action,
      reason: d.reason,
      percent: s.canary?.percent ?? 0,
      automatic,
    };
    s.decisions.push(rec);
    s.last_evaluation = null;
    if (s.decisions.length > MAX_DECISIONS) s.decisions.splice(0, s.decisions.length - MAX_DECISIONS);
    this.host.onDecision(name, rec.action);
    const log = this.host.agentLog(name);
    const fields = { event: `canary_${rec.action}`, percent: rec.percent, automatic, reason: rec.reason };
    if (rec.action === "rollback") log.warn(fields, rec.reason);
    else log.info(fields, rec.reason);
    this.save();
  }

  private save(): void {
    for (const [name, s] of Object.entries(this.state.agents)) {
      const live = this.windows.get(name);
      s.windows =
        live && s.canary ? { stable: live.stable.export(), canary: live.canary.export() } : { stable: [], canary: [] };
    }
    try {
      saveState(this.path, this.state);
    } catch (err) {
      this.log.error({ event: "canary_state_write_failed", err: (err as Error).message }, `cannot write ${this.path}`);
    }
  }

  /** Percent of traffic on the canary of `name` (0 when none). */
  percent(name: string): number {
    return this.state.agents[name]?.canary?.percent ?? 0;
  }

  private statusOf(name: string): Record<string, unknown> {
    const s = this.agentState(name);
    const live = this.live(name);
    const stable = this.record(name, "stable");
    return {
      agent: name,
      stable: stable ? { version: stable.version, state: stable.state, window: live.stable.stats() } : null,
      canary: s.canary
        ? {
            version: s.canary.version,
            percent: s.canary.percent,
            started_at: s.canary.started_at,
            state: this.record(name, "canary")?.state ?? "missing",
            window: live.canary.stats(),
          }
        : null,
      retained: s.retained
        ? {
            version: s.retained.version,
            until: s.retained.until,
            state: this.record(name, "retained")?.state ?? "missing",
          }
        : null,
      last_decision: s.last_evaluation ?? s.decisions.at(-1) ?? null,
      decisions: s.decisions.slice(-10),
    };
  }

  /** Every agent with canary history. */
  status(): Record<string, unknown>[] {
    return Object.keys(this.state.agents)
      .sort()
      .map((n) => this.statusOf(n));
  }
}
