/**
 * The agency config (`manifests/agency.json`): zod-validated, relative paths resolved against the
 * package root, environment overrides applied. A bad config fails with the JSON path and the reason.
 */
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { DEFAULT_LIMITS } from "../../protocol/contract/limits.js";
import { formatIssues } from "../../protocol/contract/schemas.js";
import { EnvError, checkEnv, envInt, envList, envString, type EnvName } from "../../protocol/util/env.js";
import {
  WORKSPACE_ROOTS_DEFAULTS_ENV,
  WORKSPACE_ROOTS_ENV,
  defaultWorkspaceRoots,
  keepsDefaultRoots,
  mergeRoots,
  parseRootList,
} from "../../protocol/util/workspace-roots.js";
import { unsafeNames } from "./agent-env.js";
import { MODEL_ENV_PREFIX, ModelConfigSchema, modelEnv } from "./model-config.js";

const AgentConfigSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, "expected a lowercase name of letters, digits and dashes"),
  /** Executable and arguments; started as `command… --listen SOCKET` in embedded mode. */
  command: z.array(z.string().min(1)).min(1),
  /** The checked-in AGENT_MANIFEST.json. */
  manifest: z.string().min(1),
  /** Socket path; default `<agent_socket_dir>/<name>.sock`. */
  socket: z.string().min(1).optional(),
  enabled: z.boolean().default(true),
  env: z.record(z.string(), z.string()).default({}),
  /** The agent's model: a local GGUF file or an inference server (model-config.ts); sets its AIP_MODEL* variables. */
  model: ModelConfigSchema.optional(),
  /** Names from the unsafe list (NODE_OPTIONS, LD_PRELOAD, …) that `env` may set for this agent. */
  allow_env: z.array(z.string().min(1)).default([]),
  /**
   * Other versions of this agent a canary may start: version → command (and env). The admin API names
   * one of these; it never carries a command or an environment of its own.
   */
  versions: z
    .record(
      z.string().min(1),
      z.strictObject({ command: z.array(z.string().min(1)).min(1), env: z.record(z.string(), z.string()).default({}) }),
    )
    .default({}),
});

const LimitsConfigSchema = z.strictObject({
  max_body_bytes: z.number().int().positive().default(DEFAULT_LIMITS.maxBodyBytes),
  max_line_bytes: z.number().int().positive().default(DEFAULT_LIMITS.maxLineBytes),
  max_json_depth: z.number().int().min(2).default(DEFAULT_LIMITS.maxJsonDepth),
  max_connections: z.number().int().positive().default(DEFAULT_LIMITS.maxConnections),
  idle_timeout_ms: z.number().int().positive().default(DEFAULT_LIMITS.idleTimeoutMs),
  headers_timeout_ms: z.number().int().positive().default(DEFAULT_LIMITS.headersTimeoutMs),
  /** The whole HTTP request, head and body: never less than `headers_timeout_ms` (see `limits` below). */
  request_receive_timeout_ms: z.number().int().positive().default(DEFAULT_LIMITS.requestReceiveTimeoutMs),
  /** Requests waiting for a pool slot, per agent, beyond the pool. */
  max_queue: z.number().int().min(0).default(256),
  health_interval_ms: z.number().int().positive().default(2000),
  health_timeout_ms: z.number().int().positive().default(1000),
  /** While an agent is unhealthy or its circuit open, it is probed this often (back in rotation once it answers). */
  reprobe_ms: z.number().int().positive().default(200),
  /** Consecutive failed probes before an agent is marked unhealthy. */
  unhealthy_after: z.number().int().positive().default(2),
  /** Embedded mode: an agent failing this many probes in a row is killed and restarted (0 = only report). */
  restart_unhealthy_after: z.number().int().min(0).default(3),
  /** Consecutive request failures that open an agent's circuit. */
  circuit_failures: z.number().int().positive().default(5),
  /** Host CPU load (0-1) above which agents declaring >= 1000m leave rotation, if a lighter one can serve. */
  cpu_threshold: z.number().min(0).max(1).default(0.85),
  /** Back in rotation once the load is below this (0-1); between it and cpu_threshold nothing changes. */
  cpu_readmit_below: z.number().min(0).max(1).default(0.75),
  /** Consecutive samples above cpu_threshold before an agent leaves rotation. */
  cpu_samples: z.number().int().positive().default(3),
  /**
   * Consecutive samples below cpu_readmit_below before it rejoins: the quiet must hold longer than the
   * spike did, so that a host whose load comes in bursts does not move an agent in and out every minute.
   */
  cpu_readmit_samples: z.number().int().positive().default(30),
  cpu_sample_ms: z.number().int().positive().default(1000),
  restart_initial_ms: z.number().int().positive().default(100),
  /**
   * Embedded: keep a second, ready process per agent; when the agent dies it takes over at once (docs/operations.md
   * "Supervisor"). light: agents declaring < 1000m CPU (no model: a second copy is cheap); all; off.
   */
  warm_standby: z.enum(["off", "light", "all"]).default("light"),
  restart_max_ms: z.number().int().positive().default(10_000),
  /** More than this many restarts within `crash_loop_window_ms` marks the agent failed. */
  crash_loop_restarts: z.number().int().positive().default(5),
  crash_loop_window_ms: z.number().int().positive().default(60_000),
  /**
   * A failed (crash-looping) agent is tried again after this long, doubling at each failure up to
   * `failed_retry_max_ms`; `aip check` tries it at once.
   */
  failed_retry_ms: z.number().int().positive().default(60_000),
  failed_retry_max_ms: z.number().int().positive().default(900_000),
  /** How long an agent may take from spawn to accepting connections. */
  start_timeout_ms: z.number().int().positive().default(15_000),
  shutdown_grace_ms: z.number().int().positive().default(DEFAULT_LIMITS.shutdownGraceMs),
});

