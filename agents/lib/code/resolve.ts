/**
 * Resolving a module specifier to a workspace file as TypeScript resolves it (docs/agents.md "summarize"):
 * relative specifiers, extensions (`.js` → `.ts`, `.jsx` → `.tsx`, `.mjs` → `.mts`, `.cjs` → `.cts`,
 * none → `.ts`/`.tsx`/`.d.ts`/`.js`/`.jsx`), directory `index` files, and the workspace's tsconfig.json
 * `compilerOptions.paths` (with `baseUrl`). Files are found and read only through workspace.ts (the
 * containment check); nothing outside the workspace is read.
 */
import { dirname, resolve } from "node:path";
import { containedPath, readContained, type WorkspaceFile } from "./workspace.js";
import { ts } from "./typescript.js";

/** What a specifier resolved to: the file, or why not. */
export type Resolution = { file: WorkspaceFile } | { reason: string };

const JS_TO_TS: Record<string, string[]> = {
  ".js": [".ts", ".tsx", ".d.ts"],
  ".jsx": [".tsx"],
  ".mjs": [".mts", ".d.mts"],
  ".cjs": [".cts", ".d.cts"],
};
const BARE = [".ts", ".tsx", ".d.ts", ".js", ".jsx"];

/** The candidate files for a path without resolution, in TypeScript's order. */
export function candidatesFor(base: string): string[] {
  const out: string[] = [];
  const ext = /\.(?:[mc]?js|jsx)$/.exec(base)?.[0];
  if (ext) for (const e of JS_TO_TS[ext]!) out.push(base.slice(0, -ext.length) + e);
  if (/\.(?:[mc]?ts|tsx)$/.test(base)) out.push(base);
  for (const e of BARE) out.push(base + e);
  if (ext) out.push(base);
  for (const e of BARE) out.push(`${base}/index${e}`);
  return out;
}

interface PathsConfig {
  baseUrl: string;
  paths: [string, string[]][];
}

/** tsconfig.json's `paths` (and `baseUrl`) at the workspace root, read once per root and request. */
async function pathsConfig(
  root: string,
  memo: Map<string, Promise<PathsConfig | undefined>>,
): Promise<PathsConfig | undefined> {
  let p = memo.get(root);
  if (!p) {
    p = (async () => {
      try {
        const file = await readContained(root, await containedPath(root, "tsconfig.json"), { maxBytes: 256 * 1024 });
        const json = ts.parseConfigFileTextToJson("tsconfig.json", file.text).config as
          { compilerOptions?: { baseUrl?: string; paths?: Record<string, string[]> } } | undefined;
        const opts = json?.compilerOptions;
        if (!opts?.paths) return undefined;
        return { baseUrl: resolve(root, opts.baseUrl ?? "."), paths: Object.entries(opts.paths) };
      } catch {
        return undefined;
      }
    })();
    memo.set(root, p);
  }
  return p;
}

/** The bases a non-relative specifier maps to through `paths` (a pattern with at most one `*`). */
function viaPaths(spec: string, config: PathsConfig): string[] {
  const out: string[] = [];
  for (const [pattern, targets] of config.paths) {
    const star = pattern.indexOf("*");
    let captured: string | undefined;
    if (star === -1) captured = pattern === spec ? "" : undefined;
    else {
      const pre = pattern.slice(0, star);
      const post = pattern.slice(star + 1);
      if (spec.length >= pre.length + post.length && spec.startsWith(pre) && spec.endsWith(post))
        captured = spec.slice(pre.length, spec.length - post.length);
    }
    if (captured === undefined) continue;
    for (const t of targets) out.push(resolve(config.baseUrl, t.replace("*", captured)));
  }
  return out;
}

/** Memos for one request's resolutions. */
export interface ResolveMemo {
  paths: Map<string, Promise<PathsConfig | undefined>>;
}

export function newResolveMemo(): ResolveMemo {
  return { paths: new Map() };
}

/** Resolve `spec` imported from `fromFile` (a real path inside `root`) to a workspace file, or say why it is not one. */
export async function resolveSpecifier(
  root: string,
  fromFile: string,
  spec: string,
  memo: ResolveMemo = newResolveMemo(),
): Promise<Resolution> {
  let bases: string[];
  if (spec.startsWith("./") || spec.startsWith("../") || spec === "." || spec === "..")
    bases = [resolve(dirname(fromFile), spec)];
  else {
    const config = await pathsConfig(root, memo.paths);
    bases = config ? viaPaths(spec, config) : [];
    if (bases.length === 0) return { reason: `"${spec}" is a package, not a workspace file` };
  }
  for (const base of bases) {
    for (const candidate of candidatesFor(base)) {
      let real: string;
      try {
        real = await containedPath(root, candidate);
      } catch {
        continue;
      }
      try {
        return { file: await readContained(root, real) };
      } catch (err) {
        return { reason: `${candidate} could not be read: ${(err as Error).message}` };
      }
    }
  }
  return {
    reason: `no workspace file for "${spec}" (tried ${candidatesFor(bases[0]!).length} names${bases.length > 1 ? ` under ${bases.length} paths` : ""})`,
  };
}
