/** The structured outline of a module: doc comment, imports, exports, functions, classes, types, consts. */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import { docCommentBefore, docSummary, moduleDocComment, docText } from "../lib/code/comments.js";
import { isFunction, isKeyedClassMember, sliceFunction } from "../lib/code/cursor.js";
import { boundIdentifiers, textOf, typeText } from "../lib/code/names.js";
import type { Node, ParsedFile } from "../lib/code/parse.js";
import { signatureOf, type SignatureInfo } from "../lib/code/signature.js";
import type { ExportEntry, UnresolvedExport } from "../lib/code/exports.js";

export type { ExportEntry } from "../lib/code/exports.js";

export interface MemberEntry {
  name: string;
  kind: "constructor" | "method" | "getter" | "setter" | "property";
  static: boolean;
  access?: string;
  signature: string;
  doc: string;
  line: number;
}

export interface ClassEntry {
  name: string;
  exported: boolean;
  extends?: string;
  decorators: string[];
  doc: string;
  line_start: number;
  line_end: number;
  members: MemberEntry[];
}

export interface TypeEntry {
  name: string;
  kind: "type" | "interface" | "enum" | "namespace";
  exported: boolean;
  doc: string;
  line_start: number;
  line_end: number;
}

export interface ConstEntry {
  name: string;
  kind: "const" | "let" | "var";
  type?: string;
  exported: boolean;
  doc: string;
  line: number;
}

export interface Outline {
  lines: number;
  module_doc: string;
  imports: { from: string; names: string[]; line: number }[];
  /** Without a workspace, what the file itself says (`export *` as "*"); the handler replaces it with the resolved list (exports.ts). */
  exports: ExportEntry[];
  /** Re-exports that could not be followed (a cycle, a package, a missing file), with why. */
  unresolved_exports?: UnresolvedExport[];
  functions: SignatureInfo[];
  classes: ClassEntry[];
  types: TypeEntry[];
  consts: ConstEntry[];
}

function docOf(file: ParsedFile, node: Node, outer: Node): string {
  const decorators = (node as { decorators?: TSESTree.Decorator[] }).decorators ?? [];
  const start = Math.min(outer.range[0], ...decorators.map((d) => d.range[0]));
  return docSummary(docCommentBefore(file.program, file.source, start));
}

