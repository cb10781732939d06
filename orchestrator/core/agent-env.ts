/**
 * The environment an agent runs with, built in one place for the real run and for vetting (the two
 * must not differ, or a candidate could tell them apart): the orchestrator's environment without the
 * variables that make an interpreter load foreign code, plus the config's `env` for the agent.
 * docs/security.md, "The admin API runs nothing a client sends".
 */
import { SANDBOX_HIDE_ENV, TRUSTED_ENV, TRUSTED_SOURCE_ENV, TRUST_FILE_ENV } from "../../protocol/util/trust-env.js";

/** Variable names (or `PREFIX*` patterns) that load code into a process or change which code runs. */
export const UNSAFE_ENV = [
  "LD_*",
  "DYLD_*",
  "NODE_OPTIONS",
  "NODE_PATH",
  "NODE_REPL_EXTERNAL_MODULE",
  "NODE_EXTRA_CA_CERTS",
  "PYTHONPATH",
  "PYTHONHOME",
  "PYTHONSTARTUP",
  "PYTHONINSPECT",
  "PYTHONUSERBASE",
  "PERL5LIB",
  "PERL5OPT",
  "PERLLIB",
  "RUBYLIB",
  "RUBYOPT",
  "BASH_ENV",
  "ENV",
  "GCONV_PATH",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "GIT_EXEC_PATH",
] as const;

/** True when `name` is one of UNSAFE_ENV. */
export function isUnsafeEnv(name: string): boolean {
  return UNSAFE_ENV.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : name === p));
}

/** The config's unsafe names that `allowed` does not list (a config naming them is refused). */
export function unsafeNames(env: Record<string, string>, allowed: readonly string[]): string[] {
  return Object.keys(env).filter((k) => isUnsafeEnv(k) && !allowed.includes(k));
}

export interface AgentEnvInput {
  /** The config's `env` for this agent (already checked against `allow_env` when the config loaded). */
  env: Record<string, string>;
  /** Set by the orchestrator for every agent: the workspace roots agents may read. */
  workspaceRoots: readonly string[];
  /**
   * Which workspaces' code agents may run, sandboxed (agents/lib/sandbox/trust.ts reads these): the
   * config's list and where it came from, and the file `aip trust` writes in the state dir.
   */
  trust?: { workspaces: readonly string[]; source: "config" | "env"; file: string };
  /** Paths no sandboxed workspace run may see (the state dir, the socket directories). */
  sandboxHide?: readonly string[];
}

/**
 * The whole environment of one agent process: `base` (the orchestrator's) minus UNSAFE_ENV, then
 * AIP_LOG_LEVEL, AIP_WORKSPACE_ROOTS (with AIP_WORKSPACE_ROOTS_DEFAULTS=off) and the trust settings, then the
 * config's `env` (which wins).
 */
export function agentEnvironment(input: AgentEnvInput, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v !== undefined && !isUnsafeEnv(k)) out[k] = v;
  }
  out.AIP_LOG_LEVEL = base.AIP_LOG_LEVEL ?? "info";
  // The config's whole list, defaults included: the agent allows exactly these.
  out.AIP_WORKSPACE_ROOTS = input.workspaceRoots.join(":");
  if (input.trust) {
    out[TRUSTED_ENV] = input.trust.workspaces.join(":");
    out[TRUSTED_SOURCE_ENV] = input.trust.source;
    out[TRUST_FILE_ENV] = input.trust.file;
  }
  if (input.sandboxHide) out[SANDBOX_HIDE_ENV] = input.sandboxHide.join(":");
  out.AIP_WORKSPACE_ROOTS_DEFAULTS = "off";
  return { ...out, ...input.env };
}
