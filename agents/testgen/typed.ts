/**
 * Arguments built from the checker's parameter types (docs/agents.md, "testgen"): a string-literal union
 * picks a member, an object gets its required properties, a type parameter resolves to its constraint,
 * a required parameter never gets `undefined`. Where no value can be written down, the argument is a
 * cast to the parameter's type, imported type-only when the workspace exports it, else spelled
 * `Parameters<typeof f>[i]`.
 */
import { posix } from "node:path";
import type * as TS from "typescript";
import { ts } from "../lib/code/typescript.js";
import { importSuffix, type ImportStyle } from "./paths.js";

export interface TypedCall {
  /** Happy-path arguments as source text (required parameters only). */
  args: string[];
  /** Type-only imports the arguments need: specifier → names. */
  typeImports: Map<string, Set<string>>;
  /** Value imports the arguments need (classes they construct): specifier → names. */
  valueImports: Map<string, Set<string>>;
  /** The constructor arguments, for an instance method. */
  ctorArgs?: string[];
}

export interface TypedOptions {
  /** The function or arrow (its end offset locates it; the smallest function-like node ending there). */
  fnEnd: number;
  /** The test file's path, absolute, to spell import specifiers relative to it. */
  testFile: string;
  /** How relative imports are spelled (paths.ts importStyle). */
  style: ImportStyle;
  /** How a test refers to the callable: `f`, `Cls.m` (static) or `Cls` + method for instance methods. */
  callee: { kind: "function"; name: string } | { kind: "static" | "instance"; cls: string; name: string };
}

const MAX_DEPTH = 3;
/** Globals of Node and browsers alike that `value` builds (see the switch there). */
const WEB_GLOBALS = new Set([
  "URL",
  "URLSearchParams",
  "Headers",
  "Request",
  "Response",
  "FormData",
  "Blob",
  "AbortSignal",
]);
const MAX_PROPS = 12;

