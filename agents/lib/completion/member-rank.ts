/**
 * What ranks members after `expr.` beyond the typed prefix (docs/agents.md, "Ranking members"):
 * - own before inherited: what the receiver's type declares comes before the members every object or
 *   function inherits (`toString`, `hasOwnProperty`, `apply`, `bind`, `call`), unless the receiver is a
 *   plain function or object with nothing else;
 * - fit with the code around the cursor, as the checker sees it: a member that is called (`x.|(…)`) is
 *   callable, one read further (`x.|.name`) has that member, one assigned (`x.| = …`) is not a method,
 *   one in a condition is boolean, one in an argument, initializer or return is assignable to the type
 *   expected there, one compared with a value has that value's type;
 * - the name the value goes to: the variable, property or parameter it initializes, the member it is
 *   assigned to, the function it is returned from (`const index = xs.indexOf(…)`, `fetch: o.fetch`);
 * - usage: how often `.name` is used in the document (with the same receiver word, and on any receiver),
 *   how near the cursor, and in the workspace's other files;
 * - a prior: how much public code uses the name (prior.ts, learned from npm packages), for members
 *   declared outside the workspace (lib and `node_modules` types).
 */
import type * as TS from "typescript";
import type { WorkspaceService } from "../code/service.js";
import { lineageOf } from "../code/stale.js";
import { NAMES, PAIRS } from "./prior.js";
import { splitIdentifier } from "../code/identifier.js";
import { ts } from "../code/typescript.js";

/** Points each signal adds to a member's score (the typed prefix's match outweighs them all). */
export const MEMBER_WEIGHTS = {
  /** A member inherited from Object or Function by a receiver that declares its own. */
  inherited: -24,
  /** Used as the code after the cursor cannot use it (called but not callable, wrong arity, read further but lacking that member): a type error. */
  violated: -60,
  /** Arguments already written that the member's parameters do not take. */
  mismatch: -40,
  /** Read further (`x.|.name`) and has that member; indexed and indexable. */
  shape: 20,
  /** Assignable to the type expected at the cursor; half of it taken off when it is not. */
  expected: 12,
  /** Boolean in a condition; compared with a value of its type. */
  condition: 10,
  /** Assigned to: not a method. */
  assigned: 25,
  /** The prior, scaled: a name used by most packages gets this much. */
  prior: 14,
  /** The prior for `Global.name` pairs (`Object.keys`). */
  pair: 20,
  /** The prior counts this much for members the workspace itself declares. */
  priorOwnScale: 0.3,
  /** Named like where its value goes (`const index = xs.indexOf(…)`, `fetch: options.fetch`): the same words; a part as many words share. */
  named: 16,
};

function table(cells: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const cell of cells.split(" ")) {
    const i = cell.lastIndexOf(":");
    if (i > 0) out.set(cell.slice(0, i), Number(cell.slice(i + 1)) / 100);
  }
  return out;
}

let prior: { names: Map<string, number>; pairs: Map<string, number> } | undefined;

/** The public-usage weight of `name` (and of `receiver.name` for a global receiver), 0 when unknown. */
export function priorPoints(name: string, receiver: string | undefined): number {
  prior ??= { names: table(NAMES), pairs: table(PAIRS) };
  const w = prior.names.get(name) ?? 0;
  const p = receiver !== undefined ? (prior.pairs.get(`${receiver}.${name}`) ?? 0) : 0;
  // Weights below 0.2 are names two or three packages use: noise.
  return MEMBER_WEIGHTS.prior * Math.max(0, (w - 0.2) / 0.8) + MEMBER_WEIGHTS.pair * p;
}

/** What the checker says about each member of the receiver at the cursor, by name. */
export interface MemberFacts {
  /** Inherited from Object or Function by a receiver that declares members of its own. */
  inherited: Set<string>;
  /** Declared outside the workspace (lib files, `node_modules`): the prior applies in full. */
  external: Set<string>;
  /** Points from the fit with the code around the cursor. */
  fit: Map<string, number>;
  /** Uses in the document that the checker resolves to the same member (on a receiver of the same type). */
  typed: Map<string, number>;
}

/** Property accesses of the document resolved through the checker per request, nearest the cursor first. */
export const TYPED_USES_LIMIT = 16;

