/** The symbol table for the scope chain at the cursor, sorted so the same input gives byte-identical output. */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import { isClass, isFunction } from "./cursor.js";
import { detach } from "../memo.js";
import { settle } from "./incremental.js";
import { boundIdentifiers, typeText } from "./names.js";
import type { Node, Program } from "./parse.js";

export type SymbolKind =
  "import" | "function" | "class" | "const" | "let" | "var" | "type" | "interface" | "enum" | "namespace" | "parameter";

/** One visible name. Keys are always in this order (byte-stable JSON for prompt prefixes). */
export interface SymbolEntry {
  name: string;
  kind: SymbolKind;
  /** 0 = module scope; larger = closer to the cursor. */
  scope_depth: number;
  line: number;
  column: number;
  /** The type annotation, or for imports the imported name. */
  detail?: string;
  /** For imports: the module specifier. */
  source?: string;
  exported?: boolean;
}

function entry(
  name: string,
  kind: SymbolKind,
  depth: number,
  at: Node,
  extra: { detail?: string | undefined; source?: string; exported?: boolean } = {},
): SymbolEntry {
  const e: SymbolEntry = { name, kind, scope_depth: depth, line: at.loc.start.line, column: at.loc.start.column };
  // Copied: cut from the buffer, it would keep every version's buffer alive in the per-statement cache.
  if (extra.detail !== undefined) e.detail = detach(extra.detail);
  if (extra.source !== undefined) e.source = extra.source;
  if (extra.exported) e.exported = true;
  return e;
}

/** Declarations made directly by one statement (`export` unwrapped). */
export function declaredBy(stmt: Node, depth: number, source: string): SymbolEntry[] {
  let node: Node = stmt;
  let exported = false;
  if ((node.type === "ExportNamedDeclaration" || node.type === "ExportDefaultDeclaration") && node.declaration) {
    node = node.declaration as Node;
    exported = true;
  }
  const ex = exported ? { exported: true } : {};
  switch (node.type) {
    case "ImportDeclaration":
      return node.specifiers.map((s) => {
        const imported =
          s.type === "ImportDefaultSpecifier"
            ? "default"
            : s.type === "ImportNamespaceSpecifier"
              ? "*"
              : s.imported.type === "Identifier"
                ? s.imported.name
                : String(s.imported.value);
        return entry(s.local.name, "import", depth, s, { detail: imported, source: node.source.value });
      });
    case "FunctionDeclaration":
    case "TSDeclareFunction":
      return node.id ? [entry(node.id.name, "function", depth, node.id, ex)] : [];
    case "ClassDeclaration":
      return node.id ? [entry(node.id.name, "class", depth, node.id, ex)] : [];
    case "VariableDeclaration": {
      const kind = node.kind === "const" || node.kind === "let" || node.kind === "var" ? node.kind : "const";
      return node.declarations.flatMap((d) =>
        boundIdentifiers(d.id).map((id) => entry(id.name, kind, depth, id, { detail: typeText(id, source), ...ex })),
      );
    }
    case "TSTypeAliasDeclaration":
      return [entry(node.id.name, "type", depth, node.id, ex)];
    case "TSInterfaceDeclaration":
      return [entry(node.id.name, "interface", depth, node.id, ex)];
    case "TSEnumDeclaration":
      return [entry(node.id.name, "enum", depth, node.id, ex)];
    case "TSModuleDeclaration":
      return node.id.type === "Identifier" ? [entry(node.id.name, "namespace", depth, node.id, ex)] : [];
    default:
      return [];
  }
}

function paramsOf(fn: Node, depth: number, source: string): SymbolEntry[] {
  const params = (fn as TSESTree.FunctionLike).params ?? [];
  return params.flatMap((p) =>
    boundIdentifiers(p).map((id) =>
      entry(id.name, "parameter", depth, id, { detail: typeText(id, source) ?? typeText(p, source) }),
    ),
  );
}

/** Statements whose declarations are visible in a scope node's body. */
function scopeStatements(node: Node): Node[] {
  switch (node.type) {
    case "Program":
    case "BlockStatement":
    case "StaticBlock":
      return node.body;
    case "SwitchCase":
      return node.consequent;
    case "ForStatement":
      return node.init && node.init.type === "VariableDeclaration" ? [node.init] : [];
    case "ForInStatement":
    case "ForOfStatement":
      return node.left.type === "VariableDeclaration" ? [node.left] : [];
    default:
      return [];
  }
}

/**
 * Every name visible at `offset` given the ancestor chain: imports, top-level declarations,
 * parameters, locals of the enclosing blocks (declared before the cursor; functions are hoisted).
 * Sorted by scope depth (module first), then name, then line; inner names shadow outer ones.
 */