const CanaryConfigSchema = z.strictObject({
  /** Canary requests in the window before any verdict. */
  min_requests: z.number().int().positive().default(50),
  /** Rollback when the canary's server-side error rate exceeds the stable's by more than this (0-1). */
  max_error_rate_diff: z.number().min(0).max(1).default(0.05),
  /** Rollback when canary P95 / stable P95 exceeds this. */
  max_p95_ratio: z.number().positive().default(1.5),
  /** How often the analysis runs (steps, promotion, retention). Regressions are also checked per request. */
  interval_ms: z.number().int().positive().default(10_000),
  /** The rolling window the error rates and P95s are computed over. */
  window_ms: z.number().int().positive().default(300_000),
  /** Automatic traffic steps, e.g. [5, 25, 50, 100]; empty = manual promotion. */
  steps: z.array(z.number().int().min(1).max(100)).default([]),
  /** How long the previous stable keeps running after a promotion (instant rollback). */
  retention_ms: z
    .number()
    .int()
    .min(0)
    .default(24 * 3600 * 1000),
  default_percent: z.number().min(0).max(100).default(5),
});
export type CanaryConfig = z.infer<typeof CanaryConfigSchema>;

export const AgencyConfigSchema = z.strictObject({
  $schema: z.string().optional(),
  socket: z.string().min(1).default("./run/aip.sock"),
  /** Agents' sockets; default `agents/` beside the orchestrator socket (docs/operations.md "Configuration"). */
  agent_socket_dir: z.string().min(1).optional(),
  mode: z.enum(["embedded", "systemd"]).default("embedded"),
  /** Group allowed to connect (socket 0660); absent = owner only (0600). */
  socket_group: z.string().min(1).optional(),
  /** The admin API's socket (canary control, forced health checks): always owner-only (0600). */
  admin_socket: z.string().min(1).optional(),
  /** false: no admin socket at all. */
  admin_api: z.boolean().default(true),
  /**
   * Directories a request's workspace_root may be in (docs/security.md), added to the defaults: the
   * invoking user's home and /tmp in embedded mode, none under systemd.
   */
  workspace_roots: z
    .array(
      z
        .string()
        .min(1)
        .refine((p) => isAbsolute(p), "expected an absolute path"),
    )
    .optional(),
  /**
   * Workspaces whose code (test runners, config files, package scripts) agents may run, sandboxed:
   * absolute paths (a path trusts what is below it) or globs. None by default (docs/security.md).
   */
  trusted_workspaces: z
    .array(
      z
        .string()
        .min(1)
        .refine((p) => isAbsolute(p), "expected an absolute path or glob"),
    )
    .default([]),
  /** false: `workspace_roots` replaces the default roots instead of adding to them. */
  workspace_roots_defaults: z.boolean().optional(),
  /** 127.0.0.1 port serving only /healthz and /metrics to probes. */
  health_port: z.number().int().min(1).max(65535).optional(),
  /** Address the probe port binds: 127.0.0.1, or 0.0.0.0 in a pod, where kubelet probes the pod's IP. */
  health_host: z.enum(["127.0.0.1", "0.0.0.0", "::1", "::"]).default("127.0.0.1"),
  /** Sandbox vetting of agent executables: required (default in systemd mode), warn (default embedded), off. */
  vetting: z.enum(["required", "warn", "off"]).optional(),
  /** The vetting policy file (default manifests/vet-policy.json). */
  vet_policy: z.string().min(1).optional(),
  /** Persistent state (canary rollouts, vetting cache); default derived by `defaultStateDir`. */
  state_dir: z.string().min(1).optional(),
  agents: z.array(AgentConfigSchema).min(1),
  canary: CanaryConfigSchema.default(() => CanaryConfigSchema.parse({})),
  limits: LimitsConfigSchema.refine((l) => l.request_receive_timeout_ms >= l.headers_timeout_ms, {
    // node:http refuses a head deadline beyond the whole request's: said here, naming the key, not as a crash.
    path: ["request_receive_timeout_ms"],
    message: "must be at least headers_timeout_ms",
  }).default(() => LimitsConfigSchema.parse({})),
});

