/**
 * summarize on Python: the outline from the language layer, and the public API as Python defines it:
 * `__all__` when the module sets it (every form), else the module's top-level names that do not start
 * with `_`. Star imports (`from .x import *`) bring in the target's public names; a package's
 * `__init__.py` binds the submodules it imports. Imports are followed into the workspace files the
 * import system would load (modules.ts); a cycle or a target outside the workspace is listed in
 * `unresolved_exports`, never dropped.
 */
import { basename, dirname, isAbsolute, relative, sep } from "node:path";
import type { CodeLanguage, Declaration } from "../lib/code/languages/types.js";
import { pythonLanguage, pythonPartial, pythonSignature } from "../lib/code/languages/python/report.js";
import type { PythonDocument } from "../lib/code/languages/python/index.js";
import { firstSentence } from "../lib/code/languages/python/document.js";
import { importRoots, resolveModule, type ResolvedModule } from "../lib/code/languages/python/modules.js";
import type { SignatureInfo } from "../lib/code/signature.js";
import { readContainedSync } from "../lib/code/workspace.js";
import type { ExportEntry, UnresolvedExport } from "../lib/code/exports.js";
import type { ClassEntry, ConstEntry, MemberEntry, Outline, TypeEntry } from "./outline.js";

export { pythonLanguage, pythonPartial, pythonSignature };

/** Star imports followed deeper than this are listed as unresolved. */
export const MAX_STAR_DEPTH = 32;

function member(d: Declaration): MemberEntry {
  const statik = d.decorators.includes("staticmethod") || d.decorators.includes("classmethod");
  const kind =
    d.kind === "property"
      ? "property"
      : d.kind === "class"
        ? "property"
        : d.name === "__init__"
          ? "constructor"
          : d.decorators.includes("property") ||
              d.decorators.includes("cached_property") ||
              d.decorators.includes("functools.cached_property")
            ? "getter"
            : d.decorators.some((x) => x.endsWith(".setter"))
              ? "setter"
              : "method";
  return {
    name: d.name,
    kind: kind as MemberEntry["kind"],
    static: statik,
    ...(d.name.startsWith("_") && !/^__.*__$/.test(d.name) ? { access: "private" } : {}),
    signature: d.signature,
    doc: d.summary,
    line: d.line_start,
    ...(d.kind === "class" ? { nested_class: true } : {}),
  } as MemberEntry;
}

/** The outline of a Python module in the shape TS outlines have (protocol/contract/actions.ts OutlineSchema). */
export function pythonOutline(doc: PythonDocument, isPublic: (name: string) => boolean): Outline {
  const functions: SignatureInfo[] = [];
  const classes: ClassEntry[] = [];
  const types: TypeEntry[] = [];
  const consts: ConstEntry[] = [];
  for (const d of doc.outline) {
    if (d.kind === "function") functions.push(pythonSignature(d, isPublic(d.name), doc.source));
    else if (d.kind === "class")
      classes.push({
        name: d.name,
        exported: isPublic(d.name),
        ...(d.bases && d.bases.length > 0 ? { extends: d.bases.join(", ") } : {}),
        bases: d.bases ?? [],
        decorators: d.decorators,
        doc: d.summary,
        line_start: d.line_start,
        line_end: d.line_end,
        members: d.children.map(member),
      } as ClassEntry);
    else if (d.kind === "type")
      types.push({
        name: d.name,
        kind: "type",
        exported: isPublic(d.name),
        doc: d.summary,
        line_start: d.line_start,
        line_end: d.line_end,
      });
    else if (d.kind === "constant" || d.kind === "variable")
      consts.push({
        name: d.name,
        kind: d.kind === "constant" ? "const" : "var",
        ...(d.type !== undefined ? { type: d.type } : {}),
        exported: isPublic(d.name),
        doc: d.summary,
        line: d.line_start,
        ...(d.value !== undefined ? { value: d.value } : {}),
      } as ConstEntry);
  }
  return {
    lines: doc.lines,
    // the first paragraph's sentence: a module docstring often has no full stop before its examples
    module_doc: firstSentence(doc.module_doc),
    imports: doc.imports.map((i) => ({
      from: i.from,
      names: i.names.map((n) => (n.name === n.imported || i.module ? n.name : `${n.imported} as ${n.name}`)),
      line: i.line,
    })),
    exports: [],
    functions,
    classes,
    types,
    consts,
  };
}