const INHERITED_FROM = new Set(["Object", "Function", "CallableFunction", "NewableFunction"]);

/** The property access whose name is at `offset` (being typed or missing), when there is one. */
function accessAt(sf: TS.SourceFile, offset: number): TS.PropertyAccessExpression | undefined {
  let node: TS.Node = sf;
  let found: TS.PropertyAccessExpression | undefined;
  for (;;) {
    if (
      ts.isPropertyAccessExpression(node) &&
      node.expression.end < offset &&
      node.name.end >= offset &&
      (node.name.text === "" || node.name.getStart(sf) <= offset)
    )
      found = node;
    const child: TS.Node | undefined = node.forEachChild((c) =>
      c.getFullStart() <= offset && offset <= c.getEnd() ? c : undefined,
    );
    if (!child) return found;
    node = child;
  }
}

function declaredBy(decl: TS.Declaration): string | undefined {
  const p = decl.parent;
  return p && (ts.isInterfaceDeclaration(p) || ts.isClassDeclaration(p)) && p.name ? p.name.text : undefined;
}

/** The facts for the members at `offset` of `sf`; undefined when the cursor is not after `expr.`. */
export function memberFacts(program: TS.Program, sf: TS.SourceFile, offset: number): MemberFacts | undefined {
  const access = accessAt(sf, offset);
  if (!access) return undefined;
  const checker = program.getTypeChecker();
  const receiver = checker.getNonNullableType(checker.getTypeAtLocation(access.expression));
  // What TypeScript's own completion lists: a function's type gets Function's members, a primitive its wrapper's.
  // (for a union, the members of each of its types: TypeScript offers those that are not on all of them too).
  const byName = new Map<string, TS.Symbol>();
  for (const t of receiver.isUnion() ? receiver.types : [receiver])
    for (const p of checker.getAugmentedPropertiesOfType(t)) if (!byName.has(p.name)) byName.set(p.name, p);
  const props = [...byName.values()];
  const facts: MemberFacts = { inherited: new Set(), external: new Set(), fit: new Map(), typed: new Map() };
  let own = 0;
  for (const p of props) {
    const decls = p.declarations ?? [];
    const name = ts.symbolName(p);
    const lib = decls.length > 0 && decls.every((d) => program.isSourceFileDefaultLibrary(d.getSourceFile()));
    if (lib && decls.every((d) => INHERITED_FROM.has(declaredBy(d) ?? ""))) facts.inherited.add(name);
    else own++;
    if (decls.length > 0 && decls.every((d) => d.getSourceFile().isDeclarationFile)) facts.external.add(name);
  }
  // A plain function or `{}`: what it inherits is all it has.
  if (own === 0) facts.inherited.clear();
  typedUses(program, sf, access, props, facts.typed);
  const use = useAt(checker, access);
  if (use) {
    for (const p of props) {
      const points = use(checker.getTypeOfSymbolAtLocation(p, access), p);
      if (points !== 0) facts.fit.set(ts.symbolName(p), points);
    }
  }
  const targets = targetNames(checker, access).map((t) => ({ words: words(t.name), weight: t.weight }));
  if (targets.length > 0)
    for (const p of props) {
      const name = ts.symbolName(p);
      const mine = words(name);
      const points = W.named * Math.max(...targets.map((t) => t.weight * likeness(mine, t.words)));
      if (points > 0) facts.fit.set(name, (facts.fit.get(name) ?? 0) + points);
    }
  return facts;
}

/** What the property accesses of a top-level statement resolve to (a declaration or none), by statement node. */
type Resolved = Map<TS.Node, Map<TS.PropertyAccessExpression, TS.Declaration | undefined>>;
/** Per shadow lineage (stale.ts lineageOf) and program: the accesses resolved so far, kept while the statement is. */
const resolvedUses = new WeakMap<object, { program: TS.Program; statements: Resolved }>();

/** The resolutions kept for `sf`'s statements, or undefined when `sf` is no shadow (nothing is kept). */
function keptResolutions(program: TS.Program, sf: TS.SourceFile): Resolved | undefined {
  const lineage = lineageOf(sf);
  if (!lineage) return undefined;
  let kept = resolvedUses.get(lineage);
  if (kept?.program !== program) resolvedUses.set(lineage, (kept = { program, statements: new Map() }));
  // Statements an edit replaced are never asked again.
  if (kept.statements.size > sf.statements.length + 64) {
    const live = new Set<TS.Node>([...sf.statements, sf.endOfFileToken]);
    for (const s of kept.statements.keys()) if (!live.has(s)) kept.statements.delete(s);
  }
  return kept.statements;
}

