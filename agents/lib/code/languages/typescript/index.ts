/**
 * TypeScript and JavaScript behind the language interface: TypeScript's own parser (parse.ts, via
 * typescript-estree) and the ESTree helpers the TS agents already use (cursor.ts, signature.ts,
 * comments.ts). The agents' richer TS paths (the compiler's export resolution, the language service)
 * stay where they are; this adapter gives the operations every language has.
 */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import { docCommentBefore, docText } from "../../comments.js";
import { functionAtOffset, functionsOf, type FunctionSlice } from "../../cursor.js";
import { dialectOf, type Dialect } from "../../language.js";
import { boundIdentifiers } from "../../names.js";
import { parseFile, type ParsedFile, type Program } from "../../parse.js";
import { lineStarts, positionAt } from "../../position.js";
import { paramInfo, signatureOf } from "../../signature.js";
import type {
  CodeDocument,
  CodeLanguage,
  Declaration,
  DeclarationKind,
  ExportsInfo,
  ImportEntry,
  LanguageId,
  ScopeName,
  SearchChunk,
} from "../types.js";

export interface TypeScriptDocument extends CodeDocument {
  language: "typescript" | "javascript";
  parsed: ParsedFile;
}

function firstSentence(doc: string): string {
  const flat = (doc.split(/\n\s*\n/)[0] ?? "").replace(/\s+/g, " ").trim();
  return /^(.+?[.!?])(?:\s|$)/.exec(flat)?.[1] ?? flat;
}

function declOfSlice(s: FunctionSlice, doc: TypeScriptDocument, starts: number[]): Declaration {
  const sig = signatureOf(s, doc.source);
  const text = docText(s.doc);
  return {
    name: s.name,
    kind: s.className !== undefined ? "method" : "function",
    container: s.className ?? "",
    start: s.range[0],
    end: s.range[1],
    line_start: positionAt(s.range[0], starts).line,
    line_end: positionAt(s.range[1], starts).line,
    name_start: s.fn.range[0],
    signature: sig.text,
    doc: text,
    summary: firstSentence(text),
    decorators: s.decorators,
    async: sig.async,
    params: s.fn.params.map((p) => {
      const info = paramInfo(p, doc.source);
      return {
        name: info.name,
        kind: info.rest ? ("vararg" as const) : ("positional" as const),
        ...(info.type !== undefined ? { type: info.type } : {}),
        ...(info.default !== undefined ? { default: info.default } : {}),
      };
    }),
    ...(sig.returns !== undefined ? { returns: sig.returns } : {}),
    children: [],
  };
}

function unwrap(stmt: TSESTree.ProgramStatement): TSESTree.Node {
  if ((stmt.type === "ExportNamedDeclaration" || stmt.type === "ExportDefaultDeclaration") && stmt.declaration)
    return stmt.declaration;
  return stmt;
}

function topLevel(doc: TypeScriptDocument): Declaration[] {
  const { program } = doc.parsed;
  const source = doc.source;
  const starts = lineStarts(source);
  const fns = functionsOf(program, source);
  const out: Declaration[] = [];
  const make = (
    name: string,
    kind: DeclarationKind,
    outer: TSESTree.Node,
    nameNode: TSESTree.Node,
    children: Declaration[] = [],
  ): Declaration => {
    const text = docText(docCommentBefore(program, source, outer.range[0]));
    return {
      name,
      kind,
      container: "",
      start: outer.range[0],
      end: outer.range[1],
      line_start: outer.loc.start.line,
      line_end: outer.loc.end.line,
      name_start: nameNode.range[0],
      signature: source
        .slice(outer.range[0], Math.min(outer.range[1], outer.range[0] + 160))
        .split("\n")[0]!
        .trim(),
      doc: text,
      summary: firstSentence(text),
      decorators: [],
      children,
    };
  };
  for (const stmt of program.body) {
    const node = unwrap(stmt);
    if (node.type === "FunctionDeclaration" || node.type === "TSDeclareFunction") {
      const s = fns.find((f) => f.fn === node);
      if (s) out.push(declOfSlice(s, doc, starts));
    } else if (node.type === "ClassDeclaration" && node.id) {
      const members = fns.filter(
        (f) => f.className === node.id!.name && f.range[0] >= node.range[0] && f.range[1] <= node.range[1],
      );
      out.push(
        make(
          node.id.name,
          "class",
          stmt,
          node.id,
          members.map((m) => declOfSlice(m, doc, starts)),
        ),
      );
    } else if (node.type === "VariableDeclaration") {
      for (const d of node.declarations) {
        const init = d.init;
        const fn = init ? fns.find((f) => f.fn === init) : undefined;
        if (fn) out.push(declOfSlice(fn, doc, starts));
        else
          for (const id of boundIdentifiers(d.id))
            out.push(make(id.name, node.kind === "const" ? "constant" : "variable", stmt, id));
      }
    } else if (
      (node.type === "TSTypeAliasDeclaration" ||
        node.type === "TSInterfaceDeclaration" ||
        node.type === "TSEnumDeclaration") &&
      node.id.type === "Identifier"
    ) {
      out.push(make(node.id.name, "type", stmt, node.id));
    }
  }
  return out;
}