export type AgencyConfigInput = z.input<typeof AgencyConfigSchema>;
export type LimitsConfig = z.infer<typeof LimitsConfigSchema>;

export interface DeclaredVersion {
  command: string[];
  env: Record<string, string>;
}

export interface AgentConfig {
  name: string;
  command: string[];
  manifestPath: string;
  socket: string;
  enabled: boolean;
  env: Record<string, string>;
  allowEnv: string[];
  /** Canary versions the config declares (commands resolved like `command`). */
  versions: Record<string, DeclaredVersion>;
}

export interface AgencyConfig {
  /** Where relative paths were resolved from. */
  baseDir: string;
  socket: string;
  agentSocketDir: string;
  mode: "embedded" | "systemd";
  socketGroup: string | undefined;
  /** The admin socket's path, or undefined when the admin API is off. */
  adminSocket: string | undefined;
  /** Allowed workspace roots, passed to every agent as AIP_WORKSPACE_ROOTS. */
  workspaceRoots: string[];
  /** Trusted workspaces (paths or globs), passed to every agent as AIP_TRUSTED_WORKSPACES. */
  trustedWorkspaces: string[];
  /** Whether trustedWorkspaces came from the config file or from AIP_TRUSTED_WORKSPACES. */
  trustedSource: "config" | "env";
  /** The vetting cache; default `<stateDir>/vet-cache.json` (an embedded agency keeps one per user). */
  vetCacheFile?: string;
  healthPort: number | undefined;
  healthHost: string;
  stateDir: string;
  vetting: "required" | "warn" | "off";
  vetPolicy: string | undefined;
  agents: AgentConfig[];
  canary: CanaryConfig;
  limits: LimitsConfig;
}

export class ConfigError extends Error {}

/** The package root (holds package.json), from this compiled file's location. */
export function packageRootDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const idx = here.lastIndexOf("/dist/");
  return idx === -1 ? resolve(here, "../..") : here.slice(0, idx);
}

/** This package's version (package.json): `aip --version`, /healthz and aip_build_info. */
export function packageVersion(): string {
  try {
    return (
      (JSON.parse(readFileSync(join(packageRootDir(), "package.json"), "utf8")) as { version?: string }).version ??
      "unknown"
    );
  } catch {
    return "unknown";
  }
}

