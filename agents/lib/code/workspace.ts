/**
 * Reading workspace files, race-free (docs/security.md, "Workspace reads"): a file is opened first,
 * without following a final symlink and without blocking on a FIFO, and then what was opened is
 * checked: its real path (from `/proc/self/fd/N`) must lie inside the workspace's real root, and it
 * must be a regular file under the size cap. It is read only through that descriptor, so a file or
 * directory swapped for a symlink between a check and the read cannot make it read anything outside.
 * The workspace root itself must be inside an allowed root (protocol/util/workspace-roots.ts). Every code
 * agent and search read files only through here.
 */
import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync } from "node:fs";
import { open, readlink, realpath, type FileHandle } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { AipError } from "../../../protocol/contract/errors.js";
import { isInside } from "../../../protocol/util/paths.js";
import {
  allowRootSuggestion,
  refuseWorkspaceRoot,
  workspaceRootsFromEnv,
} from "../../../protocol/util/workspace-roots.js";

/** Files larger than this are not read (the seed's lesson: never read a whole file to learn it is too large). */
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

/** open(2) flags of every workspace read: no final symlink, no blocking on a FIFO or device (libuv opens with O_CLOEXEC itself). */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** The same for a directory of a walk. */
export const DIR_FLAGS = READ_FLAGS | constants.O_DIRECTORY;

/** The file system calls this module makes; tests pass spies, production the real ones. */
export interface WorkspaceFs {
  realpath(path: string): Promise<string>;
  /** Open without following a final symlink (READ_FLAGS). */
  open(path: string, flags: number): Promise<FileHandle>;
  /** Where an open descriptor really is (`/proc/self/fd/N`). */
  whereIs(handle: FileHandle): Promise<string>;
}

export const nodeFs: WorkspaceFs = {
  realpath: (p) => realpath(p),
  open: (p, flags) => open(p, flags),
  whereIs: (h) => readlink(`/proc/self/fd/${h.fd}`),
};

