/** A function's signature as data: parameters with types and defaults, return type, async/generator, doc summary. */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import { docSummary } from "./comments.js";
import type { FunctionSlice } from "./cursor.js";
import { textOf, typeText } from "./names.js";
import type { Node } from "./parse.js";
import { lineAt } from "./position.js";

export interface ParamInfo {
  name: string;
  type?: string;
  default?: string;
  optional: boolean;
  rest: boolean;
}

export interface SignatureInfo {
  name: string;
  kind: FunctionSlice["kind"];
  class?: string;
  exported: boolean;
  async: boolean;
  generator: boolean;
  params: ParamInfo[];
  returns?: string;
  /** The declaration up to its body, whitespace collapsed (`export async function f(a: number): Promise<void>`). */
  text: string;
  doc: string;
  decorators: string[];
  line_start: number;
  line_end: number;
}

/** One parameter as data. */
export function paramInfo(p: Node, source: string): ParamInfo {
  let node: Node = p;
  if (node.type === "TSParameterProperty") node = node.parameter;
  if (node.type === "AssignmentPattern") {
    const inner = paramInfo(node.left, source);
    return { ...inner, default: textOf(node.right, source, 80), optional: true };
  }
  if (node.type === "RestElement") {
    const inner = paramInfo(node.argument, source);
    const type = typeText(node, source) ?? inner.type;
    return { name: inner.name, ...(type !== undefined ? { type } : {}), optional: true, rest: true };
  }
  const type = typeText(node, source);
  const name =
    node.type === "Identifier"
      ? node.name
      : textOf(
          {
            ...node,
            range: [node.range[0], (node as { typeAnnotation?: Node }).typeAnnotation?.range[0] ?? node.range[1]],
          } as Node,
          source,
          80,
        ).trim();
  const optional = node.type === "Identifier" && node.optional === true;
  return { name, ...(type !== undefined ? { type } : {}), optional, rest: false };
}

/** The signature of a sliced function. */
export function signatureOf(slice: FunctionSlice, source: string): SignatureInfo {
  const fn = slice.fn;
  let start = slice.decl.range[0];
  const decorators = (slice.decl as { decorators?: TSESTree.Decorator[] }).decorators ?? [];
  for (const d of decorators) start = Math.max(start, d.range[1]);
  const bodyStart = fn.body ? fn.body.range[0] : fn.range[1];
  const text = source
    .slice(start, bodyStart)
    .replace(/\s+/g, " ")
    .replace(/\s*(=>|\{)?\s*$/, "")
    .trim();
  const returns = fn.returnType
    ? source.slice(fn.returnType.typeAnnotation.range[0], fn.returnType.typeAnnotation.range[1])
    : undefined;
  return {
    name: slice.name,
    kind: slice.kind,
    ...(slice.className !== undefined ? { class: slice.className } : {}),
    exported: slice.exported,
    async: fn.async === true,
    generator: "generator" in fn && fn.generator === true,
    params: fn.params.map((p) => paramInfo(p, source)),
    ...(returns !== undefined ? { returns } : {}),
    text,
    doc: docSummary(slice.doc),
    decorators: slice.decorators,
    line_start: lineAt(source, slice.range[0]),
    line_end: slice.decl.loc.end.line,
  };
}
