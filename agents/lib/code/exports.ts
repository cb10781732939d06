/**
 * A module's public API as the compiler sees it (docs/agents.md "summarize"): its own exports, plus what
 * `export * from`, `export * as ns from`, `export { a as b } from` and `import … ; export { … }` bring
 * in from workspace files (resolve.ts), overloads and merged declarations as one entry, default and
 * type-only exports flagged. A cycle or a target that cannot be resolved is listed in `unresolved`.
 */
import { relative, sep } from "node:path";
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import type { ParseCache } from "./cache.js";
import { sliceFunction } from "./cursor.js";
import { dialectOf } from "./language.js";
import { boundIdentifiers } from "./names.js";
import type { Node, ParsedFile } from "./parse.js";
import { newResolveMemo, resolveSpecifier, type ResolveMemo } from "./resolve.js";
import { signatureOf } from "./signature.js";

export interface ExportEntry {
  name: string;
  kind: string;
  /** True for `export type`/`interface` and type-only re-exports: nothing exists at run time. */
  type_only: boolean;
  /** True for the module's default export. */
  default?: true;
  line: number;
  /** For names brought in from another module: the specifier, as written in this module. */
  from?: string;
  /** For an overloaded function: every signature, in order. */
  signatures?: string[];
}

export interface UnresolvedExport {
  from: string;
  line: number;
  reason: string;
  /** Where the re-export is, when not in the summarised module (relative to the workspace root). */
  file?: string;
}

export interface ModuleExports {
  exports: ExportEntry[];
  unresolved: UnresolvedExport[];
}

/** A `export * from` chain deeper than this is listed as unresolved (no workspace needs it). */
export const MAX_REEXPORT_DEPTH = 32;

const TYPE_KINDS = new Set(["type", "interface"]);

type Local =
  | { what: "entry"; entry: ExportEntry; signature?: string }
  /** `export { local as name }` without `from`: what `local` is decides the kind. */
  | { what: "binding"; name: string; local: string; type_only: boolean; line: number }
  | { what: "star"; from: string; as?: string; type_only: boolean; line: number }
  | { what: "named"; from: string; name: string; imported: string; type_only: boolean; line: number };

function nameOf(n: TSESTree.Identifier | TSESTree.StringLiteral): string {
  return n.type === "Identifier" ? n.name : n.value;
}

/** What one top-level statement exports, before anything is resolved. */
function localsOf(stmt: Node, file: ParsedFile): Local[] {
  const line = stmt.loc.start.line;
  const entry = (
    name: string,
    kind: string,
    type_only: boolean,
    extra: Partial<ExportEntry> = {},
    signature?: string,
  ): Local => ({
    what: "entry",
    entry: { name, kind, type_only, line, ...extra },
    ...(signature !== undefined ? { signature } : {}),
  });
  if (stmt.type === "ExportDefaultDeclaration") {
    const d = stmt.declaration as Node;
    const kind =
      d.type === "ClassDeclaration"
        ? "class"
        : d.type === "FunctionDeclaration" || d.type === "TSDeclareFunction"
          ? "function"
          : d.type === "TSInterfaceDeclaration"
            ? "interface"
            : "value";
    return [entry("default", kind, kind === "interface", { default: true })];
  }
  if (stmt.type === "ExportAllDeclaration") {
    return [
      {
        what: "star",
        from: stmt.source.value,
        ...(stmt.exported ? { as: nameOf(stmt.exported) } : {}),
        type_only: stmt.exportKind === "type",
        line,
      },
    ];
  }
  if (stmt.type === "TSExportAssignment") return [entry("export=", "value", false)];
  if (stmt.type !== "ExportNamedDeclaration") return [];
  const d = stmt.declaration;
  if (!d) {
    return stmt.specifiers.map((s): Local => {
      const name = nameOf(s.exported);
      const local = nameOf(s.local);
      const type_only = stmt.exportKind === "type" || s.exportKind === "type";
      const l = s.loc.start.line;
      if (stmt.source) return { what: "named", from: stmt.source.value, name, imported: local, type_only, line: l };
      return { what: "binding", name, local, type_only, line: l };
    });
  }
  switch (d.type) {
    case "FunctionDeclaration":
    case "TSDeclareFunction": {
      if (!d.id) return [];
      const sig = signatureOf(sliceFunction([file.program, stmt, d], 2, file.program, file.source), file.source).text;
      return [entry(d.id.name, "function", false, {}, sig)];
    }
    case "ClassDeclaration":
      return d.id ? [entry(d.id.name, "class", false)] : [];
    case "VariableDeclaration":
      return d.declarations.flatMap((v) => boundIdentifiers(v.id).map((id) => entry(id.name, d.kind, false)));
    case "TSTypeAliasDeclaration":
      return [entry(d.id.name, "type", true)];
    case "TSInterfaceDeclaration":
      return [entry(d.id.name, "interface", true)];
    case "TSEnumDeclaration":
      return [entry(d.id.name, "enum", false)];
    case "TSModuleDeclaration":
      return d.id.type === "Identifier" ? [entry(d.id.name, "namespace", false)] : [];
    case "TSImportEqualsDeclaration":
      return [entry(d.id.name, "alias", d.importKind === "type")];
    default:
      return [];
  }
}

