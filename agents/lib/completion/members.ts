/** Member completion: what `receiver.` offers, from what this file (and local namespace imports) define. */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import { isClass, isFunction, isKeyedClassMember, type ClassNode } from "../code/cursor.js";
import { boundIdentifiers, textOf, typeText } from "../code/names.js";
import type { Node, Program } from "../code/parse.js";
import { builtinOfConstructor, builtinOfType, builtinMembers, type BuiltinType } from "./builtin-members.js";

export interface Member {
  name: string;
  kind: "method" | "property" | "getter" | "setter" | "enum-member" | "export";
  detail: string;
  line: number;
}

/** A resolved receiver: a class (instance or static side), an object literal, an enum, an interface, or a module's exports. */
export type Shape =
  | { kind: "instance" | "static"; cls: ClassNode }
  | { kind: "object"; obj: TSESTree.ObjectExpression }
  | { kind: "enum"; decl: TSESTree.TSEnumDeclaration }
  | { kind: "interface"; decl: TSESTree.TSInterfaceDeclaration }
  | { kind: "module"; specifier: string }
  /** A built-in type known from a declaration (`T[]`, `= []`, `string`, `new Map()`). */
  | { kind: "builtin"; type: BuiltinType }
  /**
   * A name imported from another module (`import { Registry } from "./registry.js"`): its instance
   * (a declared type or `new Registry()`) or the imported value itself; the caller reads that module.
   */
  | { kind: "imported"; specifier: string; name: string; side: "instance" | "value" };

function unwrap(stmt: Node): Node {
  return (stmt.type === "ExportNamedDeclaration" || stmt.type === "ExportDefaultDeclaration") && stmt.declaration
    ? (stmt.declaration as Node)
    : stmt;
}

/** A type or class declared at the top level under `name`. */
function topLevelType(program: Program, name: string): Shape | undefined {
  for (const s of program.body) {
    const d = unwrap(s);
    if (d.type === "ClassDeclaration" && d.id?.name === name) return { kind: "instance", cls: d };
    if (d.type === "TSInterfaceDeclaration" && d.id.name === name) return { kind: "interface", decl: d };
  }
  return undefined;
}

/** `Foo`, `Foo<T>`, `readonly Foo` → "Foo". */
function typeName(text: string | undefined): string | undefined {
  const m = text ? /^(?:readonly\s+)?([A-Za-z_$][\w$]*)\s*(<.*>)?$/.exec(text.trim()) : null;
  return m ? m[1] : undefined;
}

/** The module a top-level named or default import of `name` comes from, and the name it has there. */
function importOf(program: Program, name: string): { specifier: string; imported: string } | undefined {
  for (const s of program.body) {
    if (s.type !== "ImportDeclaration") continue;
    for (const sp of s.specifiers) {
      if (sp.local.name !== name) continue;
      if (sp.type === "ImportSpecifier")
        return {
          specifier: s.source.value,
          imported: sp.imported.type === "Identifier" ? sp.imported.name : String(sp.imported.value),
        };
      if (sp.type === "ImportDefaultSpecifier") return { specifier: s.source.value, imported: "default" };
    }
  }
  return undefined;
}

function shapeOfValue(
  init: Node | null | undefined,
  annotation: string | undefined,
  program: Program,
): Shape | undefined {
  const builtin = builtinOfType(annotation);
  if (builtin) return { kind: "builtin", type: builtin };
  const byType = typeName(annotation);
  if (byType) {
    const t = topLevelType(program, byType);
    if (t) return t;
    const imp = importOf(program, byType);
    if (imp) return { kind: "imported", specifier: imp.specifier, name: imp.imported, side: "instance" };
  }
  if (!init) return undefined;
  let e: Node = init;
  while (e.type === "TSAsExpression" || e.type === "TSSatisfiesExpression" || e.type === "TSNonNullExpression")
    e = e.expression;
  if (e.type === "ObjectExpression") return { kind: "object", obj: e };
  if (e.type === "ArrayExpression") return { kind: "builtin", type: "Array" };
  if ((e.type === "Literal" && typeof e.value === "string") || e.type === "TemplateLiteral")
    return { kind: "builtin", type: "string" };
  if (e.type === "NewExpression" && e.callee.type === "Identifier") {
    const local = topLevelType(program, e.callee.name);
    if (local) return local;
    const imp = importOf(program, e.callee.name);
    if (imp) return { kind: "imported", specifier: imp.specifier, name: imp.imported, side: "instance" };
    const ctor = builtinOfConstructor(e.callee.name);
    return ctor ? { kind: "builtin", type: ctor } : undefined;
  }
  if (e.type === "ClassExpression") return { kind: "static", cls: e };
  return undefined;
}

