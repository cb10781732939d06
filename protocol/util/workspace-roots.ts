/**
 * Which directories may be a request's `workspace_root` (docs/security.md, "Workspace roots"): a root
 * must lie inside one of the allowed roots, and system locations (`/`, `/etc`, `/proc`, `/sys`, `/dev`,
 * `/boot`, `/root`, other users' homes, …) are refused unless an allowed root names them explicitly.
 * The orchestrator passes its config's list to every agent as AIP_WORKSPACE_ROOTS (colon-separated).
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

/** The allowed roots from AIP_WORKSPACE_ROOTS, or the defaults when it is unset or empty. */
export function workspaceRootsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = envString(WORKSPACE_ROOTS_ENV, env);
  if (raw === undefined || raw.trim() === "") return defaultWorkspaceRoots();
  return raw
    .split(":")
    .filter((p) => p !== "" && isAbsolute(p))
    .map((p) => resolve(p));
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
