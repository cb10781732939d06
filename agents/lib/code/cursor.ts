/** What is at the cursor: the innermost node, the enclosing function or method (with decorators and doc comment), the enclosing class. */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import { docCommentBefore } from "./comments.js";
import { settle, settleAll } from "./incremental.js";
import type { Comment, Node, Program } from "./parse.js";
import { forEachChild } from "./walk.js";

export interface StatementPosition {
  /** The statement containing the offset, or -1 when it lies between statements. */
  index: number;
  /** Between statements: the last one ending before the offset (-1 if none). */
  before: number;
  /** Between statements: the first one starting after the offset (length if none). */
  after: number;
}

/** Binary search of sorted top-level statements (the 8,000-line case has thousands) for `offset`. */
export function statementAt(body: readonly { range: [number, number] }[], offset: number): StatementPosition {
  let lo = 0;
  let hi = body.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = body[mid]!;
    if (offset < s.range[0]) hi = mid - 1;
    else if (offset > s.range[1]) lo = mid + 1;
    else return { index: mid, before: mid - 1, after: mid + 1 };
  }
  return { index: -1, before: hi, after: lo };
}

/** The chain of nodes containing `offset`, outermost (the Program) first. */
export function ancestorsAt(program: Program, offset: number): Node[] {
  const chain: Node[] = [program];
  const body = program.body;
  let node: Node | undefined = body[statementAt(body, offset).index];
  if (node) settle(node);
  while (node) {
    chain.push(node);
    let next: Node | undefined;
    forEachChild(node, (child) => {
      // The later child wins at a shared boundary (`a.|b` → b).
      if (child.range[0] <= offset && offset <= child.range[1] && (!next || child.range[0] >= next.range[0]))
        next = child;
    });
    node = next;
  }
  return chain;
}

export type FunctionNode =
  | TSESTree.FunctionDeclaration
  | TSESTree.FunctionExpression
  | TSESTree.ArrowFunctionExpression
  | TSESTree.TSDeclareFunction
  | TSESTree.TSEmptyBodyFunctionExpression;
export type ClassNode = TSESTree.ClassDeclaration | TSESTree.ClassExpression;

export function isFunction(node: Node): node is FunctionNode {
  return [
    "FunctionDeclaration",
    "FunctionExpression",
    "ArrowFunctionExpression",
    "TSDeclareFunction",
    "TSEmptyBodyFunctionExpression",
  ].includes(node.type);
}

export function isClass(node: Node): node is ClassNode {
  return node.type === "ClassDeclaration" || node.type === "ClassExpression";
}

/** A class element that has a key and a value: a method, property or accessor, abstract or not. */
export type KeyedClassMember =
  | TSESTree.MethodDefinition
  | TSESTree.PropertyDefinition
  | TSESTree.TSAbstractMethodDefinition
  | TSESTree.TSAbstractPropertyDefinition
  | TSESTree.AccessorProperty;

export function isKeyedClassMember(m: TSESTree.ClassElement): m is KeyedClassMember {
  return (
    m.type === "MethodDefinition" ||
    m.type === "PropertyDefinition" ||
    m.type === "TSAbstractMethodDefinition" ||
    m.type === "TSAbstractPropertyDefinition" ||
    m.type === "AccessorProperty"
  );
}

export interface FunctionSlice {
  name: string;
  kind: "function" | "method" | "getter" | "setter" | "constructor" | "arrow" | "function-expression";
  fn: FunctionNode;
  /** The declaration as written: the method, the variable declaration, or the function, with `export` when exported. */
  decl: Node;
  exported: boolean;
  className?: string;
  decorators: string[];
  doc?: Comment;
  /** From the doc comment (or first decorator) to the end of the declaration. */
  range: [number, number];
  text: string;
}

/** The name a function is known by: its id, the variable, property or method key it is assigned to. */
function nameOf(fn: FunctionNode, parent: Node | undefined): string {
  if ("id" in fn && fn.id) return fn.id.name;
  if (!parent) return "<anonymous>";
  if (parent.type === "VariableDeclarator" && parent.id.type === "Identifier") return parent.id.name;
  if (
    (parent.type === "MethodDefinition" ||
      parent.type === "Property" ||
      parent.type === "PropertyDefinition" ||
      parent.type === "TSAbstractMethodDefinition") &&
    !parent.computed
  ) {
    const key = parent.key;
    if (key.type === "Identifier" || key.type === "PrivateIdentifier")
      return key.type === "PrivateIdentifier" ? `#${key.name}` : key.name;
    if (key.type === "Literal") return String(key.value);
  }
  if (
    parent.type === "AssignmentExpression" &&
    parent.left.type === "MemberExpression" &&
    parent.left.property.type === "Identifier"
  )
    return parent.left.property.name;
  return "<anonymous>";
}

