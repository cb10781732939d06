/**
 * One orchestrator per agent socket directory: `<agent_socket_dir>/orchestrator.lock` holds the owner's
 * pid. It is created with link(2), which fails atomically when the file exists; a lock whose pid no
 * longer runs is stale and taken over. docs/security.md, "One orchestrator per agent socket directory".
 */
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export class LockedError extends Error {
  constructor(
    readonly path: string,
    readonly pid: number,
  ) {
    super(
      `another orchestrator (pid ${pid}) already uses this agent socket directory (lock ${path}); stop it first, or give this one its own agent_socket_dir`,
    );
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Take the lock of `dir` for this process; throws LockedError when a live orchestrator holds it.
 * `takeOverFrom`: the pid of the orchestrator this one succeeds (a reload), whose lock it takes.
 * Returns the release.
 */
export function lockSocketDir(dir: string, takeOverFrom?: number): () => void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, "orchestrator.lock");
  const tmp = `${path}.${process.pid}`;
  writeFileSync(tmp, `${process.pid}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(tmp, path);
        return () => {
          try {
            if (Number(readFileSync(path, "utf8").trim()) === process.pid) unlinkSync(path);
          } catch {
            // already gone
          }
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      let owner = NaN;
      try {
        owner = Number(readFileSync(path, "utf8").trim());
      } catch {
        continue; // removed meanwhile: try again
      }
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && owner !== takeOverFrom && alive(owner))
        throw new LockedError(path, owner);
      // Stale (the owner is gone) or unreadable: take it over.
      try {
        unlinkSync(path);
      } catch {
        // someone else removed it first
      }
    }
    throw new LockedError(path, NaN);
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing to remove
    }
  }
}