/**
 * What module `name` declares at its top level, as seen from an importer: a class's instance side (for
 * a type) or static side (for the value), an interface, an enum, or a const's object literal.
 */
export function exportedShape(program: Program, name: string, side: "instance" | "value"): Shape | undefined {
  for (const s of program.body) {
    const d = s.type === "ExportDefaultDeclaration" && name === "default" ? (s.declaration as Node) : unwrap(s);
    const named = (id: { name: string } | null | undefined): boolean =>
      (name === "default" && s.type === "ExportDefaultDeclaration") || id?.name === name;
    if ((d.type === "ClassDeclaration" || d.type === "ClassExpression") && named(d.id))
      return { kind: side === "instance" ? "instance" : "static", cls: d };
    if (d.type === "TSInterfaceDeclaration" && named(d.id)) return { kind: "interface", decl: d };
    if (d.type === "TSEnumDeclaration" && named(d.id)) return { kind: "enum", decl: d };
    if (d.type === "VariableDeclaration" && side === "value")
      for (const v of d.declarations)
        if (v.id.type === "Identifier" && v.id.name === name) return shapeOfValue(v.init, undefined, program);
  }
  return undefined;
}

/** The binding of `name` visible from the chain: parameters and locals (inner first), then the module. */
function resolveName(name: string, chain: Node[], program: Program, source: string): Shape | undefined {
  for (let i = chain.length - 1; i >= 0; i--) {
    const node = chain[i]!;
    if (isFunction(node)) {
      for (const p of node.params) {
        for (const id of boundIdentifiers(p)) {
          if (id.name === name)
            return shapeOfValue(p.type === "AssignmentPattern" ? p.right : undefined, typeText(id, source), program);
        }
      }
    }
    const body = node.type === "Program" || node.type === "BlockStatement" ? node.body : [];
    for (const s of body) {
      const d = unwrap(s);
      if (d.type === "VariableDeclaration") {
        for (const v of d.declarations) {
          if (v.id.type === "Identifier" && v.id.name === name)
            return shapeOfValue(v.init, typeText(v.id, source), program);
        }
      } else if (d.type === "ClassDeclaration" && d.id?.name === name) return { kind: "static", cls: d };
      else if (d.type === "TSEnumDeclaration" && d.id.name === name) return { kind: "enum", decl: d };
      else if (d.type === "ImportDeclaration") {
        for (const sp of d.specifiers) {
          if (sp.local.name === name && sp.type === "ImportNamespaceSpecifier")
            return { kind: "module", specifier: d.source.value };
        }
        const imp = importOf(program, name);
        if (imp) return { kind: "imported", specifier: imp.specifier, name: imp.imported, side: "value" };
      }
    }
  }
  return undefined;
}

function keyName(key: Node, computed: boolean, source: string): string | undefined {
  if (computed) return undefined;
  if (key.type === "Identifier") return key.name;
  if (key.type === "PrivateIdentifier") return `#${key.name}`;
  if (key.type === "Literal") return String(key.value);
  return textOf(key, source, 40);
}

function superClassOf(cls: ClassNode, program: Program): ClassNode | undefined {
  if (cls.superClass?.type !== "Identifier") return undefined;
  const t = topLevelType(program, cls.superClass.name);
  return t?.kind === "instance" ? t.cls : undefined;
}

/** Instance or static members of a class, own first, then inherited (classes in this file). */
export function classMembers(
  cls: ClassNode,
  isStatic: boolean,
  program: Program,
  source: string,
  includePrivate: boolean,
): Member[] {
  const out: Member[] = [];
  const seen = new Set<string>();
  for (let c: ClassNode | undefined = cls, depth = 0; c && depth < 8; c = superClassOf(c, program), depth++) {
    for (const m of c.body.body) {
      if (m.type === "MethodDefinition" && m.kind === "constructor") {
        if (isStatic) continue;
        for (const p of m.value.params) {
          if (p.type !== "TSParameterProperty") continue;
          for (const id of boundIdentifiers(p.parameter)) {
            if (!seen.has(id.name) && (includePrivate || p.accessibility !== "private")) {
              seen.add(id.name);
              out.push({
                name: id.name,
                kind: "property",
                detail: typeText(id, source) ?? "",
                line: id.loc.start.line,
              });
            }
          }
        }
        continue;
      }
      if (!isKeyedClassMember(m)) continue;
      if ((m.static === true) !== isStatic) continue;
      const name = keyName(m.key, m.computed, source);
      if (!name || seen.has(name)) continue;
      if (!includePrivate && (name.startsWith("#") || m.accessibility === "private")) continue;
      seen.add(name);
      const isMethod = m.type === "MethodDefinition" || m.type === "TSAbstractMethodDefinition";
      const kind = isMethod ? (m.kind === "get" ? "getter" : m.kind === "set" ? "setter" : "method") : "property";
      const detail = isMethod
        ? textOf(
            { ...m.value, range: [m.value.range[0], m.value.body?.range[0] ?? m.value.range[1]] } as Node,
            source,
            120,
          ).trim()
        : (typeText(m, source) ?? "");
      out.push({ name, kind, detail, line: m.loc.start.line });
    }
  }
  return out;
}

