/**
 * A Python source as plain data, read from tree-sitter's tree in one walk: the declarations (classes
 * with methods, nested classes and attributes; functions with parameters, annotations, defaults,
 * `async`, decorators; module variables), docstrings, imports, `__all__` in each of its forms, the
 * names bound at module level, each function's local names, and the syntax errors tree-sitter
 * recovered from. Statements inside ERROR nodes are read too, so a broken buffer still reports what it
 * declares.
 */
import type { ParseDiagnostic } from "../../parse.js";
import { lineStarts, positionAt } from "../../position.js";
import type {
  CodeDocument,
  Declaration,
  DeclarationKind,
  ExportsInfo,
  ImportEntry,
  ParamInfo,
  ScopeName,
} from "../types.js";
import { withTree, type SyntaxNode } from "./parser.js";

/** A name bound in a scope, with the line of its first binding. */
export interface Binding {
  name: string;
  kind: ScopeName["kind"];
  line: number;
  offset: number;
}

/** A function or class body: its extent and the names bound in it. */
export interface Scope {
  kind: "function" | "class";
  /** The dotted name of the declaration. */
  name: string;
  start: number;
  end: number;
  /** Where the body starts: a cursor before it (in the header) is not inside the scope's locals. */
  body_start: number;
  names: Binding[];
}

export interface PythonDocument extends CodeDocument {
  language: "python";
  module_doc: string;
  outline: Declaration[];
  imports: ImportEntry[];
  exports: ExportsInfo & { references: string[] };
  /** Module-level bindings in order of first binding (a name deleted by `del` and not bound again is gone). */
  bindings: Binding[];
  /** Module-level `del` statements: a name bound or star-imported before one is not in the namespace. */
  deleted?: { name: string; line: number }[];
  /**
   * Module-level statements that write a module's namespace at run time (`locals().update(…)`,
   * `globals()[k] = v`, `sys.modules[…]`, an import hook on `sys.meta_path`): the names they add cannot
   * be read from the source.
   */
  runtime?: { what: string; line: number }[];
  scopes: Scope[];
  lines: number;
}

/** The most diagnostics kept per document (a broken buffer can have thousands). */
const MAX_DIAGNOSTICS = 100;
/** A signature or value text is cut at this length. */
const MAX_TEXT = 240;

function collapse(text: string, max = MAX_TEXT): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** `inspect.cleandoc`: strip the first line, dedent the rest by their common indentation, drop blank edges. */
export function cleandoc(raw: string): string {
  const lines = raw.replace(/\t/g, "        ").split("\n");
  let margin = Infinity;
  for (const l of lines.slice(1)) {
    const stripped = l.trimStart();
    if (stripped) margin = Math.min(margin, l.length - stripped.length);
  }
  const out = [lines[0]!.trim(), ...lines.slice(1).map((l) => (margin === Infinity ? l : l.slice(margin)).trimEnd())];
  while (out.length > 0 && out[0] === "") out.shift();
  while (out.length > 0 && out[out.length - 1] === "") out.pop();
  return out.join("\n");
}

/** The first sentence of a doc: up to the first blank line, then up to ". " (or the end). */
export function firstSentence(doc: string): string {
  const para = doc.split(/\n\s*\n/)[0] ?? "";
  const flat = para.replace(/\s+/g, " ").trim();
  const m = /^(.+?[.!?])(?:\s|$)/.exec(flat);
  const s = m ? m[1]! : flat;
  return s.length > 300 ? `${s.slice(0, 299)}…` : s;
}