interface ApiContext {
  root: string;
  py: CodeLanguage<PythonDocument>;
  docs: Map<string, PythonDocument | null>;
  /** Whether a workspace file installs an import hook, by path (each file is read once). */
  hooks: Map<string, boolean>;
  unresolved: UnresolvedExport[];
  rel(path: string): string;
}

interface ApiName {
  name: string;
  kind: string;
  line: number;
  from?: string;
}

function read(ctx: ApiContext, path: string): PythonDocument | undefined {
  let d = ctx.docs.get(path);
  if (d === undefined) {
    const text = readContainedSync(ctx.root, path);
    d = text === undefined ? null : ctx.py.parse(text, ctx.rel(path));
    ctx.docs.set(path, d);
  }
  return d ?? undefined;
}

function kindOf(doc: PythonDocument, name: string): { kind: string; line: number } | undefined {
  let found: Declaration | undefined;
  for (const d of doc.outline) if (d.name === name) found = d;
  if (found) return { kind: found.kind === "import" ? "import" : found.kind, line: found.line_start };
  const b = doc.bindings.find((x) => x.name === name);
  return b ? { kind: b.kind === "module" ? "variable" : b.kind, line: b.line } : undefined;
}

/**
 * The public names of the module in `doc` (at `path`, when it is a workspace file), following star
 * imports and `x.__all__` references. `stack` holds the modules being resolved (a cycle stops there).
 */
