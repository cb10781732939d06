/**
 * Inputs for characterization tests (docs/agents.md, "testgen"): argument lists to call a function
 * with and observe what it does. They come from the workspace's own calls of the function (arguments
 * written as values), and from the parameters' types, one parameter varied at a time from the
 * happy-path call: each member of a union of literals or of an enum, a few values of a primitive
 * (as property-based testing tools start with: empty, small, negative, fractional, mixed case), one
 * value of each kind for an `unknown` or `any` parameter (null, an object, an array, a number, …),
 * an empty and a two-element array, the neighbours of a literal default, a type parameter's constraint's
 * values, null where the type admits it, and an optional parameter given once (left to its default
 * otherwise).
 */
import type * as TS from "typescript";
import { ts } from "../lib/code/typescript.js";
import { freeNames } from "./examples.js";
import { codeValues, type CodeValues } from "./mined.js";
import { Builder, callerSignature, callSignatures, findFunction, minArgs, type TypedOptions } from "./typed.js";

/** Argument lists per function, at most. */
export const MAX_INPUTS = 12;
/** Calls of a returned function, at most. */
const MAX_RESULT_CALLS = 4;
/** Variants of one parameter, at most. */
const MAX_VARIANTS = 6;
/** Workspace files searched for calls of the function, at most, and their size. */
const MAX_CALL_SITE_FILES = 400;
const MAX_CALL_SITE_BYTES = 256 * 1024;
/** Calls taken from the workspace, at most. */
const MAX_CALL_SITES = 3;

const SAFE_GLOBALS = new Set([
  "undefined",
  "NaN",
  "Infinity",
  "Math",
  "JSON",
  "Number",
  "String",
  "Boolean",
  "Array",
  "Object",
  "Date",
  "RegExp",
  "Map",
  "Set",
  "BigInt",
  "URL",
  "URLSearchParams",
]);

const STRINGS = ['""', '"a"', '"Hello World"', '"foo-bar_baz"'];
/** Values for a parameter typed `unknown` or `any`: one of each kind a function tells apart. */
const ANYTHING = ["null", "{ a: 1 }", "[1, 2]", "Object.create(null)", "0", '""', "new Map([[1, 2]])", "{}", "true"];
/** Variants of an `unknown` / `any` parameter, at most (it has no type to narrow them). */
const MAX_ANY_VARIANTS = 10;
const NUMBERS = ["0", "-1", "2.5", "100"];

export interface Inputs {
  /** Argument lists as source text, the happy path first. */
  vectors: string[][];
  /** Where each came from, for the notes: "call site src/x.ts:12" or "types". */
  origins: string[];
  /**
   * Where the function returns a function (a factory, an unsubscribe): argument lists for calling
   * what the happy path returns, its own happy path first, then its first parameter varied.
   */
  resultArgs: string[][];
  typeImports: Map<string, Set<string>>;
  valueImports: Map<string, Set<string>>;
}

const NONE: CodeValues = { strings: [], numbers: [], lengths: [], objects: [], instances: new Map() };

/** Strings of the lengths the code compares with (`s.length > 2`: "aa" and "aaa"), at most three. */
const sized = (m: CodeValues): string[] => m.lengths.slice(0, 3).map((n) => JSON.stringify("a".repeat(n)));

/** Anything: the code's keys, strings and numbers first, then one value of each kind. */
const anything = (m: CodeValues): string[] => [
  ...[...m.instances.values()].slice(0, 2),
  ...m.objects.slice(0, 2),
  ...m.strings.slice(0, 2),
  ...m.numbers.slice(0, 1),
  ...ANYTHING,
];

