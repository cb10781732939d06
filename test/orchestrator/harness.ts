/** Test harness: an in-process orchestrator over real fixture-agent processes on temp sockets. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DestinationStream } from "pino";
import { parseConfig, type AgencyConfig } from "../../orchestrator/core/config.js";
import { listenAdmin, listenFrontDoor } from "../../orchestrator/frontdoor.js";
import { Orchestrator, type OrchestratorDeps } from "../../orchestrator/orchestrator.js";
import type { AipServer } from "../../protocol/transport/server.js";
import { ROOT, tempDir } from "../helpers.js";

export { until } from "../helpers.js";

export const FIXTURE_AGENT = join(ROOT, "test/fixtures/agents/fixture-agent.mjs");
export const BAD_AGENT = join(ROOT, "test/fixtures/agents/bad-agent.mjs");

export interface FixtureSpec {
  name: string;
  version?: string;
  capabilities?: string[];
  languages?: string[];
  cpu?: string;
  max_concurrent?: number;
  timeout_ms?: number;
  env?: Record<string, string>;
  command?: string;
  /** A real manifest file (e.g. manifests/complete.json) instead of one generated from this spec. */
  manifest?: string;
  /** Canary versions the config declares (`agents[].versions`); "{dir}" in env values as in `env`. */
  versions?: Record<string, { command?: string; env?: Record<string, string> }>;
}

export function manifestFor(spec: FixtureSpec): Record<string, unknown> {
  return {
    aip: "1",
    name: spec.name,
    version: spec.version ?? "1.0.0",
    description: `fixture ${spec.name}`,
    capabilities: spec.capabilities ?? ["echo"],
    languages: spec.languages ?? ["*"],
    resources: { cpu: spec.cpu ?? "100m", memory: "64Mi", gpu: false },
    max_concurrent: spec.max_concurrent ?? 16,
    timeouts_ms: { default: spec.timeout_ms ?? 5000 },
  };
}

/** Collects log lines in memory (JSON parsed). */
export class LogSink implements DestinationStream {
  lines: Record<string, unknown>[] = [];
  write(msg: string): void {
    for (const l of msg.split("\n")) if (l.trim()) this.lines.push(JSON.parse(l) as Record<string, unknown>);
  }
  events(event: string): Record<string, unknown>[] {
    return this.lines.filter((l) => l.event === event);
  }
}

export interface Agency {
  dir: string;
  config: AgencyConfig;
  orchestrator: Orchestrator;
  server: AipServer;
  /** The owner-only admin socket's server. */
  admin: AipServer;
  socket: string;
  adminSocket: string;
  logs: LogSink;
  /** Stop the orchestrator and its agents, then start a new one on the same config and state. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Write manifests and a config for `specs`, start the orchestrator (embedded) and its front door. */
export async function startAgency(
  specs: FixtureSpec[],
  limits: Record<string, unknown> = {},
  deps: OrchestratorDeps = {},
  extra: {
    canary?: Record<string, unknown>;
    beforeStart?: (dir: string) => void;
    vetting?: "required" | "warn" | "off";
  } = {},
): Promise<Agency> {
  const { dir, cleanup } = tempDir("aipo-");
  const agents = specs.map((spec) => {
    const manifestPath = spec.manifest ?? join(dir, `${spec.name}.json`);
    if (spec.manifest === undefined) writeFileSync(manifestPath, JSON.stringify(manifestFor(spec)));
    // "{dir}" in an env value stands for this agency's temp directory.
    const inDir = (env: Record<string, string> = {}): Record<string, string> =>
      Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replaceAll("{dir}", dir)]));
    const versions = Object.fromEntries(
      Object.entries(spec.versions ?? {}).map(([v, d]) => [
        v,
        { command: [d.command ?? FIXTURE_AGENT], env: inDir(d.env) },
      ]),
    );
    return {
      name: spec.name,
      command: [spec.command ?? FIXTURE_AGENT],
      manifest: manifestPath,
      env: { FIXTURE_MANIFEST: manifestPath, ...inDir(spec.env) },
      versions,
    };
  });
  const config = parseConfig(
    {
      socket: join(dir, "aip.sock"),
      agent_socket_dir: join(dir, "agents"),
      state_dir: join(dir, "state"),
      // Vetting has its own tests; elsewhere it would only add strace runs to every start.
      vetting: extra.vetting ?? "off",
      agents,
      // No warm standby unless a test asks for one: it would double every fixture process.
      limits: { health_interval_ms: 60_000, warm_standby: "off", ...limits },
      ...(extra.canary ? { canary: extra.canary } : {}),
    },
    ROOT,
  );
  extra.beforeStart?.(dir);
  const logs = new LogSink();
  const boot = async (): Promise<{ orchestrator: Orchestrator; server: AipServer; admin: AipServer }> => {
    const orchestrator = new Orchestrator(config, { logDestination: logs, ...deps });
    await orchestrator.start();
    return { orchestrator, server: await listenFrontDoor(orchestrator), admin: (await listenAdmin(orchestrator))! };
  };
  const agency: Agency = {
    dir,
    config,
    ...(await boot()),
    socket: config.socket,
    adminSocket: config.adminSocket!,
    logs,
    async restart() {
      await agency.server.close(100);
      await agency.admin.close(100);
      await agency.orchestrator.stop();
      Object.assign(agency, await boot());
    },
    async stop() {
      await agency.server.close(100);
      await agency.admin.close(100);
      await agency.orchestrator.stop();
      cleanup();
    },
  };
  return agency;
}

export function echo(
  extra: {
    constraints?: Record<string, unknown>;
    context?: Record<string, unknown>;
    trace_id?: string;
    action?: string;
  } = {},
): Record<string, unknown> {
  return {
    action: extra.action ?? "echo",
    context: extra.context ?? {},
    constraints: extra.constraints ?? {},
    ...(extra.trace_id ? { trace_id: extra.trace_id } : {}),
  };
}