function publicNames(ctx: ApiContext, doc: PythonDocument, path: string | undefined, stack: string[]): ApiName[] {
  const out = new Map<string, ApiName>();
  const here = path !== undefined && stack.length > 0 ? ctx.rel(path) : undefined;
  const note = (u: UnresolvedExport): void => {
    if (!ctx.unresolved.some((x) => x.from === u.from && x.line === u.line && x.file === u.file))
      ctx.unresolved.push(u);
  };
  const follow = (from: string, level: number, name: string, line: number): ApiName[] | undefined => {
    if (path === undefined) {
      note({ from, line, reason: "no workspace_root to follow imports in", ...(here ? { file: here } : {}) });
      return undefined;
    }
    const target = resolveModule(path, level, name, ctx.root, importRoots(ctx.root, path));
    if (!target) {
      note({
        from,
        line,
        reason: level > 0 ? "no such module in the workspace" : "not a module of the workspace",
        ...(here ? { file: here } : {}),
      });
      return undefined;
    }
    if (target.kind === "namespace") return [];
    if (stack.includes(target.path) || target.path === path) {
      note({
        from,
        line,
        reason: `cyclic import (${[...stack, path, target.path].map((p) => ctx.rel(p)).join(" -> ")})`,
        ...(here ? { file: here } : {}),
      });
      return undefined;
    }
    if (stack.length >= MAX_STAR_DEPTH) {
      note({
        from,
        line,
        reason: `star imports nested deeper than ${MAX_STAR_DEPTH}`,
        ...(here ? { file: here } : {}),
      });
      return undefined;
    }
    const tdoc = read(ctx, target.path);
    if (!tdoc) {
      note({ from, line, reason: "could not be read", ...(here ? { file: here } : {}) });
      return undefined;
    }
    return publicNames(ctx, tdoc, target.path, [...stack, path]);
  };
  const ex = doc.exports;
  if (ex.declared !== undefined) {
    for (const name of ex.declared) {
      const k = kindOf(doc, name);
      out.set(name, { name, kind: k?.kind ?? "unknown", line: k?.line ?? ex.line ?? 1 });
    }
    for (const ref of ex.references) {
      // `from .x import __all__ as a` or `import .x` then `x.__all__`: the module bound to `ref`
      const imp = doc.imports.find((i) => i.names.some((n) => n.name === ref));
      const n = imp?.names.find((x) => x.name === ref);
      if (!imp || !n) {
        note({
          from: `${ref}.__all__`,
          line: ex.line ?? 1,
          reason: "the module it names is not imported here",
          ...(here ? { file: here } : {}),
        });
        continue;
      }
      const modName = imp.module ? n.imported : [imp.from.replace(/^\.+/, ""), n.imported].filter(Boolean).join(".");
      for (const a of follow(imp.module ? n.imported : `${imp.from}.${n.imported}`, imp.level, modName, imp.line) ?? [])
        if (!out.has(a.name)) out.set(a.name, { ...a, from: imp.from });
    }
    return [...out.values()];
  }
  for (const b of doc.bindings) {
    if (b.name.startsWith("_")) continue;
    const k = kindOf(doc, b.name);
    const imp = k?.kind === "import" ? doc.imports.find((i) => i.names.some((n) => n.name === b.name)) : undefined;
    out.set(b.name, { name: b.name, kind: k?.kind ?? "variable", line: b.line, ...(imp ? { from: imp.from } : {}) });
  }
  const isInit = path !== undefined && /^__init__\.pyi?$/.test(basename(path));
  for (const r of doc.runtime ?? [])
    note({ from: r.what, line: r.line, reason: RUNTIME_REASON, ...(here ? { file: here } : {}) });
  for (const imp of doc.imports) {
    if (path !== undefined && !imp.star) hookOf(ctx, path, imp, note, here);
    if (imp.star) {
      for (const a of follow(imp.from, imp.level, imp.from.replace(/^\.+/, ""), imp.line) ?? [])
        if (!out.has(a.name)) out.set(a.name, { ...a, line: imp.line, from: imp.from });
    }
  }
  // Loading a package's submodule binds it in the package, whoever imports it while the package's
  // `__init__.py` runs (`from .x import a` binds `x`; so does `x` imported by another submodule).
  if (isInit) for (const sub of loadedSubmodules(ctx, doc, path)) if (!out.has(sub.name)) out.set(sub.name, sub);
  // `del x` after x was bound (or star-imported) takes it out of the namespace
  for (const d of doc.deleted ?? []) {
    const n = out.get(d.name);
    if (n && n.line < d.line) out.delete(d.name);
  }
  return [...out.values()].sort((a, b) => a.line - b.line);
}

/** The most workspace modules followed to find the submodules a package's `__init__.py` loads. */
export const MAX_LOADED_MODULES = 256;

/** The workspace files an import statement loads (`import a.b` loads `a` and `a.b`; `from a import m` may load `a.m`). */
function importTargets(ctx: ApiContext, path: string, imp: PythonDocument["imports"][number]): ResolvedModule[] {
  const out: (ResolvedModule | undefined)[] = [];
  const roots = importRoots(ctx.root, path);
  if (imp.module) {
    for (const n of imp.names) {
      const parts = n.imported.split(".");
      for (let i = 1; i <= parts.length; i++)
        out.push(resolveModule(path, 0, parts.slice(0, i).join("."), ctx.root, roots));
    }
  } else {
    const base = imp.from.replace(/^\.+/, "");
    const parts = base ? base.split(".") : [];
    if (imp.level > 0) out.push(resolveModule(path, imp.level, "", ctx.root, roots));
    for (let i = 1; i <= parts.length; i++)
      out.push(resolveModule(path, imp.level, parts.slice(0, i).join("."), ctx.root, roots));
    if (!imp.star)
      for (const n of imp.names)
        out.push(resolveModule(path, imp.level, [base, n.imported].filter(Boolean).join("."), ctx.root, roots));
  }
  return out.filter((m): m is ResolvedModule => m !== undefined);
}

