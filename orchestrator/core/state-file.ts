/**
 * Files the orchestrator keeps in its state directory (canary state, the vetting cache and its key):
 * written atomically (temp file + rename, so a crash leaves the old file or the new one) and created
 * owner-only (0600; the directory 0700). docs/security.md, "Who can reach what".
 */
import { randomBytes } from "node:crypto";
import {
  fchmodSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  closeSync,
  constants,
} from "node:fs";
import { dirname } from "node:path";

/** Mode of state and log files: owner-only, or 0640 when a group is configured to read them. */
export function stateFileMode(group?: string): number {
  return group === undefined ? 0o600 : 0o640;
}

/** Write `data` to `path` atomically (a reader sees the old file or the new one, never half), with `mode` (default 0600). */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // A random name created with O_EXCL (never through a link): a name planted in advance cannot be used.
  const tmp = `${path}.${randomBytes(8).toString("hex")}.tmp`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    writeFileSync(fd, data);
    fchmodSync(fd, mode); // the umask may have narrowed it; never wider than asked
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/**
 * The 32-byte secret in `path` (created 0600 with random bytes when absent, with O_EXCL so two
 * processes never write different keys). A key file that is not exactly 32 bytes is replaced.
 */
export function secretKey(path: string): Buffer {
  try {
    const key = readFileSync(path);
    if (key.length === 32) return key;
  } catch {
    // absent: created below
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeFileSync(fd, key);
    } finally {
      closeSync(fd);
    }
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    const existing = readFileSync(path);
    if (existing.length === 32) return existing;
    writeFileAtomic(path, key.toString("latin1"), 0o600);
    return readFileSync(path);
  }
}
