/**
 * Which directories may be a request's `workspace_root` (docs/security.md, "Workspace roots"): a root
 * must lie inside one of the allowed roots, and system locations (`/`, `/etc`, `/proc`, `/sys`, `/dev`,
 * `/boot`, `/root`, other users' homes, …) are refused unless an allowed root names them explicitly.
 * Listed roots add to the defaults (the invoking user's home and /tmp); AIP_WORKSPACE_ROOTS_DEFAULTS=off
 * (config `workspace_roots_defaults: false`) drops the defaults. The orchestrator passes its config's
 * whole list to every agent as AIP_WORKSPACE_ROOTS, with the defaults off, so an agent allows exactly it.
 */
import { homedir, tmpdir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { envString, type EnvName } from "./env.js";
import { isInside } from "./paths.js";

/** Locations no workspace may be in (or be) unless an allowed root is at or below one of them. */
export const SYSTEM_ROOTS = [
  "/etc",
  "/proc",
  "/sys",
  "/dev",
  "/boot",
  "/root",
  "/run",
  "/var",
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib64",
  "/opt",
  "/srv",
  "/home",
  "/mnt",
  "/media",
] as const;

/** The environment variable agents read their allowed roots from. */
export const WORKSPACE_ROOTS_ENV = "AIP_WORKSPACE_ROOTS" satisfies EnvName;
/** `off` (or `0`, `false`, `no`): the listed roots replace the defaults instead of adding to them. */
export const WORKSPACE_ROOTS_DEFAULTS_ENV = "AIP_WORKSPACE_ROOTS_DEFAULTS" satisfies EnvName;

/** True unless `value` (AIP_WORKSPACE_ROOTS_DEFAULTS) turns the defaults off. */
export function keepsDefaultRoots(value: string | undefined): boolean {
  return !["off", "0", "false", "no"].includes((value ?? "").trim().toLowerCase());
}

/** A colon-separated list of roots: absolute paths, resolved; anything else is ignored. */
export function parseRootList(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(":")
    .filter((p) => p !== "" && isAbsolute(p))
    .map((p) => resolve(p));
}

/** `defaults` (when kept) followed by `listed`, each once. */
export function mergeRoots(listed: readonly string[], defaults: readonly string[] = defaultWorkspaceRoots()): string[] {
  return [...new Set([...defaults, ...listed.map((p) => resolve(p))])];
}

/**
 * The default roots: the invoking user's home and the temporary directory. A home that is itself a
 * system location (root's `/root`) is not included: it must be listed explicitly.
 */
export function defaultWorkspaceRoots(home: string = homedir()): string[] {
  const roots = new Set<string>();
  if (home !== "" && isAbsolute(home) && home !== "/" && !SYSTEM_ROOTS.some((s) => s === resolve(home)))
    roots.add(resolve(home));
  roots.add("/tmp");
  roots.add(resolve(tmpdir()));
  return [...roots];
}

/** The allowed roots: the defaults plus AIP_WORKSPACE_ROOTS, or only the latter with AIP_WORKSPACE_ROOTS_DEFAULTS=off. */
export function workspaceRootsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const listed = parseRootList(envString(WORKSPACE_ROOTS_ENV, env));
  return keepsDefaultRoots(envString(WORKSPACE_ROOTS_DEFAULTS_ENV, env)) ? mergeRoots(listed) : mergeRoots(listed, []);
}

/**
 * Why `realRoot` (a real path, symlinks already resolved) may not be a workspace, or undefined when it
 * may. A root inside an allowed root is refused when it is (or is inside) a system location that the
 * allowed root does not itself lie at or under: listing `/srv/code` allows `/srv/code/x`, listing `/`
 * allows nothing below `/etc`.
 */
export function refuseWorkspaceRoot(realRoot: string, allowed: readonly string[]): string | undefined {
  const containing = allowed.filter((r) => isInside(r, realRoot));
  if (containing.length === 0) {
    return `${realRoot} is not inside an allowed workspace root (${allowed.join(", ") || "none configured"})`;
  }
  if (realRoot === "/" && !allowed.includes("/")) return "/ is not an allowed workspace root";
  const system = SYSTEM_ROOTS.find((s) => isInside(s, realRoot));
  if (system === undefined) return undefined;
  // Inside a system location: only an allowed root at or below that location admits it.
  if (containing.some((r) => isInside(system, r) && r !== "/")) return undefined;
  return `${realRoot} is inside ${system}, which is refused unless an allowed workspace root names it`;
}

/**
 * What to do about a refused workspace root: the setting belongs to the agency process (not the client
 * that sent the request), and it is read when that process starts.
 */
export function allowRootSuggestion(root: string): string {
  return (
    `Allow it in the agency, not in the client: start the agency (aip up, or the editor that runs aip lsp / aip mcp) ` +
    `with AIP_WORKSPACE_ROOTS=${root} (colon-separated; adds to the defaults, read at start), ` +
    `or list it in the agency config's workspace_roots (read at start and on aip reload)`
  );
}
