/**
 * Where Python's import system would find a module of the workspace: the roots on `sys.path` a
 * workspace has (the directory above the file's top package, `src/`, the workspace root), relative
 * imports from a module's package, regular packages (`__init__.py`), stubs (`.pyi`) and namespace
 * packages (a directory without `__init__.py`). Only files inside the workspace are considered.
 */
import { existsSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function inside(root: string, p: string): boolean {
  const r = relative(root, p);
  return r === "" || (!r.startsWith("..") && !r.startsWith(sep) && r !== "..");
}

export interface ResolvedModule {
  /** The file that runs (`x.py`, `x/__init__.py`), or the directory of a namespace package. */
  path: string;
  kind: "module" | "package" | "namespace";
}

/** The directory above the outermost regular package holding `file` (where `import top.pkg.mod` starts). */
export function packageRootOf(file: string, root: string): string {
  let dir = dirname(file);
  while (inside(root, dirname(dir)) && dir !== root && existsSync(join(dir, "__init__.py"))) dir = dirname(dir);
  return dir;
}

/** The roots a workspace's code imports from, most specific first, without duplicates. */
export function importRoots(root: string, file?: string): string[] {
  const out = [file ? packageRootOf(file, root) : undefined, join(root, "src"), root];
  return [...new Set(out.filter((d): d is string => d !== undefined && isDir(d)))];
}

/** `base/a/b` as a module: `b.py`, `b.pyi`, `b/__init__.py`, `b/__init__.pyi`, or a namespace directory. */
function moduleAt(base: string, parts: readonly string[], root: string): ResolvedModule | undefined {
  const p = join(base, ...parts);
  if (!inside(root, p)) return undefined;
  for (const init of ["__init__.py", "__init__.pyi"])
    if (isFile(join(p, init))) return { path: join(p, init), kind: "package" };
  for (const ext of [".py", ".pyi"]) if (isFile(p + ext)) return { path: p + ext, kind: "module" };
  if (parts.length > 0 && isDir(p)) return { path: p, kind: "namespace" };
  return undefined;
}

/**
 * The workspace module an import names, seen from `fromFile`: `level` leading dots (relative to its
 * package), then the dotted `name` ("" for `from . import m`). Undefined when it is not in the workspace.
 */
export function resolveModule(
  fromFile: string,
  level: number,
  name: string,
  root: string,
  roots = importRoots(root, fromFile),
): ResolvedModule | undefined {
  const parts = name ? name.split(".") : [];
  if (level > 0) {
    let base = dirname(fromFile);
    for (let i = 1; i < level; i++) base = dirname(base);
    if (!inside(root, base)) return undefined;
    if (parts.length === 0) {
      const init = ["__init__.py", "__init__.pyi"].map((f) => join(base, f)).find(isFile);
      return init ? { path: init, kind: "package" } : { path: base, kind: "namespace" };
    }
    return moduleAt(base, parts, root);
  }
  for (const r of roots) {
    const m = moduleAt(r, parts, root);
    if (m) return m;
  }
  return undefined;
}

/** The dotted module name of a workspace file under one of `roots` (`src/pkg/mod.py` → `pkg.mod`). */
export function moduleNameOf(file: string, roots: readonly string[]): { name: string; root: string } | undefined {
  for (const r of roots) {
    if (!inside(r, file)) continue;
    const rel = relative(r, file).split(sep);
    const last = rel[rel.length - 1]!.replace(/\.pyi?$/, "");
    const parts = last === "__init__" ? rel.slice(0, -1) : [...rel.slice(0, -1), last];
    if (parts.length > 0 && parts.every((p) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(p)))
      return { name: parts.join("."), root: r };
  }
  return undefined;
}