export function symbolsInScope(
  chain: Node[],
  offset: number,
  source: string,
  moduleEntries?: SymbolEntry[],
): SymbolEntry[] {
  const all: SymbolEntry[] = [];
  let depth = 0;
  for (let i = 0; i < chain.length; i++) {
    const node = chain[i]!;
    if (
      i > 0 &&
      (isFunction(node) ||
        node.type === "BlockStatement" ||
        node.type === "CatchClause" ||
        node.type === "ForStatement" ||
        node.type === "ForInStatement" ||
        node.type === "ForOfStatement" ||
        node.type === "StaticBlock" ||
        isClass(node))
    )
      depth++;
    if (isFunction(node)) {
      if (node.type === "FunctionExpression" && node.id && chain[i - 1]?.type !== "MethodDefinition")
        all.push(entry(node.id.name, "function", depth, node.id));
      all.push(...paramsOf(node, depth, source));
      continue;
    }
    if (node.type === "CatchClause" && node.param) {
      all.push(...boundIdentifiers(node.param).map((id) => entry(id.name, "let", depth, id)));
      continue;
    }
    if (node.type === "ClassExpression" && node.id) {
      all.push(entry(node.id.name, "class", depth, node.id));
      continue;
    }
    if (i === 0 && moduleEntries) {
      all.push(...moduleEntries);
      continue;
    }
    const stmts = scopeStatements(node);
    for (const s of stmts) {
      const hoisted =
        s.type === "FunctionDeclaration" ||
        (s.type === "ExportNamedDeclaration" && s.declaration?.type === "FunctionDeclaration");
      if (i > 0 && !hoisted && s.range[0] >= offset) continue;
      // The declaration the cursor is inside of is visible too (recursion), but not a `const x = |` before it ends.
      all.push(...declaredBy(s, depth, source));
    }
  }
  return dedupeAndSort(all);
}

/** Inner declarations shadow outer ones of the same name; then the stable order. */
export function dedupeAndSort(all: SymbolEntry[]): SymbolEntry[] {
  const best = new Map<string, SymbolEntry>();
  for (const s of all) {
    const prev = best.get(s.name);
    if (!prev || s.scope_depth > prev.scope_depth || (s.scope_depth === prev.scope_depth && s.line > prev.line))
      best.set(s.name, s);
  }
  return [...best.values()].sort(compareSymbols);
}

export function compareSymbols(a: SymbolEntry, b: SymbolEntry): number {
  return (
    a.scope_depth - b.scope_depth ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
    a.line - b.line ||
    a.column - b.column
  );
}

interface Declared {
  line: number;
  /** The statement's shape when computed: start column, length, line span, end column. */
  column: number;
  length: number;
  span: number;
  endColumn: number;
  entries: SymbolEntry[];
}

const DECLARED = new WeakMap<Node, Declared>();

/**
 * `declaredBy(stmt, 0)` for a top-level statement, computed once and moved with the statement: a
 * statement that was only moved down or up (same shape, another line) gets its entries' lines moved,
 * without descending into it (which would settle its pending shift, see incremental.ts).
 */
export function topLevelDeclarations(stmt: Node, source: string): SymbolEntry[] {
  const { start, end } = stmt.loc;
  const length = stmt.range[1] - stmt.range[0];
  const known = DECLARED.get(stmt);
  // Called for every top-level statement on every keystroke: no allocation when nothing changed.
  if (
    known &&
    known.column === start.column &&
    known.length === length &&
    known.span === end.line - start.line &&
    known.endColumn === end.column
  ) {
    if (known.line === start.line) return known.entries;
    const d = start.line - known.line;
    known.entries = known.entries.map((e) => ({ ...e, line: e.line + d }));
    known.line = start.line;
    return known.entries;
  }
  const shape = { column: start.column, length, span: end.line - start.line, endColumn: end.column };
  settle(stmt);
  let entries = declaredBy(stmt, 0, source);
  // An edit inside a function body rarely changes what the statement declares: keep the old array then (moduleSymbols memoises on it).
  if (known && JSON.stringify(known.entries) === JSON.stringify(entries)) entries = known.entries;
  DECLARED.set(stmt, { line: start.line, ...shape, entries });
  return entries;
}

/** The last module symbol table per program: incremental re-parses keep the Program object, and a keystroke inside a function keeps every statement's entries. */
const MODULE = new WeakMap<Program, { parts: SymbolEntry[][]; table: SymbolEntry[] }>();

/** The module-level symbols of a program (for outlines and member lookups). Do not mutate the entries: they are shared. */
export function moduleSymbols(program: Program, source: string): SymbolEntry[] {
  const body = program.body;
  const last = MODULE.get(program);
  // The common case (a keystroke inside a function): every statement has its old entries, nothing is built.
  let k = 0;
  if (last && last.parts.length === body.length)
    while (k < body.length && topLevelDeclarations(body[k]!, source) === last.parts[k]) k++;
  if (last && k === body.length) return last.table;
  const parts = last ? last.parts.slice(0, k) : [];
  for (let i = k; i < body.length; i++) parts.push(topLevelDeclarations(body[i]!, source));
  const table = dedupeAndSort(parts.flat());
  MODULE.set(program, { parts, table });
  return table;
}
