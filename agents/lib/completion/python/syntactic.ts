/**
 * complete-lite's syntactic engine for Python (docs/agents.md, "Python completion"), on the language
 * layer's document (agents/lib/code/languages/python): no interpreter, no checker.
 * - identifiers: the names in scope at the cursor (locals, parameters, `for`/`with`/`except` targets,
 *   module names, imports, builtins), keywords where a statement may start;
 * - `self.`: every attribute the class has (methods, class attributes, properties, `self.x` assigned or
 *   read in any method), those of its workspace base classes included;
 * - `module.`: a workspace module's public names (`__all__`, else the names not starting with `_`);
 * - `Class.` and a variable assigned `Class(...)`: that class's members;
 * - any other receiver: the names used after the same receiver in the buffer, then after any.
 * Ranked as TypeScript's are: how the label matches the prefix, how often and how near it is used in
 * the buffer, the scope it comes from.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve, sep } from "node:path";
import type { Declaration, ImportEntry, ScopeName } from "../../code/languages/types.js";
import { python, type PythonDocument } from "../../code/languages/python/index.js";
import { lineAt } from "../../code/position.js";
import { PLACEHOLDER } from "../../code/placeholder.js";
import { completionContext } from "../context.js";
import { likeness, words } from "../member-rank.js";
import { matchScore, type CompletionItem } from "../rank.js";
import { usageOf, type Usage } from "../typed.js";
import type { WorkspaceUse } from "./member-use.js";
import { emptyFeatures, MEMBER_FEATURES, memberRecorder, memberScore, type MemberRow } from "./member-ranker.js";
import { BUILTIN_PRIOR, MEMBER_PRIOR } from "./prior.js";

/** Python's keywords; those that may start a statement are offered there only, the rest anywhere. */
const STATEMENT_KEYWORDS = [
  "assert",
  "async",
  "break",
  "class",
  "continue",
  "def",
  "del",
  "elif",
  "else",
  "except",
  "finally",
  "for",
  "from",
  "global",
  "if",
  "import",
  "nonlocal",
  "pass",
  "raise",
  "return",
  "try",
  "while",
  "with",
  "yield",
];
const EXPRESSION_KEYWORDS = ["and", "await", "in", "is", "lambda", "not", "or", "None", "True", "False"];
/** The keywords that cannot name anything (`match`, `case` and `type` are soft: `re.match` is an attribute). */
const HARD_KEYWORDS = new Set([...STATEMENT_KEYWORDS, ...EXPRESSION_KEYWORDS]);

/** Bases followed when collecting a class's members (a cycle or a deep hierarchy stops here). */
const MAX_BASE_DEPTH = 6;
/** Workspace modules kept parsed (the least recently used dropped beyond it). */
const MAX_MODULES = 256;
/** A workspace module larger than this is not read for its names (a generated module). */
const MAX_MODULE_BYTES = 2 * 1024 * 1024;

export interface PythonAnswer {
  items: CompletionItem[];
  prefix: string;
  start: number;
  context: "member" | "identifier" | "none";
  receiver?: string;
  receiver_kind?: string;
}

interface Scored {
  label: string;
  kind: string;
  detail: string;
  score: number;
}

/**
 * How often each attribute name follows a `.` and each builtin is named in the standard library's
 * sources (scripts/python-prior.py): the order among members the buffer does not use yet.
 */
function table(pairs: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of pairs.split(" ")) {
    const i = p.lastIndexOf(":");
    if (i > 0) out.set(p.slice(0, i), Number(p.slice(i + 1)));
  }
  return out;
}
const MEMBERS = table(MEMBER_PRIOR);
const BUILTINS = table(BUILTIN_PRIOR);

function prior(t: Map<string, number>, name: string, scale: number): number {
  return 3 * Math.log2(1 + (t.get(name) ?? 0) / scale);
}

/** Parsed workspace modules by path, checked against the file's mtime and size. */
const modules = new Map<string, { key: string; doc: PythonDocument | undefined }>();

function readModule(path: string, root: string | undefined): PythonDocument | undefined {
  let key: string;
  try {
    // A link out of the workspace is not followed: only the workspace's own modules are read.
    if (root !== undefined && !realpathSync(path).startsWith(root + sep)) return undefined;
    const st = statSync(path);
    if (st.size > MAX_MODULE_BYTES) return undefined;
    key = `${st.mtimeMs}:${st.size}`;
  } catch {
    return undefined;
  }
  const hit = modules.get(path);
  if (hit?.key === key) {
    modules.delete(path);
    modules.set(path, hit);
    return hit.doc;
  }
  let doc: PythonDocument | undefined;
  try {
    doc = python.parse(readFileSync(path, "utf8"), path);
  } catch {
    doc = undefined;
  }
  modules.set(path, { key, doc });
  while (modules.size > MAX_MODULES) modules.delete(modules.keys().next().value!);
  return doc;
}

/**
 * The file a module name refers to, as the import system would find it in the workspace: relative to
 * the importing file's package (`level` dots), else from the workspace root, its `src/`, or a folder
 * between the importing file and the root. A package is its `__init__.py`.
 */
export function resolvePythonModule(
  root: string | undefined,
  fromFile: string | undefined,
  module: string,
  level: number,
): string | undefined {
  const parts = module.split(".").filter(Boolean);
  const bases: string[] = [];
  if (level > 0) {
    if (!fromFile) return undefined;
    let dir = dirname(fromFile);
    for (let i = 1; i < level; i++) dir = dirname(dir);
    bases.push(dir);
  } else if (root !== undefined) {
    bases.push(root, join(root, "src"));
    if (fromFile) {
      for (let dir = dirname(fromFile); dir.startsWith(root + sep); dir = dirname(dir)) bases.push(dir);
    }
  }
  for (const b of bases) {
    const p = join(b, ...parts);
    if (root !== undefined && !resolve(p).startsWith(resolve(root))) continue;
    for (const f of [`${p}.py`, `${p}.pyi`, join(p, "__init__.py"), join(p, "__init__.pyi")])
      if (existsSync(f)) return f;
  }
  return undefined;
}

/** The standard library's stubs (typeshed, as the pyright package ships them), or undefined without it. */
let stdlibDir: string | undefined | null = null;
function stdlibStubs(): string | undefined {
  if (stdlibDir === null) {
    try {
      const dir = join(
        dirname(createRequire(import.meta.url).resolve("pyright/package.json")),
        "dist/typeshed-fallback/stdlib",
      );
      stdlibDir = existsSync(join(dir, "builtins.pyi")) ? dir : undefined;
    } catch {
      stdlibDir = undefined;
    }
  }
  return stdlibDir;
}

/** The stub of a standard library module (`os.path` → os/path.pyi), read only as text for its names. */
export function stdlibStub(module: string): string | undefined {
  const dir = stdlibStubs();
  if (!dir || !/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/.test(module)) return undefined;
  const p = join(dir, ...module.split("."));
  for (const f of [`${p}.pyi`, join(p, "__init__.pyi")]) if (existsSync(f)) return f;
  return undefined;
}