/**
 * Count the document's other `x.name` whose `name` the checker resolves to one of `props` (the same
 * declaration: the same member of the same type), the TYPED_USES_LIMIT nearest the cursor. In a
 * shadow file, what an access of a statement no edit touched resolves to is kept from the last
 * keystrokes (stale.ts lineageOf) instead of typing that statement again.
 */
function typedUses(
  program: TS.Program,
  sf: TS.SourceFile,
  access: TS.PropertyAccessExpression,
  props: TS.Symbol[],
  out: Map<string, number>,
): void {
  const checker = program.getTypeChecker();
  const byDecl = new Map<TS.Declaration, string>();
  for (const p of props) {
    const d = p.declarations?.[0];
    if (d) byDecl.set(d, ts.symbolName(p));
  }
  const names = new Set(byDecl.values());
  const at = access.name.pos;
  // The nearest top-level statements first, until none left can hold a nearer access than the
  // TYPED_USES_LIMIT nearest found (a 2,000-line file is not walked whole). Ties keep document order.
  const found: { n: TS.PropertyAccessExpression; d: number; order: number; s: TS.Node }[] = [];
  let order = 0;
  let statement: TS.Node = sf;
  const visit = (n: TS.Node): void => {
    if (ts.isPropertyAccessExpression(n) && n !== access && names.has(n.name.text))
      found.push({ n, d: Math.abs(n.pos - at), order: order++, s: statement });
    n.forEachChild(visit);
  };
  const byDistance = (a: { d: number; order: number }, b: { d: number; order: number }): number =>
    a.d - b.d || a.order - b.order;
  const statements = [...sf.statements, sf.endOfFileToken].map((s, i) => ({
    s,
    d: at < s.pos ? s.pos - at : at > s.end ? at - s.end : 0,
    order: i,
  }));
  statements.sort(byDistance);
  for (const { s, d, order: i } of statements) {
    if (found.length >= TYPED_USES_LIMIT && d > found.sort(byDistance)[TYPED_USES_LIMIT - 1]!.d) break;
    order = i * 1e9;
    statement = s;
    visit(s);
  }
  found.sort(byDistance);
  const kept = keptResolutions(program, sf);
  for (const { n, s } of found.slice(0, TYPED_USES_LIMIT)) {
    let resolved = kept?.get(s);
    let d = resolved?.get(n);
    if (d === undefined && !resolved?.has(n)) {
      d = checker.getSymbolAtLocation(n.name)?.declarations?.[0];
      if (kept) {
        if (!resolved) kept.set(s, (resolved = new Map()));
        resolved.set(n, d);
      }
    }
    const name = d && byDecl.get(d);
    if (name) out.set(name, (out.get(name) ?? 0) + 1);
  }
}

const W = MEMBER_WEIGHTS;

/** A name's words, lower case: `#getResponseRequest` → get, response, request; `_deprecatedHooks` → deprecated, hooks. */
export function words(name: string): string[] {
  // The linear splitter: a regular expression for acronyms (`([A-Z]+)([A-Z][a-z])`) is quadratic on a long capital run.
  return splitIdentifier(name).map((w) => w.toLowerCase());
}

/** Words that name the same thing: equal but for a plural `s`, or sharing their first five letters or more (`param`/`parameters`, `jitter`/`jittered`). */
function sameWord(a: string, b: string): boolean {
  const stem = (w: string): string => (w.length > 3 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w);
  const x = stem(a);
  const y = stem(b);
  if (x === y) return true;
  if (Math.min(x.length, y.length) < 5) return false;
  let i = 0;
  while (i < x.length && x[i] === y[i]) i++;
  return i >= 5;
}

/**
 * How alike two names' words are: 1 for the same words, else the share of words they have in common
 * (Dice, words of one or two letters such as `of` left out), scaled down by a quarter.
 */