/** Variants of one parameter's type (besides the happy path's value), the code's own values first. */
function variants(b: Builder, checker: TS.TypeChecker, type: TS.Type, hint: string, m = NONE): string[] {
  const f = type.flags;
  if (f & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) return anything(m);
  // A type parameter (`<S extends string>(s: S)`): the values of its constraint; unconstrained, anything.
  if (f & ts.TypeFlags.TypeParameter) {
    const c = checker.getBaseConstraintOfType(type);
    return c && c !== type && !(c.flags & ts.TypeFlags.TypeParameter) ? variants(b, checker, c, hint, m) : anything(m);
  }
  if (type.isUnion()) {
    // A type that admits null: the function tells null apart (`if (!p)`, `p ?? d`), the other branch first.
    const none = type.types.some((t) => t.flags & ts.TypeFlags.Null) ? ["null"] : [];
    const members = type.types.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)));
    // An enum: its members by name.
    if (members.length > 0 && members.every((m) => m.flags & ts.TypeFlags.EnumLiteral)) {
      const out: string[] = [];
      for (const m of members) {
        const decl = m.symbol?.valueDeclaration;
        if (!decl || !ts.isEnumMember(decl)) continue;
        const enumSym = checker.getSymbolAtLocation(decl.parent.name);
        const name = b.importable(enumSym, b.valueImports);
        if (name) out.push(`${name}.${m.symbol.getName()}`);
      }
      return [...none, ...out];
    }
    if (members.every((m) => m.isLiteral() || m.flags & ts.TypeFlags.BooleanLiteral))
      return [...none, ...members.map((m) => b.value(m, hint)).filter((v): v is string => v !== undefined)];
    // A mixed union: the code's values for its primitive members, then two of each member's own.
    const out: string[] = [...none];
    if (members.some((x) => x.flags & ts.TypeFlags.String)) out.push(...m.strings.slice(0, 4));
    if (members.some((x) => x.flags & ts.TypeFlags.Number)) out.push(...m.numbers.slice(0, 3));
    // A built-in class the code tests with instanceof, where the union names it.
    for (const x of members) {
      const made = m.instances.get(x.symbol?.getName() ?? "");
      if (made !== undefined) out.push(made);
    }
    for (const x of members) out.push(...variants(b, checker, x, hint).slice(0, 2));
    return out;
  }
  if (f & ts.TypeFlags.String) return [...m.strings.slice(0, 4), ...sized(m), ...STRINGS];
  if (f & ts.TypeFlags.Number) return [...m.numbers.slice(0, 3), ...NUMBERS];
  if (f & ts.TypeFlags.Boolean) return ["false", "true"];
  if (f & ts.TypeFlags.BigInt) return ["0n", "-5n"];
  if (checker.isArrayType(type)) {
    const el = checker.getTypeArguments(type as TS.TypeReference)[0];
    const vs = el ? [b.value(el, hint), ...variants(b, checker, el, hint)].filter((v) => v !== undefined) : [];
    // Empty, one element, two; then the lengths the code compares with, of the first value repeated.
    const long = vs.length > 0 ? m.lengths.filter((n) => n > 2).slice(0, 2) : [];
    return [
      "[]",
      ...(vs.length >= 1 ? [`[${vs[0]}]`] : []),
      ...(vs.length >= 2 ? [`[${vs[1]}, ${vs[0]}]`] : []),
      ...long.map((n) => `[${Array.from({ length: n }, () => vs[0]).join(", ")}]`),
    ];
  }
  return [];
}

/**
 * The boundaries next to a parameter's literal default, where an off-by-one or a flipped comparison
 * shows: a number's neighbours and zero, a string's empty value, a boolean's opposite.
 */
function aroundDefault(d: TS.Declaration | undefined): string[] {
  if (!d || !ts.isParameter(d) || !d.initializer) return [];
  let init: TS.Expression = d.initializer;
  let sign = 1;
  if (ts.isPrefixUnaryExpression(init) && init.operator === ts.SyntaxKind.MinusToken) {
    sign = -1;
    init = init.operand;
  }
  if (ts.isNumericLiteral(init)) {
    const n = sign * Number(init.text);
    return Number.isFinite(n) ? [...new Set([n - 1, n + 1, 0])].filter((x) => x !== n).map(String) : [];
  }
  if (ts.isStringLiteral(init) || ts.isNoSubstitutionTemplateLiteral(init)) return init.text === "" ? ['"a"'] : ['""'];
  if (init.kind === ts.SyntaxKind.TrueKeyword) return ["false"];
  if (init.kind === ts.SyntaxKind.FalseKeyword) return ["true"];
  return [];
}