/** The value of a string literal node (prefix and quotes removed); undefined for an f-string or a byte string. */
export function stringValue(node: SyntaxNode): string | undefined {
  if (node.type === "concatenated_string") {
    let out = "";
    for (const c of node.namedChildren) {
      const v = c ? stringValue(c) : undefined;
      if (v === undefined) return undefined;
      out += v;
    }
    return out;
  }
  if (node.type !== "string") return undefined;
  let out = "";
  for (const c of node.namedChildren) {
    if (!c) continue;
    if (c.type === "interpolation") return undefined;
    if (c.type === "string_start") {
      const prefix = c.text.replace(/["']/g, "").toLowerCase();
      if (prefix.includes("b") || prefix.includes("f")) return undefined;
    }
    if (c.type === "string_content") out += c.text;
  }
  return out;
}

function named(node: SyntaxNode): SyntaxNode[] {
  return node.namedChildren.filter((c): c is SyntaxNode => c !== null);
}

function field(node: SyntaxNode, name: string): SyntaxNode | undefined {
  return node.childForFieldName(name) ?? undefined;
}

/** The docstring of a block (its first statement, when that is a string). */
function docstringOf(block: SyntaxNode | undefined): string {
  if (!block) return "";
  const first = named(block).find((c) => c.type !== "comment");
  if (!first || first.type !== "expression_statement") return "";
  const expr = first.namedChildren[0];
  if (!expr || first.namedChildCount !== 1) return "";
  const v = stringValue(expr);
  return v === undefined ? "" : cleandoc(v);
}

/** Identifiers bound by an assignment target (`a`, `a, b`, `[a, *b]`, `(a, b)`); attributes and subscripts bind nothing. */
function targetNames(node: SyntaxNode | undefined, out: SyntaxNode[] = []): SyntaxNode[] {
  if (!node) return out;
  switch (node.type) {
    case "identifier":
      out.push(node);
      break;
    case "pattern_list":
    case "tuple_pattern":
    case "list_pattern":
    case "list_splat_pattern":
    case "expression_list":
    case "tuple":
    case "list":
    case "parenthesized_expression":
    case "as_pattern_target":
      for (const c of named(node)) targetNames(c, out);
      break;
    default:
      break;
  }
  return out;
}

function paramsOf(node: SyntaxNode | undefined): ParamInfo[] {
  if (!node) return [];
  const out: ParamInfo[] = [];
  let keywordOnly = false;
  for (const p of named(node)) {
    let name: string | undefined;
    let type: string | undefined;
    let def: string | undefined;
    let kind: ParamInfo["kind"] = keywordOnly ? "keyword_only" : "positional";
    let inner: SyntaxNode = p;
    switch (p.type) {
      case "positional_separator":
        for (const q of out) q.kind = "positional_only";
        continue;
      case "keyword_separator":
        keywordOnly = true;
        continue;
      case "typed_parameter":
        type = field(p, "type")?.text;
        inner = named(p).find((c) => c.type !== "type") ?? p;
        break;
      case "default_parameter":
        inner = field(p, "name") ?? p;
        def = field(p, "value")?.text;
        break;
      case "typed_default_parameter":
        inner = field(p, "name") ?? p;
        type = field(p, "type")?.text;
        def = field(p, "value")?.text;
        break;
      default:
        break;
    }
    if (inner.type === "list_splat_pattern") {
      kind = "vararg";
      keywordOnly = true;
      name = named(inner)[0]?.text;
    } else if (inner.type === "dictionary_splat_pattern") {
      kind = "kwarg";
      name = named(inner)[0]?.text;
    } else if (inner.type === "identifier") {
      name = inner.text;
    }
    if (name === undefined) continue;
    out.push({
      name,
      kind,
      ...(type !== undefined ? { type: collapse(type, 120) } : {}),
      ...(def !== undefined ? { default: collapse(def, 80) } : {}),
    });
  }
  return out;
}

const ALL = "__all__";
/** Calls at module level that add names to a module's namespace at run time. */
const RUNTIME_CALL =
  /^(?:(?:locals|globals|vars)\(\)\.(?:update|setdefault|__setitem__)|sys\.meta_path\.(?:append|insert|extend)|sys\.modules\.(?:update|setdefault)|exec)$/;
/** Subscript targets whose assignment adds a name to a module's namespace at run time. */
const RUNTIME_TARGET = /^(?:locals\(\)|globals\(\)|vars\(\)|sys\.modules)$/;

class Reader {
  readonly starts: number[];
  readonly imports: ImportEntry[] = [];
  readonly bindings = new Map<string, Binding>();
  readonly deleted: { name: string; line: number }[] = [];
  readonly runtime: { what: string; line: number }[] = [];
  readonly scopes: Scope[] = [];
  readonly diagnostics: ParseDiagnostic[] = [];
  readonly indentDiagnostics: ParseDiagnostic[] = [];
  readonly exports: ExportsInfo & { references: string[] } = {
    forms: [],
    dynamic: false,
    implicit: [],
    references: [],
  };

  constructor(readonly source: string) {
    this.starts = lineStarts(source);
  }

  line(offset: number): number {
    return positionAt(offset, this.starts).line;
  }

  /** The line of the last character of a node (a node ending in a newline ends on the line before). */
  endLine(node: SyntaxNode): number {
    return this.line(Math.max(node.startIndex, node.endIndex - 1));
  }

  bind(scope: Map<string, Binding> | Binding[], name: string, kind: Binding["kind"], offset: number): void {
    if (scope instanceof Map) {
      if (!scope.has(name)) scope.set(name, { name, kind, line: this.line(offset), offset });
    } else if (!scope.some((b) => b.name === name)) {
      scope.push({ name, kind, line: this.line(offset), offset });
    }
  }

  /** Syntax errors: ERROR nodes and tokens the parser had to invent, only where the tree has errors. */
  collectDiagnostics(node: SyntaxNode): void {
    if (this.diagnostics.length >= MAX_DIAGNOSTICS) return;
    if (node.isMissing) {
      this.diagnostics.push({ start: node.startIndex, message: `missing "${node.type}"` });
      return;
    }
    if (node.isError) {
      const text = collapse(this.source.slice(node.startIndex, Math.min(node.endIndex, node.startIndex + 40)), 40);
      this.diagnostics.push({
        start: node.startIndex,
        message: text ? `invalid syntax near ${JSON.stringify(text)}` : "invalid syntax",
      });
    }
    if (!node.hasError && !node.isError) return;
    for (const c of node.children) if (c) this.collectDiagnostics(c);
  }

  /** The statements of a block or module, flattening ERROR nodes into their parts. */
  statements(block: SyntaxNode): SyntaxNode[] {
    const out: SyntaxNode[] = [];
    for (const c of named(block)) {
      if (c.type === "ERROR") out.push(...this.statements(c));
      else out.push(c);
    }
    return out;
  }

  /** Read a module's or a class's or a function's body. `scope` receives the names it binds. */
  block(
    block: SyntaxNode,
    container: string,
    where: "module" | "class" | "function",
    scope: Map<string, Binding> | Binding[],
  ): Declaration[] {
    const decls: Declaration[] = [];
    let column: number | undefined;
    for (const stmt of this.statements(block)) {
      // tree-sitter accepts a statement indented deeper than its block; Python does not
      const lineStart = this.starts[this.line(stmt.startIndex) - 1]!;
      if (stmt.type !== "comment" && this.source.slice(lineStart, stmt.startIndex).trim() === "") {
        const col = stmt.startIndex - lineStart;
        if (column === undefined) column = col;
        else if (col > column && this.indentDiagnostics.length < MAX_DIAGNOSTICS)
          this.indentDiagnostics.push({ start: stmt.startIndex, message: "unexpected indent" });
      }
      this.statement(stmt, container, where, scope, decls);
    }
    return decls;
  }

  statement(
    stmt: SyntaxNode,
    container: string,
    where: "module" | "class" | "function",
    scope: Map<string, Binding> | Binding[],
    decls: Declaration[],
  ): void {
    switch (stmt.type) {
      case "decorated_definition": {
        const def = field(stmt, "definition");
        if (!def) return;
        const decorators = named(stmt)
          .filter((c) => c.type === "decorator")
          .map((d) => collapse(d.text.replace(/^@\s*/, ""), 120));
        const d = this.definition(def, container, where, decorators, stmt);
        if (d) {
          decls.push(d);
          this.bind(scope, d.name, d.kind === "class" ? "class" : "function", d.name_start);
        }
        return;
      }
      case "function_definition":
      case "class_definition": {
        const d = this.definition(stmt, container, where, [], stmt);
        if (d) {
          decls.push(d);
          this.bind(scope, d.name, d.kind === "class" ? "class" : "function", d.name_start);
        }
        return;
      }
      case "import_statement":
      case "import_from_statement":
      case "future_import_statement":
        this.importStatement(stmt, where, scope, decls, container);
        return;
      case "expression_statement":
        for (const e of named(stmt)) this.expression(e, stmt, container, where, scope, decls);
        return;
      case "type_alias_statement": {
        const nameNode = field(stmt, "left");
        const id = nameNode?.type === "identifier" ? nameNode : nameNode ? named(nameNode)[0] : undefined;
        if (!id) return;
        decls.push(this.simple(id.text, "type", container, stmt, id, collapse(stmt.text)));
        this.bind(scope, id.text, where === "module" ? "module" : "local", id.startIndex);
        return;
      }
      case "if_statement":
      case "try_statement":
      case "with_statement":
      case "for_statement":
      case "while_statement":
      case "match_statement":
        this.compound(stmt, container, where, scope, decls);
        return;
      case "global_statement":
      case "nonlocal_statement":
        return;
      case "delete_statement":
        if (where !== "module" || !(scope instanceof Map)) return;
        for (const c of named(stmt))
          for (const id of targetNames(c)) {
            scope.delete(id.text);
            this.deleted.push({ name: id.text, line: this.line(id.startIndex) });
          }
        return;
      default:
        if (stmt.hasError) for (const c of named(stmt)) this.statement(c, container, where, scope, decls);
        return;
    }
  }

  /** if/try/with/for/while: their clauses bind names in the enclosing scope. */
  compound(
    stmt: SyntaxNode,
    container: string,
    where: "module" | "class" | "function",
    scope: Map<string, Binding> | Binding[],
    decls: Declaration[],
  ): void {
    if (stmt.type === "for_statement") {
      for (const id of targetNames(field(stmt, "left")))
        this.bind(scope, id.text, where === "module" ? "module" : "local", id.startIndex);
    }
    // `if TYPE_CHECKING:` runs only under a type checker: its names are not bound at run time
    const typeOnly =
      stmt.type === "if_statement" && /^(\w+\.)?TYPE_CHECKING$/.test(field(stmt, "condition")?.text ?? "");
    for (const c of named(stmt)) {
      if (c.type === "block" && typeOnly) continue;
      if (c.type === "block") {
        for (const s of this.statements(c)) this.statement(s, container, where, scope, decls);
      } else if (c.type === "with_clause") {
        for (const item of named(c)) this.walkBindings(item, where, scope);
      } else if (
        c.type === "elif_clause" ||
        c.type === "else_clause" ||
        c.type === "except_clause" ||
        c.type === "except_group_clause" ||
        c.type === "finally_clause" ||
        c.type === "case_clause"
      ) {
        if (c.type === "except_clause" || c.type === "except_group_clause") this.walkBindings(c, where, scope, true);
        this.compound(c, container, where, scope, decls);
      } else if (c.type === "ERROR") {
        for (const s of this.statements(c)) this.statement(s, container, where, scope, decls);
      }
    }
  }

  /** `as` targets (with items, except clauses) and walrus names inside an expression. */
  walkBindings(node: SyntaxNode, where: string, scope: Map<string, Binding> | Binding[], shallow = false): void {
    const kind = where === "module" ? "module" : "local";
    for (const c of named(node)) {
      if (c.type === "as_pattern") {
        const alias = field(c, "alias");
        for (const id of targetNames(alias)) this.bind(scope, id.text, kind, id.startIndex);
      } else if (c.type === "named_expression") {
        const id = field(c, "name");
        if (id) this.bind(scope, id.text, kind, id.startIndex);
      } else if (c.type === "identifier" && shallow && c.previousSibling?.type === "as") {
        this.bind(scope, c.text, kind, c.startIndex);
      }
      if (!shallow && c.type !== "lambda" && c.type !== "block") this.walkBindings(c, where, scope);
    }
  }

  simple(
    name: string,
    kind: DeclarationKind,
    container: string,
    node: SyntaxNode,
    nameNode: SyntaxNode,
    signature: string,
    extra: Partial<Declaration> = {},
  ): Declaration {
    return {
      name,
      kind,
      container,
      start: node.startIndex,
      end: node.endIndex,
      line_start: this.line(node.startIndex),
      line_end: this.endLine(node),
      name_start: nameNode.startIndex,
      signature,
      doc: "",
      summary: "",
      decorators: [],
      children: [],
      ...extra,
    };
  }

  /** The string right after an assignment (an attribute docstring, as Sphinx reads them). */
  attributeDoc(stmt: SyntaxNode): string {
    const next = stmt.nextNamedSibling;
    if (next?.type !== "expression_statement" || next.namedChildCount !== 1) return "";
    const v = stringValue(next.namedChildren[0]!);
    return v === undefined ? "" : cleandoc(v);
  }

  expression(
    e: SyntaxNode,
    stmt: SyntaxNode,
    container: string,
    where: "module" | "class" | "function",
    scope: Map<string, Binding> | Binding[],
    decls: Declaration[],
  ): void {
    const kind = where === "module" ? "module" : where === "class" ? "attribute" : "local";
    if (e.type === "assignment") {
      // a = b = 1 nests: the right side is another assignment
      let right = field(e, "right");
      const lefts = [field(e, "left")];
      while (right?.type === "assignment") {
        lefts.push(field(right, "left"));
        right = field(right, "right");
      }
      const type = field(e, "type");
      for (const left of lefts) {
        if (where === "module" && left?.type === "subscript" && RUNTIME_TARGET.test(field(left, "value")?.text ?? ""))
          this.runtime.push({ what: `${field(left, "value")!.text}[…] = …`, line: this.line(e.startIndex) });
        if (left?.type === "identifier" && left.text === ALL && where === "module") this.allAssign(right, "=", e);
        for (const id of targetNames(left)) {
          this.bind(scope, id.text, kind, id.startIndex);
          if (where === "function") continue;
          const isConst = /^[A-Z][A-Z0-9_]*$/.test(id.text.replace(/^_+/, "")) && id.text.replace(/_/g, "") !== "";
          const doc = this.attributeDoc(stmt);
          decls.push(
            this.simple(
              id.text,
              where === "class" ? "property" : isConst ? "constant" : "variable",
              container,
              stmt,
              id,
              collapse(
                right ? `${id.text}${type ? `: ${type.text}` : ""} = ${right.text}` : `${id.text}: ${type?.text ?? ""}`,
                160,
              ),
              {
                ...(type ? { type: collapse(type.text, 120) } : {}),
                ...(right ? { value: collapse(right.text, 80) } : {}),
                doc,
                summary: firstSentence(doc),
              },
            ),
          );
        }
      }
      if (right) this.walkBindings(right, where, scope);
      return;
    }
    if (e.type === "augmented_assignment") {
      const left = field(e, "left");
      const op = field(e, "operator")?.text ?? e.children.find((c) => c && /=$/.test(c.type))?.type;
      if (left?.type === "identifier" && left.text === ALL && where === "module" && op === "+=")
        this.allAssign(field(e, "right"), "+=", e);
      for (const id of targetNames(left)) this.bind(scope, id.text, kind, id.startIndex);
      return;
    }
    if (e.type === "call" && where === "module") {
      const fn = field(e, "function");
      if (fn && RUNTIME_CALL.test(fn.text)) this.runtime.push({ what: `${fn.text}(…)`, line: this.line(e.startIndex) });
      if (fn?.type === "attribute" && field(fn, "object")?.text === ALL) {
        const method = field(fn, "attribute")?.text;
        const args = named(field(e, "arguments") ?? e).filter((c) => c.type !== "comment");
        if (method === "extend" && args.length === 1) this.allAssign(args[0], ".extend", e);
        else if (method === "append" && args.length === 1) {
          const v = stringValue(args[0]!);
          if (!this.exports.forms.includes(".append")) this.exports.forms.push(".append");
          if (v !== undefined) (this.exports.declared ??= []).push(v);
          else this.exports.dynamic = true;
        } else if (method === "remove" && args.length === 1) {
          const v = stringValue(args[0]!);
          if (v !== undefined && this.exports.declared)
            this.exports.declared = this.exports.declared.filter((n) => n !== v);
        }
      }
    }
    this.walkBindings(e, where, scope);
  }

  /** `__all__ = […]`, `+= (…)`, `.extend([…])`, `[…] + […]`, `other.__all__`. */
  allAssign(value: SyntaxNode | undefined, form: string, at: SyntaxNode): void {
    const ex = this.exports;
    ex.line ??= this.line(at.startIndex);
    const before = ex.declared ?? [];
    if (form === "=") ex.declared = [];
    else ex.declared ??= [];
    const add = (v: SyntaxNode | undefined): void => {
      if (!v) return;
      if (v.type === "list" || v.type === "tuple" || v.type === "set" || v.type === "parenthesized_expression") {
        for (const item of named(v)) {
          if (item.type === "comment") continue;
          const s = stringValue(item);
          if (s !== undefined) ex.declared!.push(s);
          else if (v.type === "parenthesized_expression") add(item);
          else ex.dynamic = true;
        }
      } else if (v.type === "binary_operator" && field(v, "operator")?.text === "+") {
        if (!ex.forms.includes("+")) ex.forms.push("+");
        add(field(v, "left"));
        add(field(v, "right"));
      } else if (v.type === "identifier" && v.text === ALL) {
        // `__all__ = __all__ + [...]`
        if (form === "=") ex.declared!.push(...before);
      } else if (v.type === "attribute" && field(v, "attribute")?.text === ALL) {
        ex.references.push(field(v, "object")?.text ?? v.text);
      } else if (v.type === "call" && /^(list|tuple)$/.test(field(v, "function")?.text ?? "")) {
        const args = named(field(v, "arguments") ?? v);
        if (args.length === 1) add(args[0]);
        else ex.dynamic = true;
      } else {
        ex.dynamic = true;
      }
    };
    if (!ex.forms.includes(form)) ex.forms.push(form);
    add(value);
  }

  importStatement(
    stmt: SyntaxNode,
    where: "module" | "class" | "function",
    scope: Map<string, Binding> | Binding[],
    decls: Declaration[],
    container: string,
  ): void {
    const line = this.line(stmt.startIndex);
    const kind = where === "module" ? "import" : "local";
    if (stmt.type === "future_import_statement") {
      const names = named(stmt)
        .filter((c) => c.type === "dotted_name" || c.type === "aliased_import")
        .map((c) => this.aliased(c));
      if (where === "module")
        this.imports.push({
          from: "__future__",
          level: 0,
          names,
          star: false,
          module: false,
          line,
          start: stmt.startIndex,
          end: stmt.endIndex,
        });
      for (const n of names) this.bind(scope, n.name, kind, stmt.startIndex);
      return;
    }
    if (stmt.type === "import_statement") {
      for (const c of named(stmt)) {
        if (c.type !== "dotted_name" && c.type !== "aliased_import") continue;
        const { name, imported } = this.aliased(c);
        // `import a.b` binds `a`; `import a.b as c` binds `c` to a.b
        const bound = c.type === "aliased_import" ? name : imported.split(".")[0]!;
        if (where === "module") {
          this.imports.push({
            from: imported,
            level: 0,
            names: [{ name: bound, imported: c.type === "aliased_import" ? imported : bound }],
            star: false,
            module: true,
            line,
            start: stmt.startIndex,
            end: stmt.endIndex,
          });
          decls.push(
            this.simple(bound, "import", container, stmt, c, collapse(stmt.text), { from: imported, imported }),
          );
        }
        this.bind(scope, bound, kind, c.startIndex);
      }
      return;
    }
    const moduleNode = field(stmt, "module_name");
    let from = moduleNode?.text.replace(/\s+/g, "") ?? "";
    let level = 0;
    if (moduleNode?.type === "relative_import") {
      const prefix = named(moduleNode).find((c) => c.type === "import_prefix")?.text ?? "";
      level = prefix.length;
      const rest = named(moduleNode).find((c) => c.type === "dotted_name")?.text ?? "";
      from = ".".repeat(level) + rest;
    }
    const star = named(stmt).some((c) => c.type === "wildcard_import");
    const names = star
      ? [{ name: "*", imported: "*" }]
      : named(stmt)
          .filter(
            (c) => c.startIndex !== moduleNode?.startIndex && (c.type === "dotted_name" || c.type === "aliased_import"),
          )
          .map((c) => this.aliased(c));
    if (where === "module")
      this.imports.push({ from, level, names, star, module: false, line, start: stmt.startIndex, end: stmt.endIndex });
    if (star) return;
    for (const n of names) {
      this.bind(scope, n.name, kind, stmt.startIndex);
      if (where === "module")
        decls.push(
          this.simple(n.name, "import", container, stmt, stmt, collapse(stmt.text), { from, imported: n.imported }),
        );
    }
  }

  aliased(c: SyntaxNode): { name: string; imported: string } {
    if (c.type === "aliased_import") {
      const imported = field(c, "name")?.text ?? "";
      return { name: field(c, "alias")?.text ?? imported, imported };
    }
    return { name: c.text, imported: c.text };
  }

  definition(
    def: SyntaxNode,
    container: string,
    where: "module" | "class" | "function",
    decorators: string[],
    outer: SyntaxNode,
  ): Declaration | undefined {
    const nameNode = field(def, "name");
    if (!nameNode) return undefined;
    const name = nameNode.text;
    const body = field(def, "body");
    const dotted = container ? `${container}.${name}` : name;
    const doc = docstringOf(body);
    const headerEnd = body ? body.startIndex : def.endIndex;
    const header = collapse(this.source.slice(def.startIndex, headerEnd).replace(/:\s*$/, ""), 400);
    const base = {
      name,
      container,
      start: outer.startIndex,
      end: outer.endIndex,
      line_start: this.line(outer.startIndex),
      line_end: this.endLine(outer),
      name_start: nameNode.startIndex,
      signature: header,
      doc,
      summary: firstSentence(doc),
      decorators,
    };
    if (def.type === "class_definition") {
      const names: Binding[] = [];
      const supers = field(def, "superclasses");
      const children = body ? this.block(body, dotted, "class", names) : [];
      this.scopes.push({
        kind: "class",
        name: dotted,
        start: def.startIndex,
        end: def.endIndex,
        body_start: headerEnd,
        names,
      });
      return {
        ...base,
        kind: "class",
        bases: supers
          ? named(supers)
              .filter((c) => c.type !== "comment")
              .map((c) => collapse(c.text, 120))
          : [],
        children,
      };
    }
    const params = paramsOf(field(def, "parameters"));
    const returns = field(def, "return_type");
    const names: Binding[] = [];
    for (const p of params)
      names.push({ name: p.name, kind: "parameter", line: base.line_start, offset: def.startIndex });
    const children = body ? this.block(body, dotted, "function", names) : [];
    this.scopes.push({
      kind: "function",
      name: dotted,
      start: def.startIndex,
      end: def.endIndex,
      body_start: headerEnd,
      names,
    });
    return {
      ...base,
      kind: where === "class" ? "method" : "function",
      async: def.children[0]?.type === "async",
      params,
      ...(returns ? { returns: collapse(returns.text, 120) } : {}),
      children: children.filter((c) => c.kind === "function" || c.kind === "class"),
    };
  }
}

/** Rounds of blanking broken statements before the document is read as it is. */
export const MAX_REPAIRS = 16;

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/**
 * The first ERROR (or missing token) that swallows lines, as [start, end) offsets of whole lines: from
 * its line to the next line indented no deeper that is code (a sibling statement), or the end.
 */
export function brokenSegment(
  root: SyntaxNode,
  source: string,
  starts: readonly number[],
): [number, number] | undefined {
  const isStatement = (t: string): boolean => t.endsWith("_statement") || t.endsWith("_definition") || t === "comment";
  // The first place the code stops making sense: inside an ERROR that holds whole statements (tree-sitter
  // may wrap a file around one broken line), past those statements; else the innermost error or missing token.
  const visit = (n: SyntaxNode): SyntaxNode | undefined => {
    if (n.isMissing) return n;
    for (const c of n.children) {
      if (!c) continue;
      if (c.isMissing || c.hasError || c.isError) return visit(c) ?? c;
      if (n.isError && !isStatement(c.type)) return c;
    }
    return n.isError ? n : undefined;
  };
  const found = visit(root);
  if (!found) return undefined;
  const first = positionAt(found.startIndex, starts).line - 1;
  const depth = indentOf(source.slice(starts[first], starts[first + 1] ?? source.length));
  let last = first + 1;
  for (; last < starts.length; last++) {
    const text = source.slice(starts[last], starts[last + 1] ?? source.length);
    const t = text.trim();
    if (t === "" || t.startsWith("#")) continue;
    if (indentOf(text) <= depth && !/^[)\]}]/.test(t)) break;
  }
  return [starts[first]!, starts[last] ?? source.length];
}