export function likeness(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  if (a.join(" ") === b.join(" ")) return 1;
  const x = a.filter((w) => w.length > 2);
  const y = b.filter((w) => w.length > 2);
  if (x.length === 0 || y.length === 0) return 0;
  const shared = x.filter((w) => y.some((v) => sameWord(w, v))).length;
  return (0.75 * 2 * Math.min(shared, y.length)) / (x.length + y.length);
}

/**
 * The names the member's value goes to (what a developer names a thing after): the variable or property
 * it initializes, the member or variable it is assigned to, the parameter it is passed as (and, through
 * the call, where the call's value goes), the function it is returned from. The value may be called,
 * awaited, asserted, defaulted (`??`, `||`, `&&`), compared or tested on its way (`const _tag = o.tag ? … : ""`).
 */
function targetNames(checker: TS.TypeChecker, access: TS.PropertyAccessExpression): { name: string; weight: number }[] {
  const out: { name: string; weight: number }[] = [];
  const push = (name: string | undefined, weight = 1): void => {
    if (name) out.push({ name, weight });
  };
  const nameOf = (n: TS.Node): string | undefined =>
    ts.isIdentifier(n) || ts.isPrivateIdentifier(n) || ts.isStringLiteral(n)
      ? n.text
      : ts.isPropertyAccessExpression(n)
        ? n.name.text
        : undefined;
  let value: TS.Node = access;
  for (let depth = 0; depth < 8; depth++) {
    const p: TS.Node = value.parent;
    if (!p) break;
    if ((ts.isCallExpression(p) || ts.isNewExpression(p)) && p.expression === value) {
      value = p;
      continue;
    }
    if (
      ts.isParenthesizedExpression(p) ||
      ts.isAsExpression(p) ||
      ts.isSatisfiesExpression(p) ||
      ts.isTypeAssertionExpression(p) ||
      ts.isNonNullExpression(p) ||
      ts.isAwaitExpression(p) ||
      ts.isConditionalExpression(p) ||
      (ts.isBinaryExpression(p) && (andOr(p.operatorToken.kind) || isComparison(p.operatorToken.kind)))
    ) {
      value = p;
      continue;
    }
    if (ts.isVariableDeclaration(p) && p.initializer === value) {
      push(nameOf(p.name));
    } else if (ts.isPropertyAssignment(p) && p.initializer === value) {
      push(nameOf(p.name));
    } else if (ts.isPropertyDeclaration(p) && p.initializer === value) {
      push(nameOf(p.name));
    } else if (ts.isBinaryExpression(p) && isAssignment(p.operatorToken.kind)) {
      // `x = o.|`: named like x; `this.| = name` (value === access): named like the value.
      push(nameOf(p.right === value ? p.left : p.right));
    } else if ((ts.isCallExpression(p) || ts.isNewExpression(p)) && p.arguments?.includes(value as TS.Expression)) {
      const i = p.arguments.indexOf(value as TS.Expression);
      const params = checker.getResolvedSignature(p)?.getParameters() ?? [];
      const param = params[Math.min(i, params.length - 1)];
      // Parameter names are often generic (`input`, `value`, `init`): half.
      if (param) push(ts.symbolName(param), 0.5);
      // A call of one argument (`String(o.x)`, `clone(o.params)`) passes on what it is given: where its value goes counts too.
      if (p.arguments.length !== 1) break;
      value = p;
      continue;
    } else if (ts.isReturnStatement(p)) {
      for (let f: TS.Node | undefined = p.parent; f; f = f.parent)
        if (ts.isFunctionLike(f)) {
          const n = (f as { name?: TS.Node }).name;
          push(n && nameOf(n));
          break;
        }
    }
    break;
  }
  return out;
}

function isAssignment(kind: TS.SyntaxKind): boolean {
  return kind >= ts.SyntaxKind.FirstAssignment && kind <= ts.SyntaxKind.LastAssignment;
}

function andOr(kind: TS.SyntaxKind): boolean {
  return (
    kind === ts.SyntaxKind.QuestionQuestionToken ||
    kind === ts.SyntaxKind.BarBarToken ||
    kind === ts.SyntaxKind.AmpersandAmpersandToken
  );
}

const isMethod = (p: TS.Symbol): boolean => (p.flags & ts.SymbolFlags.Method) !== 0;

