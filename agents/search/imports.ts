/**
 * The names a file imports from other files of the workspace, for the cross-file `uses` words of the
 * search index (docs/agents.md "search"). A relative specifier is reduced to a *module key* (the
 * target's path without its extension and without a trailing `/index`), which a file's own key meets:
 * `./retry-timing.js` from `source/core/Ky.ts` is `source/core/retry-timing`, the key of
 * `source/core/retry-timing.ts`. No file system access and no resolution against the files present (unlike
 * `agents/lib/code/resolve.ts`, which summarize uses): what a file imports does not depend on which files
 * were indexed before it, so the incremental index stays correct whatever order files change in.
 * Bare specifiers (packages, tsconfig `paths`) are left out.
 */
import { posix } from "node:path";

export interface ImportedName {
  /** The module key of the file imported from (`moduleKey`). */
  key: string;
  /** The exported name imported (`DEFAULT` for a default import). */
  name: string;
}

/** The exported name a default import (`import delay from "./delay.js"`) imports. */
export const DEFAULT = "default";

/** A default import's local name: `import delay from`, `import Ky, { a } from`, `import Ky, * as ns from`. */
const DEFAULT_BINDING = /^import\s+([A-Za-z_$][\w$]*)\s*(?:,|from\b)/;

/** Extensions a module key drops. */
const CODE_EXTENSIONS = [".d.ts", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];

/** A file's module key: its path without a code extension and without a trailing `index` (`src/a/index.ts` → `src/a`). */
export function moduleKey(path: string): string {
  let p = path;
  const ext = CODE_EXTENSIONS.find((e) => p.endsWith(e));
  if (ext !== undefined) p = p.slice(0, -ext.length);
  if (p === "index") return "";
  if (p.endsWith("/index")) p = p.slice(0, -"/index".length);
  return p;
}

/** The module key a relative specifier of file `from` names; undefined for a bare or escaping specifier. */
export function specifierKey(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith("./") && !specifier.startsWith("../") && specifier !== "." && specifier !== "..")
    return undefined;
  const joined = posix.normalize(posix.join(posix.dirname(from), specifier));
  if (joined === ".." || joined.startsWith("../")) return undefined;
  return moduleKey(joined === "." ? "" : joined);
}

/** Lines an import statement may span (one name a line, as formatters wrap long ones). */
const MAX_IMPORT_LINES = 40;
const FROM = /\bfrom\s*["']([^"'\n]+)["']/;
const REQUIRE = /^(?:const|let|var)\s*\{([^}]*)\}\s*=\s*require\(\s*["']([^"'\n]+)["']\s*\)/;

/** `a`, `a as b`, `type a` (left out), `a: b` (a destructured require): [imported, local], or undefined. */
function binding(part: string, separator: "as" | ":"): [string, string] | undefined {
  const t = part.trim();
  if (t === "" || t.startsWith("type ")) return undefined;
  const words = separator === "as" ? t.split(/\s+as\s+/) : t.split(/\s*:\s*/);
  const imported = words[0]!.trim();
  const local = (words[1] ?? imported).trim();
  return /^[A-Za-z_$][\w$]*$/.test(imported) && /^[A-Za-z_$][\w$]*$/.test(local) ? [imported, local] : undefined;
}

/**
 * The names file `rel` imports from relative specifiers, by local name: the named imports of
 * `import { a, b as c } from "./x"` (a statement may wrap), its default import (`import d from "./x"`:
 * name `DEFAULT`, which the target file's default export meets) and the names of a destructured
 * `const { a, b: c } = require("./x")`. Type-only and namespace imports are left out (a namespaced call
 * `ns.a(` is not read as a call of `a`). One pass over the lines.
 */
export function importedNames(rel: string, lines: readonly string[]): Map<string, ImportedName> {
  const out = new Map<string, ImportedName>();
  const add = (clause: string, specifier: string, separator: "as" | ":"): void => {
    const key = specifierKey(rel, specifier);
    if (key === undefined) return;
    for (const part of clause.split(",")) {
      const b = binding(part, separator);
      if (b) out.set(b[1], { key, name: b[0] });
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("import ") && !line.startsWith("import type ")) {
      let text = line;
      let j = i;
      while (!FROM.test(text) && !text.includes(";") && j + 1 < lines.length && j - i < MAX_IMPORT_LINES)
        text += ` ${lines[++j]!}`;
      i = j;
      const from = FROM.exec(text);
      const open = text.indexOf("{");
      const close = text.indexOf("}");
      if (from && open !== -1 && close > open && close < from.index) add(text.slice(open + 1, close), from[1]!, "as");
      const local = DEFAULT_BINDING.exec(text)?.[1];
      const key = from && local !== undefined ? specifierKey(rel, from[1]!) : undefined;
      if (local !== undefined && key !== undefined) out.set(local, { key, name: DEFAULT });
    } else if (line.startsWith("const") || line.startsWith("let") || line.startsWith("var")) {
      const r = REQUIRE.exec(line);
      if (r) add(r[1]!, r[2]!, ":");
    }
  }
  return out;
}

/** What a file re-exports from relative specifiers (a barrel): names with their targets, and whole modules. */
export interface Reexports {
  /** `export { a, b as c } from "./x"`: the name exported here (c) → the target (`x`'s key, b). */
  named: Map<string, ImportedName>;
  /** `export * from "./x"`: the module keys whose named exports this file passes on. */
  stars: string[];
}

/**
 * The re-exports of file `rel` (docs/agents.md "search"): `export { a, b as c } from "./x"` (a statement
 * may wrap) and `export * from "./x"`; type-only re-exports and `export * as ns` are left out. Calls
 * through a barrel reach the definitions it passes on. One pass over the lines.
 */
export function reexports(rel: string, lines: readonly string[]): Reexports {
  const out: Reexports = { named: new Map(), stars: [] };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("export * from") || line.startsWith("export *from")) {
      const key = FROM.exec(line)?.[1];
      const target = key === undefined ? undefined : specifierKey(rel, key);
      if (target !== undefined) out.stars.push(target);
    } else if (line.startsWith("export {") || line.startsWith("export{")) {
      let text = line;
      let j = i;
      while (
        !FROM.test(text) &&
        !text.includes(";") &&
        !text.includes("}") &&
        j + 1 < lines.length &&
        j - i < MAX_IMPORT_LINES
      )
        text += ` ${lines[++j]!}`;
      i = j;
      const from = FROM.exec(text);
      const key = from ? specifierKey(rel, from[1]!) : undefined;
      const open = text.indexOf("{");
      const close = text.indexOf("}");
      if (key === undefined || open === -1 || close < open) continue;
      for (const part of text.slice(open + 1, close).split(",")) {
        const b = binding(part, "as");
        if (b) out.named.set(b[1], { key, name: b[0] });
      }
    }
  }
  return out;
}