/** A declaration header on a blanked line, kept by name so a broken definition is still listed. */
export const HEADER = /^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_][A-Za-z0-9_]*)/gm;

/** Read `source` into a PythonDocument (the parser must be loaded). */
export function readPython(source: string, label?: string): PythonDocument {
  const starts = lineStarts(source);
  let text = source;
  const diagnostics: ParseDiagnostic[] = [];
  const salvaged: Salvaged[] = [];
  for (let round = 0; round <= MAX_REPAIRS; round++) {
    const segment = withTree(
      text,
      (root) => {
        if (round === 0 && root.hasError) {
          const r = new Reader(source);
          r.collectDiagnostics(root);
          diagnostics.push(...r.diagnostics);
        }
        return root.hasError && round < MAX_REPAIRS ? brokenSegment(root, text, starts) : undefined;
      },
      label,
    );
    if (!segment) break;
    const [a, b] = segment;
    const cut = text.slice(a, b);
    for (const m of cut.matchAll(HEADER))
      salvaged.push({
        name: m[3]!,
        kind: m[2] as "def" | "class",
        indent: m[1]!.length,
        start: a + m.index + m[1]!.length,
        end: b,
      });
    // spaces keep every offset and line of the rest where it was
    text = text.slice(0, a) + cut.replace(/[^\n]/g, " ") + text.slice(b);
  }
  return withTree(text, (root) => readRoot(source, root, diagnostics, salvaged), label);
}

