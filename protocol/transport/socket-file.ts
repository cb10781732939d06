/** The socket file's life: stale files replaced, live servers never robbed, permissions set, removal. */
import { connect } from "node:net";
import { chmod, chown, lstat, mkdir, unlink } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import { dirname } from "node:path";

/** sockaddr_un.sun_path holds 108 bytes including the terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107;

/** True when something accepts connections on the socket at `path`. */
export function socketIsLive(path: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    const timer = setTimeout(() => {
      s.destroy();
      resolve(true); // it exists and did not refuse: treat as alive (a stuck server still owns it)
    }, timeoutMs);
    s.once("connect", () => {
      clearTimeout(timer);
      s.destroy();
      resolve(true);
    });
    s.once("error", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

/** Make `path` ready to listen on: parent created, a stale socket removed; throws if in use or not a socket. */
export async function prepareSocketPath(path: string): Promise<void> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    throw new Error(`Socket path is ${Buffer.byteLength(path)} bytes, the limit is ${MAX_SOCKET_PATH_BYTES}: ${path}`);
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o750 });
  let st;
  try {
    st = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  if (!st.isSocket()) throw new Error(`${path} exists and is not a socket; refusing to replace it`);
  if (await socketIsLive(path)) {
    throw new Error(
      `Another server is listening on ${path}; refusing to take over its socket (stop it first or choose another path)`,
    );
  }
  await unlink(path);
}

/** Resolve a group name or id to a gid. */
export function resolveGid(group: string | number): number {
  if (typeof group === "number") return group;
  if (/^\d+$/.test(group)) return Number(group);
  try {
    const line = execFileSync("getent", ["group", group], { encoding: "utf8" }).trim();
    const gid = Number(line.split(":")[2]);
    if (Number.isInteger(gid)) return gid;
  } catch {
    // fall through
  }
  throw new Error(`Unknown group ${JSON.stringify(group)} for the socket file`);
}

/** 0600 for the owner alone, 0660 with the configured group. */
export async function applySocketPermissions(path: string, group: string | number | undefined): Promise<void> {
  if (group === undefined) {
    await chmod(path, 0o600);
    return;
  }
  await chown(path, -1, resolveGid(group));
  await chmod(path, 0o660);
}

/** Remove our socket file, but only if it is still the one we created (same inode). */
export async function removeSocketFile(path: string, ino: number | undefined): Promise<void> {
  try {
    const st = await lstat(path);
    if (ino !== undefined && st.ino !== ino) return;
    await unlink(path);
  } catch {
    // already gone
  }
}