function flatten(decls: readonly Declaration[], out: Declaration[] = []): Declaration[] {
  for (const d of decls) {
    out.push(d);
    flatten(d.children, out);
  }
  return out;
}

function importsOf(program: Program): ImportEntry[] {
  const out: ImportEntry[] = [];
  for (const stmt of program.body) {
    if (stmt.type !== "ImportDeclaration") continue;
    const names = stmt.specifiers.map((s) => ({
      name: s.local.name,
      imported:
        s.type === "ImportSpecifier"
          ? s.imported.type === "Identifier"
            ? s.imported.name
            : s.imported.value
          : s.type === "ImportDefaultSpecifier"
            ? "default"
            : "*",
    }));
    out.push({
      from: stmt.source.value,
      level: 0,
      names,
      star: false,
      module: stmt.specifiers.some((s) => s.type === "ImportNamespaceSpecifier"),
      line: stmt.loc.start.line,
      start: stmt.range[0],
      end: stmt.range[1],
    });
  }
  return out;
}

function exportsOf(program: Program): ExportsInfo {
  const declared: string[] = [];
  for (const stmt of program.body) {
    if (stmt.type === "ExportDefaultDeclaration") declared.push("default");
    if (stmt.type !== "ExportNamedDeclaration") continue;
    for (const s of stmt.specifiers)
      declared.push(s.exported.type === "Identifier" ? s.exported.name : s.exported.value);
    const d = stmt.declaration;
    if (!d) continue;
    if (d.type === "VariableDeclaration")
      for (const v of d.declarations) for (const id of boundIdentifiers(v.id)) declared.push(id.name);
    else if ("id" in d && d.id && d.id.type === "Identifier") declared.push(d.id.name);
  }
  return {
    declared,
    forms: ["export"],
    dynamic: program.body.some((s) => s.type === "ExportAllDeclaration"),
    implicit: [],
  };
}

function make(id: "typescript" | "javascript", dialect: Dialect): CodeLanguage<TypeScriptDocument> {
  return {
    id: id satisfies LanguageId,
    parse(source, filePath) {
      const parsed = parseFile(source, filePath ? dialectOf(id, filePath) : dialect, filePath);
      return { language: id, source, diagnostics: parsed.diagnostics, parsed };
    },
    outline: topLevel,
    declarations: (doc) => flatten(topLevel(doc)).sort((a, b) => a.start - b.start),
    declarationAt(doc, offset, kinds) {
      const s = functionAtOffset(doc.parsed.program, doc.source, offset);
      if (s && (!kinds || kinds.includes(s.className !== undefined ? "method" : "function")))
        return declOfSlice(s, doc, lineStarts(doc.source));
      return flatten(topLevel(doc)).find(
        (d) => (!kinds || kinds.includes(d.kind)) && d.kind === "class" && offset >= d.start && offset <= d.end,
      );
    },
    imports: (doc) => importsOf(doc.parsed.program),
    exports: (doc) => exportsOf(doc.parsed.program),
    chunks(doc): SearchChunk[] {
      return flatten(topLevel(doc))
        .filter((d) => d.kind === "function" || d.kind === "method" || d.kind === "class")
        .map((d) => ({
          name: d.name,
          kind: d.kind,
          container: d.container,
          start: d.start,
          end: d.end,
          line_start: d.line_start,
          line_end: d.line_end,
          signature: d.signature,
          doc: d.doc,
          text: doc.source.slice(d.start, d.end),
        }));
    },
    namesInScope(doc, offset): ScopeName[] {
      const out: ScopeName[] = [];
      const seen = new Set<string>();
      const s = functionAtOffset(doc.parsed.program, doc.source, offset);
      if (s)
        for (const p of s.fn.params) {
          const name = paramInfo(p, doc.source).name;
          if (!seen.has(name)) {
            seen.add(name);
            out.push({ name, kind: "parameter", line: s.fn.loc.start.line, scope: s.name });
          }
        }
      for (const d of topLevel(doc))
        if (!seen.has(d.name)) {
          seen.add(d.name);
          out.push({
            name: d.name,
            kind: d.kind === "class" ? "class" : d.kind === "function" ? "function" : "module",
            line: d.line_start,
          });
        }
      for (const i of importsOf(doc.parsed.program))
        for (const n of i.names)
          if (!seen.has(n.name)) {
            seen.add(n.name);
            out.push({ name: n.name, kind: "import", line: i.line });
          }
      return out;
    },
  };
}

export const typescript = make("typescript", { language: "typescript", jsx: false });
export const javascript = make("javascript", { language: "javascript", jsx: true });
