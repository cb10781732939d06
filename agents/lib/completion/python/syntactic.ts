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
import { dirname, join, resolve, sep } from "node:path";
import type { Declaration, ImportEntry, ScopeName } from "../../code/languages/types.js";
import { python, type PythonDocument } from "../../code/languages/python/index.js";
import { PLACEHOLDER } from "../../code/placeholder.js";
import { completionContext } from "../context.js";
import { matchScore, type CompletionItem } from "../rank.js";
import { usageOf, type Usage } from "../typed.js";
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

interface Where {
  root: string | undefined;
  file: string | undefined;
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
): { decl: Declaration; doc: PythonDocument; file: string | undefined } | undefined {
  const dotted = name.split(".");
  if (dotted.length > 1) {
    // `mod.Base`: the module bound by an import, then the class in it.
    const target = moduleOf(doc, dotted.slice(0, -1).join("."), where);
    if (!target) return undefined;
    return findClass(target.doc, dotted.at(-1)!, { root: where.root, file: target.file }, depth + 1);
  }
  let found: Declaration | undefined;
  walk(doc.outline, (d) => {
    if (!found && d.kind === "class" && d.name === name) found = d;
  });
  if (found) return { decl: found, doc, file: where.file };
  if (depth >= MAX_BASE_DEPTH) return undefined;
  for (const imp of doc.imports) {
    const n = imp.names.find((x) => x.name === name);
    if (!n || imp.module) continue;
    const file = resolvePythonModule(where.root, where.file, imp.from, imp.level);
    const target = file ? readModule(file, where.root) : undefined;
    if (target) return findClass(target, n.imported, { root: where.root, file }, depth + 1);
  }
  return undefined;
}