/** What each local name is bound to by the module's own declarations and imports (for `export { a }`). */
function bindingsOf(
  file: ParsedFile,
): Map<string, { kind: string; type_only: boolean; from?: string; imported?: string }> {
  const out = new Map<string, { kind: string; type_only: boolean; from?: string; imported?: string }>();
  for (const stmt of file.program.body) {
    const d =
      (stmt.type === "ExportNamedDeclaration" || stmt.type === "ExportDefaultDeclaration") && stmt.declaration
        ? (stmt.declaration as Node)
        : stmt;
    switch (d.type) {
      case "ImportDeclaration":
        for (const s of d.specifiers) {
          const type_only = d.importKind === "type" || (s.type === "ImportSpecifier" && s.importKind === "type");
          const imported =
            s.type === "ImportDefaultSpecifier"
              ? "default"
              : s.type === "ImportNamespaceSpecifier"
                ? "*"
                : nameOf(s.imported);
          out.set(s.local.name, {
            kind: imported === "*" ? "namespace" : "import",
            type_only,
            from: d.source.value,
            imported,
          });
        }
        break;
      case "FunctionDeclaration":
      case "TSDeclareFunction":
        if (d.id && !out.has(d.id.name)) out.set(d.id.name, { kind: "function", type_only: false });
        break;
      case "ClassDeclaration":
        if (d.id) out.set(d.id.name, { kind: "class", type_only: false });
        break;
      case "VariableDeclaration":
        for (const v of d.declarations)
          for (const id of boundIdentifiers(v.id)) out.set(id.name, { kind: d.kind, type_only: false });
        break;
      case "TSTypeAliasDeclaration":
        out.set(d.id.name, { kind: "type", type_only: true });
        break;
      case "TSInterfaceDeclaration":
        if (!out.has(d.id.name)) out.set(d.id.name, { kind: "interface", type_only: true });
        break;
      case "TSEnumDeclaration":
        out.set(d.id.name, { kind: "enum", type_only: false });
        break;
      case "TSModuleDeclaration":
        if (d.id.type === "Identifier" && !out.has(d.id.name))
          out.set(d.id.name, { kind: "namespace", type_only: false });
        break;
      default:
        break;
    }
  }
  return out;
}

/** One entry per name: overloads keep every signature, merged declarations (interface + namespace) the first kind; type-only only when every part is. */
export function mergeEntries(entries: ExportEntry[], signatures: Map<ExportEntry, string>): ExportEntry[] {
  const byName = new Map<string, { entry: ExportEntry; sigs: string[] }>();
  for (const e of entries) {
    const sig = signatures.get(e);
    const seen = byName.get(e.name);
    if (!seen) {
      byName.set(e.name, { entry: { ...e }, sigs: sig !== undefined ? [sig] : [] });
      continue;
    }
    seen.entry.type_only = seen.entry.type_only && e.type_only;
    if (TYPE_KINDS.has(seen.entry.kind) && !TYPE_KINDS.has(e.kind)) seen.entry.kind = e.kind;
    if (sig !== undefined) seen.sigs.push(sig);
  }
  return [...byName.values()].map(({ entry, sigs }) => (sigs.length > 1 ? { ...entry, signatures: sigs } : entry));
}

interface Walk {
  root: string | undefined;
  cache: ParseCache;
  memo: ResolveMemo;
  /** Exports per real path, once computed. */
  done: Map<string, ModuleExports>;
}