type Salvaged = { name: string; kind: "def" | "class"; indent: number; start: number; end: number };

/** The document of `source` from a tree of it (of `source` with its broken segments blanked when `salvaged` is not empty). */
function readRoot(
  source: string,
  root: SyntaxNode,
  diagnostics: ParseDiagnostic[],
  salvaged: Salvaged[],
): PythonDocument {
  const r = new Reader(source);
  const outline = r.block(root, "", "module", r.bindings);
  for (const s of salvaged) {
    if (s.indent !== 0) continue;
    const d = r.simple(
      s.name,
      s.kind === "def" ? "function" : "class",
      "",
      root,
      root,
      source
        .slice(s.start, source.indexOf("\n", s.start) === -1 ? source.length : source.indexOf("\n", s.start))
        .trim(),
    );
    Object.assign(d, {
      start: s.start,
      end: s.end,
      line_start: r.line(s.start),
      line_end: r.line(Math.max(s.start, s.end - 1)),
      name_start: s.start,
    });
    outline.push(d);
    r.bind(r.bindings, s.name, s.kind === "def" ? "function" : "class", s.start);
  }
  outline.sort((x, y) => x.start - y.start);
  const all = [...diagnostics, ...r.indentDiagnostics].sort((x, y) => x.start - y.start);
  const bindings = [...r.bindings.values()].sort((x, y) => x.offset - y.offset);
  r.exports.implicit = bindings.map((b) => b.name).filter((n) => !n.startsWith("_"));
  if (r.exports.declared) r.exports.declared = [...new Set(r.exports.declared)];
  r.scopes.sort((x, y) => x.start - y.start);
  return {
    language: "python" as const,
    source,
    diagnostics: all.slice(0, MAX_DIAGNOSTICS),
    module_doc: docstringOf(root),
    outline,
    imports: r.imports,
    exports: r.exports,
    bindings,
    deleted: r.deleted,
    runtime: r.runtime,
    scopes: r.scopes,
    lines: r.starts.length,
  };
}

