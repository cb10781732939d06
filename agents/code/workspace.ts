/**
 * Reading workspace files: the one containment check (realpath, then `isInside`), `stat` before
 * `read` with a size cap, binary files skipped. Every code agent reads files only through here.
 */
import { open, realpath, stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { AipError } from "../../protocol/errors.js";
import { isInside } from "../../protocol/paths.js";

/** Files larger than this are not read (the seed's lesson: never read a whole file to learn it is too large). */
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

/** The file system calls this module makes; tests pass spies, production the real ones. */
export interface WorkspaceFs {
  realpath(path: string): Promise<string>;
  stat(path: string): Promise<{ size: number; mtimeMs: number; isFile(): boolean }>;
  /** Read at most `maxBytes` bytes of a file. */
  readHead(path: string, maxBytes: number): Promise<Buffer>;
}

async function readHead(path: string, maxBytes: number): Promise<Buffer> {
  const fh = await open(path, "r");
  try {
    const buf = Buffer.allocUnsafe(maxBytes);
    let total = 0;
    while (total < maxBytes) {
      const { bytesRead } = await fh.read(buf, total, maxBytes - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    return buf.subarray(0, total);
  } finally {
    await fh.close();
  }
}

export const nodeFs: WorkspaceFs = { realpath: (p) => realpath(p), stat: (p) => stat(p), readHead };

function notFound(what: string, path: string): AipError {
  return new AipError("AIP_ERR_INVALID_FIELD", `${what} ${JSON.stringify(path)} does not exist`, {
    extensions: { errors: [{ path: what, message: "no such file or directory" }] },
  });
}

/** The real path of the workspace root (must be an existing directory). */
export async function resolveRoot(root: string, fs: WorkspaceFs = nodeFs): Promise<string> {
  if (!isAbsolute(root)) {
    throw new AipError("AIP_ERR_INVALID_FIELD", `context.workspace_root: expected an absolute path, got ${JSON.stringify(root)}`, {
      extensions: { errors: [{ path: "context.workspace_root", message: "expected an absolute path" }] },
    });
  }
  try {
    return await fs.realpath(root);
  } catch {
    throw notFound("context.workspace_root", root);
  }
}

/**
 * Resolve `filePath` (absolute, or relative to the root) to its real path and check it lies inside
 * the real root. The one containment check: symlinks are resolved before comparing.
 */
export async function containedPath(realRoot: string, filePath: string, fs: WorkspaceFs = nodeFs, allowMissing = false): Promise<string> {
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
  return new AipError("AIP_ERR_FORBIDDEN_PATH", `context.file_path ${JSON.stringify(filePath)} resolves outside workspace_root`, {
    extensions: { file_path: filePath },
  });
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
  /** The real, absolute path. */
  path: string;
  text: string;
  size: number;
  mtimeMs: number;
}

/** Read a file already known to be inside the workspace: stat first, refuse large and binary files. */
export async function readContained(realPath: string, options: ReadOptions = {}): Promise<WorkspaceFile> {
  const fs = options.fs ?? nodeFs;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_FILE_BYTES;
  const st = await fs.stat(realPath);
  if (!st.isFile()) {
    throw new AipError("AIP_ERR_INVALID_FIELD", `context.file_path ${JSON.stringify(realPath)} is not a regular file`, {
      extensions: { errors: [{ path: "context.file_path", message: "not a regular file" }] },
    });
  }
  if (st.size > maxBytes) {
    throw new AipError("AIP_ERR_PAYLOAD_TOO_LARGE", `${realPath} is ${st.size} bytes, over the ${maxBytes}-byte limit for source files; it was not read`, {
      suggestion: "Send the part you need as context.source_code, or pick a smaller file",
      extensions: { size: st.size, limit: maxBytes },
    });
  }
  const bytes = await fs.readHead(realPath, st.size);
  if (looksBinary(bytes)) {
    throw new AipError("AIP_ERR_INVALID_FIELD", `${realPath} is a binary file`, {
      extensions: { errors: [{ path: "context.file_path", message: "binary file" }] },
    });
  }
  return { path: realPath, text: bytes.toString("utf8"), size: st.size, mtimeMs: st.mtimeMs };
}

/** Containment check, then read: what every request with `file_path` + `workspace_root` goes through. */
export async function readWorkspaceFile(root: string, filePath: string, options: ReadOptions = {}): Promise<WorkspaceFile & { root: string }> {
  const fs = options.fs ?? nodeFs;
  const realRoot = await resolveRoot(root, fs);
  const real = await containedPath(realRoot, filePath, fs);
  return { ...(await readContained(real, options)), root: realRoot };
}