interface Where {
  /** The workspace; undefined inside the standard library's stubs. */
  root: string | undefined;
  file: string | undefined;
}

/**
 * A module as an import names it: the workspace's own file first, else the standard library's stub
 * (whose own imports then resolve among the stubs only).
 */
function openModule(
  where: Where,
  module: string,
  level: number,
): { doc: PythonDocument; file: string; where: Where } | undefined {
  const file = resolvePythonModule(where.root, where.file, module, level);
  const doc = file ? readModule(file, where.root) : undefined;
  if (file && doc) return { doc, file, where: { root: where.root, file } };
  if (level > 0) {
    // A relative import inside the stubs.
    if (where.root !== undefined || !where.file) return undefined;
    let dir = dirname(where.file);
    for (let i = 1; i < level; i++) dir = dirname(dir);
    const p = join(dir, ...module.split(".").filter(Boolean));
    for (const f of [`${p}.pyi`, join(p, "__init__.pyi")]) {
      const d = existsSync(f) ? readModule(f, undefined) : undefined;
      if (d) return { doc: d, file: f, where: { root: undefined, file: f } };
    }
    return undefined;
  }
  const stub = stdlibStub(module);
  const sdoc = stub ? readModule(stub, undefined) : undefined;
  return stub && sdoc ? { doc: sdoc, file: stub, where: { root: undefined, file: stub } } : undefined;
}

/** True for a file among the standard library's stubs. */
function isStub(file: string | undefined): boolean {
  const dir = stdlibStubs();
  return file !== undefined && dir !== undefined && file.startsWith(dir + sep);
}

function walk(decls: Declaration[], fn: (d: Declaration) => void): void {
  for (const d of decls) {
    fn(d);
    walk(d.children, fn);
  }
}

/** A class named `name` declared in `doc` (at any depth), or reached through its imports. */
function findClass(
  doc: PythonDocument,
  name: string,
  where: Where,
  depth: number,
): { decl: Declaration; doc: PythonDocument; where: Where } | undefined {
  const dotted = name.split(".");
  if (dotted.length > 1) {
    // `mod.Base`: the module bound by an import, then the class in it.
    const target = moduleOf(doc, dotted.slice(0, -1).join("."), where);
    if (!target) return undefined;
    return findClass(target.doc, dotted.at(-1)!, target.where, depth + 1);
  }
  let found: Declaration | undefined;
  walk(doc.outline, (d) => {
    if (!found && d.kind === "class" && d.name === name) found = d;
  });
  if (found) return { decl: found, doc, where };
  if (depth >= MAX_BASE_DEPTH) return undefined;
  let imported = false;
  for (const imp of doc.imports) {
    const n = imp.names.find((x) => x.name === name);
    if (!n || imp.module) continue;
    imported = true;
    const target = openModule(where, imp.from, imp.level);
    if (target) return findClass(target.doc, n.imported, target.where, depth + 1);
  }
  // Not bound in the module: a builtin class (`Exception`, `dict`, `str`), unless the module defines
  // the name some other way.
  if (!imported && !doc.outline.some((d) => d.name === name) && !where.file?.endsWith(`${sep}builtins.pyi`)) {
    const b = openModule({ root: undefined, file: undefined }, "builtins", 0);
    if (b) {
      let bd: Declaration | undefined;
      for (const d of b.doc.outline) if (!bd && d.kind === "class" && d.name === name) bd = d;
      if (bd) return { decl: bd, doc: b.doc, where: b.where };
    }
  }
  return undefined;
}