/** Read at most `maxBytes` bytes through an open handle. */
async function readHead(fh: FileHandle, maxBytes: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(maxBytes);
  let total = 0;
  while (total < maxBytes) {
    const { bytesRead } = await fh.read(buf, total, maxBytes - total, total);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  return buf.subarray(0, total);
}

function notFound(what: string, path: string): AipError {
  return new AipError("AIP_ERR_INVALID_FIELD", `${what} ${JSON.stringify(path)} does not exist`, {
    extensions: { errors: [{ path: what, message: "no such file or directory" }] },
  });
}

/** The real path of the workspace root (must be an existing directory). */
export async function resolveRoot(root: string, fs: WorkspaceFs = nodeFs): Promise<string> {
  if (!isAbsolute(root)) {
    throw new AipError(
      "AIP_ERR_INVALID_FIELD",
      `context.workspace_root: expected an absolute path, got ${JSON.stringify(root)}`,
      {
        extensions: { errors: [{ path: "context.workspace_root", message: "expected an absolute path" }] },
      },
    );
  }
  // Judged before and after resolving symlinks: before, so that the answer for a root outside the
  // allowed ones never tells whether it exists; after, so that a link cannot lead outside them.
  const allowed = workspaceRootsFromEnv();
  const refuse = (why: string): AipError =>
    new AipError("AIP_ERR_FORBIDDEN_PATH", `context.workspace_root ${JSON.stringify(root)} is not allowed: ${why}`, {
      suggestion: allowRootSuggestion(root),
      extensions: { workspace_root: root, allowed_roots: allowed },
    });
  const lexical = refuseWorkspaceRoot(resolve(root), allowed);
  if (lexical !== undefined) throw refuse(lexical);
  let real: string;
  try {
    real = await fs.realpath(root);
  } catch {
    throw notFound("context.workspace_root", root);
  }
  const why = refuseWorkspaceRoot(real, allowed);
  if (why !== undefined) throw refuse(why);
  return real;
}

/**
 * Resolve `filePath` (absolute, or relative to the root) to its real path and check it lies inside
 * the real root: the early answer (FORBIDDEN_PATH or "does not exist") before anything is opened.
 * The read itself checks again, on what it opened (`readContained`).
 */
export async function containedPath(
  realRoot: string,
  filePath: string,
  fs: WorkspaceFs = nodeFs,
  allowMissing = false,
): Promise<string> {
  const lexical = resolve(realRoot, filePath);
  let real: string;
  try {
    real = await fs.realpath(lexical);
  } catch {
    // Nonexistent: judge the lexical path, so `../x` is still refused as an escape rather than "not found".
    if (!isInside(realRoot, lexical)) throw forbidden(filePath);
    if (allowMissing) return lexical;
    throw notFound("context.file_path", filePath);
  }
  if (!isInside(realRoot, real)) throw forbidden(filePath);
  return real;
}

function forbidden(filePath: string): AipError {
  return new AipError(
    "AIP_ERR_FORBIDDEN_PATH",
    `context.file_path ${JSON.stringify(filePath)} resolves outside workspace_root`,
    {
      extensions: { file_path: filePath },
    },
  );
}

/** True when the bytes look binary (a NUL in the first 8 KiB, as git decides). */
export function looksBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

export interface ReadOptions {
  maxBytes?: number;
  fs?: WorkspaceFs;
}

export interface WorkspaceFile {
  /** The real, absolute path (of what was opened). */
  path: string;
  text: string;
  size: number;
  mtimeMs: number;
}

function escaped(path: string): AipError {
  return new AipError(
    "AIP_ERR_FORBIDDEN_PATH",
    `${JSON.stringify(path)} resolves outside workspace_root (checked on the opened file)`,
    {
      extensions: { file_path: path },
    },
  );
}

/**
 * Open `path` and check what was opened: its real path inside `realRoot` (a real path), and, for
 * files, a regular file. Returns the handle (the caller closes it) and that real path.
 */
export async function openContained(
  realRoot: string,
  path: string,
  kind: "file" | "directory",
  fs: WorkspaceFs = nodeFs,
): Promise<{ handle: FileHandle; real: string }> {
  let handle: FileHandle;
  try {
    handle = await fs.open(path, kind === "directory" ? DIR_FLAGS : READ_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "EIO";
    // ELOOP: the last component is a symlink (O_NOFOLLOW); where it points is never opened.
    if (code === "ELOOP" || code === "ENOTDIR") throw escapedOrInvalid(realRoot, path, code);
    // Vanished between the listing (or the early check) and the open, or unreadable: a clear 400.
    throw new AipError(
      "AIP_ERR_INVALID_FIELD",
      `${JSON.stringify(path)} cannot be opened (${code === "ENOENT" ? "it does not exist (any more)" : code})`,
      {
        extensions: { errors: [{ path: "context.file_path", message: code }] },
      },
    );
  }
  try {
    const real = await fs.whereIs(handle);
    if (!isInside(realRoot, real)) throw escaped(path);
    return { handle, real };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

function escapedOrInvalid(realRoot: string, path: string, code: string): AipError {
  if (code === "ELOOP") return escaped(path);
  return new AipError(
    "AIP_ERR_INVALID_FIELD",
    `${JSON.stringify(path)} is not a ${isInside(realRoot, path) ? "readable file" : "path inside the workspace"}`,
    {
      extensions: { errors: [{ path: "context.file_path", message: "not a regular file" }] },
    },
  );
}

/**
 * Read a file of the workspace `realRoot`: open it, check what was opened (inside the root, a regular
 * file, under the size cap, not binary), then read through that descriptor only.
 */
export async function readContained(realRoot: string, path: string, options: ReadOptions = {}): Promise<WorkspaceFile> {
  const fs = options.fs ?? nodeFs;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_FILE_BYTES;
  const { handle, real } = await openContained(realRoot, path, "file", fs);
  try {
    const st = await handle.stat();
    if (!st.isFile()) {
      throw new AipError("AIP_ERR_INVALID_FIELD", `context.file_path ${JSON.stringify(path)} is not a regular file`, {
        extensions: { errors: [{ path: "context.file_path", message: "not a regular file" }] },
      });
    }
    if (st.size > maxBytes) {
      throw new AipError(
        "AIP_ERR_PAYLOAD_TOO_LARGE",
        `${real} is ${st.size} bytes, over the ${maxBytes}-byte limit for source files; it was not read`,
        {
          suggestion: "Send the part you need as context.source_code, or pick a smaller file",
          extensions: { size: st.size, limit: maxBytes },
        },
      );
    }
    const bytes = await readHead(handle, st.size);
    if (looksBinary(bytes)) {
      throw new AipError("AIP_ERR_INVALID_FIELD", `${real} is a binary file`, {
        extensions: { errors: [{ path: "context.file_path", message: "binary file" }] },
      });
    }
    return { path: real, text: bytes.toString("utf8"), size: st.size, mtimeMs: st.mtimeMs };
  } finally {
    await handle.close();
  }
}

/** Containment check, then read: what every request with `file_path` + `workspace_root` goes through. */
export async function readWorkspaceFile(
  root: string,
  filePath: string,
  options: ReadOptions = {},
): Promise<WorkspaceFile & { root: string }> {
  const fs = options.fs ?? nodeFs;
  const realRoot = await resolveRoot(root, fs);
  const real = await containedPath(realRoot, filePath, fs);
  return { ...(await readContained(realRoot, real, options)), root: realRoot };
}

/**
 * The synchronous twin of `readContained`, for TypeScript's compiler host (which reads synchronously):
 * the same open-then-check on the descriptor (inside `realRoot`, a regular file, under the size cap).
 * Returns undefined instead of throwing: the compiler treats that as a missing file.
 */
export function readContainedSync(
  realRoot: string,
  path: string,
  maxBytes = DEFAULT_MAX_FILE_BYTES,
): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch {
    return undefined;
  }
  try {
    const real = readlinkSync(`/proc/self/fd/${fd}`);
    if (!isInside(realRoot, real)) return undefined;
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return undefined;
    const buf = Buffer.allocUnsafe(st.size);
    let total = 0;
    while (total < st.size) {
      const n = readSync(fd, buf, total, st.size - total, total);
      if (n === 0) break;
      total += n;
    }
    const bytes = buf.subarray(0, total);
    return looksBinary(bytes) ? undefined : bytes.toString("utf8");
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