export function findFunction(sf: TS.SourceFile, end: number): TS.SignatureDeclaration | undefined {
  let best: TS.SignatureDeclaration | undefined;
  const visit = (n: TS.Node): void => {
    if (n.pos > end || n.end < end) return;
    if (ts.isFunctionLike(n) && n.end === end) best = n;
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return best;
}

/** The symbol that names a function-like declaration (the function, the variable of an arrow, the method). */
function nameNode(decl: TS.SignatureDeclaration): TS.Node | undefined {
  if (decl.name) return decl.name;
  const parent = decl.parent;
  if (ts.isVariableDeclaration(parent)) return parent.name;
  return undefined;
}

export class Builder {
  readonly typeImports = new Map<string, Set<string>>();
  readonly valueImports = new Map<string, Set<string>>();
  constructor(
    private readonly program: TS.Program,
    private readonly checker: TS.TypeChecker,
    private readonly opts: TypedOptions,
  ) {}

  /** An import name for a type (or, with `into` valueImports, a class) declared in an exported, workspace (non-library) module; undefined otherwise. */
  importable(sym: TS.Symbol | undefined, into = this.typeImports): string | undefined {
    if (!sym) return undefined;
    const decl = sym.declarations?.[0];
    if (!decl) return undefined;
    const sf = decl.getSourceFile();
    if (this.program.isSourceFileDefaultLibrary(sf) || sf.fileName.includes("/node_modules/")) return undefined;
    const modSym = this.checker.getSymbolAtLocation(sf);
    if (!modSym) return undefined;
    const exported = this.checker.getExportsOfModule(modSym).find((e) => {
      const target = e.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(e) : e;
      return target === sym || e === sym;
    });
    if (!exported) return undefined;
    const name = exported.getName();
    if (name === "default") return undefined;
    let spec = posix.relative(posix.dirname(this.opts.testFile), sf.fileName.replace(/\.(d\.)?[cm]?[jt]sx?$/, ""));
    if (!spec.startsWith(".")) spec = `./${spec}`;
    spec += importSuffix(sf.fileName, this.opts.style);
    let set = into.get(spec);
    if (!set) into.set(spec, (set = new Set()));
    set.add(name);
    return name;
  }

  /** The type as source text the test can name, importing what it uses; undefined when it cannot be spelled. */
  typeText(type: TS.Type, depth = 0): string | undefined {
    if (depth > 3) return undefined;
    const f = type.flags;
    if (f & ts.TypeFlags.String) return "string";
    if (f & ts.TypeFlags.Number) return "number";
    if (f & ts.TypeFlags.Boolean) return "boolean";
    if (f & ts.TypeFlags.BigInt) return "bigint";
    // `any` stays `any`: as `unknown` it would break a constraint (`Hookable<any>` → `Hookable<unknown>`).
    if (f & ts.TypeFlags.Any) return "any";
    if (f & ts.TypeFlags.Unknown) return "unknown";
    if (f & ts.TypeFlags.Null) return "null";
    if (f & ts.TypeFlags.Undefined) return "undefined";
    if (type.isStringLiteral()) return JSON.stringify(type.value);
    if (type.isNumberLiteral()) return String(type.value);
    if (f & ts.TypeFlags.BooleanLiteral) return this.checker.typeToString(type);
    const alias = type.aliasSymbol;
    if (alias) {
      const name = this.importable(alias);
      if (!name) return undefined;
      const args = type.aliasTypeArguments?.map((a) => this.typeText(a, depth + 1));
      if (args?.some((a) => a === undefined)) return undefined;
      return args?.length ? `${name}<${args.join(", ")}>` : name;
    }
    if (type.isUnion()) {
      const parts = type.types.map((t) => this.typeText(t, depth + 1));
      return parts.some((p) => p === undefined) ? undefined : parts.join(" | ");
    }
    if (this.checker.isArrayType(type)) {
      const el = this.checker.getTypeArguments(type as TS.TypeReference)[0];
      const inner = el && this.typeText(el, depth + 1);
      return inner !== undefined ? `Array<${inner}>` : undefined;
    }
    const sym = type.getSymbol();
    if (sym && sym.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class | ts.SymbolFlags.Enum)) {
      const decl = sym.declarations?.[0];
      // Library types (Date, Map, Response) are global: their own name.
      const lib =
        decl &&
        (this.program.isSourceFileDefaultLibrary(decl.getSourceFile()) ||
          decl.getSourceFile().fileName.includes("/typescript/lib/"));
      const name = lib ? sym.getName() : this.importable(sym);
      if (!name) return undefined;
      const args = (type as TS.TypeReference).target ? this.checker.getTypeArguments(type as TS.TypeReference) : [];
      const texts = args.map((a) => this.typeText(a, depth + 1));
      if (texts.some((a) => a === undefined)) return undefined;
      return texts.length ? `${name}<${texts.join(", ")}>` : name;
    }
    return undefined;
  }

  /** A value of `type` as source text, without casts; undefined when none can be written down. */
  value(type: TS.Type, hint: string, depth = 0): string | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const c = this.checker;
    const f = type.flags;
    if (f & ts.TypeFlags.TypeParameter) {
      const constraint = c.getBaseConstraintOfType(type);
      return constraint && constraint !== type ? this.value(constraint, hint, depth) : JSON.stringify(hint);
    }
    if (type.isStringLiteral()) return JSON.stringify(type.value);
    if (type.isNumberLiteral()) return String(type.value);
    if (f & ts.TypeFlags.BooleanLiteral) return c.typeToString(type);
    if (f & ts.TypeFlags.BigIntLiteral) return `${c.typeToString(type)}`;
    if (f & ts.TypeFlags.EnumLiteral) return undefined;
    if (f & ts.TypeFlags.String) return JSON.stringify(hint);
    if (f & ts.TypeFlags.Number) return "1";
    if (f & ts.TypeFlags.Boolean) return "true";
    if (f & ts.TypeFlags.BigInt) return "1n";
    if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return JSON.stringify(hint);
    if (f & ts.TypeFlags.Null) return "null";
    if (f & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) return "undefined";
    if (f & ts.TypeFlags.Never) return undefined;
    if (f & ts.TypeFlags.TemplateLiteral) return undefined;
    if (type.isUnion()) {
      const members = type.types.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)));
      // `true | false` is boolean; otherwise the first member that can be built (a literal union's first member).
      for (const m of members) {
        const v = this.value(m, hint, depth);
        if (v !== undefined) return v;
      }
      return undefined;
    }
    if (type.isIntersection()) return undefined;
    if (c.isTupleType(type)) {
      const els = c.getTypeArguments(type as TS.TypeReference).map((t) => this.value(t, hint, depth + 1));
      return els.some((e) => e === undefined) ? undefined : `[${els.join(", ")}]`;
    }
    if (c.isArrayType(type)) {
      const el = c.getTypeArguments(type as TS.TypeReference)[0];
      const v = el && this.value(el, hint, depth + 1);
      return v !== undefined ? `[${v}]` : "[]";
    }
    const sym = type.getSymbol();
    const name = sym?.getName();
    const decl = sym?.declarations?.[0];
    // Web globals are declared by TypeScript's lib files, or by @types/node (undici-types) without the DOM lib.
    const declFile = decl?.getSourceFile().fileName ?? "";
    const isLib =
      decl !== undefined &&
      (this.program.isSourceFileDefaultLibrary(decl.getSourceFile()) ||
        (/\/node_modules\/(@types\/node|undici-types)\//.test(declFile) &&
          name !== undefined &&
          WEB_GLOBALS.has(name)));
    if (isLib) {
      const arg = (i: number): TS.Type | undefined => c.getTypeArguments(type as TS.TypeReference)[i];
      switch (name) {
        case "Date":
          return 'new Date("2024-01-01T00:00:00Z")';
        case "RegExp":
          return "/x/";
        case "Map":
          return "new Map()";
        case "Set":
          return "new Set()";
        case "URL":
          return 'new URL("https://example.com/")';
        case "URLSearchParams":
          return 'new URLSearchParams("a=1")';
        case "Headers":
          return "new Headers()";
        case "Uint8Array":
          return "new Uint8Array([1])";
        case "ArrayBuffer":
          return "new ArrayBuffer(1)";
        case "Error":
          return 'new Error("x")';
        case "AbortSignal":
          return "new AbortController().signal";
        case "Request":
          return 'new Request("https://example.com/")';
        case "Response":
          return 'new Response("x")';
        case "FormData":
          return "new FormData()";
        case "Blob":
          return 'new Blob(["x"])';
        case "Promise": {
          const inner = arg(0);
          const v = inner ? this.value(inner, hint, depth + 1) : "undefined";
          return v !== undefined ? `Promise.resolve(${v})` : undefined;
        }
        case "Function":
          return "() => undefined";
        default:
          return undefined;
      }
    }
    const calls = type.getCallSignatures();
    if (calls.length > 0) {
      if (type.getProperties().length > 0) return undefined;
      const ret = calls[0]!.getReturnType();
      if (ret.flags & (ts.TypeFlags.Void | ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.Undefined))
        return "() => undefined";
      const v = this.value(ret, hint, depth + 1);
      return v !== undefined ? `() => (${v})` : undefined;
    }
    if (type.getConstructSignatures().length > 0) return undefined;
    if (sym && sym.flags & ts.SymbolFlags.Class) return this.instance(sym, type, depth);
    if (f & ts.TypeFlags.Object) {
      const props = type.getProperties();
      if (c.getIndexInfosOfType(type).length > 0 && props.length === 0) return "{}";
      const required = props.filter((p) => !(p.flags & ts.SymbolFlags.Optional));
      if (required.length > MAX_PROPS) return undefined;
      const parts: string[] = [];
      for (const p of required) {
        const pdecl = p.valueDeclaration ?? p.declarations?.[0];
        const pt = pdecl ? c.getTypeOfSymbolAtLocation(p, pdecl) : c.getTypeOfSymbol(p);
        const v = this.value(pt, p.getName(), depth + 1);
        if (v === undefined) return undefined;
        const key = /^[A-Za-z_$][\w$]*$/.test(p.getName()) ? p.getName() : JSON.stringify(p.getName());
        parts.push(`${key}: ${v}`);
      }
      return `{ ${parts.join(", ")} }`;
    }
    return undefined;
  }

  /**
   * An instance of a workspace class: `new C(…)` with its constructor's required arguments, the class
   * imported as a value. Only for a class that is not generic or whose type arguments are `any` or their
   * parameter's default (`C<any>`): inference from a `new` would not meet other type arguments. Undefined when the class is
   * abstract, its constructor is not public, or an argument cannot be built.
   */
  private instance(sym: TS.Symbol, type: TS.Type, depth: number): string | undefined {
    const c = this.checker;
    const decl = sym.valueDeclaration;
    if (!decl || !ts.isClassDeclaration(decl)) return undefined;
    const mods = ts.getCombinedModifierFlags(decl);
    if (mods & ts.ModifierFlags.Abstract) return undefined;
    const ref = type as TS.TypeReference;
    const targs = ref.target ? c.getTypeArguments(ref) : [];
    const params = ref.target?.typeParameters ?? [];
    // `any`, or the parameter's own default (`Hookable<any>` is `Hookable<any, string>`).
    const loose = (t: TS.Type, i: number): boolean =>
      !!(t.flags & ts.TypeFlags.Any) || (params[i] !== undefined && c.getDefaultFromTypeParameter(params[i]) === t);
    if (!targs.every(loose)) return undefined;
    const ctors = c.getTypeOfSymbolAtLocation(sym, decl).getConstructSignatures();
    const visible = ctors.filter((s) => {
      const d = s.getDeclaration() as TS.Declaration | undefined;
      return !d || !(ts.getCombinedModifierFlags(d) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected));
    });
    const ctor = visible.reduce<TS.Signature | undefined>(
      (best, s) => (!best || minArgs(c, s) < minArgs(c, best) ? s : best),
      undefined,
    );
    if (!ctor) return undefined;
    const args: string[] = [];
    const min = minArgs(c, ctor);
    for (const p of ctor.getParameters().slice(0, min)) {
      const d = p.valueDeclaration;
      const v = this.value(d ? c.getTypeOfSymbolAtLocation(p, d) : c.getTypeOfSymbol(p), p.getName(), depth + 1);
      if (v === undefined) return undefined;
      args.push(v);
    }
    const name = this.importable(sym, this.valueImports);
    return name ? `new ${name}(${args.join(", ")})` : undefined;
  }

  /** `value`, or a cast to the type (spelled with type-only imports), or `Parameters<…>[i]`. */
  argument(type: TS.Type, hint: string, index: number, paramsOf: string): string {
    const v = this.value(type, hint);
    if (v !== undefined) return v;
    const text = this.typeText(type);
    return `{} as unknown as ${text ?? `Parameters<${paramsOf}>[${index}]`}`;
  }
}