/** A type that says nothing about what is expected (`any`, `unknown`, a type parameter, `{}`). */
function vague(checker: TS.TypeChecker, t: TS.Type): boolean {
  if (t.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.TypeParameter | ts.TypeFlags.Never))
    return true;
  return (
    (t.flags & ts.TypeFlags.Object) !== 0 &&
    checker.getPropertiesOfType(t).length === 0 &&
    t.getCallSignatures().length === 0 &&
    t.getConstructSignatures().length === 0
  );
}

/**
 * How the member at `access` is used, as a scorer of each candidate's type; undefined when the code
 * around says nothing (the name typed at the end of a line).
 */
function useAt(
  checker: TS.TypeChecker,
  access: TS.PropertyAccessExpression,
): ((t: TS.Type, p: TS.Symbol) => number) | undefined {
  const parent = access.parent;
  const called =
    (ts.isCallExpression(parent) || ts.isNewExpression(parent)) && parent.expression === access
      ? parent
      : ts.isTaggedTemplateExpression(parent) && parent.tag === access
        ? parent
        : undefined;
  // The value the rest of the code sees: the member, or what calling it returns.
  const value: TS.Expression = called ?? access;
  const outer = value.parent;
  // `new x.|(…)` constructs: its member's construct signatures, not its call signatures (`new globalThis.Request(…)`).
  const signatures = (t: TS.Type): readonly TS.Signature[] => {
    const v = checker.getNonNullableType(t);
    return called && ts.isNewExpression(called) ? v.getConstructSignatures() : v.getCallSignatures();
  };
  const returns = (t: TS.Type): TS.Type[] => signatures(t).map((s) => checker.getReturnTypeOfSignature(s));
  const valueTypes = (t: TS.Type): TS.Type[] => (called ? returns(t) : [t]);
  const scorers: ((t: TS.Type, p: TS.Symbol) => number)[] = [];
  if (called) {
    scorers.push((t) => (returns(t).length > 0 ? 0 : W.violated));
    // The arguments already written: a signature that takes them.
    const args = (ts.isTaggedTemplateExpression(called) ? undefined : called.arguments)?.map((a) =>
      ts.isSpreadElement(a) ? undefined : checker.getTypeAtLocation(a),
    );
    if (args && !args.includes(undefined))
      scorers.push((t) => {
        let best = W.violated;
        for (const s of signatures(t)) {
          const fit = accepts(checker, s, args as TS.Type[]);
          best = Math.max(best, fit === "yes" ? W.expected : fit === "types" ? W.mismatch : W.violated);
        }
        return best;
      });
  }
  if (ts.isPropertyAccessExpression(outer) && outer.expression === value && outer.name.text !== "") {
    const next = outer.name.text;
    if (!next.startsWith("#"))
      scorers.push((t) =>
        valueTypes(t).some((v) =>
          checker.getPropertyOfType(checker.getApparentType(checker.getNonNullableType(v)), next),
        )
          ? W.shape
          : W.violated,
      );
  } else if (ts.isElementAccessExpression(outer) && outer.expression === value) {
    scorers.push((t) =>
      valueTypes(t).some((v) => {
        const a = checker.getApparentType(checker.getNonNullableType(v));
        return checker.isArrayLikeType(a) || checker.getIndexInfosOfType(a).length > 0;
      })
        ? W.shape / 2
        : W.violated / 2,
    );
  } else if (
    ts.isBinaryExpression(outer) &&
    outer.left === value &&
    outer.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
    outer.operatorToken.kind <= ts.SyntaxKind.LastAssignment
  ) {
    if (!called) {
      // The value assigned says which member takes it (`this.hook = this.hook.bind(this)` is a method).
      const assigned = checker.getTypeAtLocation(outer.right);
      const plain = outer.operatorToken.kind === ts.SyntaxKind.EqualsToken && !vague(checker, assigned);
      scorers.push((t, p) =>
        plain ? (checker.isTypeAssignableTo(assigned, t) ? W.assigned : -W.assigned) : isMethod(p) ? -W.assigned : 0,
      );
    }
  } else if (
    (ts.isIfStatement(outer) || ts.isWhileStatement(outer) || ts.isDoStatement(outer)) &&
    outer.expression === value
  ) {
    scorers.push(boolean(checker, valueTypes));
  } else if (ts.isConditionalExpression(outer) && outer.condition === value) {
    scorers.push(boolean(checker, valueTypes));
  } else if (ts.isPrefixUnaryExpression(outer) && outer.operator === ts.SyntaxKind.ExclamationToken) {
    scorers.push(boolean(checker, valueTypes));
  } else if (ts.isBinaryExpression(outer) && isComparison(outer.operatorToken.kind)) {
    const other = outer.left === value ? outer.right : outer.left;
    const against = checker.getBaseTypeOfLiteralType(checker.getTypeAtLocation(other));
    if (!vague(checker, against))
      scorers.push((t) =>
        valueTypes(t).some(
          (v) =>
            checker.isTypeAssignableTo(against, v) ||
            checker.isTypeAssignableTo(checker.getNonNullableType(v), against),
        )
          ? W.condition
          : 0,
      );
  } else if (ts.isExpression(value)) {
    const expected = checker.getContextualType(value);
    if (expected && !vague(checker, expected))
      scorers.push((t) =>
        valueTypes(t).some((v) => checker.isTypeAssignableTo(v, expected)) ? W.expected : -W.expected / 2,
      );
  }
  if (scorers.length === 0) return undefined;
  return (t, p) => scorers.reduce((sum, s) => sum + s(t, p), 0);
}

