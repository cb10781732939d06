/** Names bound by declarations and patterns, and the text of type annotations. */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import type { Node } from "./parse.js";

/** Identifiers bound by a binding pattern (`a`, `{ b, c: d }`, `[e, ...f]`, `g = 1`). */
export function boundIdentifiers(pattern: Node | null | undefined): TSESTree.Identifier[] {
  if (!pattern) return [];
  switch (pattern.type) {
    case "Identifier":
      return [pattern];
    case "ObjectPattern":
      return pattern.properties.flatMap((p) =>
        p.type === "RestElement" ? boundIdentifiers(p.argument) : boundIdentifiers(p.value),
      );
    case "ArrayPattern":
      return pattern.elements.flatMap((e) => boundIdentifiers(e));
    case "RestElement":
      return boundIdentifiers(pattern.argument);
    case "AssignmentPattern":
      return boundIdentifiers(pattern.left);
    case "TSParameterProperty":
      return boundIdentifiers(pattern.parameter);
    default:
      return [];
  }
}

/** The source text of a node's type annotation (`: string` → "string"), if any. */
export function typeText(node: Node | null | undefined, source: string): string | undefined {
  if (!node) return undefined;
  const ann = (node as { typeAnnotation?: TSESTree.TSTypeAnnotation }).typeAnnotation;
  if (!ann || ann.type !== "TSTypeAnnotation") return undefined;
  return source.slice(ann.typeAnnotation.range[0], ann.typeAnnotation.range[1]);
}

/** Text of a node, whitespace runs collapsed. */
export function textOf(node: Node, source: string, max = 200): string {
  const t = source.slice(node.range[0], node.range[1]).replace(/\s+/g, " ");
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}