/** The workspace module bound to `name` (`import a.b as c` → c; `from . import m` → m), if it is one. */
function moduleOf(
  doc: PythonDocument,
  name: string,
  where: Where,
): { doc: PythonDocument; file: string; imp: ImportEntry } | undefined {
  const [head, ...rest] = name.split(".");
  for (const imp of doc.imports) {
    for (const n of imp.names) {
      if (n.name !== head) continue;
      // `import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`; `from x import m` may bind a submodule.
      const full = imp.module
        ? [n.imported === n.name ? head! : n.imported, ...rest].join(".")
        : [imp.from.replace(/^\.+/, ""), n.imported, ...rest].filter(Boolean).join(".");
      const file = resolvePythonModule(where.root, where.file, full, imp.level);
      const target = file ? readModule(file, where.root) : undefined;
      if (file && target) return { doc: target, file, imp };
    }
  }
  return undefined;
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
  for (const c of decl.children) {
    const property = c.decorators.some(
      (d) => d === "property" || d.endsWith(".setter") || d.endsWith("cached_property"),
    );
    out.push({
      name: c.name,
      kind: c.kind === "method" ? (property ? "property" : "method") : c.kind === "class" ? "class" : "property",
      detail: c.signature,
      distance,
    });
  }
  for (const name of selfNames(doc.source.slice(decl.start, decl.end), "self").keys())
    out.push({ name, kind: "property", detail: `self.${name}`, distance });
  for (const base of decl.bases ?? []) {
    const b = base.replace(/\[.*$/s, "").trim();
    if (!/^[A-Za-z_][\w.]*$/.test(b)) continue;
    const found = findClass(doc, b, where, 0);
    if (found)
      out.push(...classMembers(found.decl, found.doc, { root: where.root, file: found.file }, seen, distance + 1));
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

function privatePenalty(name: string): number {
  return name.startsWith("__") && name.endsWith("__") ? -40 : name.startsWith("_") ? -8 : 0;
}

/** Members of the receiver `recv` (dotted) as far as the syntactic engine can tell, and what the receiver is. */
function receiverMembers(
  doc: PythonDocument,
  recv: string,
  offset: number,
  where: Where,
): { kind: string; members: Member[] } {
  const parts = recv.split(".");
  const cls = enclosingClass(doc, offset);
  if (cls && parts[0] === cls.self) {
    if (parts.length === 1) return { kind: "self", members: classMembers(cls.decl, doc, where) };
    // `self.x.`: the class `self.x` was assigned an instance of.
    const m = new RegExp(`\\b${cls.self}\\.${parts[1]}\\s*(?::[^=\\n]*)?=\\s*([A-Za-z_][\\w.]*)\\s*\\(`).exec(
      doc.source.slice(cls.decl.start, offset),
    );
    const found = m && parts.length === 2 ? findClass(doc, m[1]!, where, 0) : undefined;
    if (found)
      return { kind: "instance", members: classMembers(found.decl, found.doc, { root: where.root, file: found.file }) };
    return { kind: "unknown", members: [] };
  }
  const mod = moduleOf(doc, recv, where);
  if (mod) {
    const names = mod.doc.exports.declared ?? mod.doc.exports.implicit;
    const kinds = new Map<string, Declaration>();
    for (const d of mod.doc.outline) kinds.set(d.name, d);
    return {
      kind: "module",
      members: names.map((n) => {
        const d = kinds.get(n);
        return {
          name: n,
          kind: d?.kind === "class" ? "class" : d?.kind === "function" ? "function" : "variable",
          detail: d?.signature ?? `from ${recv}`,
          distance: 0,
        };
      }),
    };
  }
  if (parts.length === 1) {
    const found = findClass(doc, recv, where, 0);
    if (found)
      return { kind: "class", members: classMembers(found.decl, found.doc, { root: where.root, file: found.file }) };
    // A variable assigned an instance: `x = Foo(...)` (the last assignment before the cursor).
    const re = new RegExp(`(?:^|[^\\w.])${recv}\\s*(?::[^=\\n]*)?=\\s*([A-Za-z_][\\w.]*)\\s*\\(`, "g");
    let last: string | undefined;
    const before = doc.source.slice(0, offset);
    for (let m = re.exec(before); m; m = re.exec(before)) last = m[1];
    const inst = last ? findClass(doc, last, where, 0) : undefined;
    if (inst)
      return { kind: "instance", members: classMembers(inst.decl, inst.doc, { root: where.root, file: inst.file }) };
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

/** Names a class defines in a file saved on disk: its methods, class attributes, `self.x = …` targets. */
function savedClassMembers(file: string, root: string | undefined, className: string): Member[] {
  const saved = readModule(file, root);
  if (!saved) return [];
  let decl: Declaration | undefined;
  walk(saved.outline, (d) => {
    if (!decl && d.kind === "class" && d.name === className) decl = d;
  });
  if (!decl) return [];
  const out: Member[] = decl.children.map((c) => ({
    name: c.name,
    kind: c.kind === "method" ? "method" : "property",
    detail: c.signature,
    distance: 0,
  }));
  const re = /\bself\s*\.\s*([A-Za-z_]\w*)\s*(?::[^=\n]*)?[-+*/|&]?=(?!=)/g;
  const text = saved.source.slice(decl.start, decl.end);
  for (let m = re.exec(text); m; m = re.exec(text))
    out.push({ name: m[1]!, kind: "property", detail: `self.${m[1]}`, distance: 0 });
  return out;
}

/** A candidate from the checker (pyright), merged with the syntactic engine's own. */
export interface TypedCandidate {
  label: string;
  kind: string;
  detail: string;
}

/**
 * Completions at `offset` of a parsed Python buffer. With `typed` (the checker's list at this point),
 * its names join the syntactic engine's and the same ranking orders both.
 */
export function pythonCompletions(
  doc: PythonDocument,
  offset: number,
  opts: { root?: string | undefined; file?: string | undefined; limit: number; typed?: TypedCandidate[] },
): PythonAnswer {
  const source = doc.source;
  const cc = completionContext(source, offset);
  const prefix = cc.prefix.replace(/^[#$]+/, "");
  const start = offset - prefix.length;
  if (inCommentOrString(source, start)) return { items: [], prefix, start, context: "none" };
  const where: Where = { root: opts.root, file: opts.file };
  const code = codeOnly(source);
  const usage = usageOf(`${opts.file ?? "<buffer>"}#python`, code, offset, start);
  const scored = new Map<string, Scored>();
  const push = (label: string, kind: string, detail: string, score: number): void => {
    if (label.includes(PLACEHOLDER)) return;
    const m = matchScore(label, prefix);
    if (m < 0 || (label === prefix && prefix !== "")) return;
    const old = scored.get(label);
    if (!old || old.score < score + m) scored.set(label, { label, kind, detail, score: score + m });
  };
  const before = source.slice(Math.max(0, start - 200), start);
  const afterDot = cc.receiver === undefined && /[^.]\.\s*$/.test(before);
  let context: PythonAnswer["context"] = "identifier";
  let receiverKind: string | undefined;
  if (cc.receiver !== undefined || afterDot) {
    context = "member";
    const recv = cc.receiver;
    const lastRecv = recv?.split(".").at(-1);
    const found = recv !== undefined ? receiverMembers(doc, recv, offset, where) : { kind: "unknown", members: [] };
    receiverKind = found.kind;
    if (found.kind === "self" && opts.file !== undefined) {
      // The class as last saved: members defined further down than the cursor, which the buffer being
      // edited may not show yet (an unfinished method cuts the class short).
      const cls = enclosingClass(doc, offset);
      if (cls)
        found.members.push(
          ...savedClassMembers(opts.file, opts.root, cls.decl.name).map((m) => ({ ...m, distance: 0.5 })),
        );
    }
    const typedNames = new Set((opts.typed ?? []).map((t) => t.label));
    for (const m of found.members)
      push(
        m.name,
        m.kind,
        m.detail,
        50 - 5 * m.distance + usageScore(m.name, usage, lastRecv) + privatePenalty(m.name),
      );
    for (const t of opts.typed ?? [])
      push(
        t.label,
        t.kind,
        t.detail,
        45 + usageScore(t.label, usage, lastRecv) + prior(MEMBERS, t.label, 10) + privatePenalty(t.label),
      );
    if ((found.kind === "unknown" || found.kind === "instance") && typedNames.size === 0) {
      for (const [pair, n] of usage.member) {
        const dot = pair.lastIndexOf(".");
        const r = pair.slice(0, dot);
        const name = pair.slice(dot + 1);
        if (name === prefix && n <= 1) continue;
        push(
          name,
          "property",
          `used after ${r}.`,
          (r === lastRecv ? 20 : -10) +
            usageScore(name, usage, lastRecv) +
            prior(MEMBERS, name, 10) +
            privatePenalty(name),
        );
      }
    }
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
