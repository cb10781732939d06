/** The one path-containment predicate. Callers resolve symlinks (realpath) first; this only compares. */
import { createHash } from "node:crypto";
import { isAbsolute, relative, resolve, sep } from "node:path";

/** How a health report names a workspace or file: a digest of its path, so that no client's path is shown. */
export function workspaceId(root: string): string {
  return createHash("sha256").update(root).digest("hex").slice(0, 16);
}

/** True when `path` is `root` itself or lies below it, after lexical normalisation of both. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(resolve(root), resolve(root, path));
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** True when `path` is inside any of `roots`. */
export function isInsideAny(roots: readonly string[], path: string): boolean {
  return roots.some((root) => isInside(root, path));
}
