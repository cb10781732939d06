/**
 * Vetting and registration of agent commands (docs/security.md): the one environment an agent gets,
 * the sandboxed vetting run (which is also the `--manifest` run), the verdict applied to a record, and
 * the preparation of a declared canary version before it may start.
 */
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { AipError } from "../../protocol/contract/errors.js";
import type { Logger } from "../../protocol/util/log.js";
import { parseManifest } from "../../protocol/contract/manifest.js";
import { TRUST_FILE_NAME } from "../../protocol/util/trust-env.js";
import type { AgentManifest } from "../../protocol/contract/schemas.js";
import { agentEnvironment } from "../core/agent-env.js";
import type { AgentRecord } from "../core/agent.js";
import type { AgencyConfig, AgentConfig } from "../core/config.js";
import { nodeOptionsFor } from "../core/memory.js";
import { checkedInManifest, printedManifest, registration } from "./registration.js";
import type { VetReport } from "./vet/report.js";
import { VetCache, admission, loadPolicy, vetAgent, vettingSummary, type VetPolicy } from "./vet/index.js";

export class AgentVetting {
  private cache: VetCache | undefined;
  private policy: VetPolicy | undefined;

  constructor(
    private readonly config: AgencyConfig,
    private readonly log: Logger,
    private readonly agentLog: (name: string) => Logger,
  ) {}

  /**
   * The whole environment an agent process gets, in vetting and in the real run alike, with the heap
   * limit from the manifest's memory (orchestrator/core/memory.ts). `memory` defaults to the agent's
   * checked-in manifest (a canary is vetted before its own manifest is known).
   */
  agentEnv(config: AgentConfig, memory?: string): Record<string, string> {
    const c = this.config;
    const env = agentEnvironment({
      env: config.env,
      workspaceRoots: c.workspaceRoots,
      trust: { workspaces: c.trustedWorkspaces, source: c.trustedSource, file: join(c.stateDir, TRUST_FILE_NAME) },
      sandboxHide: [
        c.stateDir,
        dirname(c.socket),
        c.agentSocketDir,
        ...(c.adminSocket ? [dirname(c.adminSocket)] : []),
      ],
    });
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
  private async report(config: AgentConfig): Promise<VetReport | undefined> {
    if (this.config.vetting === "off") return undefined;
    this.policy ??= loadPolicy(this.config.vetPolicy);
    if (!this.cache) {
      this.cache = new VetCache(this.config.vetCacheFile ?? join(this.config.stateDir, "vet-cache.json"));
      for (const r of this.cache.rejected) {
        this.log.warn(
          { event: "vet_cache_entry_rejected", executable: r.path, reason: r.reason },
          `vetting cache entry for ${r.path} dropped (${r.reason}); it will be vetted again`,
        );
      }
    }
    const [exe, ...args] = config.command;
    if (exe === undefined) throw new AipError("AIP_ERR_INVALID_FIELD", `${config.name}: empty command`);
    const env = this.agentEnv(config);
    const { hide, cwd } = this.sandboxLayout(env);
    return vetAgent(exe, {
      policy: this.policy,
      cache: this.cache,
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
   * Sandbox vetting (config `vetting`): an agent that fails under `required` is marked `rejected` with
   * its reasons and never started; under `warn` it runs and the failure is shown. Nothing of the agent
   * runs outside the sandbox before this: `--manifest` is one of the vetting runs.
   */
  async vet(record: AgentRecord, known?: VetReport): Promise<void> {
    const mode = this.config.vetting;
    const report = known ?? (await this.report(record.config));
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
      const reason = `vetting ${verdict.vetting}: ${verdict.reasons.join("; ")}`;
      record.markRejected(reason);
      log.error({ event: "agent_rejected", vetting: verdict.vetting, reasons: verdict.reasons }, reason);
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
    const report = await this.report(config);
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
}