/**
 * The public submodules of the package whose `__init__.py` is `init` that are loaded while it runs:
 * imported by it or, transitively, by any workspace module it loads. Each carries the line of the
 * package's import that loads it first.
 */
function loadedSubmodules(ctx: ApiContext, doc: PythonDocument, init: string): ApiName[] {
  const pkgDir = dirname(init);
  const seen = new Set<string>([init]);
  const found = new Map<string, ApiName>();
  for (const imp of doc.imports) {
    const queue = importTargets(ctx, init, imp);
    while (queue.length > 0 && seen.size < MAX_LOADED_MODULES) {
      const m = queue.shift()!;
      if (seen.has(m.path)) continue;
      seen.add(m.path);
      const r = relative(pkgDir, m.path);
      if (r && !r.startsWith("..") && !isAbsolute(r)) {
        const name = r.split(sep)[0]!.replace(/\.pyi?$/, "");
        if (!name.startsWith("_") && /^[A-Za-z_]\w*$/.test(name) && !found.has(name))
          found.set(name, { name, kind: "module", line: imp.line, from: imp.from });
      }
      if (m.kind === "namespace") continue;
      const d = read(ctx, m.path);
      if (d) for (const i of d.imports) queue.push(...importTargets(ctx, m.path, i));
    }
  }
  return [...found.values()];
}

/**
 * The reason given for a statement that writes a module's namespace at run time: the public API read
 * from the source may then lack names, and says so rather than guess.
 */
export const RUNTIME_REASON =
  "writes a module namespace at run time: the names it adds are not known without running it";
export const HOOK_REASON =
  "imports a workspace module that installs an import hook or writes sys.modules: names added at run time are not known without running it";
const HOOK = /\bsys\.meta_path\b|\bsys\.modules\s*\[[^\]]*\]\s*=[^=]/;

/** A plain import of a workspace module that changes module namespaces when it runs (an import hook). */
function hookOf(
  ctx: ApiContext,
  path: string,
  imp: PythonDocument["imports"][number],
  note: (u: UnresolvedExport) => void,
  here: string | undefined,
): void {
  const targets = imp.module
    ? imp.names.map((n) => resolveModule(path, 0, n.imported, ctx.root))
    : [
        resolveModule(path, imp.level, imp.from.replace(/^\.+/, ""), ctx.root),
        ...imp.names.map((n) =>
          resolveModule(
            path,
            imp.level,
            [imp.from.replace(/^\.+/, ""), n.imported].filter(Boolean).join("."),
            ctx.root,
          ),
        ),
      ];
  for (const t of targets) {
    if (t?.kind !== "module" && t?.kind !== "package") continue;
    if (t.path === path) continue;
    let hook = ctx.hooks.get(t.path);
    if (hook === undefined) {
      hook = HOOK.test(readContainedSync(ctx.root, t.path) ?? "");
      ctx.hooks.set(t.path, hook);
    }
    if (hook) {
      note({ from: imp.from, line: imp.line, reason: HOOK_REASON, ...(here ? { file: here } : {}) });
      return;
    }
  }
}

/** The module's public API and what could not be followed. */
export function pythonApi(
  py: CodeLanguage<PythonDocument>,
  doc: PythonDocument,
  absPath: string | undefined,
  root: string | undefined,
  rel: (p: string) => string,
): { exports: ExportEntry[]; unresolved: UnresolvedExport[] } {
  const ctx: ApiContext = { root: root ?? "/", py, docs: new Map(), hooks: new Map(), unresolved: [], rel };
  const names = publicNames(ctx, doc, root !== undefined ? absPath : undefined, []);
  return {
    exports: names.map((n) => ({
      name: n.name,
      kind: n.kind,
      type_only: false,
      line: n.line,
      ...(n.from !== undefined ? { from: n.from } : {}),
    })),
    unresolved: ctx.unresolved,
  };
}