/**
 * Whether `sig` can be called with arguments of these types: "yes", "types" (the count fits, a type
 * does not), "arity" (too few or too many). A generic signature's parameter types are not checked.
 */
function accepts(checker: TS.TypeChecker, sig: TS.Signature, args: TS.Type[]): "yes" | "types" | "arity" {
  const params = sig.getParameters();
  const decl = (p: TS.Symbol): TS.ParameterDeclaration | undefined => {
    const d = p.valueDeclaration;
    return d && ts.isParameter(d) ? d : undefined;
  };
  const rest = params.length > 0 && decl(params[params.length - 1]!)?.dotDotDotToken !== undefined;
  const required = params.filter((p) => {
    const d = decl(p);
    return d !== undefined && !d.questionToken && !d.initializer && !d.dotDotDotToken;
  }).length;
  if (args.length < required || (!rest && args.length > params.length)) return "arity";
  const generic = (sig.typeParameters?.length ?? 0) > 0;
  for (let i = 0; i < args.length; i++) {
    let pt = checker.getTypeOfSymbol(params[Math.min(i, params.length - 1)]!);
    if (rest && i >= params.length - 1) {
      // The rest parameter's element type (`push(...items: T[])` does not take `push(index, 1)`).
      if (!checker.isArrayType(pt)) return "yes";
      pt = checker.getTypeArguments(pt as TS.TypeReference)[0] ?? pt;
    }
    if (vague(checker, pt)) continue;
    if (generic ? !sameKind(args[i]!, pt) : !checker.isTypeAssignableTo(args[i]!, pt)) return "types";
  }
  return "yes";
}

let primitiveFlags: TS.TypeFlags[] | undefined;
/** The primitive kinds' type flags: read on first use, since the compiler loads after ready. */
const primitives = (): TS.TypeFlags[] =>
  (primitiveFlags ??= [
    ts.TypeFlags.StringLike,
    ts.TypeFlags.NumberLike,
    ts.TypeFlags.BooleanLike,
    ts.TypeFlags.BigIntLike,
    ts.TypeFlags.ESSymbolLike,
  ]);

/**
 * A coarse fit for a generic signature's parameter, whose type parameters are not inferred here: a
 * function for a function, the same kind of primitive for a primitive.
 */
function sameKind(arg: TS.Type, param: TS.Type): boolean {
  if (arg.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.Null | ts.TypeFlags.Undefined)) return true;
  if (param.isUnion() || param.flags & ts.TypeFlags.TypeParameter) return true;
  const argCalls = arg.getCallSignatures().length > 0;
  if (param.getCallSignatures().length > 0) return argCalls;
  const kind = primitives().find((f) => param.flags & f);
  if (kind === undefined) return true;
  return !argCalls && (primitives().every((f) => !(arg.flags & f)) || (arg.flags & kind) !== 0);
}