/** Describe the function `chain[index]` (its parents are `chain[0..index-1]`). */
export function sliceFunction(chain: Node[], index: number, program: Program, source: string): FunctionSlice {
  const fn = chain[index] as FunctionNode;
  const parent = chain[index - 1];
  let decl: Node = fn;
  let kind: FunctionSlice["kind"] =
    fn.type === "ArrowFunctionExpression"
      ? "arrow"
      : fn.type === "FunctionExpression"
        ? "function-expression"
        : "function";
  let className: string | undefined;
  let decorators: TSESTree.Decorator[] = [];
  if (parent && (parent.type === "MethodDefinition" || parent.type === "TSAbstractMethodDefinition")) {
    decl = parent;
    kind =
      parent.kind === "get"
        ? "getter"
        : parent.kind === "set"
          ? "setter"
          : parent.kind === "constructor"
            ? "constructor"
            : "method";
    decorators = parent.decorators ?? [];
    const cls = chain[index - 3];
    if (cls && isClass(cls)) className = cls.id?.name ?? "<anonymous class>";
  } else if (parent && (parent.type === "Property" || parent.type === "PropertyDefinition")) {
    decl = parent;
    kind = "method";
    if (parent.type === "PropertyDefinition") {
      decorators = parent.decorators ?? [];
      const cls = chain[index - 3];
      if (cls && isClass(cls)) className = cls.id?.name ?? "<anonymous class>";
    }
  } else if (parent && parent.type === "VariableDeclarator" && chain[index - 2]?.type === "VariableDeclaration") {
    decl = chain[index - 2]!;
  }
  const outer = chain[chain.indexOf(decl) - 1];
  let exported = false;
  if (outer && (outer.type === "ExportNamedDeclaration" || outer.type === "ExportDefaultDeclaration")) {
    decl = outer;
    exported = true;
  }
  let start = decl.range[0];
  for (const d of decorators) start = Math.min(start, d.range[0]);
  const doc = docCommentBefore(program, source, start);
  const range: [number, number] = [doc ? doc.range[0] : start, decl.range[1]];
  return {
    name: nameOf(fn, parent),
    kind,
    fn,
    decl,
    exported,
    ...(className !== undefined ? { className } : {}),
    decorators: decorators.map((d) => source.slice(d.range[0], d.range[1])),
    ...(doc ? { doc } : {}),
    range,
    text: source.slice(range[0], range[1]),
  };
}

/** The innermost function or method around the cursor, if any. */
export function enclosingFunction(chain: Node[], program: Program, source: string): FunctionSlice | undefined {
  for (let i = chain.length - 1; i > 0; i--) {
    if (isFunction(chain[i]!)) return sliceFunction(chain, i, program, source);
  }
  return undefined;
}

/** The innermost class around the cursor, if any. */
export function enclosingClass(chain: Node[]): ClassNode | undefined {
  for (let i = chain.length - 1; i > 0; i--) {
    const n = chain[i]!;
    if (isClass(n)) return n;
  }
  return undefined;
}

/** The function a declaration node declares, and the path from that node down to it (`const f = () => …` → [declarator, arrow]). */
function declaredFunction(node: Node): Node[] | undefined {
  if (isFunction(node)) return [node];
  switch (node.type) {
    case "MethodDefinition":
    case "TSAbstractMethodDefinition":
    case "Property":
    case "PropertyDefinition":
      return node.value && isFunction(node.value as Node) ? [node.value as Node] : undefined;
    case "VariableDeclarator":
      return node.init && isFunction(node.init) ? [node.init] : undefined;
    case "VariableDeclaration": {
      const withFn = node.declarations.filter((d) => d.init && isFunction(d.init));
      return withFn.length === 1 ? [withFn[0]!, withFn[0]!.init!] : undefined;
    }
    case "ExportNamedDeclaration":
    case "ExportDefaultDeclaration": {
      const d = node.declaration as Node | null | undefined;
      if (!d) return undefined;
      const below = declaredFunction(d);
      return below ? [d, ...below].filter((n, i, all) => all.indexOf(n) === i) : undefined;
    }
    default:
      return undefined;
  }
}

/** Where to look for the declaration when `offset` is in a doc comment (or the blank after it): the code the comment documents. */
function pastDocComment(program: Program, source: string, offset: number): number {
  const comments = program.comments ?? [];
  const k = statementAt(comments, offset);
  const c = k.index >= 0 ? comments[k.index] : undefined;
  if (!c || c.type !== "Block" || !c.value.startsWith("*") || offset <= c.range[0]) return offset;
  let end = c.range[1];
  while (end < source.length && /\s/.test(source[end]!)) end++;
  return end;
}

/**
 * The function whose declaration contains `offset`: anywhere on it, from its doc comment and
 * decorators through `export`/`default`/`async`, the name, parameters, return type and body, for
 * function declarations, `const f = function/arrow`, class methods, accessors and object-literal
 * methods. The innermost declaration wins.
 */
export function functionAtOffset(program: Program, source: string, offset: number): FunctionSlice | undefined {
  const at = pastDocComment(program, source, offset);
  const chain = ancestorsAt(program, at);
  for (let i = chain.length - 1; i > 0; i--) {
    const path = declaredFunction(chain[i]!);
    if (!path) continue;
    const full = [...chain.slice(0, i + 1), ...path.filter((n) => n !== chain[i])];
    return sliceFunction(full, full.length - 1, program, source);
  }
  return undefined;
}

/** Every named function of the program with the lines of its declaration (for "the nearest ones are …"). */
export function functionsOf(program: Program, source: string): FunctionSlice[] {
  const out: FunctionSlice[] = [];
  const chain: Node[] = [];
  const visit = (node: Node): void => {
    chain.push(node);
    if (isFunction(node) && chain.length >= 2 && node.type !== "TSDeclareFunction") {
      const s = sliceFunction([...chain], chain.length - 1, program, source);
      if (s.name !== "<anonymous>") out.push(s);
    }
    forEachChild(node, visit);
    chain.pop();
  };
  settleAll(program);
  visit(program);
  return out;
}