/** The imports of a function body above `offset` (`import math` inside a function), as the parser's entries. */
function localImports(source: string, offset: number): ImportEntry[] {
  const out: ImportEntry[] = [];
  const re = /^[ \t]+(?:from[ \t]+(\.*)([\w.]*)[ \t]+)?import[ \t]+([^\n#()]+)$/gm;
  const before = source.slice(Math.max(0, offset - 50_000), offset);
  for (let m = re.exec(before); m; m = re.exec(before)) {
    const from = m[1] !== undefined;
    const names = m[3]!.split(",").flatMap((part) => {
      const x = /^\s*([\w.]+)(?:\s+as\s+(\w+))?\s*$/.exec(part);
      if (!x) return [];
      const imported = x[1]!;
      return [{ name: x[2] ?? (from ? imported : imported.split(".")[0]!), imported }];
    });
    out.push({
      from: from ? `${m[1]}${m[2]}` : (names[0]?.imported ?? ""),
      level: from ? m[1]!.length : 0,
      names,
      star: false,
      module: !from,
      line: 0,
      start: m.index,
      end: m.index + m[0].length,
    });
  }
  return out;
}

/** The workspace module bound to `name` (`import a.b as c` → c; `from . import m` → m), if it is one. */
function moduleOf(
  doc: PythonDocument,
  name: string,
  where: Where,
  offset?: number,
  depth = 0,
): { doc: PythonDocument; file: string; where: Where; imp: ImportEntry } | undefined {
  const [head, ...rest] = name.split(".");
  const imports = offset !== undefined ? [...doc.imports, ...localImports(doc.source, offset)] : doc.imports;
  for (const imp of imports) {
    for (const n of imp.names) {
      if (n.name !== head) continue;
      // `import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`; `from x import m` may bind a submodule.
      const full = imp.module
        ? [n.imported === n.name ? head! : n.imported, ...rest].join(".")
        : [imp.from.replace(/^\.+/, ""), n.imported, ...rest].filter(Boolean).join(".");
      const target = openModule(where, full, imp.level);
      if (target) return { ...target, imp };
      // `from x import m` where x itself imported the module m.
      if (!imp.module && depth < MAX_BASE_DEPTH) {
        const via = openModule(where, imp.from, imp.level);
        const found = via
          ? moduleOf(via.doc, [n.imported, ...rest].join("."), via.where, undefined, depth + 1)
          : undefined;
        if (found) return found;
      }
    }
  }
  return undefined;
}

/** A module's public names: `__all__`, else what it defines and what its `from x import *` bring. */
function moduleMembers(doc: PythonDocument, where: Where, label: string, depth = 0): Member[] {
  const stub = isStub(where.file);
  const kinds = new Map<string, Declaration>();
  for (const d of doc.outline) kinds.set(d.name, d);
  const imported = new Set(doc.imports.flatMap((i) => i.names.map((n) => n.name)));
  // A stub re-exports an import only as `import x as x`: its public names are what it defines.
  // A stub declares its constants by annotation alone (`pi: Final[float]`), which binds no name.
  const annotated = stub ? [...doc.source.matchAll(/^([A-Za-z]\w*)[ \t]*:/gm)].map((m) => m[1]!) : [];
  const names =
    doc.exports.declared ??
    (stub
      ? [...new Set([...kinds.keys(), ...annotated])].filter((n) => !n.startsWith("_") && !imported.has(n))
      : doc.exports.implicit);
  const out: Member[] = names.map((n) => {
    const d = kinds.get(n);
    return {
      name: n,
      kind: d?.kind === "class" ? "class" : d?.kind === "function" ? "function" : "variable",
      detail: d?.signature ?? `from ${label}`,
      distance: 0,
      stub,
    };
  });
  if (doc.exports.declared === undefined && depth < MAX_BASE_DEPTH)
    for (const imp of doc.imports) {
      if (!imp.star) continue;
      const target = openModule(where, imp.from, imp.level);
      if (target) out.push(...moduleMembers(target.doc, target.where, label, depth + 1));
    }
  return out;
}

/** `self.x` (or `cls.x`) names assigned or read in a class's text. */
function selfNames(text: string, self: string): Map<string, number> {
  const out = new Map<string, number>();
  const re = new RegExp(`\\b${self}\\s*\\.\\s*([A-Za-z_]\\w*)`, "g");
  for (let m = re.exec(text); m; m = re.exec(text)) out.set(m[1]!, (out.get(m[1]!) ?? 0) + 1);
  return out;
}

interface Member {
  name: string;
  kind: string;
  detail: string;
  /** 0 for the class itself, 1 for its bases, … */
  distance: number;
  /** Defined in the standard library's stubs (ordered by how often the standard library uses it). */
  stub?: boolean;
  /** The line its definition starts on (1-based), for a method or class attribute. */
  line?: number;
}

/** A class's members, its workspace bases' after its own. */
function classMembers(
  decl: Declaration,
  doc: PythonDocument,
  where: Where,
  seen = new Set<Declaration>(),
  distance = 0,
): Member[] {
  if (seen.has(decl) || seen.size > MAX_BASE_DEPTH * 4) return [];
  seen.add(decl);
  const out: Member[] = [];
  const stub = isStub(where.file);
  for (const c of decl.children) {
    const property = c.decorators.some(
      (d) => d === "property" || d.endsWith(".setter") || d.endsWith("cached_property") || d.endsWith("_attr"),
    );
    out.push({
      name: c.name,
      kind: c.kind === "method" ? (property ? "property" : "method") : c.kind === "class" ? "class" : "property",
      detail: c.signature,
      distance,
      stub,
      line: c.line_start,
    });
  }
  if (!stub)
    for (const name of selfNames(doc.source.slice(decl.start, decl.end), "self").keys())
      out.push({ name, kind: "property", detail: `self.${name}`, distance });
  for (const base of decl.bases ?? []) {
    const b = base.replace(/\[.*$/s, "").trim();
    if (!/^[A-Za-z_][\w.]*$/.test(b)) continue;
    const found = findClass(doc, b, where, 0);
    if (found) out.push(...classMembers(found.decl, found.doc, found.where, seen, distance + 1));
  }
  return out;
}

/**
 * The class a receiver of unknown type looks like: one the buffer defines or imports, named like the
 * receiver (`parser` → `Parser`, `token_parser` → `TokenParser`; `OptionParser` half as well) or having
 * the members the buffer already uses on it (half as well for a single one), with how well it fits.
 */
function lookalikeClass(
  doc: PythonDocument,
  where: Where,
  recv: string,
  used: ReadonlySet<string>,
): { members: Member[]; fit: number } | undefined {
  const recvKey = recv.replace(/_/g, "").toLowerCase();
  if (recvKey.length < 3) return undefined;
  const nameFit = (cls: string): number => {
    const k = cls.replace(/_/g, "").toLowerCase();
    return k === recvKey ? 1 : k.endsWith(recvKey) ? 0.5 : 0;
  };
  const classes: { decl: Declaration; doc: PythonDocument; where: Where }[] = [];
  walk(doc.outline, (d) => {
    if (d.kind === "class") classes.push({ decl: d, doc, where });
  });
  // Imported classes are opened only when named like the receiver (opening every import costs too much).
  for (const imp of doc.imports)
    for (const n of imp.names)
      if (!imp.module && nameFit(n.name) > 0) {
        const found = findClass(doc, n.name, where, 0);
        if (found) classes.push(found);
      }
  let best: { members: Member[]; fit: number } | undefined;
  for (const c of classes) {
    let fit = nameFit(c.decl.name);
    if (fit < 1 && used.size === 0) continue;
    const members = classMembers(c.decl, c.doc, c.where);
    if (used.size > 0) {
      const names = new Set(members.map((m) => m.name));
      const hits = [...used].filter((u) => names.has(u)).length;
      fit = Math.max(fit, (hits / used.size) * (used.size > 1 ? 1 : 0.5));
    }
    if (fit >= 0.5 && (!best || fit > best.fit)) best = { members, fit };
  }
  return best;
}

/** The members the buffer uses after the receiver word `recv` (`recv.name` counts), and how often. */
function usedAfter(member: ReadonlyMap<string, number>, recv: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const [pair, n] of member) {
    const dot = pair.lastIndexOf(".");
    if (pair.slice(0, dot) === recv) out.set(pair.slice(dot + 1), n);
  }
  return out;
}

/** The innermost class whose body holds `offset`, and the name its method's first parameter has. */
function enclosingClass(doc: PythonDocument, offset: number): { decl: Declaration; self: string } | undefined {
  let cls: Declaration | undefined;
  let method: Declaration | undefined;
  walk(doc.outline, (d) => {
    if (offset < d.start || offset > d.end) return;
    if (d.kind === "class" && (!cls || d.start >= cls.start)) cls = d;
    if (d.kind === "method" && (!method || d.start >= method.start)) method = d;
  });
  if (!cls) return undefined;
  const first = method && method.start >= cls.start ? method.params?.[0]?.name : undefined;
  return { decl: cls, self: first ?? "self" };
}

/**
 * The class around `offset` read from the indentation of the lines above it, for a buffer whose class
 * the parser could not close (an unclosed bracket before the cursor): the nearest `def` less indented
 * than the cursor's line, then the nearest `class` less indented than that `def`.
 */
function classByIndent(source: string, offset: number): { name: string; self: string } | undefined {
  const lineStart = source.lastIndexOf("\n", offset - 1) + 1;
  let indent = /^[ \t]*/.exec(source.slice(lineStart, offset))![0].length;
  let self: string | undefined;
  let end = lineStart - 1;
  // Bounded: a class further up than this is not the one being edited.
  for (let n = 0; end > 0 && n < 5000; n++) {
    const start = source.lastIndexOf("\n", end - 1) + 1;
    const line = source.slice(start, end);
    end = start - 1;
    const m = /^([ \t]*)(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)\s*(\(\s*\*?\s*([A-Za-z_]\w*))?/.exec(line);
    if (!m || m[1]!.length >= indent) continue;
    if (m[2] === "def") {
      if (self !== undefined) return undefined;
      self = m[5] ?? "self";
      indent = m[1]!.length;
    } else return self !== undefined ? { name: m[3]!, self } : undefined;
  }
  return undefined;
}

/** The type a name was last given before `offset`: an annotation, a literal, a constructor call. */
function valueType(source: string, name: string, offset: number): string | undefined {
  const before = source.slice(Math.max(0, offset - 20_000), offset);
  const esc = name.replace(/\./g, "\\.");
  const re = new RegExp(
    `(?:^|[^\\w.])${esc}\\s*(?::\\s*([^=\\n,)]+?)\\s*(?:[=,)\\n]|$)|=(?!=)\\s*(?:([rRuU]?[fF]?[rR]?["']|[bB][rR]?["'])|(\\[)|(\\{\\s*\\}|\\{[^}\\n]*?:)|(\\{)|(-?\\d+\\.\\d*|-?\\d+)|([A-Za-z_][\\w.]*)\\s*\\())`,
    "gm",
  );
  let type: string | undefined;
  for (let m = re.exec(before); m; m = re.exec(before)) {
    if (m[1] !== undefined) type = annotationClass(m[1]) ?? type;
    else if (m[2] !== undefined) type = /^[bB]/.test(m[2]) ? "bytes" : "str";
    else if (m[3] !== undefined) type = "list";
    else if (m[4] !== undefined) type = "dict";
    else if (m[5] !== undefined) type = "set";
    else if (m[6] !== undefined) type = m[6].includes(".") ? "float" : "int";
    else if (m[7] !== undefined) type = m[7];
  }
  return type;
}

/** The typing aliases of builtin classes. */
const TYPING_ALIASES: Record<string, string> = {
  List: "list",
  Dict: "dict",
  Set: "set",
  FrozenSet: "frozenset",
  Tuple: "tuple",
  Text: "str",
  DefaultDict: "defaultdict",
  OrderedDict: "OrderedDict",
};

/** The class an annotation names: `Optional[X]`, `X | None`, `"X"` → X; `List[int]` → list. */
function annotationClass(annotation: string): string | undefined {
  let a = annotation.trim().replace(/^["']|["']$/g, "");
  const opt = /^(?:t\.|typing\.)?Optional\[(.*)\]$/.exec(a);
  if (opt) a = opt[1]!;
  a =
    a
      .split("|")
      .map((x) => x.trim())
      .find((x) => x !== "None") ?? a;
  const head = /^[A-Za-z_][\w.]*/.exec(a)?.[0];
  if (!head) return undefined;
  const last = head.split(".").at(-1)!;
  return TYPING_ALIASES[last] ?? head;
}

/** Score a candidate by the buffer's use of it: count and nearness (as the TypeScript ranking does). */
function usageScore(name: string, usage: Usage, memberKey?: string): number {
  const count = usage.count.get(name) ?? 0;
  const pair = memberKey !== undefined ? (usage.member.get(`${memberKey}.${name}`) ?? 0) : 0;
  const near = usage.nearest.get(name);
  return (
    12 * Math.log2(1 + count) +
    (memberKey !== undefined ? 25 * Math.log2(1 + pair) : 0) +
    (near === undefined ? 0 : 20 / (1 + near / 300))
  );
}

/**
 * Less for a dunder, and for a private name outside its class: inside it (`self._x`) the class's own
 * state is what its methods work with.
 */
function privatePenalty(name: string, own = false): number {
  return name.startsWith("__") && name.endsWith("__") ? -40 : name.startsWith("_") && !own ? -8 : 0;
}

/**
 * The innermost function or method whose extent holds `offset`, or whose body the lines after its
 * extent still continue (indented deeper than its `def`): the parser ends a function before an
 * unfinished last line (`self.` at the cursor).
 */
function enclosingFunction(doc: PythonDocument, offset: number): Declaration | undefined {
  let fn: Declaration | undefined;
  const source = doc.source;
  walk(doc.outline, (d) => {
    if ((d.kind !== "function" && d.kind !== "method") || offset <= d.start || (fn && d.start < fn.start)) return;
    if (offset <= d.end) fn = d;
    else if (offset - d.end < 2000) {
      const indent = d.start - (source.lastIndexOf("\n", d.start - 1) + 1);
      const lines = source.slice(d.end, offset).split("\n").slice(1);
      if (lines.length > 0 && lines.every((l) => l.trim() === "" || /^\s*/.exec(l)![0].length > indent)) fn = d;
    }
  });
  return fn;
}

/** Words of a function's name that say nothing of what it works on (`test_parse` is about parse). */
const GENERIC_WORDS = new Set(["test", "get", "set", "has", "init", "new", "self", "cls"]);

/**
 * The names the member's value goes to, read from the text before the cursor, with how much each
 * counts: the variable or attribute it is assigned to and the keyword argument it is passed as on the
 * cursor's line (`sep = self.`, `sep=self.`), and the function the cursor is in (a member is named like
 * what its caller is about: `test_scientific` calls `humanize.scientific`), fully when it is returned
 * or the function is a test.
 */
function targetWords(
  source: string,
  start: number,
  fn: Declaration | undefined,
): { words: string[]; weight: number; fn: boolean }[] {
  const lineStart = source.lastIndexOf("\n", start - 1) + 1;
  const line = source.slice(lineStart, start);
  const out: { words: string[]; weight: number; fn: boolean }[] = [];
  const target = /(?:^|[^\w.=!<>])([A-Za-z_][\w.]*)\s*(?::[^=]*)?=\s*[A-Za-z_][\w.]*\.\s*$/.exec(line);
  if (target) out.push({ words: words(target[1]!.split(".").at(-1)!), weight: 1, fn: false });
  if (fn) {
    const w = words(fn.name).filter((x) => !GENERIC_WORDS.has(x));
    // A test is named after what it exercises.
    if (w.length > 0)
      out.push({ words: w, weight: /^\s*return\b/.test(line) || /^test_?/i.test(fn.name) ? 1 : 0.5, fn: true });
  }
  return out;
}

/** Members of the receiver `recv` (dotted) as far as the syntactic engine can tell, and what the receiver is. */
function receiverMembers(
  doc: PythonDocument,
  recv: string,
  offset: number,
  where: Where,
): { kind: string; members: Member[]; className?: string } {
  const parts = recv.split(".");
  const cls = enclosingClass(doc, offset);
  const byIndent = cls ? undefined : classByIndent(doc.source, offset);
  const self = cls?.self ?? byIndent?.self;
  const instanceOf = (name: string | undefined): { kind: string; members: Member[] } | undefined => {
    const found = name !== undefined ? findClass(doc, name, where, 0) : undefined;
    return found ? { kind: "instance", members: classMembers(found.decl, found.doc, found.where) } : undefined;
  };
  if (self !== undefined && parts[0] === self) {
    let decl = cls?.decl;
    if (!decl && byIndent) {
      // The class as far as the parser got (its extent cut short), else none: the saved file's is used.
      walk(doc.outline, (d) => {
        if (d.kind === "class" && d.name === byIndent.name && d.start < offset) decl = d;
      });
    }
    const className = cls?.decl.name ?? byIndent!.name;
    if (parts.length === 1) return { kind: "self", members: decl ? classMembers(decl, doc, where) : [], className };
    // `self.x.`: the class `self.x` was assigned an instance of, or annotated with.
    const start = decl?.start ?? 0;
    if (parts.length === 2) {
      const t = valueType(doc.source.slice(start, offset), `${self}.${parts[1]}`, offset - start);
      const inst = instanceOf(t);
      if (inst) return inst;
    }
    return { kind: "unknown", members: [] };
  }
  const mod = moduleOf(doc, recv, where, offset);
  if (mod) return { kind: "module", members: moduleMembers(mod.doc, mod.where, recv) };
  if (parts.length === 1) {
    const found = findClass(doc, recv, where, 0);
    if (found && !isStub(found.where.file))
      return { kind: "class", members: classMembers(found.decl, found.doc, found.where) };
    // A variable whose type the text says: annotated, assigned a literal or an instance.
    const inst = instanceOf(valueType(doc.source, recv, offset));
    if (inst) return inst;
  }
  return { kind: "unknown", members: [] };
}

function scopeKind(n: ScopeName): { kind: string; base: number } {
  switch (n.kind) {
    case "local":
    case "parameter":
      return { kind: "variable", base: 30 };
    case "class":
      return { kind: "class", base: 20 };
    case "function":
      return { kind: "function", base: 20 };
    case "import":
      return { kind: "module", base: 18 };
    case "module":
    case "attribute":
      return { kind: "variable", base: 20 };
    case "builtin":
      return { kind: /^[A-Z]/.test(n.name) ? "class" : "function", base: 0 };
  }
}

/** True when nothing but blanks precedes `start` on its line: a statement may start there. */
function statementStart(source: string, start: number): boolean {
  const lineStart = source.lastIndexOf("\n", start - 1) + 1;
  return /^\s*$/.test(source.slice(lineStart, start));
}

/** True when `offset` is inside a comment or a one-line string of its line. */
function inCommentOrString(source: string, offset: number): boolean {
  const lineStart = source.lastIndexOf("\n", offset - 1) + 1;
  let quote: string | undefined;
  for (let i = lineStart; i < offset; i++) {
    const c = source[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (source.startsWith(quote, i)) {
        i += quote.length - 1;
        quote = undefined;
      }
    } else if (c === "#") return true;
    else if (c === '"' || c === "'") quote = source.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
  }
  return quote !== undefined && quote.length === 1;
}

/** What may end a string's text: a backslash (escaping the next character), its quote, a line end for a one-line string. */
const STRING_STOP: Record<string, RegExp> = {
  '"1': /[\\\n"]/g,
  "'1": /[\\\n']/g,
  '"3': /\\|"""/g,
  "'3": /\\|'''/g,
};

/** Where the text of a string opened by `q` at `from` ends: its closing quote, its line's end (one-line), or the source's. */
function stringEnd(source: string, from: number, q: string): number {
  const stop = STRING_STOP[`${q[0]}${q.length}`]!;
  stop.lastIndex = from;
  for (let m = stop.exec(source); m; m = stop.exec(source)) {
    if (m[0] !== "\\") return m.index;
    stop.lastIndex = m.index + 2;
  }
  return source.length;
}

/**
 * `source` with the text of its comments and strings blanked (same length, newlines kept): the names
 * the buffer uses, for ranking, are those of its code, not of its prose.
 */
export function codeOnly(source: string): string {
  // Found by regular expressions and copied in slices: a character loop over the whole buffer on
  // every keystroke costs more than the rest of the completion.
  const parts: string[] = [];
  let last = 0;
  const blank = (from: number, to: number): void => {
    parts.push(source.slice(last, from), source.slice(from, to).replace(/[^\n]/g, " "));
    last = to;
  };
  const open = /[#"']/g;
  for (let m = open.exec(source); m; m = open.exec(source)) {
    const i = m.index;
    const c = m[0];
    if (c === "#") {
      const end = source.indexOf("\n", i);
      const to = end < 0 ? source.length : end;
      blank(i, to);
      open.lastIndex = to;
      continue;
    }
    const triple = source.startsWith(c.repeat(3), i);
    const q = triple ? c.repeat(3) : c;
    const j = Math.min(source.length, stringEnd(source, i + q.length, q));
    const to = Math.min(source.length, j + (source.startsWith(q, j) ? q.length : 0));
    blank(i + q.length, j);
    open.lastIndex = to;
  }
  parts.push(source.slice(last));
  return parts.join("");
}

/**
 * Members of a class as its file was last saved (methods, class attributes, `self.x` anywhere in it,
 * its bases'): those defined further down than the cursor, which the buffer being edited may not show.
 */
function savedClassMembers(file: string, root: string | undefined, className: string, at: number): Member[] {
  const saved = readModule(file, root);
  if (!saved) return [];
  // The class of that name nearest the cursor's offset (a file may define two of one name).
  let decl: Declaration | undefined;
  walk(saved.outline, (d) => {
    if (d.kind === "class" && d.name === className && (!decl || Math.abs(d.start - at) < Math.abs(decl.start - at)))
      decl = d;
  });
  return decl ? classMembers(decl, saved, { root, file }) : [];
}

/** A member candidate: where it was found (its features are computed from this and the buffer). */
interface MemberCandidate {
  label: string;
  kind: string;
  detail: string;
  /** Bases away from the receiver's class (Infinity when not declared there). */
  distance: number;
  declared?: boolean | undefined;
  stub?: boolean | undefined;
  typed?: boolean | undefined;
  buffer?: boolean | undefined;
  /** Lines between its definition in the receiver's own class and the cursor (the nearest, when two). */
  lines?: number | undefined;
  /** How well the class it was found in fits a receiver of unknown type (lookalikeClass). */
  lookalike?: number | undefined;
}

/** A candidate from the checker (pyright), merged with the syntactic engine's own. */
export interface TypedCandidate {
  label: string;
  kind: string;
  detail: string;
}

/**
 * The members used on one receiver above the cursor (`onRecv`, in order): how often each followed the
 * receiver's last member, and how often each was used in the enclosing function (from `fnStart`).
 */
function useSequence(
  onRecv: RegExpExecArray[] | RegExpMatchArray[],
  windowStart: number,
  fnStart: number,
): { next: Map<string, number>; inFunction: Map<string, number> } {
  const next = new Map<string, number>();
  const inFunction = new Map<string, number>();
  const last = onRecv.at(-1)?.[1];
  for (let i = 0; i < onRecv.length; i++) {
    const name = onRecv[i]![1]!;
    if (i > 0 && onRecv[i - 1]![1] === last) next.set(name, (next.get(name) ?? 0) + 1);
    if (windowStart + onRecv[i]!.index! >= fnStart) inFunction.set(name, (inFunction.get(name) ?? 0) + 1);
  }
  return { next, inFunction };
}

/** The words on the cursor's line before it and on the two lines above (strings and comments included). */
function contextWords(source: string, start: number): { words: string[]; names: Set<string> } {
  let from = start;
  for (let k = 0; k < 3 && from > 0; k++) from = source.lastIndexOf("\n", from - 1);
  const names = new Set(source.slice(Math.max(0, from), start).match(/[A-Za-z_]\w*/g) ?? []);
  return { words: [...new Set([...names].flatMap(words))], names };
}

/**
 * The share of a member's words found among the context's, counting no name that is the member itself
 * (its own use nearby is what `near` says).
 */
function contextLikeness(mine: string[], name: string, ctx: { words: string[]; names: Set<string> }): number {
  const x = mine.filter((w) => w.length > 2);
  if (x.length === 0) return 0;
  const others = ctx.names.has(name)
    ? [...new Set([...ctx.names].filter((n) => n !== name).flatMap(words))]
    : ctx.words;
  return x.filter((w) => others.includes(w)).length / x.length;
}

/** Where the expression before the cursor stands in its statement (the member ranking weighs kinds by it). */
export type ExpressionShape = "statement" | "assign" | "argument" | "return" | "iterate" | "annotation" | "other";

/** Names followed by `:` at a line's start that open a block, not an annotation (`else: self.x()`). */
const BLOCK_WORDS = new Set(["else", "try", "finally", "except", "lambda", "match", "case"]);
/** What may follow an annotation's start up to the cursor (`Optional[Dict[str, t.`). */
const ANNOTATION_TAIL = String.raw`[\w\s.\[\],|"']*`;

/**
 * The shape of the statement around the receiver that ends at `start` in `code` (comments and strings
 * blanked): read from the code before the receiver on its line, and from the line above when the
 * receiver starts its line (the arguments of a call spread over lines).
 */
export function expressionShape(code: string, start: number): ExpressionShape {
  const lineStart = code.lastIndexOf("\n", start - 1) + 1;
  const line = code.slice(lineStart, start);
  const head = line.replace(/[A-Za-z_][\w.]*\s*\.\s*$/, "");
  if (new RegExp(`->${ANNOTATION_TAIL}$`).test(head)) return "annotation";
  const varAnnotation = new RegExp(`^\\s*([A-Za-z_]\\w*)\\s*:\\s*${ANNOTATION_TAIL}$`).exec(head);
  if (varAnnotation && !BLOCK_WORDS.has(varAnnotation[1]!)) return "annotation";
  if (
    /^\s*(?:async\s+)?def\b/.test(head) &&
    new RegExp(`[(,]\\s*\\**[A-Za-z_]\\w*\\s*:\\s*${ANNOTATION_TAIL}$`).test(head)
  )
    return "annotation";
  if (/^\s*(?:await\s+)?$/.test(head)) {
    const above = code.slice(0, lineStart).trimEnd();
    return /[(,]$/.test(above) ? "argument" : "statement";
  }
  if (/^\s*(?:return|yield)\s+$/.test(head)) return "return";
  if (/^\s*(?:async\s+)?for\b.*\bin\s+$/.test(head)) return "iterate";
  let depth = 0;
  for (const ch of head)
    if (ch === "(") depth++;
    else if (ch === ")") depth--;
  if (depth > 0 && /[(,=]\s*$/.test(head)) return "argument";
  if (/(?:^|[^=!<>])=\s*$/.test(head)) return "assign";
  return "other";
}

/** The parameters of the function declared at `fnStart` in `code` (but `self` and `cls`). */
function parameterNames(code: string, fnStart: number): Set<string> {
  const header = /\bdef\s+\w+\s*\(([\s\S]*?)\)\s*(?:->[^:]*)?:/.exec(code.slice(fnStart, fnStart + 4000));
  const out = new Set<string>();
  for (const m of header?.[1]?.matchAll(/(?:^|,)\s*\**([A-Za-z_]\w*)/g) ?? []) out.add(m[1]!);
  out.delete("self");
  out.delete("cls");
  return out;
}

/**
 * The string method the text of a string literal before the dot calls for: `format` for a text with a
 * `{}` field, `join` for a short separator (`", ".join`); undefined for another literal.
 */
function literalMethod(source: string, dot: number): string | undefined {
  const line = source.slice(source.lastIndexOf("\n", dot - 1) + 1, dot);
  const m = /(["'])((?:\\.|(?!\1).)*)\1\s*\.\s*$/.exec(line);
  if (!m) return undefined;
  if (/\{[^{}]*\}/.test(m[2]!)) return "format";
  return m[2]!.length <= 3 ? "join" : undefined;
}

/** The names in the strings and comments (docstrings) of `source` between `from` and `to`. */
function docNames(source: string, code: string, from: number, to: number): Set<string> {
  const out = new Set<string>();
  const at = Math.max(from, to - 20_000);
  for (const m of source.slice(at, to).matchAll(/[A-Za-z_]\w*/g))
    if (code[at + m.index] !== source[at + m.index]) out.add(m[0]);
  return out;
}

/**
 * Completions at `offset` of a parsed Python buffer. With `typed` (the checker's list at this point),
 * its names join the syntactic engine's and the same ranking orders both.
 */
export function pythonCompletions(
  doc: PythonDocument,
  offset: number,
  opts: {
    root?: string | undefined;
    file?: string | undefined;
    limit: number;
    typed?: TypedCandidate[];
    /** How the workspace's other files use members, when it has been read. */
    memberUse?: WorkspaceUse | undefined;
  },
): PythonAnswer {
  const source = doc.source;
  // Read on the code alone: a comment ending in `.` on the line above is not a receiver's dot.
  const code = codeOnly(source);
  const cc = completionContext(code, offset);
  const prefix = cc.prefix.replace(/^[#$]+/, "");
  const start = offset - prefix.length;
  if (inCommentOrString(source, start)) return { items: [], prefix, start, context: "none" };
  const where: Where = { root: opts.root, file: opts.file };
  const usage = usageOf(`${opts.file ?? "<buffer>"}#python`, code, offset, start);
  const scored = new Map<string, Scored>();
  const before = code.slice(Math.max(0, start - 200), start);
  const afterDot = cc.receiver === undefined && /[^.]\.\s*$/.test(before);
  const member = cc.receiver !== undefined || afterDot;
  const push = (label: string, kind: string, detail: string, score: number): void => {
    // A keyword is no attribute's name (`x.else` does not parse), whatever the checker or the text offers.
    if (label.includes(PLACEHOLDER) || (member && HARD_KEYWORDS.has(label))) return;
    const m = matchScore(label, prefix);
    if (m < 0 || (label === prefix && prefix !== "")) return;
    const old = scored.get(label);
    if (!old || old.score < score + m) scored.set(label, { label, kind, detail, score: score + m });
  };
  let context: PythonAnswer["context"] = "identifier";
  let receiverKind: string | undefined;
  if (member) {
    context = "member";
    const recv = cc.receiver;
    const lastRecv = recv?.split(".").at(-1);
    // A literal before the dot (`", ".join`): its builtin class.
    const literal = recv === undefined ? /(?:(["'])|(\])|(\}))\s*\.\s*$/.exec(before) : null;
    const literalClass = literal ? (literal[1] ? "str" : literal[2] ? "list" : "dict") : undefined;
    const literalDecl = literalClass !== undefined ? findClass(doc, literalClass, where, 0) : undefined;
    const found: { kind: string; members: Member[]; className?: string } =
      recv !== undefined
        ? receiverMembers(doc, recv, offset, where)
        : literalDecl
          ? { kind: "instance", members: classMembers(literalDecl.decl, literalDecl.doc, literalDecl.where) }
          : { kind: "unknown", members: [] };
    receiverKind = found.kind;
    const own = found.kind === "self";
    const inBuffer = own ? new Set(found.members.map((m) => m.name)) : undefined;
    if (own && opts.file !== undefined && found.className !== undefined)
      found.members.push(...savedClassMembers(opts.file, opts.root, found.className, offset));
    const typedNames = new Set((opts.typed ?? []).map((t) => t.label));
    // A list of `object`'s dunders alone says the checker does not know the receiver (an untyped
    // parameter, a `threading.local`): the text's evidence is used as if it had not answered.
    const checkerKnows = [...typedNames].some((n) => !(n.startsWith("__") && n.endsWith("__")));
    // What the workspace's other files type after a receiver of this name (not for self: its members
    // are the class's), and after any receiver.
    const wsUse = lastRecv !== undefined && !own ? opts.memberUse?.names(lastRecv, opts.file) : undefined;
    // The checker knows the receiver's type better than the text does, except for the class being
    // written (`self.`), whose members below the cursor only the saved file shows.
    const checkerLeads = checkerKnows && !own;
    const candidates = new Map<string, MemberCandidate>();
    const add = (label: string, kind: string, detail: string, how: Partial<MemberCandidate>): void => {
      const c = candidates.get(label);
      if (!c) candidates.set(label, { label, kind, detail, distance: Infinity, ...how });
      else {
        if (how.distance !== undefined && how.distance < c.distance) c.distance = how.distance;
        if (how.lines !== undefined && !(how.lines >= (c.lines ?? Infinity))) c.lines = how.lines;
        if (how.lookalike !== undefined) c.lookalike = Math.max(c.lookalike ?? 0, how.lookalike);
        c.declared ||= how.declared;
        c.stub ||= how.stub;
        c.typed ||= how.typed;
        c.buffer ||= how.buffer;
        if (how.typed) Object.assign(c, { kind, detail });
      }
    };
    // The cursor's line: a class's helpers tend to be defined next to the methods that use them.
    const cursorLine = own ? lineAt(source, start) : 0;
    for (const m of found.members)
      add(m.name, m.kind, m.detail, {
        declared: true,
        distance: m.distance,
        stub: m.stub ?? false,
        lines: own && m.distance === 0 && m.line !== undefined ? Math.abs(m.line - cursorLine) : undefined,
      });
    for (const t of opts.typed ?? []) add(t.label, t.kind, t.detail, { typed: true });
    if ((found.kind === "unknown" || found.kind === "instance") && !checkerKnows) {
      for (const [pair, n] of usage.member) {
        const dot = pair.lastIndexOf(".");
        const name = pair.slice(dot + 1);
        if (name === prefix && n <= 1) continue;
        add(name, "property", `used after ${pair.slice(0, dot)}.`, { buffer: true });
      }
      // Names the workspace's other files use after a receiver of this name.
      for (const name of wsUse?.keys() ?? []) add(name, "property", `used after ${lastRecv}.`, {});
      if (found.kind === "unknown" && lastRecv !== undefined) {
        const like = lookalikeClass(doc, where, lastRecv, new Set(usedAfter(usage.member, lastRecv).keys()));
        for (const m of like?.members ?? []) add(m.name, m.kind, m.detail, { lookalike: like!.fit });
      }
    } else if (lastRecv !== undefined && !own) {
      // What the buffer types after the same receiver word, which the checker's list can lack (a
      // member set at run time, a receiver typed wider than its value): marked as the checker's miss.
      for (const [name, n] of usedAfter(usage.member, lastRecv)) {
        if (name === prefix && n <= 1) continue;
        add(name, "property", `used after ${lastRecv}.`, { buffer: true });
      }
    }
    const fn = enclosingFunction(doc, offset);
    const targets = targetWords(code, start, fn);
    const recvWords = lastRecv !== undefined ? words(lastRecv) : [];
    // The buffer's uses of each name after any receiver.
    const afterAny = new Map<string, number>();
    for (const [pair, n] of usage.member) {
      const name = pair.slice(pair.lastIndexOf(".") + 1);
      afterAny.set(name, (afterAny.get(name) ?? 0) + n);
    }
    const windowStart = Math.max(0, start - 20_000);
    const window = code.slice(windowStart, start);
    // The members used on the same receiver above the cursor, in order.
    const onRecv =
      recv !== undefined
        ? [
            ...window.matchAll(
              new RegExp(`(?<![\\w.])${recv.replace(/\./g, "\\s*\\.\\s*")}\\s*\\.\\s*([A-Za-z_]\\w*)`, "g"),
            ),
          ]
        : [];
    const lastUse = onRecv.at(-1)?.[1];
    const seq = useSequence(onRecv, windowStart, fn?.start ?? start);
    const lastWords = lastUse !== undefined ? words(lastUse) : [];
    const wsNext =
      lastRecv !== undefined && lastUse !== undefined && !own
        ? opts.memberUse?.follows(lastRecv, lastUse, opts.file)
        : undefined;
    const ctxWords = contextWords(source, start);
    const inDoc = fn ? docNames(source, code, fn.start, start) : new Set<string>();
    const line = code.slice(code.lastIndexOf("\n", start - 1) + 1, start);
    const stmt = /^\s*(?:await\s+)?[A-Za-z_][\w.]*\s*\.\s*$/.test(line);
    const cond = /^\s*(?:if|elif|while|assert)\b|\b(?:and|or|not)\s+[A-Za-z_][\w.]*\s*\.\s*$/.test(line);
    const shape = expressionShape(code, start);
    const params = fn ? parameterNames(code, fn.start) : new Set<string>();
    const fromLiteral = literalClass === "str" ? literalMethod(source, start) : undefined;
    const lineStart = start - line.length;
    const onLine = new Set(onRecv.filter((m) => windowStart + m.index! >= lineStart).map((m) => m[1]!));
    // `self.` members the class shows above the cursor: its methods defined there, `self.x` used there.
    const cls = own ? enclosingClass(doc, offset) : undefined;
    const above = own
      ? new Set([
          ...selfNames(code.slice(Math.max(cls?.decl.start ?? 0, start - 20_000), start), cls?.self ?? "self").keys(),
          ...(cls?.decl.children.filter((c) => c.start < start).map((c) => c.name) ?? []),
        ])
      : undefined;
    const many = Math.log2(1 + candidates.size);
    const group = own ? "self" : "other";
    const rows: MemberRow[] = [];
    for (const c of candidates.values()) {
      const name = c.label;
      if (c.label.includes(PLACEHOLDER) || HARD_KEYWORDS.has(name)) continue;
      const m = matchScore(name, prefix);
      if (m < 0 || (name === prefix && prefix !== "")) continue;
      const f = emptyFeatures();
      const mine = words(name);
      f.match = m / 100;
      f.declared = c.declared ? 1 : 0;
      f.inherited = c.declared ? Math.min(3, c.distance) : 0;
      f.typed = c.typed ? 1 : 0;
      f.checker_missing = checkerLeads && !c.typed ? 1 : 0;
      f.buffer_only = !c.declared && !c.typed ? 1 : 0;
      f.buffer_count = Math.log2(1 + (usage.count.get(name) ?? 0));
      const pair = lastRecv !== undefined ? (usage.member.get(`${lastRecv}.${name}`) ?? 0) : 0;
      f.buffer_pair = Math.log2(1 + pair);
      f.buffer_other = Math.log2(1 + Math.max(0, (afterAny.get(name) ?? 0) - pair));
      const near = usage.nearest.get(name);
      f.near = near === undefined ? 0 : 1 / (1 + near / 300);
      f.workspace_pair = Math.log2(1 + (wsUse?.get(name) ?? 0));
      f.workspace_any = own ? 0 : Math.log2(1 + (opts.memberUse?.any(name, opts.file) ?? 0));
      f.prior = c.stub || c.typed ? prior(MEMBERS, name, 10) / 10 : 0;
      for (const t of targets)
        if (t.fn) f.named_function = Math.max(f.named_function, t.weight * likeness(mine, t.words));
        else f.named_target = Math.max(f.named_target, t.weight * likeness(mine, t.words));
      f.named_receiver = recvWords.length > 0 ? likeness(mine, recvWords) : 0;
      f.current_method = own && fn?.kind === "method" && name === fn.name ? 1 : 0;
      const dunder = name.startsWith("__") && name.endsWith("__");
      f.private = name.startsWith("_") && !dunder ? 1 : 0;
      f.private_own = f.private && own ? 1 : 0;
      f.dunder = dunder ? 1 : 0;
      f.method = c.kind === "method" || c.kind === "function" ? 1 : 0;
      f.class = c.kind === "class" ? 1 : 0;
      f.constant = /^[A-Z][A-Z0-9_]+$/.test(name) ? 1 : 0;
      f.above = above?.has(name) ? 1 : 0;
      f.below_only = inBuffer && !inBuffer.has(name) && !above?.has(name) ? 1 : 0;
      f.last_on_receiver = name === lastUse ? 1 : 0;
      f.many = c.declared ? many : 0;
      f.bigram = Math.log2(1 + (seq.next.get(name) ?? 0));
      f.in_function = Math.log2(1 + (seq.inFunction.get(name) ?? 0));
      f.like_last = lastUse !== undefined && name !== lastUse ? likeness(mine, lastWords) : 0;
      f.named_context = contextLikeness(mine, name, ctxWords);
      f.in_doc = inDoc.has(name) ? 1 : 0;
      f.unused_method = c.declared && f.method && !afterAny.has(name) ? 1 : 0;
      f.statement_method = stmt ? f.method : 0;
      f.condition_method = cond ? f.method : 0;
      f.workspace_bigram = Math.log2(1 + (wsNext?.get(name) ?? 0));
      f.defined_near = c.lines !== undefined ? 1 / (1 + c.lines / 30) : 0;
      f.lookalike = c.lookalike ?? 0;
      f.assign_method = shape === "assign" ? f.method : 0;
      f.argument_method = shape === "argument" ? f.method : 0;
      f.return_method = shape === "return" ? f.method : 0;
      f.iterate_method = shape === "iterate" ? f.method : 0;
      const typeName = c.kind === "class" || (/^_?[A-Z]/.test(name) && !f.constant);
      f.annotation_type = typeName && shape === "annotation" ? 1 : 0;
      f.value_type = typeName && (shape === "assign" || shape === "argument" || shape === "return") ? 1 : 0;
      f.same_line = onLine.has(name) ? 1 : 0;
      f.parameter = params.has(name) && !seq.inFunction.has(name) ? 1 : 0;
      f.literal_fit = name === fromLiteral ? 1 : 0;
      const score = memberScore(f, group);
      if (memberRecorder.record) rows.push({ label: name, features: MEMBER_FEATURES.map((k) => f[k]) });
      scored.set(name, { label: name, kind: c.kind, detail: c.detail, score });
    }
    memberRecorder.record?.(group, rows);
  } else {
    for (const n of python.namesInScope(doc, offset)) {
      const { kind, base } = scopeKind(n);
      const detail = n.kind === "builtin" ? "builtin" : `${n.kind}${n.scope ? ` in ${n.scope}` : ""}`;
      const p = n.kind === "builtin" ? prior(BUILTINS, n.name, 50) : 0;
      push(n.name, kind, detail, base + p + usageScore(n.name, usage) + privatePenalty(n.name));
    }
    for (const t of opts.typed ?? []) push(t.label, t.kind, t.detail, 10 + usageScore(t.label, usage));
    // Names the code near the cursor uses, for a buffer whose scopes the parser could not close
    // (an unfinished statement above the cursor): below every name in scope.
    for (const [name, d] of usage.nearest) {
      if (name.length < 2 || scored.has(name) || /^\d/.test(name) || name.startsWith("#")) continue;
      push(name, "text", "used nearby", 5 + usageScore(name, usage) - d / 2000);
    }
    if (prefix !== "") {
      if (statementStart(source, start)) for (const k of STATEMENT_KEYWORDS) push(k, "keyword", "keyword", 5);
      for (const k of EXPRESSION_KEYWORDS) push(k, "keyword", "keyword", 5);
    }
  }
  const items = [...scored.values()]
    .sort((a, b) => b.score - a.score || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0))
    .slice(0, opts.limit)
    .map((s) => ({ label: s.label, kind: s.kind, insert_text: s.label, detail: s.detail }));
  return {
    items,
    prefix,
    start,
    context,
    ...(cc.receiver !== undefined ? { receiver: cc.receiver, receiver_kind: receiverKind ?? "unknown" } : {}),
  };
}