function isComparison(kind: TS.SyntaxKind): boolean {
  return (
    kind === ts.SyntaxKind.EqualsEqualsEqualsToken ||
    kind === ts.SyntaxKind.ExclamationEqualsEqualsToken ||
    kind === ts.SyntaxKind.EqualsEqualsToken ||
    kind === ts.SyntaxKind.ExclamationEqualsToken ||
    kind === ts.SyntaxKind.LessThanToken ||
    kind === ts.SyntaxKind.GreaterThanToken ||
    kind === ts.SyntaxKind.LessThanEqualsToken ||
    kind === ts.SyntaxKind.GreaterThanEqualsToken
  );
}

/**
 * In a condition: a boolean, or a value that may be absent (an optional member tested before use); not
 * a method that is always there (TypeScript reports such a condition as always true).
 */
function boolean(checker: TS.TypeChecker, valueTypes: (t: TS.Type) => TS.Type[]): (t: TS.Type) => number {
  const absent = ts.TypeFlags.Undefined | ts.TypeFlags.Null;
  const optional = (v: TS.Type): boolean =>
    (v.flags & absent) !== 0 || (v.isUnion() && v.types.some((u) => (u.flags & absent) !== 0));
  const tested = (v: TS.Type): boolean =>
    (checker.getNonNullableType(v).flags & ts.TypeFlags.BooleanLike) !== 0 || optional(v);
  return (t) => {
    const values = valueTypes(t);
    if (values.some(tested)) return W.condition;
    return values.every((v) => v.getCallSignatures().length > 0) ? W.violated / 2 : 0;
  };
}

/** `.name` uses counted over a workspace's other files: any receiver, and per receiver word. */
interface FileUsage {
  names: Map<string, number>;
  pairs: Map<string, number>;
}

/** `receiver.name` and `receiver?.name` in a text: the receiver's last word and the name. */
const ACCESS = /([\w$]+|[)\]])(?:\s*\n\s*)?\??\.(?=(#?[A-Za-z_$][\w$]*))/g;

export function accessUsage(text: string): FileUsage {
  const out: FileUsage = { names: new Map(), pairs: new Map() };
  for (let m = ACCESS.exec(text); m; m = ACCESS.exec(text)) {
    const receiver = m[1]!;
    const name = m[2]!;
    if (/^\d/.test(receiver)) continue;
    out.names.set(name, (out.names.get(name) ?? 0) + 1);
    const pair = `${receiver}.${name}`;
    out.pairs.set(pair, (out.pairs.get(pair) ?? 0) + 1);
  }
  return out;
}

/** A workspace's usage index: per file and in total (built once per service, at its first member completion). */
interface WorkspaceUsage {
  /** Made while the program held the open files only: made again once it holds the workspace. */
  scope: WorkspaceService["scope"];
  files: Map<string, FileUsage>;
  total: FileUsage;
}

const INDEXES = new WeakMap<WorkspaceService, WorkspaceUsage>();

function workspaceUsage(svc: WorkspaceService): WorkspaceUsage {
  let idx = INDEXES.get(svc);
  if (idx?.scope === svc.scope) return idx;
  idx = { scope: svc.scope, files: new Map(), total: { names: new Map(), pairs: new Map() } };
  for (const [path, text] of svc.projectTexts()) {
    const u = accessUsage(text);
    idx.files.set(path, u);
    for (const [k, n] of u.names) idx.total.names.set(k, (idx.total.names.get(k) ?? 0) + n);
    for (const [k, n] of u.pairs) idx.total.pairs.set(k, (idx.total.pairs.get(k) ?? 0) + n);
  }
  INDEXES.set(svc, idx);
  return idx;
}

/** Uses of `.name` (and of `receiver.name`) in the workspace's files other than `path`. */
export function workspaceUses(
  svc: WorkspaceService,
  path: string,
  name: string,
  receiver: string | undefined,
): { any: number; same: number } {
  const idx = workspaceUsage(svc);
  const here = idx.files.get(path);
  const any = (idx.total.names.get(name) ?? 0) - (here?.names.get(name) ?? 0);
  // `this` in another file is another class.
  if (receiver === undefined || receiver === "this") return { any, same: 0 };
  const pair = `${receiver}.${name}`;
  return { any, same: (idx.total.pairs.get(pair) ?? 0) - (here?.pairs.get(pair) ?? 0) };
}

/** Build the usage index ahead (after the service loads), so no keystroke pays for it. */
export function prepareUsage(svc: WorkspaceService): void {
  workspaceUsage(svc);
}
