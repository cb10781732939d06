/** ESTree traversal by typescript-eslint's visitor keys (fast: no key scans, no sorting). */
import { visitorKeys } from "@typescript-eslint/visitor-keys";
import type { Node } from "./parse.js";

const KEYS = visitorKeys as Record<string, readonly string[] | undefined>;

/** Call `fn` for each direct child of `node`, in source order. */
export function forEachChild(node: Node, fn: (child: Node) => void): void {
  const keys = KEYS[node.type];
  if (!keys) return;
  const rec = node as unknown as Record<string, unknown>;
  for (const key of keys) {
    const value = rec[key];
    if (value === null || value === undefined) continue;
    if (Array.isArray(value)) {
      for (const item of value) if (item) fn(item as Node);
    } else if (typeof value === "object") {
      fn(value as Node);
    }
  }
}

/** The direct children of `node`. */
export function childrenOf(node: Node): Node[] {
  const out: Node[] = [];
  forEachChild(node, (c) => out.push(c));
  return out;
}

/** Visit `node` and all its descendants depth-first; return false from `visit` to skip a subtree. */
export function walk(node: Node, visit: (node: Node, parent: Node | undefined) => boolean | void, parent?: Node): void {
  if (visit(node, parent) === false) return;
  forEachChild(node, (child) => walk(child, visit, node));
}