export const DEFAULT_CONFIG_PATH = "manifests/agency.json";

/** Environment variables that override the config file (protocol/util/env.ts, docs/operations.md). */
const ENV_OVERRIDES: Partial<Record<EnvName, string>> = {
  AIP_SOCKET: "socket",
  AIP_AGENT_SOCKET_DIR: "agent_socket_dir",
  AIP_MODE: "mode",
  AIP_SOCKET_GROUP: "socket_group",
  AIP_ADMIN_SOCKET: "admin_socket",
  AIP_WORKSPACE_ROOTS: "workspace_roots",
  AIP_TRUSTED_WORKSPACES: "trusted_workspaces",
  AIP_WORKSPACE_ROOTS_DEFAULTS: "workspace_roots_defaults",
  AIP_HEALTH_PORT: "health_port",
  AIP_HEALTH_HOST: "health_host",
  AIP_STATE_DIR: "state_dir",
  AIP_VETTING: "vetting",
};

// --- state_dir derivation (docs/operations.md "Configuration") ---
/** Where systemd mode keeps its state when the unit sets no `StateDirectory=`. */
export const SYSTEMD_STATE_DIR = "/var/lib/aip";

/**
 * The state directory when the config names none. systemd mode: `$STATE_DIRECTORY` (set by the unit's
 * `StateDirectory=`), else /var/lib/aip. Embedded mode: beside the socket (`<socket dir>/state`), so
 * every agency - a test's temporary one included - has its own and none shares the checkout's.
 */
export function defaultStateDir(mode: "embedded" | "systemd", socket: string, env: NodeJS.ProcessEnv): string {
  if (mode === "systemd") return env.STATE_DIRECTORY?.split(":")[0] || SYSTEMD_STATE_DIR;
  return join(dirname(socket), "state");
}
// --- end state_dir derivation ---