function memberOf(m: TSESTree.ClassElement, file: ParsedFile): MemberEntry | undefined {
  const src = file.source;
  if (!isKeyedClassMember(m)) return undefined;
  const key = m.key;
  const name =
    key.type === "Identifier"
      ? key.name
      : key.type === "PrivateIdentifier"
        ? `#${key.name}`
        : m.computed
          ? `[${textOf(key, src, 60)}]`
          : textOf(key, src, 60);
  const isMethod = m.type === "MethodDefinition" || m.type === "TSAbstractMethodDefinition";
  const kind: MemberEntry["kind"] = isMethod
    ? m.kind === "constructor"
      ? "constructor"
      : m.kind === "get"
        ? "getter"
        : m.kind === "set"
          ? "setter"
          : "method"
    : "property";
  let start = m.range[0];
  for (const d of m.decorators ?? []) start = Math.max(start, d.range[1]);
  const end = isMethod && m.value.body ? m.value.body.range[0] : m.range[1];
  const signature = src
    .slice(start, end)
    .replace(/\s+/g, " ")
    .replace(/[\s;{]+$/, "")
    .trim();
  return {
    name,
    kind,
    static: m.static === true,
    ...(m.accessibility ? { access: m.accessibility } : {}),
    signature: signature.length > 200 ? `${signature.slice(0, 199)}…` : signature,
    doc: docSummary(
      docCommentBefore(file.program, src, Math.min(m.range[0], ...(m.decorators ?? []).map((d) => d.range[0]))),
    ),
    line: m.loc.start.line,
  };
}

function exportsOf(stmt: Node, file: ParsedFile): ExportEntry[] {
  const line = stmt.loc.start.line;
  if (stmt.type === "ExportDefaultDeclaration")
    return [
      {
        name: "default",
        kind:
          stmt.declaration.type === "ClassDeclaration"
            ? "class"
            : stmt.declaration.type === "FunctionDeclaration"
              ? "function"
              : "value",
        type_only: false,
        default: true,
        line,
      },
    ];
  if (stmt.type === "ExportAllDeclaration") {
    return [
      {
        name: stmt.exported ? textOf(stmt.exported, file.source, 80) : "*",
        kind: "re-export",
        type_only: stmt.exportKind === "type",
        line,
        from: stmt.source.value,
      },
    ];
  }
  if (stmt.type !== "ExportNamedDeclaration") return [];
  const d = stmt.declaration;
  if (!d) {
    return stmt.specifiers.map((s) => ({
      name: s.exported.type === "Identifier" ? s.exported.name : String(s.exported.value),
      kind: stmt.source ? "re-export" : "binding",
      type_only: stmt.exportKind === "type" || s.exportKind === "type",
      line: s.loc.start.line,
      ...(stmt.source ? { from: stmt.source.value } : {}),
    }));
  }
  switch (d.type) {
    case "FunctionDeclaration":
    case "TSDeclareFunction":
      return d.id ? [{ name: d.id.name, kind: "function", type_only: false, line }] : [];
    case "ClassDeclaration":
      return d.id ? [{ name: d.id.name, kind: "class", type_only: false, line }] : [];
    case "VariableDeclaration":
      return d.declarations.flatMap((v) =>
        boundIdentifiers(v.id).map((id) => ({ name: id.name, kind: d.kind, type_only: false, line })),
      );
    case "TSTypeAliasDeclaration":
      return [{ name: d.id.name, kind: "type", type_only: true, line }];
    case "TSInterfaceDeclaration":
      return [{ name: d.id.name, kind: "interface", type_only: true, line }];
    case "TSEnumDeclaration":
      return [{ name: d.id.name, kind: "enum", type_only: d.const === true, line }];
    case "TSModuleDeclaration":
      return d.id.type === "Identifier" ? [{ name: d.id.name, kind: "namespace", type_only: false, line }] : [];
    default:
      return [];
  }
}

/** Build the outline of a parsed module. */
export function outlineOf(file: ParsedFile): Outline {
  const { program, source } = file;
  const out: Outline = {
    lines: source.split("\n").length - (source.endsWith("\n") ? 1 : 0),
    module_doc: docText(moduleDocComment(program, source)),
    imports: [],
    exports: [],
    functions: [],
    classes: [],
    types: [],
    consts: [],
  };
  for (const stmt of program.body) {
    out.exports.push(...exportsOf(stmt, file));
    if (stmt.type === "ImportDeclaration") {
      out.imports.push({
        from: stmt.source.value,
        names: stmt.specifiers.map((s) => s.local.name),
        line: stmt.loc.start.line,
      });
      continue;
    }
    const exported =
      (stmt.type === "ExportNamedDeclaration" || stmt.type === "ExportDefaultDeclaration") &&
      stmt.declaration !== null &&
      stmt.declaration !== undefined;
    const d = (exported ? (stmt as TSESTree.ExportNamedDeclaration).declaration : stmt) as Node;
    const chainBase: Node[] = exported ? [program, stmt, d] : [program, d];
    if (d.type === "FunctionDeclaration" || d.type === "TSDeclareFunction") {
      out.functions.push(signatureOf(sliceFunction(chainBase, chainBase.length - 1, program, source), source));
    } else if (d.type === "ClassDeclaration") {
      out.classes.push({
        name: d.id?.name ?? "default",
        exported,
        ...(d.superClass ? { extends: textOf(d.superClass, source, 80) } : {}),
        decorators: (d.decorators ?? []).map((x) => textOf(x, source, 80)),
        doc: docOf(file, d, stmt),
        line_start: Math.min(stmt.loc.start.line, ...(d.decorators ?? []).map((x) => x.loc.start.line)),
        line_end: d.loc.end.line,
        members: d.body.body.map((m) => memberOf(m, file)).filter((m): m is MemberEntry => m !== undefined),
      });
    } else if (
      d.type === "TSTypeAliasDeclaration" ||
      d.type === "TSInterfaceDeclaration" ||
      d.type === "TSEnumDeclaration" ||
      d.type === "TSModuleDeclaration"
    ) {
      const kind =
        d.type === "TSTypeAliasDeclaration"
          ? "type"
          : d.type === "TSInterfaceDeclaration"
            ? "interface"
            : d.type === "TSEnumDeclaration"
              ? "enum"
              : "namespace";
      out.types.push({
        name: d.id.type === "Identifier" ? d.id.name : textOf(d.id, source),
        kind,
        exported,
        doc: docOf(file, d, stmt),
        line_start: stmt.loc.start.line,
        line_end: d.loc.end.line,
      });
    } else if (d.type === "VariableDeclaration") {
      for (const v of d.declarations) {
        if (v.init && isFunction(v.init) && v.id.type === "Identifier") {
          const chain: Node[] = [...chainBase, v, v.init];
          out.functions.push(signatureOf(sliceFunction(chain, chain.length - 1, program, source), source));
          continue;
        }
        for (const id of boundIdentifiers(v.id)) {
          const type = typeText(id, source);
          out.consts.push({
            name: id.name,
            kind: d.kind === "let" || d.kind === "var" ? d.kind : "const",
            ...(type !== undefined ? { type } : {}),
            exported,
            doc: docOf(file, d, stmt),
            line: id.loc.start.line,
          });
        }
      }
    }
  }
  return out;
}