/** The document of `source` from a tree of it without errors (`root.hasError` false): no repair rounds. */
export function readParsed(source: string, root: SyntaxNode): PythonDocument {
  return readRoot(source, root, [], []);
}

/** What one top-level statement of a module contributes to its document (for re-reading only an edited one). */
export interface TopLevelPart {
  decls: Declaration[];
  scopes: Scope[];
  imports: ImportEntry[];
  bindings: Binding[];
  /** Indentation errors, and whether it touched `__all__`: either makes a partial re-read unsafe. */
  irregular: boolean;
}

/** The syntax errors under `node` (of a tree of `source`), as `readPython` reports them. */
export function syntaxErrors(source: string, node: SyntaxNode): ParseDiagnostic[] {
  const r = new Reader(source);
  r.collectDiagnostics(node);
  return r.diagnostics;
}

/** Read one top-level statement (`node`, of a tree of `source`) as `readPython` reads it in the module. */
export function readTopLevel(source: string, node: SyntaxNode): TopLevelPart {
  const r = new Reader(source);
  const decls: Declaration[] = [];
  r.statement(node, "", "module", r.bindings, decls);
  const e = r.exports;
  return {
    decls,
    scopes: r.scopes,
    imports: r.imports,
    bindings: [...r.bindings.values()],
    irregular:
      r.indentDiagnostics.length > 0 ||
      e.declared !== undefined ||
      e.forms.length > 0 ||
      e.references.length > 0 ||
      e.dynamic,
  };
}