/** The exports of `file` (at real path `abs`, if known) with re-exports followed; `stack`: the paths being computed (a cycle back into one is unresolved). */
async function exportsOfFile(
  file: ParsedFile,
  abs: string | undefined,
  w: Walk,
  stack: string[],
): Promise<ModuleExports> {
  if (abs !== undefined) {
    const known = w.done.get(abs);
    if (known) return known;
  }
  const locals = file.program.body.flatMap((s) => localsOf(s, file));
  const entries: ExportEntry[] = [];
  const signatures = new Map<ExportEntry, string>();
  const unresolved: UnresolvedExport[] = [];
  const bindings = locals.some((l) => l.what === "binding") ? bindingsOf(file) : undefined;
  /** The exports of the module `spec` names, or undefined (listed as unresolved). */
  const target = async (spec: string, line: number): Promise<ModuleExports | undefined> => {
    if (w.root === undefined || abs === undefined) {
      unresolved.push({ from: spec, line, reason: "no workspace_root (or file_path) to resolve it in" });
      return undefined;
    }
    const res = await resolveSpecifier(w.root, abs, spec, w.memo);
    if ("reason" in res) {
      unresolved.push({ from: spec, line, reason: res.reason });
      return undefined;
    }
    if (stack.includes(res.file.path)) {
      unresolved.push({ from: spec, line, reason: `cycle: ${spec} re-exports this module again` });
      return undefined;
    }
    if (stack.length >= MAX_REEXPORT_DEPTH) {
      unresolved.push({ from: spec, line, reason: `re-exports nested more than ${MAX_REEXPORT_DEPTH} deep` });
      return undefined;
    }
    const parsed = w.cache.get(res.file.text, dialectOf(undefined, res.file.path), res.file.path);
    const t = await exportsOfFile(parsed, res.file.path, w, [...stack, res.file.path]);
    // What the target could not follow is part of this module's answer too.
    const file = relative(w.root, res.file.path).split(sep).join("/");
    for (const u of t.unresolved)
      if (!unresolved.some((x) => x.from === u.from && x.line === u.line && x.file === (u.file ?? file)))
        unresolved.push({ ...u, file: u.file ?? file });
    return t;
  };
  /** The export `name` of module `spec`, for `export { name as x } from` and `import { name }; export { x }`. */
  const one = async (spec: string, name: string, line: number): Promise<ExportEntry | undefined> => {
    const t = await target(spec, line);
    if (!t) return undefined;
    const found = t.exports.find((e) => e.name === name);
    if (!found) unresolved.push({ from: spec, line, reason: `${spec} does not export ${name}` });
    return found;
  };
  for (const l of locals) {
    if (l.what === "entry") {
      entries.push(l.entry);
      if (l.signature !== undefined) signatures.set(l.entry, l.signature);
    } else if (l.what === "star") {
      if (l.as !== undefined) {
        // `export * as ns from`: one namespace export, whatever the target holds.
        entries.push({ name: l.as, kind: "namespace", type_only: l.type_only, line: l.line, from: l.from });
        continue;
      }
      const t = await target(l.from, l.line);
      // `export *` re-exports everything but the default.
      for (const e of t?.exports ?? [])
        if (e.name !== "default")
          entries.push({ ...e, type_only: e.type_only || l.type_only, line: l.line, from: l.from });
    } else if (l.what === "named") {
      const found = await one(l.from, l.imported, l.line);
      const base = found ?? { kind: "re-export", type_only: false };
      entries.push({
        name: l.name,
        kind: base.kind,
        type_only: base.type_only || l.type_only,
        line: l.line,
        from: l.from,
        ...(l.name === "default" ? { default: true as const } : {}),
      });
    } else {
      const b = bindings?.get(l.local);
      let kind = b?.kind ?? "binding";
      let typeOnly = l.type_only || (b?.type_only ?? false);
      if (b?.from !== undefined && b.imported !== undefined && b.imported !== "*") {
        const found = await one(b.from, b.imported, l.line);
        if (found) {
          kind = found.kind;
          typeOnly = typeOnly || found.type_only;
        }
      }
      entries.push({
        name: l.name,
        kind,
        type_only: typeOnly,
        line: l.line,
        ...(b?.from !== undefined ? { from: b.from } : {}),
        ...(l.name === "default" ? { default: true as const } : {}),
      });
    }
  }
  // Own declarations shadow what `export *` brings in (TypeScript's rule): they come first in the merge.
  const own = entries.filter(
    (e) => e.from === undefined || !locals.some((l) => l.what === "star" && l.as === undefined && l.from === e.from),
  );
  const starred = entries.filter((e) => !own.includes(e) && !own.some((o) => o.name === e.name));
  const result = { exports: mergeEntries([...own, ...starred], signatures), unresolved };
  if (abs !== undefined) w.done.set(abs, result);
  return result;
}

/** The module's exports with re-exports followed into the workspace (when `root` and `abs` are known). */
export async function moduleExports(
  file: ParsedFile,
  abs: string | undefined,
  root: string | undefined,
  cache: ParseCache,
): Promise<ModuleExports> {
  return exportsOfFile(
    file,
    abs,
    { root, cache, memo: newResolveMemo(), done: new Map() },
    abs !== undefined ? [abs] : [],
  );
}