/** How many leading parameters a caller must pass (not optional, no default, not rest). */
export function minArgs(checker: TS.TypeChecker, sig: TS.Signature): number {
  let n = 0;
  for (const p of sig.getParameters()) {
    const d = p.valueDeclaration;
    if (d && ts.isParameter(d) && (d.dotDotDotToken || checker.isOptionalParameter(d))) break;
    n++;
  }
  return n;
}

/** The signature a caller sees: of overloads, the one with the most required parameters (the first of those). */
export function callerSignature(checker: TS.TypeChecker, decl: TS.SignatureDeclaration): TS.Signature | undefined {
  const own = checker.getSignatureFromDeclaration(decl);
  const sigs = callSignatures(checker, decl);
  if (sigs.length <= 1) return sigs[0] ?? own;
  let best = sigs[0]!;
  for (const s of sigs) if (minArgs(checker, s) > minArgs(checker, best)) best = s;
  return best;
}

/** The signatures a caller sees for the declaration (its overloads), none when it has no name. */
export function callSignatures(checker: TS.TypeChecker, decl: TS.SignatureDeclaration): readonly TS.Signature[] {
  const name = nameNode(decl);
  const sym = name && checker.getSymbolAtLocation(name);
  return sym ? checker.getTypeOfSymbolAtLocation(sym, name).getCallSignatures() : [];
}