/** The members a shape offers (module shapes are resolved by the caller, which may read files). */
export function membersOf(shape: Shape, program: Program, source: string, includePrivate: boolean): Member[] {
  switch (shape.kind) {
    case "instance":
    case "static":
      return classMembers(shape.cls, shape.kind === "static", program, source, includePrivate);
    case "enum":
      return shape.decl.members.map((m) => ({
        name: keyName(m.id, false, source) ?? "",
        kind: "enum-member" as const,
        detail: m.initializer ? textOf(m.initializer, source, 60) : "",
        line: m.loc.start.line,
      }));
    case "interface":
      return shape.decl.body.body.flatMap((m) => {
        if (m.type !== "TSPropertySignature" && m.type !== "TSMethodSignature") return [];
        const name = keyName(m.key, m.computed, source);
        return name
          ? [
              {
                name,
                kind: m.type === "TSMethodSignature" ? ("method" as const) : ("property" as const),
                detail: textOf(m, source, 120),
                line: m.loc.start.line,
              },
            ]
          : [];
      });
    case "object":
      return shape.obj.properties.flatMap((p) => {
        if (p.type !== "Property") return [];
        const name = keyName(p.key, p.computed, source);
        const method = p.method || isFunction(p.value);
        return name
          ? [
              {
                name,
                kind: method ? ("method" as const) : ("property" as const),
                detail: textOf(p.value, source, 60),
                line: p.loc.start.line,
              },
            ]
          : [];
      });
    case "builtin":
      return builtinMembers(shape.type);
    case "module":
    case "imported":
      return [];
  }
}

/** Follow `a.b.c`: the shape of each segment's value, as far as this file tells. */
export function resolveReceiver(
  receiver: string,
  chain: Node[],
  program: Program,
  source: string,
): { shape: Shape; viaThis: boolean } | undefined {
  const [head, ...rest] = receiver.split(".");
  let shape: Shape | undefined;
  const viaThis = head === "this";
  if (viaThis) {
    for (let i = chain.length - 1; i >= 0; i--) {
      const n = chain[i]!;
      if (isClass(n)) {
        const method = chain[i + 2];
        const isStatic =
          method !== undefined &&
          (method.type === "MethodDefinition" ||
            method.type === "PropertyDefinition" ||
            method.type === "StaticBlock") &&
          (method.type === "StaticBlock" || method.static);
        shape = { kind: isStatic ? "static" : "instance", cls: n };
        break;
      }
    }
  } else shape = resolveName(head!, chain, program, source);
  for (const seg of rest) {
    if (!shape) return undefined;
    shape = memberShape(shape, seg, program, source);
  }
  return shape ? { shape, viaThis } : undefined;
}

function memberShape(shape: Shape, name: string, program: Program, source: string): Shape | undefined {
  if (shape.kind === "object") {
    const p = shape.obj.properties.find((x) => x.type === "Property" && keyName(x.key, x.computed, source) === name) as
      TSESTree.Property | undefined;
    return p ? shapeOfValue(p.value as Node, undefined, program) : undefined;
  }
  if (shape.kind === "instance" || shape.kind === "static") {
    for (const m of shape.cls.body.body) {
      if (m.type === "PropertyDefinition" && keyName(m.key, m.computed, source) === name)
        return shapeOfValue(m.value, typeText(m, source), program);
      if (m.type === "MethodDefinition" && m.kind === "constructor") {
        for (const p of m.value.params) {
          if (p.type === "TSParameterProperty")
            for (const id of boundIdentifiers(p.parameter))
              if (id.name === name) return shapeOfValue(undefined, typeText(id, source), program);
        }
      }
    }
  }
  return undefined;
}
