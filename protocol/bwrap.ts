/**
 * Finding bubblewrap, shared by the two sandboxes (vetting's in the orchestrator, the workspace runner's
 * in agents/lib): docs/security.md.
 */
import { accessSync, constants } from "node:fs";
import { posix } from "node:path";

export const INSTALL_BWRAP = "apt-get install -y bubblewrap";

/** An executable named `name` (or the path itself when it contains a slash) on `pathEnv`. */
export function which(name: string, pathEnv = process.env.PATH ?? ""): string | undefined {
  const candidates = name.includes("/")
    ? [name]
    : pathEnv
        .split(":")
        .filter(Boolean)
        .map((d) => posix.join(d, name));
  return candidates.find((c) => {
    try {
      accessSync(c, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** bwrap on PATH, else in the system directories (an agent's PATH may be trimmed). */
export function findBwrap(pathEnv = process.env.PATH ?? ""): string | undefined {
  return which("bwrap", `${pathEnv}:/usr/bin:/bin:/usr/local/bin`);
}