function requiredArgs(b: Builder, checker: TS.TypeChecker, sig: TS.Signature, paramsOf: string): string[] {
  const out: string[] = [];
  const min = minArgs(checker, sig);
  sig.getParameters().forEach((p, i) => {
    if (i >= min) return;
    const d = p.valueDeclaration;
    if (d && ts.isParameter(d) && d.dotDotDotToken) return;
    const t = d ? checker.getTypeOfSymbolAtLocation(p, d) : checker.getTypeOfSymbol(p);
    out.push(b.argument(t, p.getName(), i, paramsOf));
  });
  return out;
}

/** Arguments for the function (and its class's constructor) at `fnEnd` in `fileName`; undefined when the checker does not find it. */
export function typedCall(program: TS.Program, fileName: string, opts: TypedOptions): TypedCall | undefined {
  const sf = program.getSourceFile(fileName);
  if (!sf) return undefined;
  const checker = program.getTypeChecker();
  const decl = findFunction(sf, opts.fnEnd);
  if (!decl) return undefined;
  const sig = callerSignature(checker, decl);
  if (!sig) return undefined;
  const b = new Builder(program, checker, opts);
  const cal = opts.callee;
  const paramsOf =
    cal.kind === "function"
      ? `typeof ${cal.name}`
      : cal.kind === "static"
        ? `typeof ${cal.cls}.${cal.name}`
        : `${cal.cls}[${JSON.stringify(cal.name)}]`;
  const args = requiredArgs(b, checker, sig, paramsOf);
  let ctorArgs: string[] | undefined;
  if (cal.kind === "instance") {
    let cls: TS.Node | undefined = decl.parent;
    while (cls && !ts.isClassLike(cls)) cls = cls.parent;
    const clsSym = cls && ts.isClassLike(cls) && cls.name ? checker.getSymbolAtLocation(cls.name) : undefined;
    const ctorSig = clsSym
      ? checker.getTypeOfSymbolAtLocation(clsSym, (cls as TS.ClassLikeDeclaration).name!).getConstructSignatures()
      : [];
    const ctor = ctorSig.reduce<TS.Signature | undefined>(
      (best, s) => (!best || minArgs(checker, s) > minArgs(checker, best) ? s : best),
      undefined,
    );
    ctorArgs = ctor ? requiredArgs(b, checker, ctor, `ConstructorParameters<typeof ${cal.cls}>`) : [];
  }
  return { args, typeImports: b.typeImports, valueImports: b.valueImports, ...(ctorArgs ? { ctorArgs } : {}) };
}