/** Calls of `name` in the workspace's files whose arguments are values (literals, arrays, objects of them). */
export function callSites(
  files: { path: string; text: string }[],
  name: string,
  arity: number,
): { args: string[]; where: string }[] {
  const out: { args: string[]; where: string }[] = [];
  const seen = new Set<string>();
  for (const f of files.slice(0, MAX_CALL_SITE_FILES)) {
    if (f.text.length > MAX_CALL_SITE_BYTES || !f.text.includes(`${name}(`)) continue;
    const sf = ts.createSourceFile(f.path, f.text, ts.ScriptTarget.Latest, true);
    const visit = (n: TS.Node): void => {
      if (out.length >= MAX_CALL_SITES * 3) return;
      if (ts.isCallExpression(n)) {
        const c = n.expression;
        const named =
          (ts.isIdentifier(c) && c.text === name) || (ts.isPropertyAccessExpression(c) && c.name.text === name);
        if (named && n.arguments.length > 0 && n.arguments.length <= Math.max(arity, 1)) {
          const ok = n.arguments.every(
            (a) =>
              !ts.isSpreadElement(a) && !containsFunction(a) && [...freeNames(a)].every((x) => SAFE_GLOBALS.has(x)),
          );
          const args = n.arguments.map((a) => a.getText(sf));
          const key = args.join(", ");
          if (ok && !seen.has(key) && key.length <= 400) {
            seen.add(key);
            out.push({ args, where: `${f.path}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}` });
          }
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out.slice(0, MAX_CALL_SITES);
}

function containsFunction(n: TS.Node): boolean {
  let found = false;
  const visit = (x: TS.Node): void => {
    if (found) return;
    if (ts.isFunctionLike(x)) found = true;
    else ts.forEachChild(x, visit);
  };
  visit(n);
  return found;
}

/**
 * Argument lists for the function at `opts.fnEnd`: the happy path (`base`), the workspace's calls,
 * then one parameter varied at a time. Undefined when the checker does not find the function.
 */
export function inputVectors(
  program: TS.Program,
  fileName: string,
  opts: TypedOptions,
  base: string[],
  sites: { args: string[]; where: string }[] = [],
): Inputs | undefined {
  const sf = program.getSourceFile(fileName);
  if (!sf) return undefined;
  const checker = program.getTypeChecker();
  const decl = findFunction(sf, opts.fnEnd);
  const sig = decl && callerSignature(checker, decl);
  if (!sig) return undefined;
  const b = new Builder(program, checker, opts);
  const mined = codeValues(decl, checker);
  const vectors: string[][] = [base];
  const origins = ["types (the happy path)"];
  const keys = new Set([base.join("\0")]);
  const add = (v: string[], origin: string): void => {
    const k = v.join("\0");
    if (keys.has(k) || vectors.length >= MAX_INPUTS) return;
    keys.add(k);
    vectors.push(v);
    origins.push(origin);
  };
  for (const s of sites) add(s.args, `call site ${s.where}`);
  // An overload that takes fewer arguments: the happy path cut to it, and that with the code's strings
  // first (an omitted argument's default is a branch of its own).
  const arities = new Set(callSignatures(checker, decl).map((s) => minArgs(checker, s)));
  const first = sig.getParameters()[0];
  const firstCode = first?.valueDeclaration
    ? variants(b, checker, checker.getTypeOfSymbolAtLocation(first, first.valueDeclaration), first.getName(), mined)
        .filter((v) => mined.strings.includes(v))
        .slice(0, 2)
    : [];
  for (const n of [...arities].filter((n) => n < base.length).sort((x, y) => x - y)) {
    add(base.slice(0, n), "types (a shorter overload)");
    if (n > 0) for (const v of firstCode) add([v, ...base.slice(1, n)], "types (a shorter overload)");
  }
  const min = minArgs(checker, sig);
  sig.getParameters().forEach((p, i) => {
    const d = p.valueDeclaration;
    if (d && ts.isParameter(d) && d.dotDotDotToken) return;
    if (i > base.length) return;
    const t = d ? checker.getTypeOfSymbolAtLocation(p, d) : checker.getTypeOfSymbol(p);
    const own = i < min ? base[i] : b.value(t, p.getName());
    let vs = [...aroundDefault(d), ...variants(b, checker, t, p.getName(), mined)].filter(
      (v, k, all) => v !== own && all.indexOf(v) === k,
    );
    // An optional parameter: given once, with the happy path's value for its type.
    if (i >= min && own !== undefined && own !== "undefined") vs = [own, ...vs];
    const loose = (t.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) !== 0;
    for (const v of vs.slice(0, loose ? MAX_ANY_VARIANTS : MAX_VARIANTS)) {
      const next = base.slice();
      next[i] = v;
      add(next, `types (${p.getName()})`);
    }
  });
  const resultArgs = returnedCalls(b, checker, sig, mined);
  return { vectors, origins, resultArgs, typeImports: b.typeImports, valueImports: b.valueImports };
}

/** Calls of the function the signature returns (see Inputs.resultArgs); none when it returns no function. */
function returnedCalls(b: Builder, checker: TS.TypeChecker, sig: TS.Signature, mined: CodeValues): string[][] {
  const ret = checker.getNonNullableType(checker.getReturnTypeOfSignature(sig));
  if (ret.isUnion()) return [];
  const inner = ret.getCallSignatures()[0];
  if (!inner) return [];
  const all = inner.getParameters();
  const rest = all.findIndex((p) => {
    const d = p.valueDeclaration;
    return d !== undefined && ts.isParameter(d) && d.dotDotDotToken !== undefined;
  });
  const params = all.slice(0, Math.min(Math.max(minArgs(checker, inner), 1), rest < 0 ? all.length : rest));
  const types = params.map((p) =>
    p.valueDeclaration ? checker.getTypeOfSymbolAtLocation(p, p.valueDeclaration) : checker.getTypeOfSymbol(p),
  );
  const happy = types.map((t, i) => b.value(t, params[i]!.getName()));
  if (happy.some((v) => v === undefined)) return [];
  const out = [happy as string[]];
  if (types[0] && params[0]) {
    const vs = new Set(variants(b, checker, types[0], params[0].getName(), mined));
    vs.delete(happy[0]!);
    for (const v of [...vs].slice(0, MAX_RESULT_CALLS - 1)) out.push([v, ...(happy.slice(1) as string[])]);
  }
  return out.slice(0, MAX_RESULT_CALLS);
}
