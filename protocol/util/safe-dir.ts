/**
 * Directories the agency keeps state and sockets in (docs/security.md, "Who can reach what"): they must
 * be owned by the agency's user (or root) and writable by no one else, or someone else could plant a
 * symlink or a socket in them. A directory that fails is refused, naming the path and the fix.
 */
import { lstatSync, mkdirSync, realpathSync } from "node:fs";

export class UnsafeDirectoryError extends Error {}

/**
 * Why `path` is not a safe directory for `what` (e.g. "state_dir"), or undefined when it is: it must
 * be a real directory (not a symlink to one), owned by this user or root, and not writable by others:
 * not by every user (a sticky one such as /tmp is refused too: others can still create names in it),
 * and not by a group other than this user's own.
 */
export function unsafeDirectory(path: string, what: string): string | undefined {
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    return `${what} ${path} cannot be inspected (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
  if (st.isSymbolicLink()) {
    let target = "?";
    try {
      target = realpathSync(path);
    } catch {
      // dangling
    }
    return `${what} ${path} is a symlink (to ${target}); configure the real directory instead`;
  }
  if (!st.isDirectory()) return `${what} ${path} is not a directory; remove it or choose another path`;
  const uid = process.getuid?.() ?? 0;
  if (st.uid !== uid && st.uid !== 0)
    return `${what} ${path} is owned by uid ${st.uid}, not by this user (uid ${uid}) or root; use a directory of your own, or: chown ${uid} ${path}`;
  if ((st.mode & 0o002) !== 0)
    return `${what} ${path} is writable by every user (mode ${(st.mode & 0o7777).toString(8)}); fix it: chmod o-w ${path} (or choose a private directory)`;
  // Group-writable is refused unless the group is this user's own (a private group and umask 002).
  const gid = process.getgid?.() ?? 0;
  if ((st.mode & 0o020) !== 0 && st.gid !== gid)
    return `${what} ${path} is writable by group ${st.gid}, not only by this user (mode ${(st.mode & 0o7777).toString(8)}); fix it: chmod g-w ${path}`;
  return undefined;
}

/** Create `path` (mode 0700 by default, parents as needed) and check it: throws UnsafeDirectoryError naming the fix. */
export function ensureSafeDirectory(path: string, what: string, mode = 0o700): void {
  try {
    mkdirSync(path, { recursive: true, mode });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const why = unsafeDirectory(path, what);
  if (why !== undefined) throw new UnsafeDirectoryError(why);
}