/** Validate a raw config object (after env overrides) and resolve its paths. */
export function parseConfig(
  raw: unknown,
  baseDir: string,
  env: NodeJS.ProcessEnv = {},
  source = "config",
): AgencyConfig {
  const withEnv: Record<string, unknown> =
    typeof raw === "object" && raw !== null ? { ...(raw as object) } : { value: raw };
  // A switch set in the environment overrides the file's; unset, it leaves the file's alone.
  const envBool = (variable: EnvName, e: NodeJS.ProcessEnv): boolean | undefined => {
    const raw = envString(variable, e);
    return raw === undefined ? undefined : keepsDefaultRoots(raw);
  };
  for (const [variable, key] of Object.entries(ENV_OVERRIDES) as [EnvName, string][]) {
    try {
      const value =
        key === "health_port"
          ? envInt(variable, env)
          : key === "workspace_roots" || key === "trusted_workspaces"
            ? envList(variable, env)
            : key === "workspace_roots_defaults"
              ? envBool(variable, env)
              : envString(variable, env);
      if (value !== undefined) withEnv[key] = value;
    } catch (err) {
      if (err instanceof EnvError) throw new ConfigError(`Invalid agency config ${source}:\n  ${err.message}`);
      throw err;
    }
  }
  const parsed = AgencyConfigSchema.safeParse(withEnv);
  if (!parsed.success) {
    const lines = formatIssues(parsed.error).map((e) => `  ${e.path}: ${e.message}`);
    throw new ConfigError(`Invalid agency config ${source}:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  const abs = (p: string, from = baseDir): string => (isAbsolute(p) ? p : resolve(from, p));
  const agentSocketDir =
    c.agent_socket_dir !== undefined ? abs(c.agent_socket_dir) : join(dirname(abs(c.socket)), "agents");
  const names = new Set<string>();
  for (const [i, a] of c.agents.entries()) {
    if (names.has(a.name))
      throw new ConfigError(`Invalid agency config ${source}:\n  agents[${i}].name: duplicate agent name "${a.name}"`);
    names.add(a.name);
    const unsafe = [a.env, ...Object.values(a.versions).map((v) => v.env)].flatMap((env) =>
      unsafeNames(env, a.allow_env),
    );
    if (unsafe.length > 0) {
      throw new ConfigError(
        `Invalid agency config ${source}:\n  agents[${i}].env: ${[...new Set(unsafe)].join(", ")} can load foreign code into the agent; list ${unsafe.length > 1 ? "them" : "it"} in agents[${i}].allow_env to allow it`,
      );
    }
  }
  for (const [i, a] of c.agents.entries()) {
    const both = a.model ? Object.keys(a.env).filter((k) => k.startsWith(MODEL_ENV_PREFIX)) : [];
    if (both.length > 0)
      throw new ConfigError(
        `Invalid agency config ${source}:\n  agents[${i}].env: ${both.join(", ")} set beside agents[${i}].model; set the model in one place`,
      );
  }
  const command = (cmd: string[]): string[] => [cmd[0]!.includes("/") ? abs(cmd[0]!) : cmd[0]!, ...cmd.slice(1)];
  const socket = abs(c.socket);
  // Listed roots (else the orchestrator's own AIP_WORKSPACE_ROOTS) after the defaults: your home and
  // /tmp in embedded mode, none under systemd; workspace_roots_defaults false drops the defaults.
  const listed = c.workspace_roots ?? (c.mode === "systemd" ? [] : parseRootList(process.env[WORKSPACE_ROOTS_ENV]));
  const keepDefaults =
    c.mode !== "systemd" &&
    (c.workspace_roots_defaults ?? keepsDefaultRoots(process.env[WORKSPACE_ROOTS_DEFAULTS_ENV]));
  const workspaceRoots = mergeRoots(listed, keepDefaults ? defaultWorkspaceRoots() : []);
  return {
    baseDir,
    socket,
    agentSocketDir,
    mode: c.mode,
    socketGroup: c.socket_group,
    adminSocket: c.admin_api ? (c.admin_socket ? abs(c.admin_socket) : adminSocketFor(socket)) : undefined,
    workspaceRoots,
    trustedWorkspaces: c.trusted_workspaces,
    trustedSource: env.AIP_TRUSTED_WORKSPACES ? "env" : "config",
    healthPort: c.health_port,
    healthHost: c.health_host,
    stateDir: c.state_dir !== undefined ? abs(c.state_dir) : defaultStateDir(c.mode, abs(c.socket), env),
    vetting: c.vetting ?? (c.mode === "systemd" ? "required" : "warn"),
    vetPolicy: c.vet_policy ? abs(c.vet_policy) : undefined,
    canary: c.canary,
    limits: c.limits,
    agents: c.agents.map((a) => ({
      name: a.name,
      command: command(a.command),
      manifestPath: abs(a.manifest),
      socket: a.socket ? abs(a.socket, agentSocketDir) : join(agentSocketDir, `${a.name}.sock`),
      enabled: a.enabled,
      env: a.model ? { ...modelEnv(a.model, baseDir), ...a.env } : a.env,
      allowEnv: a.allow_env,
      versions: Object.fromEntries(
        Object.entries(a.versions).map(([v, d]) => [v, { command: command(d.command), env: d.env }]),
      ),
    })),
  };
}

/** The default admin socket: `aip.sock` → `aip.admin.sock`, beside the main socket. */
export function adminSocketFor(socket: string): string {
  return socket.endsWith(".sock") ? `${socket.slice(0, -".sock".length)}.admin.sock` : `${socket}.admin`;
}

/** Load the config file (default: `$AIP_CONFIG` or manifests/agency.json under the package root). */
export function loadConfig(path?: string, env: NodeJS.ProcessEnv = process.env): AgencyConfig {
  // Every variable the orchestrator or its agents (which inherit this environment) read, checked at start.
  try {
    checkEnv(env, ["orchestrator", "agents"]);
  } catch (err) {
    if (err instanceof EnvError) throw new ConfigError(err.message);
    throw err;
  }
  const root = packageRootDir();
  const file = resolve(path ?? envString("AIP_CONFIG", env) ?? join(root, DEFAULT_CONFIG_PATH));
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`Cannot read agency config ${file}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`Agency config ${file} is not valid JSON: ${(err as Error).message}`);
  }
  return parseConfig(raw, root, env, file);
}
